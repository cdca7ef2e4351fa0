"""Subgraphs by type (DGL's ``dgl.node_type_subgraph`` and ``dgl.edge_type_subgraph``): keep some
node types with every relation among them, or some relations with their node types. Nodes and
edges keep their ids. As in DGL, the subgraph shares the graph's feature tables: a feature set or
deleted on either shows in the other (like the relation views ``g['plays']``), unless
``output_device`` moves the subgraph to another device (a copy).

>>> import nodeweave as nw
>>> g = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 2]),
...                     ("user", "plays", "game"): ([0], [0])})
>>> nw.node_type_subgraph(g, ["user"]).canonical_etypes
[('user', 'follows', 'user')]
>>> h = nw.edge_type_subgraph(g, ["plays"])
>>> h.ntypes, h.num_nodes("user")
(['game', 'user'], 3)
>>> import nodeweave.core as nc
>>> g.nodes["game"].data["x"] = nc.ones(1)
>>> h.nodes["game"].data["x"].tolist()
[1.0]
"""

from __future__ import annotations

from typing import Any, Sequence

from nodeweave import errors as nwerr
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms._common import _check_graph

__all__ = ["node_type_subgraph", "edge_type_subgraph"]


def _names(values: Any, what: str, fn: str) -> list:
    if isinstance(values, (str, tuple)):
        raise nwerr.TypeError(f"{fn}: {what} must be a list of types, got {values!r} (wrap one type in a list)")
    try:
        out = list(values)
    except TypeError:
        raise nwerr.TypeError(f"{fn}: {what} must be a list of types, got {type(values).__name__}") from None
    if not out:
        raise nwerr.ValueError(f"{fn}: {what} must name at least one type")
    return out


def _build(g: HeteroGraph, ntypes: list[str], cts: list[tuple], output_device: Any) -> HeteroGraph:
    sub = HeteroGraph._create({nt: g._num_nodes[nt] for nt in ntypes}, {ct: g._rels[ct] for ct in cts},
                              device=g._device)
    sub._node_frames = {nt: g._node_frames[nt] for nt in ntypes}  # shared, as DGL
    sub._edge_frames = {ct: g._edge_frames[ct] for ct in cts}
    if g._batch_num_nodes is not None:
        sub._batch_num_nodes = {nt: g._batch_num_nodes[nt] for nt in ntypes}
        sub._batch_num_edges = {ct: g._batch_num_edges[ct] for ct in cts}
    return sub if output_device is None else sub.to(output_device)


def node_type_subgraph(graph: HeteroGraph, ntypes: Sequence[str], output_device: Any = None) -> HeteroGraph:
    """The node types ``ntypes`` and every relation whose two types are both among them."""
    fn = "node_type_subgraph"
    _check_graph(graph)
    keep = _names(ntypes, "ntypes", fn)
    for nt in keep:
        if nt not in graph.ntypes:
            raise nwerr.ValueError(f"{fn}: no node type {nt!r} (the graph has {graph.ntypes})")
    kept = [nt for nt in graph.ntypes if nt in keep]
    cts = [ct for ct in graph.canonical_etypes if ct[0] in kept and ct[2] in kept]
    return _build(graph, kept, cts, output_device)


def edge_type_subgraph(graph: HeteroGraph, etypes: Sequence[Any], output_device: Any = None) -> HeteroGraph:
    """The relations ``etypes`` (names or canonical tuples) and the node types they connect."""
    fn = "edge_type_subgraph"
    _check_graph(graph)
    wanted = {graph.to_canonical_etype(e) for e in _names(etypes, "etypes", fn)}
    cts = [ct for ct in graph.canonical_etypes if ct in wanted]
    kept = [nt for nt in graph.ntypes if any(nt in (ct[0], ct[2]) for ct in cts)]
    return _build(graph, kept, cts, output_device)
