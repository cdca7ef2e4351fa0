"""The range partition book (DGL's ``RangePartitionBook``): after :func:`partition_graph` every part
owns one contiguous range of node ids per node type and of edge ids per edge type, so owners and
local ids follow from the range offsets by a binary search, with no per-node table.

Ids are per type: node ``i`` of type ``t`` is the ``i``-th of that type in the partitioned
numbering. The homogeneous numbering (DGL's ``dgl.NID`` of a partition) puts part 0's nodes first,
type by type, then part 1's, and so on; :meth:`~RangePartitionBook.map_to_homo_nid` and
:meth:`~RangePartitionBook.map_to_per_ntype` convert.

>>> import numpy as np
>>> book = RangePartitionBook(0, {"_N": np.array([0, 3, 5])}, {("_N", "_E", "_N"): np.array([0, 4, 9])})
>>> book.nid2partid([0, 2, 3, 4]).tolist(), book.partid2nids(1).tolist()
([0, 0, 1, 1], [3, 4])
>>> book.nid2localnid([3, 4], 1).tolist(), book.eid2partid([8]).tolist()
([0, 1], [1])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave import errors as nwerr
from nodeweave.graph.heterograph import IdRangeError, as_int_array

__all__ = ["RangePartitionBook"]


class RangePartitionBook:
    """Owner part and local id of every node and edge, from per-type range offsets.

    Parameters
    ----------
    part_id : int
        The part this book was loaded for (``partid``).
    node_ranges : dict ntype -> int array of num_parts + 1 offsets
        Part ``p`` owns the ids ``node_ranges[t][p] .. node_ranges[t][p + 1] - 1`` of type ``t``.
    edge_ranges : dict canonical etype -> int array of num_parts + 1 offsets
        Likewise per canonical edge type; an edge belongs to its destination node's part.

    Methods taking ``ntype`` / ``etype`` accept None when the graph has a single one; ``etype`` is
    an edge type name (when unique) or a canonical ``(src, etype, dst)`` tuple. Ids are accepted as
    ints, sequences, NumPy arrays or tensors; results are int64 tensors of the active backend.
    """

    def __init__(self, part_id: int, node_ranges: dict[str, Any], edge_ranges: dict[tuple, Any]) -> None:
        self._node = {nt: np.asarray(r, np.int64) for nt, r in node_ranges.items()}
        self._edge = {tuple(ct): np.asarray(r, np.int64) for ct, r in edge_ranges.items()}
        lengths = {len(r) for r in list(self._node.values()) + list(self._edge.values())}
        if len(lengths) != 1 or min(lengths) < 2:
            raise nwerr.ValueError(f"RangePartitionBook: every range must hold num_parts + 1 >= 2 offsets, got lengths "
                                   f"{sorted(lengths)}")
        for what, r in list(self._node.items()) + list(self._edge.items()):
            if r[0] != 0 or (np.diff(r) < 0).any():
                raise nwerr.ValueError(f"RangePartitionBook: the ranges of {what!r} must start at 0 and never decrease, "
                                       f"got {r.tolist()}")
        self._num_parts = lengths.pop() - 1
        if not 0 <= part_id < self._num_parts:
            raise nwerr.ValueError(f"RangePartitionBook: part_id must be in [0, {self._num_parts}), got {part_id}")
        self._part_id = int(part_id)
        ntypes = list(self._node)
        self._part_start = np.zeros(self._num_parts + 1, np.int64)  # homogeneous id of each part's first node
        self._part_start[1:] = np.cumsum(sum(np.diff(self._node[nt]) for nt in ntypes)) if ntypes else 0

    # ------------------------------------------------------------------ types and sizes
    @property
    def partid(self) -> int:
        """The part this book was loaded for."""
        return self._part_id

    def num_partitions(self) -> int:
        return self._num_parts

    @property
    def ntypes(self) -> list[str]:
        return list(self._node)

    @property
    def canonical_etypes(self) -> list[tuple[str, str, str]]:
        return list(self._edge)

    @property
    def etypes(self) -> list[str]:
        return [ct[1] for ct in self._edge]

    def _ntype(self, ntype: str | None) -> str:
        if ntype is None:
            if len(self._node) != 1:
                raise nwerr.ValueError(f"ntype must be given: the graph has node types {self.ntypes}")
            return next(iter(self._node))
        if ntype not in self._node:
            raise nwerr.ValueError(f"ntype {ntype!r} is not among the node types {self.ntypes}")
        return ntype

    def _etype(self, etype: Any) -> tuple:
        if etype is None:
            if len(self._edge) != 1:
                raise nwerr.ValueError(f"etype must be given: the graph has edge types {self.canonical_etypes}")
            return next(iter(self._edge))
        if isinstance(etype, tuple):
            if etype not in self._edge:
                raise nwerr.ValueError(f"etype {etype!r} is not among the edge types {self.canonical_etypes}")
            return etype
        hits = [ct for ct in self._edge if ct[1] == etype]
        if len(hits) != 1:
            raise nwerr.ValueError(f"etype {etype!r} " + ("is ambiguous: give one of " if hits else
                                   "is not among the edge types ") + str(hits or self.canonical_etypes))
        return hits[0]

    def num_nodes(self, ntype: str | None = None) -> int:
        return int(self._node[self._ntype(ntype)][-1])

    def num_edges(self, etype: Any = None) -> int:
        return int(self._edge[self._etype(etype)][-1])

    def metadata(self) -> list[dict[str, int]]:
        """One dict per part: ``machine_id`` (the part id), ``num_nodes`` and ``num_edges`` it owns."""
        nodes = sum(np.diff(r) for r in self._node.values()) if self._node else np.zeros(self._num_parts, np.int64)
        edges = sum(np.diff(r) for r in self._edge.values()) if self._edge else np.zeros(self._num_parts, np.int64)
        return [{"machine_id": p, "num_nodes": int(nodes[p]), "num_edges": int(edges[p])} for p in range(self._num_parts)]

    def node_ranges(self, ntype: str | None = None) -> np.ndarray:
        """The num_parts + 1 offsets of ``ntype``'s ranges (a copy)."""
        return self._node[self._ntype(ntype)].copy()

    def edge_ranges(self, etype: Any = None) -> np.ndarray:
        """The num_parts + 1 offsets of ``etype``'s ranges (a copy)."""
        return self._edge[self._etype(etype)].copy()

    # ------------------------------------------------------------------ lookups
    def _part(self, partid: Any) -> int:
        if isinstance(partid, (bool, np.bool_)) or not isinstance(partid, (int, np.integer)):
            raise nwerr.TypeError(f"partid must be an int, got {partid!r}")
        if not 0 <= partid < self._num_parts:
            raise IdRangeError(f"partid {int(partid)} is out of range for {self._num_parts} parts")
        return int(partid)

    @staticmethod
    def _ids(ids: Any, bound: int, name: str) -> np.ndarray:
        arr, _ = as_int_array(ids, name)
        bad = (arr < 0) | (arr >= bound)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise IdRangeError(f"{name}[{i}] = {int(arr[i])} is out of range: there are {bound}")
        return arr

    @staticmethod
    def _out(arr: np.ndarray) -> Any:
        return backend.current().int_tensor(arr, "cpu", "int64")

    def _owner(self, ranges: np.ndarray, ids: np.ndarray) -> np.ndarray:
        # side="right" skips the empty ranges of parts that own none of this type
        return np.searchsorted(ranges, ids, side="right") - 1

    def nid2partid(self, nids: Any, ntype: str | None = None) -> Any:
        """The owner part of each node id of ``ntype``."""
        r = self._node[self._ntype(ntype)]
        return self._out(self._owner(r, self._ids(nids, int(r[-1]), "nids")))

    def eid2partid(self, eids: Any, etype: Any = None) -> Any:
        """The owner part of each edge id of ``etype`` (its destination's part)."""
        r = self._edge[self._etype(etype)]
        return self._out(self._owner(r, self._ids(eids, int(r[-1]), "eids")))

    def partid2nids(self, partid: int, ntype: str | None = None) -> Any:
        """The node ids of ``ntype`` that part ``partid`` owns (one contiguous range)."""
        r, p = self._node[self._ntype(ntype)], self._part(partid)
        return self._out(np.arange(r[p], r[p + 1], dtype=np.int64))

    def partid2eids(self, partid: int, etype: Any = None) -> Any:
        r, p = self._edge[self._etype(etype)], self._part(partid)
        return self._out(np.arange(r[p], r[p + 1], dtype=np.int64))

    def nid_range(self, partid: int, ntype: str | None = None) -> tuple[int, int]:
        """``(start, end)``: part ``partid`` owns node ids ``start .. end - 1`` of ``ntype``."""
        r, p = self._node[self._ntype(ntype)], self._part(partid)
        return int(r[p]), int(r[p + 1])

    def eid_range(self, partid: int, etype: Any = None) -> tuple[int, int]:
        r, p = self._edge[self._etype(etype)], self._part(partid)
        return int(r[p]), int(r[p + 1])

    def _local(self, r: np.ndarray, ids: Any, partid: int, name: str) -> Any:
        p = self._part(partid)
        arr = self._ids(ids, int(r[-1]), name)
        outside = (arr < r[p]) | (arr >= r[p + 1])
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise nwerr.ValueError(f"{name}[{i}] = {int(arr[i])} is not owned by part {p} (it owns "
                                   f"{int(r[p])} .. {int(r[p + 1]) - 1})")
        return self._out(arr - r[p])

    def nid2localnid(self, nids: Any, partid: int, ntype: str | None = None) -> Any:
        """Local ids, in part ``partid``, of node ids it owns (its inner nodes come first, in id order)."""
        return self._local(self._node[self._ntype(ntype)], nids, partid, "nids")

    def eid2localeid(self, eids: Any, partid: int, etype: Any = None) -> Any:
        """Local ids, in part ``partid``, of edge ids it owns (its inner edges come first, in id order)."""
        return self._local(self._edge[self._etype(etype)], eids, partid, "eids")

    # ------------------------------------------------------------------ homogeneous ids
    def map_to_homo_nid(self, ids: Any, ntype: str | None = None) -> Any:
        """Homogeneous ids (parts in order, node types in order inside a part) of ``ntype``'s ids."""
        nt = self._ntype(ntype)
        r = self._node[nt]
        arr = self._ids(ids, int(r[-1]), "ids")
        p = self._owner(r, arr)
        before = np.zeros(self._num_parts, np.int64)  # nodes of the earlier types in each part
        for other in self._node:
            if other == nt:
                break
            before += np.diff(self._node[other])
        return self._out(self._part_start[p] + before[p] + arr - r[p])

    def map_to_per_ntype(self, ids: Any) -> tuple[Any, Any]:
        """``(node type index, per-type id)`` of homogeneous ids."""
        arr = self._ids(ids, int(self._part_start[-1]), "ids")
        p = np.searchsorted(self._part_start, arr, side="right") - 1
        rest = arr - self._part_start[p]
        types = np.zeros(len(arr), np.int64)
        out = np.zeros(len(arr), np.int64)
        done = np.zeros(len(arr), bool)
        for t, r in enumerate(self._node.values()):
            count = np.diff(r)[p]
            here = ~done & (rest < count)
            types[here], out[here] = t, r[p[here]] + rest[here]
            done |= here
            rest = np.where(done, rest, rest - count)
        return self._out(types), self._out(out)
