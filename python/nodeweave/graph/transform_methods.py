"""Graph transforms as methods (``g.reverse()``, ``g.subgraph(nodes)``), as DGL offers them.

Each method calls the function of the same name in :mod:`nodeweave.graph.transforms` (``subgraph``
calls ``node_subgraph``); the functions hold the documentation and the tests.

Why the methods are attached rather than inherited: the transforms build graphs, so they import
:mod:`nodeweave.graph.heterograph`; if the graph class inherited its transform methods from a mixin,
heterograph would have to import the transforms first, a cycle that could only be cut by importing
inside every method. Instead heterograph knows nothing of the transforms, this module imports the
transforms at the top, and :func:`install` adds the methods to the class;
``nodeweave/graph/__init__.py`` calls it once both are loaded, before any graph is handed out.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1], [1, 2]), num_nodes=3)
>>> src, dst = g.reverse().edges()
>>> src.tolist(), dst.tolist()
([1, 2], [0, 1])
>>> g.subgraph([1, 2]).num_edges()
1
"""

from __future__ import annotations

from typing import Any, Callable

from nodeweave.graph import transforms

# Method name -> the transform it calls with the graph as first argument.
METHODS: dict[str, Callable[..., Any]] = {
    "reverse": transforms.reverse,
    "add_self_loop": transforms.add_self_loop,
    "remove_self_loop": transforms.remove_self_loop,
    "to_simple": transforms.to_simple,
    "line_graph": transforms.line_graph,
    "subgraph": transforms.node_subgraph,
    "edge_subgraph": transforms.edge_subgraph,
    "in_subgraph": transforms.in_subgraph,
    "out_subgraph": transforms.out_subgraph,
    "clone": transforms.clone,
    "node_type_subgraph": transforms.node_type_subgraph,
    "edge_type_subgraph": transforms.edge_type_subgraph,
}


def _method(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(self, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"``{fn.__name__}(self, ...)``, see "
                      f":func:`nodeweave.graph.transforms.{fn.__name__}`.\n\n" + (fn.__doc__ or ""))
    return method


def install(cls: type) -> None:
    """Adds every method of :data:`METHODS` to the graph class ``cls`` (subclasses inherit them)."""
    for name, fn in METHODS.items():
        setattr(cls, name, _method(name, fn))
