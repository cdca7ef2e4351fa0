"""Neighbour sampling over a partitioned graph (DGL's ``NeighborSampler`` on a ``DistGraph``):
each rank samples the nodes it owns in its own part and asks the owners for the rest, one batched
exchange per layer (the seeds out, the sampled edges back), then compacts the layer into a block
with the single-process sampler's own code.

It returns *exactly* the blocks :class:`nodeweave.dataloading.NeighborSampler` returns on the
whole graph (in the partitioned numbering) for the same seeds, options and ``random_seed``: a
node's picks are keyed by (seed, layer, edge type, the node's global id), its edges are listed in
its owner's part in the whole graph's order (in-edges are the part's inner edges; for
``edge_dir='out'`` the owner keeps its nodes' out-edges sorted by global edge id), and the edges
come back grouped by seed in seed order, as the single-process sampler emits them. So a model trains
on the same mini-batches whatever the number of ranks.

Where each option's data lives: ``prob`` / ``mask`` weights of in-edges are the owner's own edge
feature rows (an edge belongs to its destination's part); those of out-edges into other parts are
fetched from their owners once, when the sampler first meets the graph. ``exclude_eids`` travel with
the first layer's requests to every rank, and each rank leaves out, for each asking rank, the
excluded edges that rank named.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from nodeweave import _C
from nodeweave import errors as nwerr
from nodeweave.dataloading.neighbor_sampler import check_fanouts, finish_blocks
from nodeweave.distributed import mpi
from nodeweave.distributed.dist_graph import DistGraph, _numpy, checked_ids
from nodeweave.graph.block import Block, block_from_parts
from nodeweave.graph.heterograph import RelationGraph
from nodeweave.sampling._seed import resolve_seed
from nodeweave.sampling.neighbor import weights_array

__all__ = ["DistNeighborSampler"]


@dataclass
class _Served:
    """One relation as this rank samples it for everyone: ``rel`` holds the edges of the nodes this
    rank owns in the sampled direction, its rows are the owned nodes of the seed type (row 0 is
    global node ``row_start``), ``nbr_ids`` / ``eids`` map its local neighbour and edge ids to global
    ones (``eids[:num_sorted]`` ascending: the edges a seed can reach), ``weights`` is the ``prob``
    or ``mask`` column over ``rel``'s edges (None: uniform), ``rows`` the alias tables and packed
    rows the single-process sampler samples with (so that weighted picks are its picks)."""
    rel: Any
    row_start: int
    nbr_ids: np.ndarray
    eids: np.ndarray
    num_sorted: int
    weights: np.ndarray | None
    rows: Any = None

    def local_edges(self, global_eids: np.ndarray) -> np.ndarray:
        """The local ids of those of ``global_eids`` this relation holds (the rest are not ours)."""
        sorted_ids = self.eids[:self.num_sorted]
        pos = np.searchsorted(sorted_ids, global_eids)
        ok = pos < len(sorted_ids)
        ok[ok] = sorted_ids[pos[ok]] == global_eids[ok]
        return pos[ok]


class DistNeighborSampler:
    """Samples ``fanouts[l]`` neighbours per node and layer of a :class:`DistGraph`
    (``fanouts[0]`` is the input layer; -1 takes every neighbour; a dict per layer gives one
    fanout per edge type), with the options of :class:`nodeweave.dataloading.NeighborSampler`:
    ``edge_dir`` ('in', or 'out' on graphs with one edge type), ``prob`` (an edge feature of
    non-negative weights) or ``mask`` (a bool edge feature), ``replace``. ``sample_blocks`` is
    collective: every rank calls it together, each with its own seeds (possibly none) and its own
    ``exclude_eids``.

    >>> import os, tempfile
    >>> import numpy as np
    >>> import nodeweave as nw
    >>> from nodeweave.distributed import DistGraph, DistNeighborSampler, partition_graph
    >>> g = nw.graph(([1, 2, 3, 4, 0, 0, 2], [0, 0, 0, 0, 1, 2, 1]))
    >>> g.edata["p"] = nw.backend.current().from_numpy(np.array([0.0, 1, 1, 0, 1, 1, 1]))
    >>> out = tempfile.mkdtemp()
    >>> partition_graph(g, 1, out, graph_name="star")
    >>> dg = DistGraph(os.path.join(out, "star.json"))
    >>> _, _, blocks = DistNeighborSampler([2, 2]).sample_blocks(dg, [0], random_seed=0)
    >>> [b.num_dst_nodes() for b in blocks]
    [3, 1]
    >>> _, _, blocks = DistNeighborSampler([4], prob="p").sample_blocks(dg, [0], random_seed=0)
    >>> sorted(blocks[0].srcdata[nw.NID].tolist())    # weight-0 edges are never drawn
    [0, 2, 3]
    """

    def __init__(self, fanouts: Sequence[Any], edge_dir: str = "in", prob: str | None = None,
                 mask: str | None = None, replace: bool = False, output_device: Any = None) -> None:
        self.fanouts = check_fanouts(fanouts)
        if edge_dir not in ("in", "out"):
            raise nwerr.ValueError(f"edge_dir must be 'in' or 'out', got {edge_dir!r}")
        if prob is not None and mask is not None:
            raise nwerr.ValueError("pass either prob or mask, not both")
        for arg, v in (("prob", prob), ("mask", mask)):
            if v is not None and not isinstance(v, str):
                raise nwerr.TypeError(f"{arg} must be the name of an edge feature, got {type(v).__name__}")
        self.edge_dir = edge_dir
        self.prob = prob
        self.mask = mask
        self.replace = bool(replace)
        self.output_device = output_device
        self._served: tuple | None = None   # (weakref to the DistGraph, [_Served per relation])

    @property
    def num_layers(self) -> int:
        return len(self.fanouts)

    def _fanouts(self, g: DistGraph) -> list[list[int]]:
        """Per layer, one fanout per canonical edge type (a dict must name every edge type, as
        for the single-process sampler)."""
        book = g.get_partition_book()
        out = []
        for i, f in enumerate(self.fanouts):
            if isinstance(f, dict):
                by_ct = {book._etype(k): v for k, v in f.items()}
                missing = [ct for ct in g.canonical_etypes if ct not in by_ct]
                if missing:
                    raise nwerr.ValueError(f"fanouts[{i}] must give a value for every edge type; missing {missing}")
                out.append([by_ct[ct] for ct in g.canonical_etypes])
            else:
                out.append([f] * len(g.canonical_etypes))
        return out

    def sample_blocks(self, g: DistGraph, seed_nodes: Any, exclude_eids: Any = None, *,
                      random_seed: int | None = None) -> tuple[Any, Any, list[Block]]:
        """``(input_nodes, output_nodes, blocks)`` for ``seed_nodes`` (global ids; a dict per node
        type on heterographs), as :meth:`NeighborSampler.sample`. ``exclude_eids`` (global edge
        ids, or a dict per edge type) are never sampled for this rank's seeds. With
        ``random_seed`` omitted each rank draws its own; pass the same one on every rank for the
        single-process blocks."""
        if not isinstance(g, DistGraph):
            raise nwerr.TypeError(f"DistNeighborSampler samples a DistGraph, got {type(g).__name__}")
        ntypes, etypes = g.ntypes, g.canonical_etypes
        if self.edge_dir == "out" and len(etypes) > 1:
            raise nwerr.ValueError("edge_dir='out' blocks are built on graphs with one edge type; reverse the "
                                   "heterograph before partitioning and sample in-edges instead")
        if isinstance(seed_nodes, dict):
            unknown = [k for k in seed_nodes if k not in ntypes]
            if unknown:
                raise nwerr.ValueError(f"seed_nodes names node types {unknown} the graph lacks")
            seeds = {nt: seed_nodes.get(nt, []) for nt in ntypes}
        elif len(ntypes) == 1:
            seeds = {ntypes[0]: seed_nodes}
        else:
            raise nwerr.ValueError("seed_nodes must be a dict {ntype: ids} on a graph with several node types")
        num_nodes = [g.num_nodes(nt) for nt in ntypes]
        dst = [checked_ids(seeds[nt], n, f"seed_nodes of {nt!r}") for nt, n in zip(ntypes, num_nodes)]
        repeated = next((nt for nt, d in zip(ntypes, dst) if len(np.unique(d)) != len(d)), None)
        mpi.raise_together(None if repeated is None else nwerr.ValueError(f"seed_nodes of {repeated!r} hold repeated ids"),
                           "DistNeighborSampler.sample_blocks")
        excl = self._exclusions(g, exclude_eids)
        served = self._relations(g)
        key = resolve_seed(random_seed)
        fanouts = self._fanouts(g)
        raw, asked_excl = [], None
        for layer in range(self.num_layers - 1, -1, -1):
            layer_key = _C.sampling.derive_key(key, layer)
            rels, asked_excl = self._sample_layer(g, served, dst, fanouts[layer], layer_key,
                                                  excl if asked_excl is None else None, asked_excl)
            parts = _C.sampling.assemble_block(dst, num_nodes, rels, g._idtype_name)
            raw.append(parts)
            dst = [np.asarray(a, np.int64) for a in parts[0]]
        blocks = [block_from_parts(g, *parts) for parts in reversed(raw)]
        return finish_blocks(g, blocks, self.output_device)

    def sample(self, g: DistGraph, seed_nodes: Any, exclude_eids: Any = None, *,
               random_seed: int | None = None) -> tuple[Any, Any, list[Block]]:
        """:meth:`sample_blocks` (the name the edge-prediction wrapper calls)."""
        return self.sample_blocks(g, seed_nodes, exclude_eids, random_seed=random_seed)

    def _exclusions(self, g: DistGraph, exclude_eids: Any) -> list[np.ndarray]:
        """This rank's excluded global edge ids per relation (checked collectively)."""
        etypes = g.canonical_etypes
        given: dict = {}
        error = None   # every rank takes part in one raise_together whatever it was given
        if isinstance(exclude_eids, dict):
            try:
                given = {g.get_partition_book()._etype(k): v for k, v in exclude_eids.items()}
            except (KeyError, ValueError) as e:
                error = e
        elif exclude_eids is not None and len(etypes) == 1:
            given = {etypes[0]: exclude_eids}
        elif exclude_eids is not None:
            error = nwerr.ValueError("exclude_eids must be a dict {etype: ids} on a graph with several edge types")
        mpi.raise_together(error, "exclude_eids")
        return [checked_ids(given.get(ct, []), g.num_edges(ct), f"exclude_eids of {ct}") for ct in etypes]

    def _relations(self, g: DistGraph) -> list[_Served]:
        """Per relation, what this rank samples in (built on first use per graph; building the
        out-edge weights is collective, so every rank builds at the same call)."""
        if self._served is not None and self._served[0]() is g:
            return self._served[1]
        name = self.prob if self.prob is not None else self.mask
        arg = "prob" if self.prob is not None else "mask"
        if name is not None and not any(name in g._edata[ct] for ct in g.canonical_etypes):
            where = "" if len(g.canonical_etypes) == 1 else " on any edge type"
            raise nwerr.KeyError(f"{arg}: the graph has no edge feature {name!r}{where}")
        served = [self._relation(g, ct, name, arg) for ct in g.canonical_etypes]
        # The weights' values are checked here, after every collective fetch: one rank's bad value
        # is raised on every rank (the others would otherwise wait in the next exchange).
        error = None
        try:
            for sv in served:
                sv.rows = _C.sampling.relation_rows(sv.rel, self.edge_dir == "out", sv.weights)
        except (ValueError, TypeError) as e:
            error = e
        mpi.raise_together(error, f"DistNeighborSampler: {arg}")
        self._served = (weakref.ref(g), served)
        return served

    def _relation(self, g: DistGraph, ct: tuple, name: str | None, arg: str) -> _Served:
        book, part, me = g.get_partition_book(), g.local_partition, mpi.rank()
        feat = g._edata[ct].get(name) if name is not None else None
        if self.edge_dir == "in":
            # The part's inner edges are exactly the in-edges of its nodes, in global order, and
            # their feature rows are this rank's own.
            n_inner = int(book.edge_ranges(ct)[me + 1] - book.edge_ranges(ct)[me])
            weights = None
            if feat is not None:
                w = weights_array(feat._local_np, name, arg)
                weights = np.concatenate([w, np.zeros(part.num_edges(ct) - n_inner, w.dtype)])
            weights = self._checked(weights, name)
            return _Served(part._rels[ct], int(book.nid_range(me, ct[2])[0]), g.local_nid[ct[0]], g.local_eid[ct],
                           n_inner, weights)
        # Out-edges of the owned nodes (the part holds them all), sorted by global edge id as the
        # whole graph's out-CSR lists them.
        u, v = (_numpy(a).astype(np.int64) for a in part.edges(etype=ct, order="eid"))
        inner_src = int(book.nid_range(me, ct[0])[1] - book.nid_range(me, ct[0])[0])
        sel = np.flatnonzero(u < inner_src)
        sel = sel[np.argsort(g.local_eid[ct][sel], kind="stable")]
        eids = g.local_eid[ct][sel]
        rel = RelationGraph.from_coo(part.num_nodes(ct[0]), part.num_nodes(ct[2]), u[sel], v[sel],
                                     part._idtype_name)
        weights = None
        if feat is not None:
            start, stop = book.edge_ranges(ct)[me], book.edge_ranges(ct)[me + 1]
            mine = (eids >= start) & (eids < stop)
            fetched = feat.fetch_numpy(eids[~mine])    # collective: every rank fetches its halo out-edges
            w = weights_array(feat._local_np, name, arg)
            weights = np.empty(len(eids), w.dtype)
            weights[mine] = w[eids[mine] - start]
            weights[~mine] = weights_array(fetched, name, arg)
        weights = self._checked(weights, name)
        return _Served(rel, int(book.nid_range(me, ct[0])[0]), g.local_nid[ct[2]], eids, len(eids), weights)

    def _checked(self, weights: np.ndarray | None, name: str | None) -> np.ndarray | None:
        if self.mask is not None and weights is not None and weights.dtype != np.bool_:
            raise nwerr.TypeError(f"mask: edge feature {name!r} must be bool, got {weights.dtype}")
        return weights

    def _sample_layer(self, g: DistGraph, served: list[_Served], dst: list[np.ndarray], fanouts: list[int],
                      layer_key: int, excl: list[np.ndarray] | None, asked_excl: list | None) -> tuple[list, list]:
        """Every relation's sampled edges into ``dst``, gathered from the owners: one exchange of
        ``(relation, node)`` requests out (the first layer's also carry ``(-1 - relation, edge)``
        rows: this rank's exclusions, to every rank) and one of ``(relation, request index,
        neighbour, edge)`` replies back. Returns them and the exclusions each asking rank sent
        (local edge ids per relation), kept for the later layers."""
        ntypes, etypes = g.ntypes, g.canonical_etypes
        book = g.get_partition_book()
        size, me = mpi.world_size(), mpi.rank()
        out_dir = self.edge_dir == "out"
        # Requests: per relation that samples, the seeds of its seed type, sent to their owners.
        req_rel, req_node, req_pos, req_owner = [], [], [], []
        for r, ct in enumerate(etypes):
            seed_type = ct[0] if out_dir else ct[2]
            s = dst[ntypes.index(seed_type)]
            if fanouts[r] == 0 or len(s) == 0:
                continue
            req_rel.append(np.full(len(s), r, np.int64))
            req_node.append(s)
            req_pos.append(np.arange(len(s), dtype=np.int64))
            req_owner.append(np.searchsorted(book.node_ranges(seed_type), s, side="right") - 1)
        rel_col, node_col, pos_col, owner = (np.concatenate(c) if c else np.zeros(0, np.int64)
                                             for c in (req_rel, req_node, req_pos, req_owner))
        order = np.argsort(owner, kind="stable")
        cuts = np.cumsum(np.bincount(owner, minlength=size))[:-1]
        sent = np.split(order, cuts)  # per owner: which request rows went there
        extra = np.zeros((0, 2), np.int64)
        if excl is not None:
            extra = np.concatenate([np.stack([np.full(len(e), -1 - r, np.int64), e], axis=1)
                                    for r, e in enumerate(excl)] or [extra])
        asked = mpi.all_to_all([np.concatenate([np.stack([rel_col[o], node_col[o]], axis=1), extra])
                                for o in sent], purpose="sampling")
        if asked_excl is None:
            asked_excl = [[served[r].local_edges(np.sort(a[a[:, 0] == -1 - r, 1])) for r in range(len(etypes))]
                          for a in asked]
        asked = [a[a[:, 0] >= 0] for a in asked]
        replies = self._serve(served, asked, asked_excl, fanouts, layer_key)
        got = mpi.all_to_all(replies, purpose="sampling")
        # Back in seed order: each seed's edges come whole from its one owner, in row order.
        out = []
        for r, ct in enumerate(etypes):
            pos, nbr, eid = [], [], []
            for p in range(size):
                rep = got[p]
                mine = rep[rep[:, 0] == r]
                if len(mine):
                    pos.append(pos_col[sent[p][mine[:, 1]]])
                    nbr.append(mine[:, 2])
                    eid.append(mine[:, 3])
            if pos:
                pos_a, nbr_a, eid_a = np.concatenate(pos), np.concatenate(nbr), np.concatenate(eid)
                o = np.argsort(pos_a, kind="stable")
                pos_a, nbr_a, eid_a = pos_a[o], nbr_a[o], eid_a[o]
            else:
                pos_a = nbr_a = eid_a = np.zeros(0, np.int64)
            src_type, seed_type = (ct[2], ct[0]) if out_dir else (ct[0], ct[2])
            out.append((ntypes.index(src_type), ntypes.index(seed_type), pos_a, nbr_a, eid_a))
        return out, asked_excl

    def _serve(self, served: list[_Served], asked: list[np.ndarray], asked_excl: list[list[np.ndarray]],
               fanouts: list[int], layer_key: int) -> list[np.ndarray]:
        """Samples, in this rank's part, the nodes the ranks asked about: per asking rank, rows of
        ``(relation, index of the request row, neighbour, edge id)`` in global ids. A rank that
        sent exclusions for a relation has its requests sampled apart, without those edges (the
        draws are keyed by node, so splitting the call changes nothing else)."""
        all_rows = np.concatenate(asked) if asked else np.zeros((0, 2), np.int64)
        from_rank = np.repeat(np.arange(len(asked)), [len(a) for a in asked])
        index = np.concatenate([np.arange(len(a)) for a in asked]) if asked else np.zeros(0, np.int64)
        replies: list[list[np.ndarray]] = [[] for _ in asked]
        for r, sv in enumerate(served):
            at = np.flatnonzero(all_rows[:, 0] == r)
            if len(at) == 0:
                continue
            groups = [(at[from_rank[at] == p], asked_excl[p][r]) for p in range(len(asked)) if len(asked_excl[p][r])]
            rest = [p for p in range(len(asked)) if not len(asked_excl[p][r])]
            groups.append((at[np.isin(from_rank[at], rest)], None))
            for rows_at, exclude in groups:
                if len(rows_at) == 0:
                    continue
                seed_pos, nbr, eid = _C.sampling.sample_neighbors(
                    sv.rel, all_rows[rows_at, 1] - sv.row_start, int(fanouts[r]), self.edge_dir == "out",
                    self.replace, sv.weights, exclude, _C.sampling.derive_key(layer_key, r), sv.row_start, sv.rows)
                rows = np.stack([np.full(len(eid), r, np.int64), index[rows_at][seed_pos],
                                 sv.nbr_ids[nbr], sv.eids[eid]], axis=1)
                who = from_rank[rows_at][seed_pos]
                for p in range(len(asked)):
                    replies[p].append(rows[who == p])
        return [np.concatenate(x) if x else np.zeros((0, 4), np.int64) for x in replies]
