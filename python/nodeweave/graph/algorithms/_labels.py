"""What the homophily measures and label informativeness share: the one relation of the graph with
its node labels checked at the boundary, and the symmetric simple edge set that the "adjusted" and
"informativeness" measures count on (DGL's ``to_bidirected`` of the graph).

>>> import nodeweave as nw, numpy as np
>>> src, dst, y = labelled_edges(nw.graph(([0, 1], [1, 1])), [3, 5], "edge_homophily")
>>> src.tolist(), dst.tolist(), y.tolist()
([0, 1], [1, 1], [3, 5])
>>> [a.tolist() for a in symmetric_pairs(src, dst, 2)]   # 0 <-> 1 both ways, the self-loop once
[[0, 1, 1], [1, 0, 1]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave.graph.algorithms._walk import walk_relation
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave import errors as nwerr


def labelled_edges(graph: HeteroGraph, y: Any, fn: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(src, dst, y)`` as int64 NumPy arrays: the edges of the graph's only relation (from a node
    type to itself) and one non-negative integer label per node (``y`` a tensor of either backend,
    a NumPy array or a list)."""
    ct, _ = walk_relation(graph, fn)
    B = backend.of(y)
    labels = B.to_numpy(y) if B is not None else np.asarray(y)
    n = graph.num_nodes(ct[0])
    if labels.dtype.kind not in "iu" and not (labels.size == 0 and labels.dtype.kind == "f"):
        raise nwerr.TypeError(f"{fn}: y must hold integer class labels, got dtype {labels.dtype}")
    if labels.ndim != 1 or labels.shape[0] != n:
        raise nwerr.ValueError(f"{fn}: y must have shape ({n},), one label per node, got {tuple(labels.shape)}")
    labels = labels.astype(np.int64)
    if labels.size and labels.min() < 0:
        raise nwerr.ValueError(f"{fn}: y must hold non-negative class labels, got {int(labels.min())}")
    src, dst = (a.astype(np.int64) for a in graph._coo(ct))
    return src, dst, labels


def symmetric_pairs(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair ``(u, v)`` such that an edge joins ``u`` and ``v`` either way, once (a
    self-loop once), sorted."""
    keys = np.unique(np.concatenate([src * n + dst, dst * n + src]))
    return keys // max(n, 1), keys % max(n, 1)
