"""Mini-batches over a :class:`DistGraph` (DGL's ``node_split`` and ``DistNodeDataLoader``).

:func:`node_split` / :func:`edge_split` give each rank its share of a node or edge set (training
nodes, say), the ones it owns first; :class:`DistNodeDataLoader` cuts a rank's share into batches and samples each with a
:class:`DistNeighborSampler`. Sampling and feature fetching are collective, so every rank runs the
same number of batches: the loader agrees on it when it is built.

Batch ``i`` of epoch ``e`` is sampled with the key ``(seed, e, i)`` on every rank, and a node's
neighbours depend only on that key and the node, so the union of the ranks' batch ``i`` is sampled
exactly as the single-process loader would sample it as one batch: data-parallel training over
``k`` ranks with averaged gradients takes the steps of one process with a ``k`` times larger batch.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from nodeweave import _C, backend
from nodeweave import errors as nwerr
from nodeweave.distributed import mpi
from nodeweave.distributed.dist_graph import DistGraph, DistTensor, checked_ids
from nodeweave.distributed.dist_sampler import DistNeighborSampler

__all__ = ["node_split", "edge_split", "DistNodeDataLoader"]


def _selected_dist(mask: DistTensor, start: int) -> np.ndarray:
    """Sorted global ids where a bool DistTensor is True, on every rank: each rank sends the ids
    of its own rows (from global id ``start``) to every other (rank order is id order under a
    range partition)."""
    mine = np.flatnonzero(backend.current().to_numpy(mask.local).astype(bool)).astype(np.int64) + start
    return np.concatenate(mpi.all_to_all([mine] * mpi.world_size()))


def _split(items: Any, book: Any, kind: str, type_: Any, rank: int | None, force_even: bool,
           graph: DistGraph | None) -> np.ndarray:
    """``node_split`` / ``edge_split``: ``kind`` is 'node' or 'edge', ``type_`` the node or edge type."""
    fn = f"{kind}_split"
    if graph is None and isinstance(items, DistTensor):
        raise nwerr.ValueError(f"{fn}: pass graph=<the DistGraph> to split a DistTensor mask")
    book = graph.get_partition_book() if graph is not None else book
    if book is None:
        raise nwerr.ValueError(f"{fn}: pass partition_book or graph")
    size = book.num_partitions()
    me = mpi.rank() if rank is None else int(rank)
    if not 0 <= me < size:
        raise nwerr.ValueError(f"{fn}: rank must be in [0, {size}), got {me}")
    if kind == "node":
        t = book._ntype(type_)
        count, owned = book.num_nodes(t), book.nid_range(me, t)
    else:
        t = book._etype(type_)
        count, owned = book.num_edges(t), book.eid_range(me, t)
    if isinstance(items, DistTensor):
        ids = _selected_dist(items, owned[0])
    else:
        ids = _selected_plain(items, count, fn, kind)
    if not force_even:
        return ids[(ids >= owned[0]) & (ids < owned[1])]
    cut = [len(ids) * r // size for r in range(size + 1)]
    return ids[cut[me]:cut[me + 1]]


def node_split(nodes: Any, partition_book: Any = None, ntype: str | None = None, rank: int | None = None,
               force_even: bool = True, *, graph: DistGraph | None = None) -> np.ndarray:
    """This rank's share of a node set (DGL's ``node_split``).

    Parameters
    ----------
    nodes : bool mask over the type's nodes, ids, or a bool :class:`DistTensor` (``g.ndata['train_mask']``)
        The node set; a mask or ids must be the same on every rank.
    partition_book, graph
        The :class:`~nodeweave.distributed.RangePartitionBook` (``g.get_partition_book()``), or
        the DistGraph itself via ``graph=``; a DistTensor needs ``graph``.
    force_even : bool
        True: the sorted set is cut into ``world_size`` consecutive slices whose sizes differ by at
        most one (with range partitions, a rank's slice is mostly nodes it owns). False: each rank
        takes the nodes it owns.

    Returns the global ids (int64 NumPy array, ascending).
    """
    return _split(nodes, partition_book, "node", ntype, rank, force_even, graph)


def edge_split(edges: Any, partition_book: Any = None, etype: Any = None, rank: int | None = None,
               force_even: bool = True, *, graph: DistGraph | None = None) -> np.ndarray:
    """This rank's share of an edge set (DGL's ``edge_split``), for :class:`DistEdgeDataLoader`:
    as :func:`node_split`, over the edges of ``etype`` (an edge is owned by its destination's part).

    >>> import numpy as np
    >>> from nodeweave.distributed import RangePartitionBook, edge_split
    >>> book = RangePartitionBook(0, {"_N": [0, 3, 6]}, {("_N", "_E", "_N"): [0, 4, 8]})
    >>> edge_split(np.arange(8) % 3 == 0, book, rank=1).tolist()     # edges 0, 3, 6 cut in two
    [3, 6]
    >>> edge_split(np.arange(8) % 3 == 0, book, rank=1, force_even=False).tolist()   # owns 4..7
    [6]
    >>> edge_split([0, 5, 7, 1], book, rank=0).tolist()
    [0, 1]
    """
    return _split(edges, partition_book, "edge", etype, rank, force_even, graph)


def _selected_plain(items: Any, n: int, fn: str, kind: str) -> np.ndarray:
    arr = items if isinstance(items, np.ndarray) else np.asarray(
        items if isinstance(items, (list, tuple)) else backend.current().to_numpy(items))
    if arr.dtype == np.bool_:
        if arr.shape != (n,):
            raise nwerr.ValueError(f"{fn}: a mask must have one entry per {kind} ({n}), got shape {arr.shape}")
        return np.flatnonzero(arr).astype(np.int64)
    arr = arr.astype(np.int64).reshape(-1)
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        raise nwerr.IndexError(f"{fn}: {kind} id {int(arr[bad][0])} is out of range: there are {n}")
    ids = np.unique(arr)
    if len(ids) != arr.size:
        raise nwerr.ValueError(f"{fn}: {kind}s hold repeated ids")
    return ids


class DistBatchLoader:
    """What the distributed loaders share: the batch count every rank agrees on, the per-epoch
    order, the batch keys and the resumable iteration over ``items`` (this rank's node or edge
    ids). Subclasses implement :meth:`sample_batch`."""

    _what = "items"

    def __init__(self, g: DistGraph, items: Any, num_items: int, batch_size: int, shuffle: bool,
                 drop_last: bool, seed: int | None) -> None:
        name = type(self).__name__
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise nwerr.ValueError(f"{name}: batch_size must be a positive int, got {batch_size!r}")
        self.graph, self.batch_size = g, int(batch_size)
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        self.items = checked_ids(items, num_items, f"{name}: {self._what}")
        size = mpi.world_size()
        mine = np.zeros((2, size), np.int64)
        mine[0, mpi.rank()] = len(self.items)
        # 63 bits, to travel in an int64 reduction (a drawn seed uses all 64 half of the time)
        mine[1, mpi.rank()] = (_C.sampling.draw_seed() if seed is None else int(seed)) & ((1 << 63) - 1)
        mpi.all_reduce_in_place(mine)
        counts = mine[0]
        self.seed = int(mine[1, 0])
        per_rank = counts // self.batch_size if self.drop_last else -(-counts // self.batch_size)
        self.num_batches = int(per_rank.min() if self.drop_last else per_rank.max())
        if not self.drop_last and (counts < self.num_batches).any():
            r = int(np.flatnonzero(counts < self.num_batches)[0])
            raise nwerr.ValueError(f"{name}: rank {r} has {int(counts[r])} {self._what}, too few for the "
                                   f"{self.num_batches} batches the other ranks need; split them evenly "
                                   "(node_split(..., force_even=True)) or pass drop_last=True")
        self._epoch = 0

    def __len__(self) -> int:
        return self.num_batches

    def _order(self, epoch: int) -> np.ndarray:
        if not self.shuffle:
            return self.items
        key = _C.sampling.derive_key(_C.sampling.derive_key(self.seed, epoch), 0x5EED + mpi.rank())
        return self.items[np.random.Generator(np.random.PCG64(key)).permutation(len(self.items))]

    def batch_key(self, epoch: int, i: int) -> int:
        """The sampling key of batch ``i`` of ``epoch`` (the same on every rank)."""
        return _C.sampling.derive_key(_C.sampling.derive_key(self.seed, epoch), i)

    def sample_batch(self, ids: np.ndarray, key: int) -> tuple:
        """One batch of ``ids`` sampled with ``key`` (collective)."""
        raise nwerr.NotImplementedError(f"{type(self).__name__} must implement sample_batch")

    def batches(self, epoch: int, start: int = 0) -> Iterator[tuple]:
        """The batches of ``epoch`` from batch ``start`` on."""
        order = self._order(epoch)
        bs, nb = self.batch_size, self.num_batches
        regular = self.drop_last or -(-len(order) // bs) == nb
        parts = [order[i * bs:(i + 1) * bs] for i in range(nb)] if regular else np.array_split(order, nb)
        for i in range(start, self.num_batches):
            yield self.sample_batch(parts[i], self.batch_key(epoch, i))

    def __iter__(self) -> Iterator[tuple]:
        epoch = self._epoch
        self._epoch += 1
        return self.batches(epoch)


def prefetch_node_features(g: DistGraph, blocks: list, input_nodes: Any, output_nodes: Any,
                           node_feats: Sequence[str], labels: Sequence[str]) -> None:
    """Fetches ``node_feats`` into ``blocks[0].srcdata`` and ``labels`` into ``blocks[-1].dstdata``."""
    inp = backend.current().to_numpy(input_nodes)
    out = backend.current().to_numpy(output_nodes)
    for name in node_feats:
        blocks[0].srcdata[name] = g.ndata[name][inp]
    for name in labels:
        blocks[-1].dstdata[name] = g.ndata[name][out]


class DistNodeDataLoader(DistBatchLoader):
    """Batches of this rank's nodes, sampled over the whole graph (DGL's ``DistNodeDataLoader``).

    Parameters
    ----------
    g : DistGraph
    nids : ids
        This rank's seed nodes (``node_split``), global ids.
    graph_sampler : DistNeighborSampler
    batch_size : int
    shuffle : bool
        A new order every epoch, from ``(seed, epoch, rank)``.
    drop_last : bool
        Every rank runs the smallest batch count of any rank, in full batches. Otherwise every
        rank runs the largest, a rank with fewer nodes spreading them over as many (smaller)
        batches.
    seed : int, optional
        The sampling seed; rank 0's is used everywhere (drawn when omitted).
    prefetch_node_feats, prefetch_labels : list of str
        Node features fetched into ``blocks[0].srcdata`` and ``blocks[-1].dstdata`` for every batch.

    Iterating yields ``(input_nodes, output_nodes, blocks)``; :meth:`batches` ``(epoch, start)``
    yields the batches of one epoch from batch ``start`` (to resume mid-epoch).
    """

    _what = "nodes"

    def __init__(self, g: DistGraph, nids: Any, graph_sampler: DistNeighborSampler, batch_size: int,
                 shuffle: bool = False, drop_last: bool = False, seed: int | None = None,
                 prefetch_node_feats: Sequence[str] = (), prefetch_labels: Sequence[str] = ()) -> None:
        if not isinstance(g, DistGraph):
            raise nwerr.TypeError(f"DistNodeDataLoader: g must be a DistGraph, got {type(g).__name__}")
        if not isinstance(graph_sampler, DistNeighborSampler):
            raise nwerr.TypeError("DistNodeDataLoader: graph_sampler must be a DistNeighborSampler, got "
                                  f"{type(graph_sampler).__name__}")
        if len(g.ntypes) != 1:
            raise nwerr.ValueError("DistNodeDataLoader: seeds of one node type only (the graph has "
                                   f"{len(g.ntypes)}); sample heterographs with DistNeighborSampler.sample_blocks")
        for name in list(prefetch_node_feats) + list(prefetch_labels):
            g.ndata[name]  # KeyError now, naming the feature, rather than at the first batch
        self.graph_sampler = graph_sampler
        self.prefetch_node_feats, self.prefetch_labels = list(prefetch_node_feats), list(prefetch_labels)
        super().__init__(g, nids, g.num_nodes(), batch_size, shuffle, drop_last, seed)

    @property
    def nids(self) -> np.ndarray:
        return self.items

    def sample_batch(self, ids: np.ndarray, key: int) -> tuple[Any, Any, list]:
        input_nodes, output_nodes, blocks = self.graph_sampler.sample_blocks(self.graph, ids, random_seed=key)
        prefetch_node_features(self.graph, blocks, input_nodes, output_nodes, self.prefetch_node_feats,
                               self.prefetch_labels)
        return input_nodes, output_nodes, blocks
