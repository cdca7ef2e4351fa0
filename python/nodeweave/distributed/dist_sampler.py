"""Neighbour sampling over a partitioned graph (DGL's ``NeighborSampler`` on a ``DistGraph``):
each rank samples the nodes it owns in its own part and asks the owners for the rest, one batched
exchange per layer (the seeds out, the sampled edges back), then compacts the layer into a block
with the single-process sampler's own code.

It returns *exactly* the blocks :class:`nodeweave.dataloading.NeighborSampler` returns on the
whole graph (in the partitioned numbering) for the same seeds and ``random_seed``: a node's picks
are keyed by (seed, layer, edge type, the node's global id), its in-edges sit in its part in the
whole graph's order, and the edges come back grouped by seed in seed order, as the single-process
sampler emits them. So a model trains on the same mini-batches whatever the number of ranks.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave import _C
from nodeweave import errors as nwerr
from nodeweave.dataloading.neighbor_sampler import check_fanouts, finish_blocks
from nodeweave.distributed import mpi
from nodeweave.distributed.dist_graph import DistGraph, checked_ids
from nodeweave.graph.block import Block, block_from_parts
from nodeweave.sampling._seed import resolve_seed

__all__ = ["DistNeighborSampler"]


class DistNeighborSampler:
    """Samples ``fanouts[l]`` in-neighbours per node and layer of a :class:`DistGraph`
    (``fanouts[0]`` is the input layer; -1 takes every neighbour; a dict per layer gives one
    fanout per edge type). ``sample_blocks`` is collective: every rank calls it together, each
    with its own seeds (possibly none).

    >>> import os, tempfile
    >>> import nodeweave as nw
    >>> from nodeweave.distributed import DistGraph, DistNeighborSampler, partition_graph
    >>> g = nw.graph(([1, 2, 3, 4, 0, 0, 2], [0, 0, 0, 0, 1, 2, 1]))
    >>> out = tempfile.mkdtemp()
    >>> partition_graph(g, 1, out, graph_name="star")
    >>> dg = DistGraph(os.path.join(out, "star.json"))
    >>> _, _, blocks = DistNeighborSampler([2, 2]).sample_blocks(dg, [0], random_seed=0)
    >>> [b.num_dst_nodes() for b in blocks]
    [3, 1]
    """

    def __init__(self, fanouts: Sequence[Any], replace: bool = False, output_device: Any = None) -> None:
        self.fanouts = check_fanouts(fanouts)
        self.replace = bool(replace)
        self.output_device = output_device

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

    def sample_blocks(self, g: DistGraph, seed_nodes: Any, *, random_seed: int | None = None
                      ) -> tuple[Any, Any, list[Block]]:
        """``(input_nodes, output_nodes, blocks)`` for ``seed_nodes`` (global ids; a dict per node
        type on heterographs), as :meth:`NeighborSampler.sample`. With ``random_seed`` omitted each
        rank draws its own; pass the same one on every rank for the single-process blocks."""
        if not isinstance(g, DistGraph):
            raise nwerr.TypeError(f"DistNeighborSampler samples a DistGraph, got {type(g).__name__}")
        ntypes, etypes = g.ntypes, g.canonical_etypes
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
        key = resolve_seed(random_seed)
        fanouts = self._fanouts(g)
        raw = []
        for layer in range(self.num_layers - 1, -1, -1):
            layer_key = _C.sampling.derive_key(key, layer)
            rels = self._sample_layer(g, dst, fanouts[layer], layer_key)
            parts = _C.sampling.assemble_block(dst, num_nodes, rels, g._idtype_name)
            raw.append(parts)
            dst = [np.asarray(a, np.int64) for a in parts[0]]
        blocks = [block_from_parts(g, *parts) for parts in reversed(raw)]
        return finish_blocks(g, blocks, self.output_device)

    def _sample_layer(self, g: DistGraph, dst: list[np.ndarray], fanouts: list[int], layer_key: int) -> list[tuple]:
        """Every relation's sampled edges into ``dst``, gathered from the owners: one exchange of
        ``(relation, node)`` requests out and one of ``(relation, request index, neighbour, edge)``
        replies back."""
        ntypes, etypes = g.ntypes, g.canonical_etypes
        book = g.get_partition_book()
        size, me = mpi.world_size(), mpi.rank()
        # Requests: per relation that samples, the seeds of its destination type, sent to their owners.
        req_rel, req_node, req_pos = [], [], []
        for r, ct in enumerate(etypes):
            s = dst[ntypes.index(ct[2])]
            if fanouts[r] == 0 or len(s) == 0:
                continue
            req_rel.append(np.full(len(s), r, np.int64))
            req_node.append(s)
            req_pos.append(np.arange(len(s), dtype=np.int64))
        rel_col = np.concatenate(req_rel) if req_rel else np.zeros(0, np.int64)
        node_col = np.concatenate(req_node) if req_node else np.zeros(0, np.int64)
        pos_col = np.concatenate(req_pos) if req_pos else np.zeros(0, np.int64)
        owner = np.zeros(len(node_col), np.int64)
        for r, ct in enumerate(etypes):
            at = rel_col == r
            if at.any():
                owner[at] = np.searchsorted(book.node_ranges(ct[2]), node_col[at], side="right") - 1
        order = np.argsort(owner, kind="stable")
        cuts = np.cumsum(np.bincount(owner, minlength=size))[:-1]
        sent = np.split(order, cuts)  # per owner: which request rows went there
        asked = mpi.all_to_all([np.stack([rel_col[o], node_col[o]], axis=1) for o in sent], purpose="sampling")
        replies = self._serve(g, asked, fanouts, layer_key, me)
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
            out.append((ntypes.index(ct[0]), ntypes.index(ct[2]), pos_a, nbr_a, eid_a))
        return out

    def _serve(self, g: DistGraph, asked: list[np.ndarray], fanouts: list[int], layer_key: int,
               me: int) -> list[np.ndarray]:
        """Samples, in this rank's part, the nodes the ranks asked about: per asking rank, rows of
        ``(relation, index of the request row, neighbour, edge id)`` in global ids."""
        ntypes, etypes = g.ntypes, g.canonical_etypes
        book, part = g.get_partition_book(), g.local_partition
        all_rows = np.concatenate(asked) if asked else np.zeros((0, 2), np.int64)
        from_rank = np.repeat(np.arange(len(asked)), [len(a) for a in asked])
        index = np.concatenate([np.arange(len(a)) for a in asked]) if asked else np.zeros(0, np.int64)
        replies: list[list[np.ndarray]] = [[] for _ in asked]
        for r, ct in enumerate(etypes):
            at = np.flatnonzero(all_rows[:, 0] == r)
            if len(at) == 0:
                continue
            start = book.nid_range(me, ct[2])[0]
            local = all_rows[at, 1] - start
            seed_pos, nbr, eid = _C.sampling.sample_neighbors(
                part._rels[ct], local, int(fanouts[r]), False, self.replace, None, None,
                _C.sampling.derive_key(layer_key, r), start)
            rows = np.stack([np.full(len(eid), r, np.int64), index[at][seed_pos],
                             g.local_nid[ct[0]][nbr], g.local_eid[ct][eid]], axis=1)
            who = from_rank[at][seed_pos]
            for p in range(len(asked)):
                replies[p].append(rows[who == p])
        return [np.concatenate(x) if x else np.zeros((0, 4), np.int64) for x in replies]
