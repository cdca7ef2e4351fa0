"""Message propagation along a traversal order (DGL's ``dgl.propagate`` and the graph methods
``g.prop_nodes`` / ``g.prop_edges``): frontier after frontier, the nodes of a node frontier
``pull`` their messages, or the edges of an edge frontier ``send_and_recv`` them, so that later
frontiers see what earlier ones computed. Builtin and user-defined message, reduce and apply
functions work as in :meth:`~nodeweave.HeteroGraph.pull`.

On the path 0 - 1 - 2 (both directions), pulling in BFS order from 0 accumulates along the path:

>>> import nodeweave as nw, nodeweave.core as nc, nodeweave.function as fn
>>> g = nw.graph(([0, 1, 1, 2], [1, 0, 2, 1]))
>>> g.ndata["x"] = nc.ones((3, 1))
>>> nw.prop_nodes_bfs(g, 0, fn.copy_u("x", "m"), fn.sum("m", "s"),
...                   apply_node_func=lambda nodes: {"x": nodes.data["x"] + nodes.data["s"]})
>>> g.ndata["x"].tolist()                 # x0 = 1 + x1, x1 = 1 + x0 + x2, x2 = 1 + x1
[[2.0], [4.0], [5.0]]
"""

from __future__ import annotations

from typing import Any, Iterable

from nodeweave.function import BuiltinMessage, BuiltinReduce
from nodeweave.graph.algorithms._walk import walk_relation
from nodeweave.graph.algorithms.traversal import (bfs_nodes_generator, dfs_labeled_edges_generator,
                                                  topological_nodes_generator)
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave import errors as nwerr

__all__ = ["prop_nodes", "prop_edges", "prop_nodes_bfs", "prop_nodes_topo", "prop_edges_dfs", "install"]


def _check_funcs(message_func: Any, reduce_func: Any, apply_node_func: Any, fn: str) -> None:
    if not (isinstance(message_func, BuiltinMessage) or callable(message_func)):
        raise nwerr.TypeError(f"{fn}: message_func must be a builtin message (nodeweave.function) or a "
                              f"function of the edges, got {message_func!r}")
    if not (isinstance(reduce_func, BuiltinReduce) or callable(reduce_func)):
        raise nwerr.TypeError(f"{fn}: reduce_func must be a builtin reducer (nodeweave.function) or a "
                              f"function of the nodes, got {reduce_func!r}")
    if apply_node_func is not None and not callable(apply_node_func):
        raise nwerr.TypeError(f"{fn}: apply_node_func must be a function of the nodes or None, got "
                              f"{apply_node_func!r}")


def _frontiers(generator: Any, what: str, fn: str) -> Iterable:
    if isinstance(generator, (str, bytes)) or not hasattr(generator, "__iter__"):
        raise nwerr.TypeError(f"{fn}: {what} must be an iterable of {what.split('_')[0]} frontiers (lists or "
                              f"tensors of ids), got {type(generator).__name__}")
    return generator


def _check_graph(graph: Any, fn: str) -> HeteroGraph:
    if not isinstance(graph, HeteroGraph):
        raise nwerr.TypeError(f"{fn}: graph must be a nodeweave graph, got {type(graph).__name__}")
    return graph


def prop_nodes(graph: HeteroGraph, nodes_generator: Iterable, message_func: Any, reduce_func: Any,
               apply_node_func: Any = None, etype: Any = None) -> None:
    """For each node frontier of ``nodes_generator`` in turn, ``graph.pull(frontier, message_func,
    reduce_func, apply_node_func, etype=etype)``: the nodes of a frontier are updated together, the
    frontiers one after the other. Features change in place; nothing is returned.

    Parameters
    ----------
    nodes_generator : iterable
        Node frontiers: lists or tensors of node ids (destination nodes of ``etype``).
    message_func, reduce_func : builtin or callable
        As for :meth:`~nodeweave.HeteroGraph.pull`.
    apply_node_func : callable, optional
        Applied to the pulled nodes after each reduction.
    etype : str or tuple, optional
        The edge type to pull along; may be omitted when the graph has one.

    >>> import nodeweave as nw, nodeweave.core as nc, nodeweave.function as fn
    >>> g = nw.graph(([0, 1, 2, 3], [2, 3, 4, 4]))
    >>> g.ndata["h"] = nc.tensor([[1.0], [2.0], [3.0], [4.0], [5.0]])
    >>> g.prop_nodes([[2, 3], [4]], fn.copy_u("h", "m"), fn.sum("m", "h"))
    >>> g.ndata["h"].tolist()      # 2 and 3 take 1 and 2, then 4 takes their new values
    [[1.0], [2.0], [1.0], [2.0], [3.0]]
    """
    fn = "prop_nodes"
    _check_graph(graph, fn)
    _check_funcs(message_func, reduce_func, apply_node_func, fn)
    for frontier in _frontiers(nodes_generator, "nodes_generator", fn):
        graph.pull(frontier, message_func, reduce_func, apply_node_func, etype=etype)


def prop_edges(graph: HeteroGraph, edges_generator: Iterable, message_func: Any, reduce_func: Any,
               apply_node_func: Any = None, etype: Any = None) -> None:
    """For each edge frontier of ``edges_generator`` in turn, ``graph.send_and_recv(frontier,
    message_func, reduce_func, apply_node_func, etype=etype)``: messages travel along the edges of
    a frontier together, and the destinations of those edges are updated before the next frontier.

    >>> import nodeweave as nw, nodeweave.core as nc, nodeweave.function as fn
    >>> g = nw.graph(([0, 1, 2, 3], [2, 3, 4, 4]))
    >>> g.ndata["h"] = nc.tensor([[1.0], [2.0], [3.0], [4.0], [5.0]])
    >>> g.prop_edges([[0, 1], [2, 3]], fn.copy_u("h", "m"), fn.sum("m", "h"))
    >>> g.ndata["h"].tolist()
    [[1.0], [2.0], [1.0], [2.0], [3.0]]
    """
    fn = "prop_edges"
    _check_graph(graph, fn)
    _check_funcs(message_func, reduce_func, apply_node_func, fn)
    for frontier in _frontiers(edges_generator, "edges_generator", fn):
        graph.send_and_recv(frontier, message_func, reduce_func, apply_node_func, etype=etype)


def prop_nodes_bfs(graph: HeteroGraph, source: Any, message_func: Any, reduce_func: Any,
                   reverse: bool = False, apply_node_func: Any = None) -> None:
    """:func:`prop_nodes` over the frontiers of
    :func:`~nodeweave.graph.algorithms.traversal.bfs_nodes_generator` from ``source`` (``reverse``:
    following edges backwards). The graph must have one edge type from a node type to itself."""
    fn = "prop_nodes_bfs"
    walk_relation(graph, fn)
    _check_funcs(message_func, reduce_func, apply_node_func, fn)
    prop_nodes(graph, bfs_nodes_generator(graph, source, reverse), message_func, reduce_func, apply_node_func)


def prop_nodes_topo(graph: HeteroGraph, message_func: Any, reduce_func: Any, reverse: bool = False,
                    apply_node_func: Any = None) -> None:
    """:func:`prop_nodes` over the topological layers of
    :func:`~nodeweave.graph.algorithms.traversal.topological_nodes_generator`: every node pulls once
    all its predecessors have (a tree's leaves first, its root last). ValueError on a graph with a
    cycle, before any feature changes.

    >>> import nodeweave as nw, nodeweave.core as nc, nodeweave.function as fn
    >>> tree = nw.graph(([1, 2, 3, 4], [0, 0, 2, 2]))      # leaves 1, 3, 4 under 2 under 0
    >>> tree.ndata["x"] = nc.tensor([[0.0], [1.0], [0.0], [1.0], [1.0]])
    >>> nw.prop_nodes_topo(tree, fn.copy_u("x", "m"), fn.sum("m", "s"),
    ...                    apply_node_func=lambda nodes: {"x": nodes.data["x"] + nodes.data["s"]})
    >>> tree.ndata["x"].tolist()[0]                         # the root counts the leaves
    [3.0]
    """
    fn = "prop_nodes_topo"
    walk_relation(graph, fn)
    _check_funcs(message_func, reduce_func, apply_node_func, fn)
    prop_nodes(graph, topological_nodes_generator(graph, reverse), message_func, reduce_func, apply_node_func)


def prop_edges_dfs(graph: HeteroGraph, source: Any, message_func: Any, reduce_func: Any,
                   reverse: bool = False, has_reverse_edge: bool = False, has_nontree_edge: bool = False,
                   apply_node_func: Any = None) -> None:
    """:func:`prop_edges` over the edge frontiers of
    :func:`~nodeweave.graph.algorithms.traversal.dfs_labeled_edges_generator` from ``source``
    (forward edges, and reverse / non-tree edges when asked for)."""
    fn = "prop_edges_dfs"
    walk_relation(graph, fn)
    _check_funcs(message_func, reduce_func, apply_node_func, fn)
    edges = dfs_labeled_edges_generator(graph, source, reverse, has_reverse_edge, has_nontree_edge,
                                        return_labels=False)
    prop_edges(graph, edges, message_func, reduce_func, apply_node_func)


def _prop_nodes_method(self, nodes_generator: Iterable, message_func: Any, reduce_func: Any,
                       apply_node_func: Any = None, etype: Any = None) -> None:
    return prop_nodes(self, nodes_generator, message_func, reduce_func, apply_node_func, etype)


def _prop_edges_method(self, edges_generator: Iterable, message_func: Any, reduce_func: Any,
                       apply_node_func: Any = None, etype: Any = None) -> None:
    return prop_edges(self, edges_generator, message_func, reduce_func, apply_node_func, etype)


def install(cls: type) -> None:
    """Adds ``prop_nodes`` and ``prop_edges`` to the graph class ``cls`` as methods (see
    :mod:`nodeweave.graph.transform_methods` for why methods are attached, not inherited)."""
    for name, method, fn in (("prop_nodes", _prop_nodes_method, prop_nodes),
                             ("prop_edges", _prop_edges_method, prop_edges)):
        method.__name__ = method.__qualname__ = name
        method.__doc__ = f"``{name}(self, ...)``, see :func:`nodeweave.{name}`.\n\n" + (fn.__doc__ or "")
        setattr(cls, name, method)
