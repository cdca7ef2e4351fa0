"""DGL's functional graph edits (``dgl.add_edges``, ``dgl.add_nodes``, ``dgl.remove_edges``,
``dgl.remove_nodes``): each returns a new graph with the change and leaves its argument as it was.
The graph methods of the same names (``g.add_edges(...)``, :mod:`nodeweave.graph.mutation`) change
the graph in place; these run them on a :func:`~nodeweave.graph.transforms.clone.clone`.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1], [1, 2]))
>>> h = nw.add_edges(g, [2], [0])
>>> g.num_edges(), h.num_edges()
(2, 3)
>>> nw.remove_nodes(h, [1]).num_nodes(), h.num_nodes()
(2, 3)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms.clone import clone

__all__ = ["add_nodes", "add_edges", "remove_nodes", "remove_edges"]


def add_nodes(g: HeteroGraph, num: int, data: Mapping[str, Any] | None = None,
              ntype: str | None = None) -> HeteroGraph:
    """``g`` with ``num`` more nodes of ``ntype`` (see ``HeteroGraph.add_nodes``); ``g`` is unchanged."""
    out = clone(g)
    out.add_nodes(num, data, ntype=ntype)
    return out


def add_edges(g: HeteroGraph, u: Any, v: Any, data: Mapping[str, Any] | None = None,
              etype: Any = None) -> HeteroGraph:
    """``g`` with the edges ``u[i] -> v[i]`` added (see ``HeteroGraph.add_edges``); ``g`` is unchanged."""
    out = clone(g)
    out.add_edges(u, v, data, etype=etype)
    return out


def remove_edges(g: HeteroGraph, eids: Any, etype: Any = None, store_ids: bool = False) -> HeteroGraph:
    """``g`` without the edges ``eids`` (see ``HeteroGraph.remove_edges``); ``g`` is unchanged."""
    out = clone(g)
    out.remove_edges(eids, etype=etype, store_ids=store_ids)
    return out


def remove_nodes(g: HeteroGraph, nids: Any, ntype: str | None = None, store_ids: bool = False) -> HeteroGraph:
    """``g`` without the nodes ``nids`` and their edges (see ``HeteroGraph.remove_nodes``); ``g`` is
    unchanged."""
    out = clone(g)
    out.remove_nodes(nids, ntype=ntype, store_ids=store_ids)
    return out
