"""Greedy neighbour matching, the edge-coarsening step of METIS and Graclus (DGL's
``dgl.geometry.neighbor_matching``, used by graclus pooling), by the C++ kernel of
``graph/neighbor_matching.h``.

Two disjoint edges, each stored in both directions: each pair is one cluster, whatever the order the
nodes are visited in.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1, 2, 3], [1, 0, 3, 2]))
>>> nw.geometry.neighbor_matching(g).tolist()
[0, 0, 1, 1]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.algorithms._walk import walk_relation
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.sampling._seed import resolve_seed
from nodeweave.transforms._checks import flag
from nodeweave import errors as nwerr

__all__ = ["neighbor_matching"]

_FN = "neighbor_matching"


def neighbor_matching(graph: HeteroGraph, e_weights: Any = None, relabel_idx: bool = True) -> Any:
    """Pairs up neighbouring nodes of an undirected graph, greedily, for graph coarsening.

    The nodes are visited in a random order. A visited node that is not yet in a pair is paired with
    one of its neighbours that is not in a pair either: the one across the heaviest edge when
    ``e_weights`` are given, a random one otherwise; with no such neighbour it stays alone. Each
    cluster is then one node or the two ends of an edge, and the matching is maximal: no edge joins
    two nodes left alone.

    Parameters
    ----------
    graph : HeteroGraph
        A graph with one edge type from a node type to itself that is bidirected: every edge
        ``u -> v`` has its reverse ``v -> u`` (:func:`nodeweave.to_bidirected` makes one).
        Parallel edges count once; self-loops are ignored.
    e_weights : tensor, optional
        One finite, non-negative floating point weight per edge (a tensor of either backend or a
        NumPy array). The visiting node ``u`` compares the weights of its own edges ``u -> v``, so
        the two directions of an edge may weigh differently; a tie goes to the edge of lowest id.
    relabel_idx : bool
        Number the clusters ``0 .. k-1`` (in the order of each cluster's smallest node). Otherwise
        a cluster's id is its smallest node.

    Returns
    -------
    tensor of shape ``(N,)``
        The cluster of each node, in the graph's id type, of the active backend, on the graph's
        device.

    The random visiting order (and, without weights, the random choice of neighbour) comes from
    nodeweave's generator: :func:`nodeweave.seed` makes the matching repeatable.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> path = nw.to_bidirected(nw.graph(([0, 1, 2], [1, 2, 3])))      # 0 - 1 - 2 - 3
    >>> w = nc.tensor([1.0, 1.0, 5.0, 5.0, 1.0, 1.0])                    # 1 - 2 is heavy
    >>> [(int(u), int(v)) for u, v in zip(*path.edges())]
    [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)]
    >>> nw.seed(0)
    >>> labels = nw.geometry.neighbor_matching(path, w, relabel_idx=False)
    >>> labels.tolist() in ([0, 1, 1, 3], [0, 0, 2, 2])    # 1 - 2 taken unless 0 or 3 comes first
    True
    >>> nw.geometry.neighbor_matching(nw.graph(([0], [1])))
    Traceback (most recent call last):
    ...
    nodeweave.errors.ValueError: neighbor_matching: the graph must be bidirected (every edge u -> v with its reverse v -> u), but edge 0 (0 -> 1) has no reverse; make it so with to_bidirected(g)
    """
    _, rel = walk_relation(graph, _FN)
    relabel = flag(relabel_idx, "relabel_idx", _FN)
    weights = None if e_weights is None else _weights(e_weights)
    labels = _C.neighbor_matching(rel, weights, resolve_seed(None), relabel)
    return backend.current().int_tensor(labels, graph._device, graph._idtype_name)


def _weights(e_weights: Any) -> np.ndarray:
    """``e_weights`` as a float32/float64 host array (length, sign and finiteness are checked by the
    kernel, naming ``e_weights``)."""
    B = backend.of(e_weights)
    if B is not None:
        arr = B.to_numpy(e_weights)
    elif isinstance(e_weights, np.ndarray):
        arr = e_weights
    else:
        raise nwerr.TypeError(f"{_FN}: e_weights must be a tensor of edge weights or None, "
                              f"got {type(e_weights).__name__}")
    if arr.dtype.kind != "f":
        raise nwerr.TypeError(f"{_FN}: e_weights must hold floating point weights, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.float64 if arr.dtype == np.float64 else np.float32)
