"""The global graph as every rank of a partition-and-train job sees it (DGL's ``DistGraph``): each
rank holds one part (:func:`~nodeweave.distributed.load_partition`), and a :class:`DistGraph` over
it answers for the whole graph: counts and types, the partition book, and ``ndata`` / ``edata``
whose rows are fetched from their owners.

Fetching is *collective*: every rank indexes the same feature at the same time (each with its own
ids), and one batched all-to-all exchange carries the requested ids to their owners and another
the rows back. Training loops are bulk-synchronous, so this is how they run anyway; it is what lets
the exchange ride on MPI instead of an RPC server per machine.

>>> import os, tempfile
>>> import numpy as np
>>> import nodeweave as nw
>>> from nodeweave.distributed import DistGraph, partition_graph
>>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
>>> g.ndata["x"] = nw.backend.current().from_numpy(np.arange(8.0).reshape(4, 2))
>>> out = tempfile.mkdtemp()
>>> partition_graph(g, 1, out, graph_name="ring")
>>> dg = DistGraph(os.path.join(out, "ring.json"))     # a job of one: the part is the graph
>>> dg.num_nodes(), dg.num_edges(), dg.ndata["x"].shape
(4, 4, (4, 2))
>>> dg.ndata["x"][[3, 0]].tolist()
[[6.0, 7.0], [0.0, 1.0]]
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Mapping

import numpy as np

from nodeweave import backend
from nodeweave import errors as nwerr
from nodeweave.distributed import mpi
from nodeweave.distributed.part_files import etype_key, load_partition, load_partition_book
from nodeweave.distributed.partition_book import RangePartitionBook
from nodeweave.graph.transforms import EID, NID
from nodeweave.graph.heterograph import as_int_array

__all__ = ["DistGraph", "DistTensor"]


def _numpy(t: Any) -> np.ndarray:
    return np.asarray(backend.current().to_numpy(t))


def exchange_rows(ids: np.ndarray, ranges: np.ndarray, serve: Any) -> tuple[list[np.ndarray], np.ndarray]:
    """The collective at the heart of every fetch: ``ids`` (global) go to their owners by
    ``ranges`` (part ``p`` owns ``ranges[p] .. ranges[p + 1] - 1``); each rank answers what it was
    asked with ``serve(local_ids) -> rows``. Returns the answers per owner and ``order``: the
    answers concatenated are the rows of ``ids[order]``."""
    owners = np.searchsorted(ranges, ids, side="right") - 1
    order = np.argsort(owners, kind="stable")
    counts = np.bincount(owners, minlength=len(ranges) - 1)
    asked = mpi.all_to_all(np.split(ids[order], np.cumsum(counts)[:-1]), purpose="features")
    start = ranges[mpi.rank()]
    return mpi.all_to_all([serve(a - start) for a in asked], purpose="features"), order


def checked_ids(ids: Any, bound: int, what: str) -> np.ndarray:
    """``ids`` as int64, each in ``[0, bound)``: a collective check (:func:`mpi.raise_together`),
    since a rank that raised alone would leave the others waiting in the exchange that follows."""
    error, arr = None, np.zeros(0, np.int64)
    try:
        arr = np.asarray(as_int_array(ids, what)[0], np.int64).reshape(-1)
        bad = (arr < 0) | (arr >= bound)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            error = nwerr.IndexError(f"{what}: id {int(arr[i])} at position {i} is out of range: there are {bound}")
    except (TypeError, ValueError, IndexError) as e:
        error = e
    mpi.raise_together(error, what)
    return arr


class DistTensor:
    """A node or edge feature of a :class:`DistGraph`: ``shape[0]`` rows over the whole graph,
    each held by the part that owns its node or edge. ``t[ids]`` gathers rows (collective: every
    rank calls it together, each with its own ids, possibly none) and returns a tensor of the
    active backend; ``t.local`` is this rank's own rows."""

    def __init__(self, name: str, local: Any, ranges: np.ndarray) -> None:
        self.name = name
        self.local = local
        self._local_np = _numpy(local)
        self._ranges = ranges
        mine = int(ranges[mpi.rank() + 1] - ranges[mpi.rank()])
        if self._local_np.shape[0] != mine:
            raise nwerr.ValueError(f"DistTensor {name!r}: this rank owns {mine} rows but holds "
                                   f"{self._local_np.shape[0]}")

    @property
    def shape(self) -> tuple[int, ...]:
        return (int(self._ranges[-1]),) + tuple(self._local_np.shape[1:])

    @property
    def dtype(self) -> Any:
        return self.local.dtype

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"DistTensor(name={self.name!r}, shape={self.shape}, dtype={self.dtype})"

    def fetch_numpy(self, ids: Any) -> np.ndarray:
        """The rows of ``ids`` as a NumPy array (collective). Each distinct id is sent once."""
        arr = checked_ids(ids, self.shape[0], f"{self.name}[ids]")
        uniq, inverse = np.unique(arr, return_inverse=True)
        got, order = exchange_rows(uniq, self._ranges, lambda local: self._local_np[local])
        rows = np.empty((len(uniq),) + self._local_np.shape[1:], self._local_np.dtype)
        rows[order] = np.concatenate(got) if got else rows[:0]
        return rows[inverse.reshape(-1)]

    def __getitem__(self, ids: Any) -> Any:
        return backend.current().from_numpy(self.fetch_numpy(ids))


class _FeatureView(Mapping):
    """``ndata`` / ``edata`` of one type: feature name -> :class:`DistTensor`."""

    def __init__(self, tensors: dict[str, DistTensor], what: str) -> None:
        self._t = tensors
        self._what = what

    def __getitem__(self, name: str) -> DistTensor:
        if name not in self._t:
            raise nwerr.KeyError(f"{self._what} has no feature {name!r}; it has {sorted(self._t)}")
        return self._t[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._t)

    def __len__(self) -> int:
        return len(self._t)


class _TypeView:
    """``g.nodes[ntype]`` / ``g.edges[etype]``: ``.data`` is that type's features."""

    def __init__(self, data: _FeatureView) -> None:
        self.data = data


class _PerType:
    """``g.nodes`` / ``g.edges``: indexing by a type gives its :class:`_TypeView`."""

    def __init__(self, view: Any) -> None:
        self._view = view

    def __getitem__(self, t: Any) -> _TypeView:
        return _TypeView(self._view(t))


class DistGraph:
    """The whole graph of a partitioning, seen from one rank of the job.

    Parameters
    ----------
    part_config : str or path
        The manifest ``partition_graph`` wrote. The partitioning must have one part per rank
        (``mpirun -np <num_parts>``); rank ``r`` loads part ``r``.

    ``num_nodes``, ``num_edges``, ``ntypes``, ``canonical_etypes``, ``idtype`` describe the whole
    graph (ids in the partitioned numbering). ``ndata[name]`` / ``edata[name]`` (or, per type,
    ``nodes[ntype].data[name]`` / ``edges[etype].data[name]``) are :class:`DistTensor` s.
    ``local_partition`` is this rank's part (local ids, with ``ndata[nw.NID]``, the HALO and the
    ``inner_node`` / ``inner_edge`` masks), ``get_partition_book()`` the range partition book.
    """

    def __init__(self, part_config: str | os.PathLike) -> None:
        rank, size = mpi.init()
        part, node_feats, edge_feats, book, name, ntypes, etypes = self._load(part_config, rank, size)
        self._part, self._book, self.graph_name = part, book, name
        self._ntypes, self._etypes = ntypes, etypes
        self._idtype_name = part._idtype_name
        self._device = "cpu"
        # Global ids of this part's local nodes and edges, per type: the sampler maps what it
        # samples in the part back to the whole graph's ids with them.
        self.local_nid = {nt: _numpy(part.nodes[nt].data[NID]).astype(np.int64) for nt in ntypes}
        self.local_eid = {ct: _numpy(part.edges[ct].data[EID]).astype(np.int64) for ct in etypes}
        self._inner_ends: dict[tuple, np.ndarray] = {}   # per relation: (src, dst) global ids of the inner edges
        self._ndata = {nt: {} for nt in ntypes}
        self._edata = {ct: {} for ct in etypes}
        for key, t in node_feats.items():
            nt, feat = key.split("/", 1)
            self._ndata[nt][feat] = DistTensor(feat, t, book.node_ranges(nt))
        for key, t in edge_feats.items():
            ek, feat = key.split("/", 1)
            ct = next(c for c in etypes if etype_key(c) == ek)
            self._edata[ct][feat] = DistTensor(feat, t, book.edge_ranges(ct))

    @staticmethod
    def _load(part_config: Any, rank: int, size: int) -> tuple:
        book = load_partition_book(part_config, 0)[0]
        if book.num_partitions() != size:
            raise nwerr.ValueError(f"DistGraph: {os.fspath(part_config)!r} has {book.num_partitions()} parts but the "
                                   f"job has {size} ranks; launch one rank per part "
                                   f"(mpirun -np {book.num_partitions()} ...)")
        return load_partition(part_config, rank)

    # ------------------------------------------------------------------ the whole graph
    @property
    def ntypes(self) -> list[str]:
        return list(self._ntypes)

    @property
    def canonical_etypes(self) -> list[tuple[str, str, str]]:
        return list(self._etypes)

    @property
    def etypes(self) -> list[str]:
        return [c[1] for c in self._etypes]

    @property
    def idtype(self) -> Any:
        return self._part.idtype

    def num_nodes(self, ntype: str | None = None) -> int:
        if ntype is None:
            return sum(self._book.num_nodes(nt) for nt in self._ntypes)
        return self._book.num_nodes(ntype)

    def num_edges(self, etype: Any = None) -> int:
        if etype is None:
            return sum(self._book.num_edges(ct) for ct in self._etypes)
        return self._book.num_edges(etype)

    def number_of_nodes(self, ntype: str | None = None) -> int:
        return self.num_nodes(ntype)

    def number_of_edges(self, etype: Any = None) -> int:
        return self.num_edges(etype)

    def to_canonical_etype(self, etype: Any) -> tuple[str, str, str]:
        """The canonical ``(src type, etype, dst type)`` of an edge type name or triple."""
        return self._book._etype(etype)

    def find_edges(self, eids: Any, etype: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``(src, dst)`` global node ids of edges ``eids`` (global ids; collective: every rank
        calls it together, each with its own ids). An edge's owner (its destination's part) holds
        it among its inner edges, so one exchange each way answers it."""
        ct = self._book._etype(etype)
        ids = checked_ids(eids, self.num_edges(ct), "find_edges: eids")
        if ct not in self._inner_ends:
            n_inner = int(np.count_nonzero(_numpy(self._part.edges[ct].data["inner_edge"])))
            u, v = (_numpy(a).astype(np.int64)[:n_inner] for a in self._part.edges(etype=ct, order="eid"))
            self._inner_ends[ct] = np.stack([self.local_nid[ct[0]][u], self.local_nid[ct[2]][v]], axis=1)
        ends = self._inner_ends[ct]
        got, order = exchange_rows(ids, self._book.edge_ranges(ct), lambda local: ends[local])
        rows = np.empty((len(ids), 2), np.int64)
        rows[order] = np.concatenate(got) if got else rows[:0]
        return rows[:, 0].copy(), rows[:, 1].copy()

    def _ids_out(self, arr: np.ndarray) -> Any:
        """Ids as a tensor of the active backend in the graph's id type (as HeteroGraph's)."""
        return backend.current().int_tensor(arr, self._device, self._idtype_name)

    def get_partition_book(self) -> RangePartitionBook:
        return self._book

    @property
    def local_partition(self) -> Any:
        return self._part

    def rank(self) -> int:
        return mpi.rank()

    def _one(self, types: list, what: str) -> Any:
        if len(types) != 1:
            raise nwerr.ValueError(f"the graph has {len(types)} {what}s; use "
                                   f"{'nodes' if what == 'node type' else 'edges'}[type].data instead")
        return types[0]

    @property
    def ndata(self) -> _FeatureView:
        return _FeatureView(self._ndata[self._one(self._ntypes, "node type")], "ndata")

    @property
    def edata(self) -> _FeatureView:
        return _FeatureView(self._edata[self._one(self._etypes, "edge type")], "edata")

    def _node_view(self, ntype: str) -> _FeatureView:
        if ntype not in self._ndata:
            raise nwerr.KeyError(f"no node type {ntype!r}; the graph has {self._ntypes}")
        return _FeatureView(self._ndata[ntype], f"nodes[{ntype!r}].data")

    def _edge_view(self, etype: Any) -> _FeatureView:
        return _FeatureView(self._edata[self._book._etype(etype)], f"edges[{etype!r}].data")

    @property
    def nodes(self) -> _PerType:
        return _PerType(self._node_view)

    @property
    def edges(self) -> _PerType:
        return _PerType(self._edge_view)

    def __repr__(self) -> str:
        return (f"DistGraph(name={self.graph_name!r}, rank={mpi.rank()}/{self._book.num_partitions()}, "
                f"num_nodes={self.num_nodes()}, num_edges={self.num_edges()})")
