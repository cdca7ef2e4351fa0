"""Traversal orders as frontiers, as DGL's ``dgl.traversal`` returns them: breadth-first node and edge
frontiers, topological layers, and depth-first edges, optionally labelled forward, reverse or
non-tree.

Each function returns a list of 1-D tensors of the active backend, one per frontier, on the graph's
device: node or edge ids of the graph's id type (DFS labels are int64). The walk itself runs in C++
(``graph/traversal.h``) on the graph's CPU copy. Within a frontier, ids come in the order the walk
met them, taking each node's edges in increasing edge id, so the frontiers are the same on every run.

Given the graph (edge ids in brackets)::

          2 -[4]- 4
       [1]  [3]
    0 -[0]- 1 -[2]- 3 -[5]- 5

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1, 1, 2, 2, 3], [1, 2, 3, 3, 4, 5]))
>>> [f.tolist() for f in nw.bfs_nodes_generator(g, 0)]
[[0], [1], [2, 3], [4, 5]]
>>> [f.tolist() for f in nw.bfs_edges_generator(g, 0)]
[[0], [1, 2], [4, 5]]
>>> [f.tolist() for f in nw.topological_nodes_generator(g)]
[[0], [1], [2], [3, 4], [5]]
>>> [f.tolist() for f in nw.dfs_edges_generator(g, 0)]
[[0], [1], [3], [5], [4]]
>>> edges, labels = nw.dfs_labeled_edges_generator(g, 0, has_nontree_edge=True)
>>> [f.tolist() for f in edges], [f.tolist() for f in labels]
([[0], [1], [3], [5], [4], [2]], [[0], [0], [0], [0], [0], [2]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.algorithms._walk import walk_nodes, walk_relation
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.transforms._checks import flag

__all__ = ["bfs_nodes_generator", "bfs_edges_generator", "topological_nodes_generator",
           "dfs_edges_generator", "dfs_labeled_edges_generator", "FORWARD", "REVERSE", "NONTREE",
           "DFS_LABEL_NAMES"]

FORWARD = 0
"""DFS label of an edge that reaches an unvisited node (a tree edge, crossed forwards)."""
REVERSE = 1
"""DFS label of a tree edge crossed back once the search below it is done."""
NONTREE = 2
"""DFS label of an edge that reaches a node already visited."""
DFS_LABEL_NAMES = ("forward", "reverse", "nontree")
"""``DFS_LABEL_NAMES[label]`` is the name of a DFS label."""


def _frontiers(g: HeteroGraph, ids: np.ndarray, sections: np.ndarray, as_ids: bool = True) -> list:
    """Splits the flat ids into one tensor per frontier (of the graph's id type, else int64)."""
    B = backend.current()
    parts = np.split(ids, np.cumsum(sections)[:-1]) if len(sections) else []
    if as_ids:
        return [g._ids_out(p) for p in parts]
    return [B.int_tensor(p.astype(np.int64), g._device, "int64") for p in parts]


def bfs_nodes_generator(graph: HeteroGraph, source: Any, reverse: bool = False) -> list:
    """Node frontiers of a breadth-first search from ``source``.

    Frontier 0 is ``source`` as given; frontier ``i + 1`` holds the nodes first reached from
    frontier ``i``, in the order they are reached.

    Parameters
    ----------
    graph : HeteroGraph
        A graph with one edge type from a node type to itself.
    source : int, list or tensor of node ids
        Where the search starts (several sources start together).
    reverse : bool
        Follow edges backwards (from destination to source).

    Returns
    -------
    list of tensors

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 1, 2, 2, 3], [1, 2, 3, 3, 4, 5]))
    >>> [f.tolist() for f in nw.bfs_nodes_generator(g, 5, reverse=True)]
    [[5], [3], [1, 2], [0]]
    """
    fn = "bfs_nodes_generator"
    ct, rel = walk_relation(graph, fn)
    src = walk_nodes(graph, ct, source, "source", fn)
    ids, sections = _C.bfs_nodes(rel, src, flag(reverse, "reverse", fn))
    return _frontiers(graph, ids, sections)


def bfs_edges_generator(graph: HeteroGraph, source: Any, reverse: bool = False) -> list:
    """Edge frontiers of a breadth-first search from ``source``: frontier ``i`` holds the edges
    that first reached the nodes of node frontier ``i + 1`` (the BFS tree's edges), in the same
    order. Arguments as :func:`bfs_nodes_generator`.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 1, 2, 2, 3], [1, 2, 3, 3, 4, 5]))
    >>> [f.tolist() for f in nw.bfs_edges_generator(g, [5], reverse=True)]
    [[5], [2, 3], [0]]
    """
    fn = "bfs_edges_generator"
    ct, rel = walk_relation(graph, fn)
    src = walk_nodes(graph, ct, source, "source", fn)
    ids, sections = _C.bfs_edges(rel, src, flag(reverse, "reverse", fn))
    return _frontiers(graph, ids, sections)


def topological_nodes_generator(graph: HeteroGraph, reverse: bool = False) -> list:
    """Topological layers: frontier 0 holds every node without in-edges (in increasing id), each
    later frontier the nodes whose last in-edge comes from the frontiers before it. With
    ``reverse``, out-edges take the place of in-edges (the layers from the sinks).

    Raises
    ------
    ValueError
        When the graph has a cycle (a self-loop is one), naming a node on or after it.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 1, 2, 2, 3], [1, 2, 3, 3, 4, 5]))
    >>> [f.tolist() for f in nw.topological_nodes_generator(g, reverse=True)]
    [[4, 5], [3], [2], [1], [0]]
    """
    fn = "topological_nodes_generator"
    _, rel = walk_relation(graph, fn)
    ids, sections = _C.topological_nodes(rel, flag(reverse, "reverse", fn))
    return _frontiers(graph, ids, sections)


def dfs_edges_generator(graph: HeteroGraph, source: Any, reverse: bool = False) -> list:
    """The tree edges of a depth-first search from ``source``, in the order the search crosses
    them, one edge per frontier.

    Each source gets a search of its own (which does not see the nodes the others visited), and
    frontier ``k`` holds the ``k``-th edge of every search that has one, in source order: give
    sources in different components for a DFS forest. The same as
    ``dfs_labeled_edges_generator(graph, source, reverse, return_labels=False)``.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 1, 2, 2, 3], [1, 2, 3, 3, 4, 5]))
    >>> [f.tolist() for f in nw.dfs_edges_generator(g, [0])]
    [[0], [1], [3], [5], [4]]
    """
    return _dfs(graph, source, reverse, False, False, "dfs_edges_generator")[0]


def dfs_labeled_edges_generator(graph: HeteroGraph, source: Any, reverse: bool = False,
                                has_reverse_edge: bool = False, has_nontree_edge: bool = False,
                                return_labels: bool = True):
    """The edges of a depth-first search from ``source``, each labelled (networkx's
    ``dfs_labeled_edges``, DGL's numbering):

    - :data:`FORWARD` (0): the edge reaches an unvisited node — a tree edge, crossed forwards;
    - :data:`REVERSE` (1): the same tree edge, crossed back when everything below it is done;
    - :data:`NONTREE` (2): the edge reaches a node already visited.

    Forward edges are always listed, reverse edges with ``has_reverse_edge``, non-tree edges with
    ``has_nontree_edge``. Several sources: as :func:`dfs_edges_generator`.

    Parameters
    ----------
    graph : HeteroGraph
        A graph with one edge type from a node type to itself.
    source : int, list or tensor of node ids
    reverse : bool
        Follow edges backwards.
    has_reverse_edge, has_nontree_edge : bool
        Also list reverse / non-tree edges.
    return_labels : bool
        Also return the labels.

    Returns
    -------
    list of tensors, or (list of tensors, list of tensors)
        The edge frontiers and, with ``return_labels``, the int64 labels frontier by frontier.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 0, 3, 3], [1, 2, 2, 4, 5]))
    >>> edges, labels = nw.dfs_labeled_edges_generator(g, [0, 3], has_reverse_edge=True,
    ...                                                has_nontree_edge=True)
    >>> [f.tolist() for f in edges]
    [[0, 3], [1, 3], [1, 4], [0, 4], [2]]
    >>> [f.tolist() for f in labels]
    [[0, 0], [0, 1], [1, 0], [1, 1], [2]]
    """
    fn = "dfs_labeled_edges_generator"
    edges, labels = _dfs(graph, source, reverse, has_reverse_edge, has_nontree_edge, fn)
    return (edges, labels) if flag(return_labels, "return_labels", fn) else edges


def _dfs(graph: HeteroGraph, source: Any, reverse: bool, has_reverse_edge: bool, has_nontree_edge: bool,
         fn: str) -> tuple[list, list]:
    ct, rel = walk_relation(graph, fn)
    src = walk_nodes(graph, ct, source, "source", fn)
    ids, labels, sections = _C.dfs_labeled_edges(
        rel, src, flag(reverse, "reverse", fn), flag(has_reverse_edge, "has_reverse_edge", fn),
        flag(has_nontree_edge, "has_nontree_edge", fn))
    return _frontiers(graph, ids, sections), _frontiers(graph, labels, sections, as_ids=False)
