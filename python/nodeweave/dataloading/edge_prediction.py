"""Mini-batches of edges for link prediction (DGL's ``as_edge_prediction_sampler``): a batch of
seed edges becomes a *pair graph* of those edges, optionally a *negative pair graph* of sampled
non-edges, and the blocks that compute the representations of every node either graph touches.

Edge exclusion keeps the batch from leaking its own labels: with ``exclude='self'`` the seed edges
are never sampled as neighbours, with ``'reverse_id'`` neither are their reverse edges (given by
``reverse_eids``), and with ``'reverse_types'`` the edges of the same ids in the reverse edge types
(``reverse_etypes``) are excluded too. An excluded id with no edge behind it (a reverse id of an
edge whose reverse is not in the graph) excludes nothing, as in DGL.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1, 2, 3, 1, 2, 3, 0], [1, 2, 3, 0, 0, 1, 2, 3]))
>>> sampler = nw.dataloading.as_edge_prediction_sampler(
...     nw.dataloading.NeighborSampler([2]), exclude="self",
...     negative_sampler=nw.dataloading.negative_sampler.Uniform(1))
>>> input_nodes, pair, neg_pair, blocks = sampler.sample(g, [0, 1], random_seed=0)
>>> pair.num_edges(), neg_pair.num_edges(), pair.edata[nw.EID].tolist()
(2, 2, [0, 1])
>>> sorted(blocks[-1].dstdata[nw.NID].tolist()) == sorted(pair.ndata[nw.NID].tolist())
True
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from nodeweave import _C, backend
from nodeweave.dataloading.base import Sampler
from nodeweave.graph.heterograph import HeteroGraph, RelationGraph, as_int_array
from nodeweave.graph.transforms import EID, NID, compact_graphs
from nodeweave.sampling._seed import resolve_seed
from nodeweave.graph.id_sets import edge_sets
from nodeweave import errors as nwerr

__all__ = ["EdgePredictionSampler", "as_edge_prediction_sampler"]

_EXCLUDE = (None, "self", "reverse_id", "reverse_types")


class EdgePredictionSampler(Sampler):
    """Wraps a block sampler for edge batches; see :func:`as_edge_prediction_sampler`."""

    def __init__(self, sampler: Any, exclude: str | Callable | None = None, reverse_eids: Any = None,
                 reverse_etypes: dict | None = None, negative_sampler: Any = None,
                 prefetch_labels: Any = None) -> None:
        if not callable(getattr(sampler, "sample", None)):
            raise nwerr.TypeError(f"sampler must have a sample(g, seed_nodes, exclude_eids) method, got "
                                  f"{type(sampler).__name__}")
        if not (exclude in _EXCLUDE or callable(exclude)):
            raise nwerr.ValueError(f"exclude must be None, 'self', 'reverse_id', 'reverse_types' or a callable, "
                                   f"got {exclude!r}")
        if exclude == "reverse_id" and reverse_eids is None:
            raise nwerr.ValueError("exclude='reverse_id' needs reverse_eids (the id of each edge's reverse edge)")
        if exclude == "reverse_types" and not isinstance(reverse_etypes, dict):
            raise nwerr.ValueError("exclude='reverse_types' needs reverse_etypes, a dict {etype: reverse etype}")
        if negative_sampler is not None and not callable(negative_sampler):
            raise nwerr.TypeError("negative_sampler must be callable as negative_sampler(g, eids)")
        self.sampler = sampler
        self.exclude = exclude
        self.reverse_eids = reverse_eids
        self.reverse_etypes = reverse_etypes
        self.negative_sampler = negative_sampler
        self.prefetch_labels = [prefetch_labels] if isinstance(prefetch_labels, str) else list(prefetch_labels or [])

    # ------------------------------------------------------------------ helpers

    def _seed_edges(self, g: HeteroGraph, seed_edges: Any) -> dict:
        out = edge_sets(g, seed_edges, "seed_edges")
        if not any(len(v) for v in out.values()):
            raise nwerr.ValueError("seed_edges must not be empty")
        return out

    def _excluded(self, g: HeteroGraph, seeds: dict) -> dict | None:
        """The edges to exclude for a batch of seed edges. An id outside the graph (a reverse id
        with no edge behind it, say) names no edge and excludes nothing, as in DGL."""
        found = self._exclusion(g, seeds)
        if found is None:
            return None
        return {ct: ids[(ids >= 0) & (ids < g.num_edges(ct))] for ct, ids in found.items()}

    def _exclusion(self, g: HeteroGraph, seeds: dict) -> dict | None:
        if self.exclude is None:
            return None
        if callable(self.exclude):
            as_tensors = {ct: g._ids_out(ids) for ct, ids in seeds.items()}  # what DGL hands it
            got = self.exclude(as_tensors if len(g.canonical_etypes) > 1 else next(iter(as_tensors.values())))
            if not isinstance(got, dict):
                got = {g.canonical_etypes[0]: got}
            return {g.to_canonical_etype(k): as_int_array(v, "exclude")[0] for k, v in got.items()}
        out = {ct: ids for ct, ids in seeds.items()}
        if self.exclude == "reverse_id":
            rev = self.reverse_eids
            if not isinstance(rev, dict):
                rev = {g.canonical_etypes[0]: rev}
            for k, r in rev.items():
                ct = g.to_canonical_etype(k)
                if ct in seeds:
                    r_np = backend.of(r).to_numpy(r) if backend.of(r) is not None else np.asarray(r)
                    out[ct] = np.concatenate([out[ct], np.asarray(r_np, np.int64)[seeds[ct]]])
        elif self.exclude == "reverse_types":
            for k, rk in self.reverse_etypes.items():
                ct, rct = g.to_canonical_etype(k), g.to_canonical_etype(rk)
                if ct in seeds:
                    out[rct] = np.concatenate([out.get(rct, np.zeros(0, np.int64)), seeds[ct]])
        return out

    def _pair_graph(self, g: HeteroGraph, pairs: dict) -> HeteroGraph:
        rels = {}
        for ct in g.canonical_etypes:
            s, d = pairs.get(ct, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
            rels[ct] = RelationGraph.from_coo(g.num_nodes(ct[0]), g.num_nodes(ct[2]), s, d, g._idtype_name)
        return HeteroGraph._create({nt: g.num_nodes(nt) for nt in g.ntypes}, rels)

    # ------------------------------------------------------------------ sampling

    def sample(self, g: HeteroGraph, seed_edges: Any, *, random_seed: int | None = None):
        """``(input_nodes, pair_graph, blocks)``, or ``(input_nodes, pair_graph, neg_pair_graph,
        blocks)`` with a negative sampler. The pair graphs share one compact node numbering whose
        ``ndata[NID]`` are the ids in ``g`` and the output nodes of the blocks; ``pair_graph.edata
        [EID]`` holds the seed edges' ids."""
        seeds = self._seed_edges(g, seed_edges)
        key = resolve_seed(random_seed)
        pos = {}
        for ct, ids in seeds.items():
            src, dst = g._coo(ct)
            pos[ct] = (np.asarray(src, np.int64)[ids], np.asarray(dst, np.int64)[ids])
        graphs = [self._pair_graph(g, pos)]
        if self.negative_sampler is not None:
            arg = seeds if len(g.canonical_etypes) > 1 else seeds[g.canonical_etypes[0]]
            arg = ({ct: g._ids_out(v) for ct, v in arg.items()} if isinstance(arg, dict) else g._ids_out(arg))
            try:
                neg = self.negative_sampler(g, arg, random_seed=_C.sampling.derive_key(key, 1))
            except TypeError:  # a user's negative sampler without random_seed
                neg = self.negative_sampler(g, arg)
            if not isinstance(neg, dict):
                neg = {g.canonical_etypes[0]: neg}
            neg = {g.to_canonical_etype(k): tuple(np.asarray(backend.of(t).to_numpy(t) if backend.of(t) is not None
                                                             else t, np.int64) for t in v)
                   for k, v in neg.items()}
            graphs.append(self._pair_graph(g, neg))
        compacted = compact_graphs(graphs)
        pair = compacted[0]
        for ct, ids in seeds.items():
            pair._edge_frames[ct][EID] = g._ids_out(ids)
            for name in self.prefetch_labels:
                if name in g._edge_frames[ct]:
                    col = g._edge_frames[ct][name]
                    b = backend.of(col)
                    pair._edge_frames[ct][name] = b.index_select(col, b.int_tensor(ids, b.device_str(col), "int64"))
        if len(g.ntypes) == 1:
            seed_nodes = pair.ndata[NID]
        else:
            seed_nodes = {nt: pair._node_frames[nt][NID] for nt in g.ntypes}
        exclude = self._excluded(g, seeds)
        input_nodes, _, blocks = self.sampler.sample(g, seed_nodes, exclude, random_seed=_C.sampling.derive_key(key, 2))
        if self.negative_sampler is not None:
            return input_nodes, pair, compacted[1], blocks
        return input_nodes, pair, blocks


def as_edge_prediction_sampler(sampler: Any, exclude: str | Callable | None = None, reverse_eids: Any = None,
                               reverse_etypes: dict | None = None, negative_sampler: Any = None,
                               prefetch_labels: Any = None) -> EdgePredictionSampler:
    """A sampler of edge batches for link prediction from a node block sampler (DGL's function of
    the same name). Iterate it with :class:`~nodeweave.dataloading.DataLoader` over edge ids."""
    return EdgePredictionSampler(sampler, exclude, reverse_eids, reverse_etypes, negative_sampler, prefetch_labels)
