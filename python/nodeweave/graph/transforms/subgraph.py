"""Subgraphs and compaction (DGL's ``node_subgraph``, ``edge_subgraph``, ``in_subgraph``,
``out_subgraph``, ``compact_graphs``).

Which edges to keep and how to renumber the nodes is computed in C++ (``graph/subgraph.h``,
``graph/compact.h``, bound as ``nodeweave._C.induced_subgraph`` and friends) without the GIL: per
relation, the primitives return the new relation graph and the original id of each kept edge (and
node). This module validates the arguments, gathers the features of the kept nodes and edges
through the active backend (so gradients flow through them) and stores the original ids as
``ndata['_ID']`` / ``edata['_ID']`` (DGL's ``dgl.NID`` / ``dgl.EID``). Kept edges are always in
increasing edge id, except for :func:`edge_subgraph`, which keeps the given order. Subgraphs of a
batched graph are unbatched graphs.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
>>> sg = nw.node_subgraph(g, [3, 0, 1])
>>> [t.tolist() for t in sg.edges()], sg.edata["_ID"].tolist()
([[1, 0], [2, 1]], [0, 3])
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from nodeweave import _C
from nodeweave.graph.frame import Frame
from nodeweave.graph.heterograph import HeteroGraph, RelationGraph
from nodeweave.graph.transforms._common import (EID, NID, Canonical, _check_graph, _check_unique, _ids, _to_device)
from nodeweave.graph.id_sets import edge_sets, node_sets
from nodeweave import errors as nwerr

__all__ = ["node_subgraph", "edge_subgraph", "in_subgraph", "out_subgraph", "compact_graphs"]


def _assemble(g: HeteroGraph, nodes: dict[str, np.ndarray], rels: dict[Canonical, RelationGraph],
              eids: dict[Canonical, np.ndarray] | None, store_ids: bool, copy_ndata: bool = True,
              copy_edata: bool = True) -> HeteroGraph:
    """The graph of host relations ``rels`` (one per edge type of ``g``, in ``g``'s order) whose
    nodes of type ``nt`` are ``g``'s nodes ``nodes[nt]`` (a type missing from ``nodes`` keeps every
    node with its id) and whose edges are ``g``'s edges ``eids[ct]`` (None: every edge, in order).
    Features are sliced along; ``store_ids`` records the original ids."""
    num_nodes, nframes = {}, {}
    for nt in g._ntypes:
        ids = nodes.get(nt)
        if ids is None:
            num_nodes[nt] = g._num_nodes[nt]
            nframes[nt] = g._node_frames[nt].clone_shallow() if copy_ndata else Frame(num_nodes[nt])
            continue
        num_nodes[nt] = len(ids)
        nframes[nt] = g._node_frames[nt].subframe(ids) if copy_ndata else Frame(len(ids))
        if store_ids:
            nframes[nt][NID] = _ids(ids, g)
    eframes = {}
    for ct in g._etypes:
        if eids is None:
            f = g._edge_frames[ct].clone_shallow() if copy_edata else Frame(rels[ct].num_edges)
        else:
            f = g._edge_frames[ct].subframe(eids[ct]) if copy_edata else Frame(len(eids[ct]))
            if store_ids:
                f[EID] = _ids(eids[ct], g)
        eframes[ct] = f
    dev = g._device
    rels = {ct: rels[ct] if dev == "cpu" else rels[ct].to(dev) for ct in g._etypes}
    return HeteroGraph._create(num_nodes, rels, nframes, eframes, device=dev)


def _compact(g: HeteroGraph, rels: dict[Canonical, RelationGraph],
             preserve: dict[str, np.ndarray] | None = None) -> tuple[dict, dict]:
    """``rels`` (one per edge type of ``g``, original node ids) renumbered to the nodes that have an
    edge in any of them (``preserve[nt]`` first): (new relations, original ids per node type)."""
    index = {nt: i for i, nt in enumerate(g._ntypes)}
    out, node_ids = _C.compact_relations([g._num_nodes[nt] for nt in g._ntypes],
                                         [(index[ct[0]], index[ct[2]], rels[ct]) for ct in g._etypes],
                                         None if preserve is None else [preserve[nt] for nt in g._ntypes],
                                         g._idtype_name)
    return dict(zip(g._etypes, out)), dict(zip(g._ntypes, node_ids))


# pick(host relation, edge type, relabel mode) -> (graph, eids, src_nodes, dst_nodes), as the
# C++ edge/in/out subgraph bindings return them.
Pick = Callable[[RelationGraph, Canonical, str], tuple]


def _edge_selection(g: HeteroGraph, pick: Pick, relabel_nodes: bool, store_ids: bool,
                    output_device: Any) -> HeteroGraph:
    """The subgraph of the edges ``pick`` keeps per edge type. Without relabelling every node
    stays. With it only the endpoints stay, in increasing id per node type: the C++ primitive numbers
    them itself when the graph has one edge type, else compaction numbers all edge types alike."""
    if relabel_nodes and len(g._etypes) == 1:
        ct = g._etypes[0]
        rel, e, src_nodes, dst_nodes = pick(g._host(ct), ct, "shared" if ct[0] == ct[2] else "per_side")
        nodes = {nt: np.zeros(0, np.int64) for nt in g._ntypes}
        nodes[ct[0]], nodes[ct[2]] = src_nodes, dst_nodes
        rels, eids = {ct: rel}, {ct: e}
    else:
        rels, eids = {}, {}
        for ct in g._etypes:
            rels[ct], eids[ct], _, _ = pick(g._host(ct), ct, "keep")
        nodes = {}
        if relabel_nodes:
            rels, nodes = _compact(g, rels)
    return _to_device(_assemble(g, nodes, rels, eids, store_ids), output_device)


def node_subgraph(g: HeteroGraph, nodes: Any, *, relabel_nodes: bool = True, store_ids: bool = True,
                  output_device: Any = None) -> HeteroGraph:
    """The subgraph induced by ``nodes``: those nodes and every edge between them.

    Parameters
    ----------
    nodes : ids, bool mask, or dict {ntype: ids or mask}
        Node ``i`` of the result is ``nodes[i]`` (a mask selects in increasing id order). With a
        dict, node types not named keep no nodes. Ids must be distinct.
    relabel_nodes : bool
        Renumber the kept nodes ``0..n-1`` (True), or keep every node with its id and only drop
        edges (False).
    store_ids : bool
        Store original ids in ``ndata['_ID']`` (when relabeling) and ``edata['_ID']``.

    Edges keep their relative order. Features of kept nodes and edges are sliced along.

    >>> import nodeweave as nw
    >>> sg = nw.node_subgraph(nw.graph(([0, 1, 2, 3], [1, 2, 3, 0])), [1, 2, 3])
    >>> [t.tolist() for t in sg.edges()], sg.ndata["_ID"].tolist(), sg.edata["_ID"].tolist()
    ([[0, 1], [1, 2]], [1, 2, 3], [1, 2])
    """
    _check_graph(g)
    sets = node_sets(g, nodes, "nodes")
    for nt, ids in sets.items():
        _check_unique(ids, g._num_nodes[nt], "nodes" if len(g._ntypes) == 1 else f"nodes[{nt!r}]")
    rels, eids = {}, {}
    for ct in g._etypes:
        # For an edge type from a node type to itself both sides get the same array object, which
        # lets the C++ side build one membership set for both.
        rels[ct], eids[ct] = _C.induced_subgraph(g._host(ct), sets[ct[0]], sets[ct[2]],
                                                 bool(relabel_nodes))
    keep = sets if relabel_nodes else {}
    return _to_device(_assemble(g, keep, rels, eids, store_ids), output_device)


def edge_subgraph(g: HeteroGraph, edges: Any, *, relabel_nodes: bool = True, store_ids: bool = True,
                  output_device: Any = None) -> HeteroGraph:
    """The subgraph of the given edges (in the given order: edge ``i`` of the result is
    ``edges[i]``).

    Parameters
    ----------
    edges : ids, bool mask, or dict {etype: ids or mask}
        Edge types not named in a dict keep no edges.
    relabel_nodes : bool
        Keep only the endpoints of the chosen edges, renumbered in increasing original id
        (True), or keep every node (False).
    store_ids : bool
        Store original ids in ``ndata['_ID']`` (when relabeling) and ``edata['_ID']``.

    >>> import nodeweave as nw
    >>> sg = nw.edge_subgraph(nw.graph(([0, 1, 2, 3], [1, 2, 3, 4])), [3, 1])
    >>> [t.tolist() for t in sg.edges()], sg.ndata["_ID"].tolist()
    ([[2, 0], [3, 1]], [1, 2, 3, 4])
    """
    _check_graph(g)
    sets = edge_sets(g, edges, "edges")
    return _edge_selection(g, lambda rel, ct, mode: _C.edge_subgraph(rel, sets[ct], mode),
                           relabel_nodes, store_ids, output_device)


def _neighbor_subgraph(g: HeteroGraph, nodes: Any, inward: bool, relabel_nodes: bool, store_ids: bool,
                       output_device: Any) -> HeteroGraph:
    _check_graph(g)
    sets = node_sets(g, nodes, "nodes")
    if inward:
        return _edge_selection(g, lambda rel, ct, mode: _C.in_subgraph(rel, sets[ct[2]], mode),
                               relabel_nodes, store_ids, output_device)
    return _edge_selection(g, lambda rel, ct, mode: _C.out_subgraph(rel, sets[ct[0]], mode),
                           relabel_nodes, store_ids, output_device)


def in_subgraph(g: HeteroGraph, nodes: Any, *, relabel_nodes: bool = False, store_ids: bool = True,
                output_device: Any = None) -> HeteroGraph:
    """The subgraph of all edges entering ``nodes`` (ids, mask, or ``{ntype: ids}``), in increasing
    edge id. Every node is kept unless ``relabel_nodes`` (then only edge endpoints, renumbered in
    increasing id, with ``ndata['_ID']``). Original edge ids go to ``edata['_ID']``.

    >>> import nodeweave as nw
    >>> sg = nw.in_subgraph(nw.graph(([0, 1, 2, 0], [1, 2, 0, 2])), [2])
    >>> sg.num_nodes(), [t.tolist() for t in sg.edges()], sg.edata["_ID"].tolist()
    (3, [[1, 0], [2, 2]], [1, 3])
    """
    return _neighbor_subgraph(g, nodes, True, relabel_nodes, store_ids, output_device)


def out_subgraph(g: HeteroGraph, nodes: Any, *, relabel_nodes: bool = False, store_ids: bool = True,
                 output_device: Any = None) -> HeteroGraph:
    """The subgraph of all edges leaving ``nodes``; otherwise as :func:`in_subgraph`.

    >>> import nodeweave as nw
    >>> sg = nw.out_subgraph(nw.graph(([0, 1, 2, 0], [1, 2, 0, 2])), [0])
    >>> [t.tolist() for t in sg.edges()], sg.edata["_ID"].tolist()
    ([[0, 0], [1, 2]], [0, 3])
    """
    return _neighbor_subgraph(g, nodes, False, relabel_nodes, store_ids, output_device)


def compact_graphs(graphs: HeteroGraph | Sequence[HeteroGraph], always_preserve: Any = None,
                   copy_ndata: bool = True, copy_edata: bool = True):
    """Removes the nodes that have no edge in any of ``graphs``, renumbering the rest the same way
    in every graph (the graphs must share node types and node counts).

    New ids: the nodes of ``always_preserve`` (ids, or ``{ntype: ids}``) first in the given order,
    then the other used nodes in increasing original id. Original ids go to ``ndata['_ID']``; edges
    and their features are unchanged. Returns a graph for a graph, a list for a list.

    >>> import nodeweave as nw
    >>> g = nw.graph(([1, 5], [5, 3]), num_nodes=8)
    >>> c = nw.compact_graphs(g, always_preserve=[7])
    >>> c.ndata["_ID"].tolist(), [t.tolist() for t in c.edges()]
    ([7, 1, 3, 5], [[1, 3], [3, 2]])
    """
    single = isinstance(graphs, HeteroGraph)
    gl = [graphs] if single else list(graphs)
    if not gl:
        return []
    for i, g in enumerate(gl):
        _check_graph(g, f"graphs[{i}]")
    g0 = gl[0]
    for i, g in enumerate(gl[1:], 1):
        if g._num_nodes != g0._num_nodes or g._ntypes != g0._ntypes:
            raise nwerr.ValueError(f"compact_graphs: graphs[{i}] has nodes {g._num_nodes}, graphs[0] has "
                                   f"{g0._num_nodes}; all graphs must share node types and counts")
    preserve = None
    if always_preserve is not None:
        preserve = node_sets(g0, always_preserve, "always_preserve")
    # One compaction of every relation of every graph, so that all share one numbering. Relations
    # of another id type are converted for it, and back for their graph.
    index = {nt: i for i, nt in enumerate(g0._ntypes)}
    idtype = g0._idtype_name
    relations = [(index[ct[0]], index[ct[2]], g._host(ct).astype(idtype)) for g in gl for ct in g._etypes]
    out_rels, node_ids = _C.compact_relations([g0._num_nodes[nt] for nt in g0._ntypes], relations,
                                              None if preserve is None else [preserve[nt] for nt in g0._ntypes],
                                              idtype)
    keep = dict(zip(g0._ntypes, node_ids))
    out, pos = [], 0
    for g in gl:
        rels = {ct: r.astype(g._idtype_name) for ct, r in zip(g._etypes, out_rels[pos:pos + len(g._etypes)])}
        pos += len(g._etypes)
        c = _assemble(g, keep, rels, None, False, copy_ndata, copy_edata)
        for nt in g._ntypes:
            c._node_frames[nt][NID] = _ids(keep[nt], g)
        out.append(c)
    return out[0] if single else out
