"""Degree bucketing for user-defined reducers: the destination nodes that receive mail, grouped by
in-degree, with their in-edges laid out bucket after bucket.

A user-defined reducer sees a mailbox of shape ``(nodes, degree, ...)``, so nodes of one in-degree
are reduced together (DGL's degree bucketing). The messages are gathered **once** into bucket
order and split into one contiguous piece per bucket, instead of one gather per bucket: a gather's
gradient is a scatter into a zero tensor as large as all the messages, so per-bucket gathers cost
``buckets x edges`` in the backward pass (511 buckets on R-MAT 2^18), while the one gather and the
split cost ``edges``.

>>> import numpy as np
>>> from nodeweave.graph.degree_buckets import DegreeBuckets
>>> # in-edges of 4 nodes in CSC form: node 0 none, node 1 two (edge ids 3, 0), nodes 2 and 3 one each
>>> b = DegreeBuckets(np.array([0, 0, 2, 3, 4]), np.array([3, 0, 1, 2]))
>>> [(int(d), n.tolist()) for d, n in b.buckets()]
[(1, [2, 3]), (2, [1])]
>>> b.edge_order.tolist(), b.edge_counts
([1, 2, 3, 0], [2, 2])
"""

from __future__ import annotations

from typing import Iterator

import numpy as np


class DegreeBuckets:
    """Buckets of the nodes with in-edges, from a CSC ``indptr`` and the edge id of each CSC
    position (``eids``).

    - ``nodes``: those nodes by ascending in-degree, ascending id within a degree (stable);
    - ``edge_order``: edge ids bucket by bucket, each node's in-edges in CSC order, so that
      ``messages[edge_order]`` split by ``edge_counts`` gives each bucket's mailbox rows;
    - ``edge_counts``: edges per bucket (``nodes in bucket * degree``).
    """

    def __init__(self, indptr: np.ndarray, eids: np.ndarray) -> None:
        indptr = np.asarray(indptr, dtype=np.int64)
        deg = np.diff(indptr)
        order = np.argsort(deg, kind="stable")
        self.nodes = order[deg[order] > 0]
        self._deg = deg[self.nodes]
        # Bucket boundaries: where the (sorted) degree changes.
        cuts = np.flatnonzero(np.diff(self._deg)) + 1
        self._starts = np.concatenate([[0], cuts]).astype(np.int64)
        self._ends = np.concatenate([cuts, [self.nodes.size]]).astype(np.int64)
        # CSC positions of each node's in-edges, nodes in bucket order: position p of the output
        # belongs to node k when offsets[k] <= p < offsets[k + 1], at indptr[node k] + p - offsets[k].
        total = int(self._deg.sum())
        offsets = np.cumsum(self._deg) - self._deg
        pos = np.repeat(indptr[self.nodes] - offsets, self._deg) + np.arange(total, dtype=np.int64)
        self.edge_order = np.asarray(eids, dtype=np.int64)[pos]
        self.edge_counts = [int(c) for c in (self._ends - self._starts) * self._deg[self._starts]] \
            if self.nodes.size else []

    def __len__(self) -> int:
        return len(self.edge_counts)

    def buckets(self) -> Iterator[tuple[int, np.ndarray]]:
        """(degree, nodes) of each bucket, by ascending degree."""
        for s, e in zip(self._starts, self._ends):
            if e > s:
                yield int(self._deg[s]), self.nodes[s:e]
