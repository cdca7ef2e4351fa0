"""GraphSAINT's samplers (Zeng et al., ICLR 2020; DGL's ``dgl.dataloading.SAINTSampler``): every
batch is the subgraph induced by a random node set, drawn by ``sampling/saint_sampler.cc``:

- ``mode='node'``: ``budget`` nodes drawn with replacement, ``P(v)`` proportional to
  ``max(out-degree(v), 1)`` (the paper's ``||A[:, v]||^2`` for a 0/1 adjacency, as DGL);
- ``mode='edge'``: ``budget`` edges drawn with replacement, ``P(u -> v)`` proportional to
  ``1 / max(in-degree(v), 1) + 1 / max(out-degree(u), 1)``; the node set is their endpoints;
- ``mode='walk'``: ``budget = (num_roots, walk_length)``: uniform roots, each followed by a uniform
  random walk along out-edges (stopping early at a node without out-edges).

With ``num_norm_samples=N > 0`` the sampler also estimates the paper's normalization from ``N``
pre-sampled node sets (the authors' code does this, DGL does not) and attaches it to every batch:

- ``subgraph.ndata['loss_norm']`` = ``N / (C_v |V|)`` = ``1 / λ_v``, with ``C_v`` the number of
  pre-sampled sets holding ``v``: ``sum(loss_norm * loss_per_node)`` over a batch's nodes is an
  unbiased estimate of the mean loss over all of ``g``'s nodes (restricted to training nodes,
  divide by their fraction of ``g``'s nodes);
- ``subgraph.edata['aggr_norm']`` = ``C_v / C_{u,v}`` = ``1 / α_{u,v}`` for edge ``u -> v``, with
  ``C_{u,v}`` the number of sets holding both ends: scaling message ``u -> v`` by it (times the
  full graph's ``1 / in-degree(v)`` for a mean) makes a batch's aggregation at ``v`` an unbiased
  estimate of the full graph's.

Counts of zero are read as one. Both are float32 on the batch's device; ``examples/graphsaint.py``
shows them in use.

>>> import numpy as np, nodeweave as nw
>>> g = nw.sbm_graph([30, 30], [[0.3, 0.02], [0.02, 0.3]], seed=0)
>>> sampler = nw.dataloading.SAINTSampler("walk", (4, 3), num_norm_samples=20)
>>> sg = sampler.sample(g, 0, random_seed=1)
>>> sg.num_nodes() <= 4 * 4, sorted(sg.ndata) == ["_ID", "loss_norm"], sorted(sg.edata)
(True, True, ['_ID', 'aggr_norm'])
>>> loader = nw.dataloading.DataLoader(g, np.arange(5), sampler, seed=0)  # 5 batches per epoch
>>> len([sg for sg in loader])
5
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Sequence

import numpy as np

from nodeweave import _C, backend
from nodeweave.dataloading.base import Sampler
from nodeweave.dataloading.subgraph_batch import check_homogeneous, cpu_relation, feature_list, induced_subgraph_batch
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms import EID, NID
from nodeweave.sampling._seed import resolve_seed
from nodeweave import errors as nwerr

__all__ = ["SAINTSampler"]


def _positive_int(x: Any, name: str) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise nwerr.TypeError(f"SAINTSampler: {name} must be an int, got {type(x).__name__} {x!r}")
    if x <= 0:
        raise nwerr.ValueError(f"SAINTSampler: {name} must be positive, got {x}")
    return int(x)


class SAINTSampler(Sampler):
    """GraphSAINT node, edge or random-walk subgraph sampler.

    Parameters
    ----------
    mode : 'node', 'edge' or 'walk'
    budget : int, or ``(num_roots, walk_length)`` for 'walk'
        Node draws, edge draws, or walk roots and length (see the module docstring).
    cache : bool
        Keep the sampling distribution (and the normalization) of the last graph sampled from,
        instead of recomputing them every batch.
    prefetch_ndata, prefetch_edata : list of str, optional
        Node / edge features gathered into each subgraph (None: every feature; ``[]``: none).
    output_device : optional
        Device of the subgraphs (default: the graph's).
    num_norm_samples : int
        Pre-sampled node sets to estimate ``loss_norm`` / ``aggr_norm`` from; 0 (default, as DGL)
        attaches none.
    norm_seed : int
        Fixes the pre-sampled sets: set ``s`` is the batch of ``random_seed=derive_key(norm_seed, s)``.

    ``sample(g, indices, random_seed=None)`` ignores ``indices`` (the loader iterates over batch
    numbers, ``DataLoader(g, np.arange(num_batches), sampler)``) and returns the induced subgraph
    with the original ids in ``ndata[nw.NID]`` / ``edata[nw.EID]``, nodes in increasing id.
    """

    def __init__(self, mode: str, budget: Any, cache: bool = True, prefetch_ndata: Sequence[str] | None = None,
                 prefetch_edata: Sequence[str] | None = None, output_device: Any = None, *,
                 num_norm_samples: int = 0, norm_seed: int = 0) -> None:
        if mode not in ("node", "edge", "walk"):
            raise nwerr.ValueError(f"SAINTSampler: mode must be 'node', 'edge' or 'walk', got {mode!r}")
        if mode == "walk":
            if not isinstance(budget, (tuple, list)) or len(budget) != 2:
                raise nwerr.TypeError(f"SAINTSampler: budget must be (num_roots, walk_length) for mode 'walk', got {budget!r}")
            self.budget = (_positive_int(budget[0], "budget[0] (num_roots)"),
                           _positive_int(budget[1], "budget[1] (walk_length)"))
        else:
            self.budget = _positive_int(budget, "budget")
        if isinstance(num_norm_samples, (bool, np.bool_)) or not isinstance(num_norm_samples, (int, np.integer)) \
                or num_norm_samples < 0:
            raise nwerr.ValueError(f"SAINTSampler: num_norm_samples must be an int >= 0, got {num_norm_samples!r}")
        self.mode = mode
        self.cache = bool(cache)
        self.prefetch_ndata = feature_list(prefetch_ndata, "prefetch_ndata")
        self.prefetch_edata = feature_list(prefetch_edata, "prefetch_edata")
        self.output_device = output_device
        self.num_norm_samples = int(num_norm_samples)
        self.norm_seed = resolve_seed(norm_seed)
        self._lock = threading.Lock()  # loader workers share the sampler
        self._cached: tuple | None = None  # (weakref to g, C++ sampler, normalization or None)

    def _native(self, g: HeteroGraph) -> tuple[Any, dict | None]:
        """The C++ sampler for ``g`` and its normalization (built once per graph when ``cache``)."""
        with self._lock:
            if self.cache and self._cached is not None and self._cached[0]() is g:
                return self._cached[1], self._cached[2]
            roots, length = self.budget if self.mode == "walk" else (self.budget, 0)
            native = _C.sampling.SAINTSampler(cpu_relation(g), self.mode, roots, length)
            norm = None
            if self.num_norm_samples:
                node_count, edge_count, loss_norm, aggr_norm = native.normalization(self.num_norm_samples,
                                                                                     self.norm_seed)
                norm = {"node_count": node_count, "edge_count": edge_count,
                        "loss_norm": loss_norm.astype(np.float32), "aggr_norm": aggr_norm.astype(np.float32)}
            if self.cache:
                self._cached = (weakref.ref(g), native, norm)
            return native, norm

    def normalization(self, g: Any) -> dict[str, np.ndarray]:
        """The pre-sampling counts and coefficients of ``g`` as NumPy arrays: ``node_count``
        (``C_v``), ``edge_count`` (``C_{u,v}`` per edge id), ``loss_norm`` per node and
        ``aggr_norm`` per edge id. ValueError when ``num_norm_samples`` is 0."""
        g = check_homogeneous(g, "SAINTSampler.normalization")
        if not self.num_norm_samples:
            raise nwerr.ValueError("SAINTSampler.normalization: the sampler was built with num_norm_samples=0")
        return dict(self._native(g)[1])

    def sample_nodes(self, g: Any, random_seed: int | None = None) -> np.ndarray:
        """The sorted node set of one batch (what :meth:`sample` induces the subgraph on)."""
        g = check_homogeneous(g, "SAINTSampler")
        return self._native(g)[0].sample_nodes(resolve_seed(random_seed))

    def sample(self, g: Any, indices: Any = None, *, random_seed: int | None = None) -> HeteroGraph:
        g = check_homogeneous(g, "SAINTSampler")
        native, norm = self._native(g)
        nodes = native.sample_nodes(resolve_seed(random_seed))
        sg = induced_subgraph_batch(g, nodes, self.prefetch_ndata, self.prefetch_edata, None)
        if norm is not None:
            B = backend.current()
            dev = sg._device
            nid = backend.of(sg.ndata[NID]).to_numpy(sg.ndata[NID]).astype(np.int64)
            eid = backend.of(sg.edata[EID]).to_numpy(sg.edata[EID]).astype(np.int64)
            sg.ndata["loss_norm"] = B.from_numpy(norm["loss_norm"][nid], dev)
            sg.edata["aggr_norm"] = B.from_numpy(norm["aggr_norm"][eid], dev)
        if self.output_device is not None:
            device = backend.current().canonical_device(self.output_device)
            if device != sg._device:
                sg = sg.to(device)
        return sg
