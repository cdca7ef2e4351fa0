"""Unweighted shortest distances and paths (DGL's ``dgl.shortest_dist``), computed by a breadth-first
search per root in C++ (``graph/shortest_dist.h``), the roots spread over the threads.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1, 1, 2], [2, 0, 3, 3]))
>>> nw.shortest_dist(g, root=0).tolist()
[0, -1, 1, 2]
>>> dist, paths = nw.shortest_dist(g, return_paths=True)
>>> dist.tolist()
[[0, -1, 1, 2], [1, 0, 2, 1], [-1, -1, 0, 1], [-1, -1, -1, 0]]
>>> paths[1].tolist()           # from node 1: to 0 by edge 1, to 2 by edges 1 then 0, to 3 by edge 2
[[1, -1], [-1, -1], [1, 0], [2, -1]]
"""

from __future__ import annotations

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.algorithms._walk import walk_nodes, walk_relation
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.transforms._checks import flag
from nodeweave import errors as nwerr

__all__ = ["shortest_dist"]


def shortest_dist(g: HeteroGraph, root: int | None = None, return_paths: bool = False):
    """Hop counts of the shortest directed paths (every edge followed from source to destination),
    from ``root`` or between all pairs of nodes.

    Parameters
    ----------
    g : HeteroGraph
        A graph with one edge type from a node type to itself.
    root : int, optional
        The node to measure from (an int or a one-element tensor); every node when None.
    return_paths : bool
        Also return one shortest path per pair.

    Returns
    -------
    dist : int64 tensor
        Shape ``(N,)`` for a root (``dist[j]``: hops from ``root`` to ``j``), else ``(N, N)``
        (``dist[i, j]``: from ``i`` to ``j``); -1 where there is no path, 0 from a node to itself.
    paths : int64 tensor, with ``return_paths``
        Shape ``(N, L)`` for a root, else ``(N, N, L)``, ``L`` the longest distance found: the edge
        ids along the path, then -1 up to ``L`` (all -1 from a node to itself and where there is no
        path). Of several shortest paths, the one given is the first a BFS from the root finds when
        it takes each node's out-edges in increasing edge id (so among parallel edges, the lowest id).

    Tensors are the active backend's, on the graph's device.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 0, 1], [1, 1, 2]))      # two parallel edges 0 -> 1
    >>> dist, paths = nw.shortest_dist(g, root=0, return_paths=True)
    >>> dist.tolist(), paths.tolist()
    ([0, 1, 2], [[-1, -1], [0, -1], [0, 2]])
    """
    fn = "shortest_dist"
    ct, rel = walk_relation(g, fn)
    with_paths = flag(return_paths, "return_paths", fn)
    n = g.num_nodes(ct[0])
    if root is None:
        roots = np.arange(n, dtype=np.int64)
    else:
        roots = walk_nodes(g, ct, root, "root", fn)
        if roots.size != 1:
            raise nwerr.ValueError(f"{fn}: root must be one node id (or None for all pairs), got {roots.size} ids")
    dist, paths = _C.shortest_paths(rel, roots, with_paths)
    if root is not None:
        dist = dist[0]
        paths = None if paths is None else paths[0]
    B = backend.current()
    out = B.int_tensor(dist, g._device, "int64")
    if not with_paths:
        return out
    return out, B.int_tensor(paths, g._device, "int64")
