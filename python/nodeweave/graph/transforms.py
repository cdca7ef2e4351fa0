"""Graph transforms: functions that take a graph and return a new one (graphs are immutable).

Structure is computed with vectorized NumPy on the relations' COO arrays and rebuilt as new
``nodeweave._C.RelationGraph``\\ s (which validate every id); features travel along through the
active backend (``index_select`` / ``cat``), so gradients flow through sliced features. Semantics
follow DGL's functions of the same names; where DGL leaves an order unspecified, the order chosen here
is stated in the docstring.

Transforms that act on each graph of a batch separately (``reverse``, ``add_self_loop``,
``remove_self_loop``, ``to_simple``, ``to_bidirected``, ``add_reverse_edges``, ``khop_graph``,
``line_graph``) keep a batched graph's per-graph counts: the result equals
``batch([f(x) for x in unbatch(g)])``. Subgraph extraction, compaction, type conversion and
reordering return unbatched graphs.

Original ids are stored as ``ndata['_ID']`` / ``edata['_ID']`` (DGL's ``dgl.NID`` / ``dgl.EID``).

>>> import nodeweave as nw
>>> g = nw.graph(([0, 0, 1], [1, 1, 2]))
>>> sg = nw.to_simple(g)
>>> [t.tolist() for t in sg.edges()], sg.edata["count"].tolist()
([[0, 1], [1, 2]], [2, 1])
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave import backend
from nodeweave.graph.frame import Frame
from nodeweave.graph.heterograph import HeteroGraph, RelationGraph, as_int_array, check_range

__all__ = ["NID", "EID", "reverse", "add_self_loop", "remove_self_loop", "to_simple", "to_bidirected",
           "add_reverse_edges", "node_subgraph", "edge_subgraph", "in_subgraph", "out_subgraph",
           "khop_in_subgraph", "khop_out_subgraph", "khop_graph", "line_graph", "compact_graphs",
           "to_homogeneous", "to_heterogeneous", "reorder_graph"]

NID = "_ID"
"""Feature name of original node ids (DGL's ``dgl.NID``)."""
EID = "_ID"
"""Feature name of original edge ids (DGL's ``dgl.EID``)."""
NTYPE = "_TYPE"
ETYPE = "_TYPE"

Canonical = tuple


# ============================================================================ shared helpers
# (also used by batch.py and io.py)


def _check_graph(g: Any, name: str = "g") -> HeteroGraph:
    if not isinstance(g, HeteroGraph):
        raise TypeError(f"{name} must be a nodeweave graph, got {type(g).__name__}")
    return g


def _coo(g: HeteroGraph, ct: Canonical) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` of relation ``ct`` as int64 host arrays in edge-id order."""
    src, dst = g._coo(ct)
    return src.astype(np.int64), dst.astype(np.int64)


def _new_rel(num_src: int, num_dst: int, src: np.ndarray, dst: np.ndarray, idtype: str,
             device: str) -> RelationGraph:
    rel = RelationGraph.from_coo(int(num_src), int(num_dst), np.ascontiguousarray(src, np.int64),
                                 np.ascontiguousarray(dst, np.int64), idtype=idtype)
    return rel if device == "cpu" else rel.to(device)


def _build(num_nodes: dict[str, int], coo: dict[Canonical, tuple[np.ndarray, np.ndarray]],
           idtype: str, device: str, node_frames: dict | None = None, edge_frames: dict | None = None,
           batch_num_nodes: dict | None = None, batch_num_edges: dict | None = None) -> HeteroGraph:
    """A new graph from per-relation COO arrays (validated by RelationGraph) and feature frames."""
    rels = {ct: _new_rel(num_nodes[ct[0]], num_nodes[ct[2]], s, d, idtype, device)
            for ct, (s, d) in coo.items()}
    g = HeteroGraph._create(dict(num_nodes), rels, node_frames, edge_frames, device=device)
    if batch_num_nodes is not None:
        g._batch_num_nodes = {k: np.asarray(v, np.int64) for k, v in batch_num_nodes.items()}
        g._batch_num_edges = {k: np.asarray(v, np.int64) for k, v in batch_num_edges.items()}
    return g


def _ids(arr: np.ndarray, g: HeteroGraph, idtype: str | None = None) -> Any:
    """An id tensor of ``g``'s idtype (or ``idtype``) on ``g``'s device."""
    return backend.current().int_tensor(np.asarray(arr), g._device, idtype or g._idtype_name)


def _shallow(frames: dict, keep: bool) -> dict | None:
    return {k: f.clone_shallow() for k, f in frames.items()} if keep else None


def _bnn(g: HeteroGraph) -> dict[str, np.ndarray]:
    """Per-graph node counts of every node type (one graph when not batched)."""
    if g._batch_num_nodes is not None:
        return {nt: np.asarray(g._batch_num_nodes[nt], np.int64) for nt in g._ntypes}
    return {nt: np.array([g._num_nodes[nt]], np.int64) for nt in g._ntypes}


def _bne(g: HeteroGraph) -> dict[Canonical, np.ndarray]:
    """Per-graph edge counts of every edge type (one graph when not batched)."""
    if g._batch_num_edges is not None:
        return {ct: np.asarray(g._batch_num_edges[ct], np.int64) for ct in g._etypes}
    return {ct: np.array([g._rels[ct].num_edges], np.int64) for ct in g._etypes}


def _segment_ids(counts: np.ndarray) -> np.ndarray:
    """``[0]*counts[0] + [1]*counts[1] + ...``: the graph of each node/edge of a batch."""
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def _ragged_positions(indptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Positions ``indptr[r] .. indptr[r+1]`` of every row ``r`` in ``rows``, concatenated."""
    starts = indptr[rows].astype(np.int64)
    counts = (indptr[rows + 1] - indptr[rows]).astype(np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (np.cumsum(counts) - counts), counts)


def _full_rows(like: Any, n: int, value: float, device: str) -> Any:
    """``n`` rows shaped like ``like``'s rows, filled with ``value``."""
    B = backend.of(like)
    shape = (n,) + tuple(B.shape(like)[1:])
    z = B.zeros(shape, B.dtype_of(like), device)
    if value == 0:
        return z
    try:
        return B.from_numpy(np.full(shape, value, dtype=np.dtype(B.dtype_name(like))), device)
    except TypeError:  # a dtype NumPy lacks (bfloat16)
        return z + value


def _homo_types(g: HeteroGraph, fn: str) -> tuple[str, Canonical]:
    if len(g._ntypes) != 1 or len(g._etypes) != 1:
        raise ValueError(f"{fn} needs a graph with one node type and one edge type, got node types "
                         f"{g._ntypes} and edge types {g._etypes}")
    return g._ntypes[0], g._etypes[0]


def _id_or_mask(x: Any, n: int, name: str, what: str) -> np.ndarray:
    """Ids from an int id sequence/tensor or a bool mask of length ``n``, range-checked."""
    B = backend.of(x)
    mask = None
    if B is not None and B.dtype_name(x) == "bool":
        mask = B.to_numpy(x)
    elif isinstance(x, (list, tuple, np.ndarray)):
        a = np.asarray(x) if not isinstance(x, np.ndarray) else x
        if a.dtype == np.bool_:
            mask = a
    if mask is not None:
        if mask.ndim != 1 or mask.shape[0] != n:
            raise ValueError(f"{name}: a bool mask must have one entry per {what} ({n}), got shape "
                             f"{tuple(mask.shape)}")
        return np.flatnonzero(mask).astype(np.int64)
    ids, _ = as_int_array(x, name)
    check_range(ids, n, name, what)
    return ids


def _node_sets(g: HeteroGraph, nodes: Any, name: str) -> dict[str, np.ndarray]:
    """``{ntype: ids}`` from a dict (missing types: no nodes) or, for one node type, ids/mask."""
    if isinstance(nodes, dict):
        out = {nt: np.zeros(0, np.int64) for nt in g._ntypes}
        for nt, v in nodes.items():
            if nt not in g._num_nodes:
                raise ValueError(f"{name}: unknown node type {nt!r} (the graph has {g._ntypes})")
            out[nt] = _id_or_mask(v, g._num_nodes[nt], f"{name}[{nt!r}]",
                                  "node" if len(g._ntypes) == 1 else f"node of type {nt!r}")
        return out
    if len(g._ntypes) != 1:
        raise ValueError(f"{name} must be a dict {{ntype: ids}} for a graph with several node types "
                         f"{g._ntypes}, got {type(nodes).__name__}")
    nt = g._ntypes[0]
    return {nt: _id_or_mask(nodes, g._num_nodes[nt], name, "node")}


def _edge_sets(g: HeteroGraph, edges: Any, name: str) -> dict[Canonical, np.ndarray]:
    """``{canonical etype: ids}`` from a dict keyed by etype names/tuples, or ids for one etype."""
    if isinstance(edges, dict):
        out = {ct: np.zeros(0, np.int64) for ct in g._etypes}
        for et, v in edges.items():
            try:
                ct = g.to_canonical_etype(et)
            except (ValueError, TypeError) as e:
                raise ValueError(f"{name}: {e}") from None
            out[ct] = _id_or_mask(v, g._rels[ct].num_edges, f"{name}[{et!r}]",
                                  "edge" if len(g._etypes) == 1 else f"edge of type {ct!r}")
        return out
    if len(g._etypes) != 1:
        raise ValueError(f"{name} must be a dict {{etype: ids}} for a graph with "
                         f"{len(g._etypes)} edge types, got {type(edges).__name__}")
    ct = g._etypes[0]
    return {ct: _id_or_mask(edges, g._rels[ct].num_edges, name, "edge")}


def _check_unique(ids: np.ndarray, name: str) -> None:
    if ids.size > 1:
        s = np.sort(ids)
        dup = s[1:] == s[:-1]
        if dup.any():
            raise ValueError(f"{name} holds node {int(s[1:][dup][0])} more than once")


def _subgraph(g: HeteroGraph, nodes: dict[str, np.ndarray | None], edges: dict[Canonical, np.ndarray],
              store_ids: bool, copy_ndata: bool = True, copy_edata: bool = True) -> HeteroGraph:
    """The graph of edges ``edges[ct]`` (original ids, in that order) over nodes ``nodes[nt]``
    (original ids in new-id order; ``None`` keeps every node of that type with its id)."""
    num_nodes, maps = {}, {}
    for nt in g._ntypes:
        ids = nodes.get(nt)
        if ids is None:
            num_nodes[nt] = g._num_nodes[nt]
        else:
            num_nodes[nt] = len(ids)
            m = np.full(g._num_nodes[nt], -1, np.int64)
            m[ids] = np.arange(len(ids), dtype=np.int64)
            maps[nt] = m
    coo = {}
    for ct in g._etypes:
        src, dst = _coo(g, ct)
        e = edges[ct]
        s, d = src[e], dst[e]
        if ct[0] in maps:
            s = maps[ct[0]][s]
        if ct[2] in maps:
            d = maps[ct[2]][d]
        coo[ct] = (s, d)
    nframes = {}
    for nt in g._ntypes:
        ids = nodes.get(nt)
        if ids is None:
            f = g._node_frames[nt].clone_shallow() if copy_ndata else Frame(num_nodes[nt])
        else:
            f = g._node_frames[nt].subframe(ids) if copy_ndata else Frame(num_nodes[nt])
            if store_ids:
                f[NID] = _ids(ids, g)
        nframes[nt] = f
    eframes = {}
    for ct in g._etypes:
        f = g._edge_frames[ct].subframe(edges[ct]) if copy_edata else Frame(len(edges[ct]))
        if store_ids:
            f[EID] = _ids(edges[ct], g)
        eframes[ct] = f
    return _build(num_nodes, coo, g._idtype_name, g._device, nframes, eframes)


def _to_device(g: HeteroGraph, output_device: Any) -> HeteroGraph:
    return g if output_device is None else g.to(output_device)


# ============================================================================ per-graph transforms


def reverse(g: HeteroGraph, copy_ndata: bool = True, copy_edata: bool = False) -> HeteroGraph:
    """The graph with every edge reversed: edge type ``(s, e, d)`` becomes ``(d, e, s)`` and edge
    ``i`` of the result is edge ``i`` of ``g`` turned around.

    Parameters
    ----------
    copy_ndata, copy_edata : bool
        Share the node / edge features with ``g`` (the tensors are not copied).

    >>> import nodeweave as nw
    >>> r = nw.reverse(nw.graph(([0, 1], [1, 2])))
    >>> [t.tolist() for t in r.edges()]
    [[1, 2], [0, 1]]
    """
    _check_graph(g)
    rels = {(d, e, s): g._rels[(s, e, d)].reverse() for s, e, d in g._etypes}
    out = HeteroGraph._create(dict(g._num_nodes), rels, _shallow(g._node_frames, copy_ndata),
                              {(d, e, s): f for (s, e, d), f in
                               (_shallow(g._edge_frames, copy_edata) or {}).items()}, device=g._device)
    if g._batch_num_nodes is not None:
        out._batch_num_nodes = _bnn(g)
        out._batch_num_edges = {(d, e, s): c for (s, e, d), c in _bne(g).items()}
    return out


def _regroup(g: HeteroGraph, ct: Canonical, src: np.ndarray, dst: np.ndarray, edge_graph: np.ndarray,
             frame: Frame, batch_edges: dict) -> tuple[np.ndarray, np.ndarray, Frame]:
    """For a batched ``g``: reorders new edges of ``ct`` (stably) so each graph's edges are
    contiguous again, records the per-graph counts in ``batch_edges``."""
    if g._batch_num_nodes is None:
        return src, dst, frame
    nb = g.batch_size
    batch_edges[ct] = np.bincount(edge_graph, minlength=nb).astype(np.int64)
    if nb <= 1:
        return src, dst, frame
    order = np.argsort(edge_graph, kind="stable")
    return src[order], dst[order], frame.subframe(order)


def _edge_graphs(g: HeteroGraph, ct: Canonical) -> np.ndarray:
    return _segment_ids(_bne(g)[ct])


def _node_graphs(g: HeteroGraph, nt: str) -> np.ndarray:
    return _segment_ids(_bnn(g)[nt])


def _finish_batch(g: HeteroGraph, out: HeteroGraph, batch_edges: dict) -> HeteroGraph:
    """Carries ``g``'s batch counts to ``out``: node counts unchanged, edge counts from
    ``batch_edges`` for the relations a transform rebuilt, unchanged for the others."""
    if g._batch_num_nodes is not None:
        old = _bne(g)
        out._batch_num_nodes = _bnn(g)
        out._batch_num_edges = {ct: batch_edges.get(ct, old.get(ct)) for ct in out._etypes}
    return out


def _rebuild(g: HeteroGraph, changed: dict[Canonical, tuple[np.ndarray, np.ndarray, Frame]],
             copy_ndata: bool, batch_edges: dict, keep_edata: bool = True) -> HeteroGraph:
    """``g`` with the relations in ``changed`` replaced (same edge types, same order)."""
    coo, eframes = {}, {}
    for ct in g._etypes:
        if ct in changed:
            s, d, f = changed[ct]
            coo[ct], eframes[ct] = (s, d), f
        else:
            coo[ct] = _coo(g, ct)
            eframes[ct] = g._edge_frames[ct].clone_shallow() if keep_edata else None
    out = _build(g._num_nodes, coo, g._idtype_name, g._device, _shallow(g._node_frames, copy_ndata),
                 {k: v for k, v in eframes.items() if v is not None})
    return _finish_batch(g, out, batch_edges)


def add_self_loop(g: HeteroGraph, edge_feat_names: Sequence[str] | None = None,
                  fill_data: float | str = 1.0, etype: str | tuple | None = None) -> HeteroGraph:
    """Adds one self-loop ``v -> v`` per node to edge type ``etype`` (whose source and destination
    types must agree), after the existing edges. Existing self-loops are kept (so a node may end
    up with two).

    The new edges' features, as DGL: for the features named in ``edge_feat_names`` (all when
    None), ``fill_data`` when it is a number, or, when it is ``'sum'``, ``'mean'``, ``'max'`` or
    ``'min'``, that reduction of the features of the node's incoming edges (0 for a node without
    in-edges); 0 for the other features. In a batched graph each graph's loops follow that
    graph's edges.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1], [1, 1]))
    >>> g.edata["w"] = nc.tensor([2.0, 4.0])
    >>> sg = nw.add_self_loop(g, fill_data="mean")
    >>> [t.tolist() for t in sg.edges()], sg.edata["w"].tolist()
    ([[0, 1, 0, 1], [1, 1, 0, 1]], [2.0, 4.0, 0.0, 3.0])
    """
    _check_graph(g)
    modes = ("sum", "mean", "max", "min")
    if isinstance(fill_data, str):
        if fill_data not in modes:
            raise ValueError(f"add_self_loop: fill_data must be a number or one of {', '.join(modes)}, "
                             f"got {fill_data!r}")
    elif isinstance(fill_data, bool) or not isinstance(fill_data, (int, float)):
        raise TypeError(f"add_self_loop: fill_data must be a number or one of {', '.join(modes)}, got "
                        f"{type(fill_data).__name__}")
    ct = g.to_canonical_etype(etype)
    if ct[0] != ct[2]:
        raise ValueError(f"add_self_loop: edge type {ct!r} joins different node types; self-loops need "
                         "an edge type whose source and destination types are the same")
    n = g._num_nodes[ct[0]]
    src, dst = _coo(g, ct)
    loops = np.arange(n, dtype=np.int64)
    old = g._edge_frames[ct]
    names = set(old) if edge_feat_names is None else set(edge_feat_names)
    frame = Frame(len(src) + n)
    for k in old:
        if k not in names:
            rows = _full_rows(old[k], n, 0, g._device)
        elif isinstance(fill_data, str):
            rows = _in_edge_reduce(g, ct, dst, old[k], fill_data)
        else:
            rows = _full_rows(old[k], n, fill_data, g._device)
        frame[k] = backend.of(old[k]).cat([old[k], rows], 0)
    batch_edges: dict = {}
    graphs = (np.concatenate([_edge_graphs(g, ct), _node_graphs(g, ct[0])])
              if g._batch_num_nodes is not None else None)
    s, d, frame = _regroup(g, ct, np.concatenate([src, loops]), np.concatenate([dst, loops]), graphs,
                           frame, batch_edges)
    return _rebuild(g, {ct: (s, d, frame)}, True, batch_edges)


def _in_edge_reduce(g: HeteroGraph, ct: Canonical, dst: np.ndarray, feat: Any, mode: str) -> Any:
    """Per destination node, ``mode`` over the features of its in-edges (0 without in-edges).

    Floating features go through the copy_e gSpMM kernel, so the result stays on the graph's
    device and is differentiable; integer features are reduced with NumPy.
    """
    B = backend.of(feat)
    if B.dtype_name(feat).startswith(("float", "bfloat")):
        return B.gspmm(g._rels[ct], "copy_rhs", mode, None, feat)
    x = B.to_numpy(feat)
    n = g._num_nodes[ct[2]]
    out = np.zeros((n,) + x.shape[1:], np.float64 if mode == "mean" else x.dtype)
    if mode in ("max", "min"):
        has = np.bincount(dst, minlength=n) > 0
        fill = np.iinfo(x.dtype).min if mode == "max" else np.iinfo(x.dtype).max
        acc = np.full_like(out, fill)
        (np.maximum if mode == "max" else np.minimum).at(acc, dst, x)
        out[has] = acc[has]
    else:
        np.add.at(out, dst, x)
        if mode == "mean":
            cnt = np.maximum(np.bincount(dst, minlength=n), 1).reshape((n,) + (1,) * (x.ndim - 1))
            out = (out / cnt).astype(x.dtype)
    return B.from_numpy(np.ascontiguousarray(out.astype(x.dtype)), g._device)


def remove_self_loop(g: HeteroGraph, etype: str | tuple | None = None) -> HeteroGraph:
    """Removes every edge ``v -> v`` of edge type ``etype``; the remaining edges keep their order
    and features.

    >>> import nodeweave as nw
    >>> g = nw.remove_self_loop(nw.graph(([0, 1, 1], [0, 2, 1])))
    >>> [t.tolist() for t in g.edges()]
    [[1], [2]]
    """
    _check_graph(g)
    ct = g.to_canonical_etype(etype)
    if ct[0] != ct[2]:
        raise ValueError(f"remove_self_loop: edge type {ct!r} joins different node types, so it has "
                         "no self-loops")
    src, dst = _coo(g, ct)
    keep = np.flatnonzero(src != dst)
    batch_edges: dict = {}
    if g._batch_num_nodes is not None:
        batch_edges[ct] = np.bincount(_edge_graphs(g, ct)[keep], minlength=g.batch_size).astype(np.int64)
    return _rebuild(g, {ct: (src[keep], dst[keep], g._edge_frames[ct].subframe(keep))}, True, batch_edges)


def _simple_rel(src: np.ndarray, dst: np.ndarray, num_src: int,
                num_dst: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ``(u, v)`` pairs sorted by ``(u, v)``: the first (smallest-id) edge of each pair,
    each pair's multiplicity, and the pair index of every edge."""
    new = np.ones(len(src), bool)
    if num_src * num_dst < 2 ** 62:  # one int64 key sorts about twice as fast as lexsort
        key = src * num_dst + dst
        order = np.argsort(key, kind="stable")  # stable: ties stay in edge-id order
        k = key[order]
        new[1:] = k[1:] != k[:-1]
    else:
        order = np.lexsort((dst, src))
        s, d = src[order], dst[order]
        new[1:] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, len(order)))
    group = np.empty(len(order), np.int64)
    group[order] = np.cumsum(new) - 1
    return order[starts], counts, group


def to_simple(g: HeteroGraph, return_counts: str | None = "count", writeback_mapping: bool = False,
              copy_ndata: bool = True, copy_edata: bool = False, aggregator: str = "arbitrary"):
    """Merges parallel edges: one edge per distinct ``(u, v)`` of each edge type, sorted by
    ``(u, v)``.

    Parameters
    ----------
    return_counts : str or None
        Edge feature that receives each merged edge's multiplicity (idtype ints); None for none.
    writeback_mapping : bool
        Also return, per original edge, the id of the edge it was merged into (a tensor, or a
        dict by canonical edge type when ``g`` has several).
    copy_ndata, copy_edata : bool
        Keep node features (shared) / edge features (combined by ``aggregator``).
    aggregator : 'arbitrary', 'sum' or 'mean'
        How the features of merged edges combine with ``copy_edata``: those of the smallest-id
        edge of each group ('arbitrary', as DGL names it), or their sum or mean.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([1, 0, 1], [2, 1, 2]))
    >>> sg, wb = nw.to_simple(g, writeback_mapping=True)
    >>> [t.tolist() for t in sg.edges()], sg.edata["count"].tolist(), wb.tolist()
    ([[0, 1], [1, 2]], [1, 2], [1, 0, 1])
    >>> g.edata["w"] = nc.tensor([1.0, 5.0, 2.0])
    >>> nw.to_simple(g, copy_edata=True, aggregator="sum").edata["w"].tolist()
    [5.0, 3.0]
    """
    _check_graph(g)
    if return_counts is not None and not isinstance(return_counts, str):
        raise TypeError(f"return_counts must be a feature name or None, got {return_counts!r}")
    if aggregator not in ("arbitrary", "sum", "mean"):
        raise ValueError(f"to_simple: aggregator must be 'arbitrary', 'sum' or 'mean', got {aggregator!r}")
    changed, mapping, batch_edges = {}, {}, {}
    for ct in g._etypes:
        src, dst = _coo(g, ct)
        first, counts, group = _simple_rel(src, dst, g._num_nodes[ct[0]], g._num_nodes[ct[2]])
        if not copy_edata:
            frame = Frame(len(first))
        elif aggregator == "arbitrary":
            frame = g._edge_frames[ct].subframe(first)
        else:
            frame = _merge_edge_features(g._edge_frames[ct], group, counts, aggregator)
        if return_counts is not None:
            frame[return_counts] = _ids(counts, g)
        changed[ct] = (src[first], dst[first], frame)
        mapping[ct] = _ids(group, g)
        if g._batch_num_nodes is not None:
            batch_edges[ct] = np.bincount(_edge_graphs(g, ct)[first], minlength=g.batch_size).astype(np.int64)
    out = _rebuild(g, changed, copy_ndata, batch_edges)
    if not writeback_mapping:
        return out
    return out, (mapping[g._etypes[0]] if len(g._etypes) == 1 else mapping)


def _merge_edge_features(old: Frame, group: np.ndarray, counts: np.ndarray, how: str) -> Frame:
    """Per merged edge, the sum or mean of the features of the edges merged into it. Floating
    features go through segment_reduce (on the graph's device, differentiable); integer ones
    through NumPy (a mean of integers is floored, like Python's //)."""
    order = np.argsort(group, kind="stable")
    frame = Frame(len(counts))
    for k in old:
        feat = old[k]
        B = backend.of(feat)
        if B.dtype_name(feat).startswith(("float", "bfloat")):
            offsets = np.zeros(len(counts) + 1, np.int64)
            np.cumsum(counts, out=offsets[1:])
            rows = B.index_select(feat, B.int_tensor(order, B.device_str(feat)))
            frame[k] = B.segment_reduce(how, rows, B.int_tensor(offsets, B.device_str(feat)))
        else:
            x = B.to_numpy(feat)
            acc = np.zeros((len(counts),) + x.shape[1:], np.int64)
            np.add.at(acc, group, x)
            if how == "mean":
                acc //= counts.reshape((-1,) + (1,) * (x.ndim - 1))
            frame[k] = B.from_numpy(np.ascontiguousarray(acc.astype(x.dtype)), B.device_str(feat))
    return frame


def to_bidirected(g: HeteroGraph, copy_ndata: bool = False, readonly: Any = None) -> HeteroGraph:
    """The simple graph with an edge ``u -> v`` and ``v -> u`` for every edge ``u -> v`` of ``g``
    (per edge type; each must join a node type to itself). Edges are sorted by ``(u, v)``; edge
    features are dropped. ``readonly`` is ignored (DGL compatibility).

    >>> import nodeweave as nw
    >>> bg = nw.to_bidirected(nw.graph(([0, 0, 1], [1, 1, 1])))
    >>> [t.tolist() for t in bg.edges()]
    [[0, 1, 1], [1, 0, 1]]
    """
    _check_graph(g)
    changed, batch_edges = {}, {}
    for ct in g._etypes:
        if ct[0] != ct[2]:
            raise ValueError(f"to_bidirected: edge type {ct!r} joins different node types; every edge "
                             "type must join a node type to itself")
        src, dst = _coo(g, ct)
        s2, d2 = np.concatenate([src, dst]), np.concatenate([dst, src])
        first, _, _ = _simple_rel(s2, d2, g._num_nodes[ct[0]], g._num_nodes[ct[0]])
        s, d = s2[first], d2[first]
        changed[ct] = (s, d, Frame(len(s)))
        if g._batch_num_nodes is not None:
            batch_edges[ct] = np.bincount(_node_graphs(g, ct[0])[s], minlength=g.batch_size).astype(np.int64)
    return _rebuild(g, changed, copy_ndata, batch_edges)


def add_reverse_edges(g: HeteroGraph, readonly: Any = None, copy_ndata: bool = True,
                      copy_edata: bool = False, ignore_bipartite: bool = False,
                      exclude_self: bool = True) -> HeteroGraph:
    """Adds the reverse ``v -> u`` of every edge ``u -> v``: the result has the original edges
    (ids ``0 .. E-1``) followed by the reversed ones in the same order, as DGL.

    Parameters
    ----------
    readonly : ignored (DGL compatibility).
    copy_edata : bool
        Keep edge features; a reversed edge gets the features of the edge it reverses.
    ignore_bipartite : bool
        Leave edge types joining different node types unchanged instead of raising ValueError.
    exclude_self : bool
        Do not add a second copy of self-loops (DGL's default).

    >>> import nodeweave as nw
    >>> g = nw.add_reverse_edges(nw.graph(([0, 1, 2], [1, 2, 2])))
    >>> [t.tolist() for t in g.edges()]
    [[0, 1, 2, 1, 2], [1, 2, 2, 0, 1]]
    """
    _check_graph(g)
    changed, batch_edges = {}, {}
    for ct in g._etypes:
        if ct[0] != ct[2]:
            if ignore_bipartite:
                continue
            raise ValueError(f"add_reverse_edges: edge type {ct!r} joins different node types; pass "
                             "ignore_bipartite=True to leave such edge types unchanged")
        src, dst = _coo(g, ct)
        rev = np.flatnonzero(src != dst) if exclude_self else np.arange(len(src), dtype=np.int64)
        s, d = np.concatenate([src, dst[rev]]), np.concatenate([dst, src[rev]])
        old = g._edge_frames[ct]
        frame = Frame(len(s))
        if copy_edata:
            for k in old:
                B = backend.of(old[k])
                frame[k] = B.cat([old[k], B.index_select(old[k], rev)], 0)
        graphs = None
        if g._batch_num_nodes is not None:
            eg = _edge_graphs(g, ct)
            graphs = np.concatenate([eg, eg[rev]])
        changed[ct] = _regroup(g, ct, s, d, graphs, frame, batch_edges)
    return _rebuild(g, changed, copy_ndata, batch_edges, keep_edata=copy_edata)


# ============================================================================ subgraphs


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
    sets = _node_sets(g, nodes, "nodes")
    for nt, ids in sets.items():
        _check_unique(ids, "nodes" if len(g._ntypes) == 1 else f"nodes[{nt!r}]")
    member = {}
    for nt, ids in sets.items():
        m = np.zeros(g._num_nodes[nt], bool)
        m[ids] = True
        member[nt] = m
    edges = {}
    for ct in g._etypes:
        src, dst = _coo(g, ct)
        edges[ct] = np.flatnonzero(member[ct[0]][src] & member[ct[2]][dst])
    keep = sets if relabel_nodes else {}
    return _to_device(_subgraph(g, keep, edges, store_ids), output_device)


def _endpoint_nodes(g: HeteroGraph, edges: dict[Canonical, np.ndarray]) -> dict[str, np.ndarray]:
    """Sorted distinct endpoints of ``edges`` per node type."""
    used = {nt: np.zeros(g._num_nodes[nt], bool) for nt in g._ntypes}
    for ct, e in edges.items():
        src, dst = _coo(g, ct)
        used[ct[0]][src[e]] = True
        used[ct[2]][dst[e]] = True
    return {nt: np.flatnonzero(m).astype(np.int64) for nt, m in used.items()}


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
    sets = _edge_sets(g, edges, "edges")
    keep = _endpoint_nodes(g, sets) if relabel_nodes else {}
    return _to_device(_subgraph(g, keep, sets, store_ids), output_device)


def _neighbor_subgraph(g: HeteroGraph, nodes: Any, side: int, relabel_nodes: bool, store_ids: bool,
                       output_device: Any) -> HeteroGraph:
    sets = _node_sets(g, nodes, "nodes")
    edges = {}
    for ct in g._etypes:
        ends = _coo(g, ct)[1 if side == 2 else 0]
        seed = np.zeros(g._num_nodes[ct[side]], bool)
        seed[sets[ct[side]]] = True
        edges[ct] = np.flatnonzero(seed[ends])
    keep = _endpoint_nodes(g, edges) if relabel_nodes else {}
    return _to_device(_subgraph(g, keep, edges, store_ids), output_device)


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
    _check_graph(g)
    return _neighbor_subgraph(g, nodes, 2, relabel_nodes, store_ids, output_device)


def out_subgraph(g: HeteroGraph, nodes: Any, *, relabel_nodes: bool = False, store_ids: bool = True,
                 output_device: Any = None) -> HeteroGraph:
    """The subgraph of all edges leaving ``nodes``; otherwise as :func:`in_subgraph`.

    >>> import nodeweave as nw
    >>> sg = nw.out_subgraph(nw.graph(([0, 1, 2, 0], [1, 2, 0, 2])), [0])
    >>> [t.tolist() for t in sg.edges()], sg.edata["_ID"].tolist()
    ([[0, 0], [1, 2]], [0, 3])
    """
    _check_graph(g)
    return _neighbor_subgraph(g, nodes, 0, relabel_nodes, store_ids, output_device)


def _check_k(k: Any, fn: str) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"{fn}: k must be a non-negative int, got {k!r}")
    return int(k)


def _khop(g: HeteroGraph, nodes: Any, k: Any, inward: bool, relabel_nodes: bool, store_ids: bool,
          output_device: Any, fn: str):
    _check_graph(g)
    k = _check_k(k, fn)
    was_dict = isinstance(nodes, dict)
    seeds = _node_sets(g, nodes, "nodes")
    reached = {nt: np.zeros(g._num_nodes[nt], bool) for nt in g._ntypes}
    for nt, ids in seeds.items():
        reached[nt][ids] = True
    frontier = {nt: m.copy() for nt, m in reached.items()}
    coo = {ct: _coo(g, ct) for ct in g._etypes}
    for _ in range(k):
        new = {nt: np.zeros(g._num_nodes[nt], bool) for nt in g._ntypes}
        for (st, _, dt), (src, dst) in zip(g._etypes, coo.values()):
            if inward:  # predecessors of the frontier
                new[st][src[frontier[dt][dst]]] = True
            else:
                new[dt][dst[frontier[st][src]]] = True
        frontier = {nt: new[nt] & ~reached[nt] for nt in g._ntypes}
        if not any(f.any() for f in frontier.values()):
            break
        for nt in g._ntypes:
            reached[nt] |= frontier[nt]
    keep = {nt: np.flatnonzero(m).astype(np.int64) for nt, m in reached.items()}
    sub = node_subgraph(g, keep, relabel_nodes=relabel_nodes, store_ids=store_ids,
                        output_device=output_device)
    inv = {}
    for nt, ids in seeds.items():
        if was_dict and nt not in nodes:
            continue
        new_ids = np.searchsorted(keep[nt], ids) if relabel_nodes else ids
        inv[nt] = backend.current().int_tensor(new_ids, sub._device, g._idtype_name)
    return sub, (inv if was_dict else inv[g._ntypes[0]])


def khop_in_subgraph(g: HeteroGraph, nodes: Any, k: int, *, relabel_nodes: bool = True,
                     store_ids: bool = True, output_device: Any = None):
    """The subgraph induced by ``nodes`` and every node that reaches one of them in at most ``k``
    hops (following edges of every type backwards).

    Returns ``(subgraph, inverse_indices)``: kept nodes are in increasing original id, and
    ``inverse_indices`` gives the new id of each seed node (a dict when ``nodes`` is a dict).

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 4]))
    >>> sg, inv = nw.khop_in_subgraph(g, [3], k=2)
    >>> sg.ndata["_ID"].tolist(), inv.tolist()
    ([1, 2, 3], [2])
    """
    return _khop(g, nodes, k, True, relabel_nodes, store_ids, output_device, "khop_in_subgraph")


def khop_out_subgraph(g: HeteroGraph, nodes: Any, k: int, *, relabel_nodes: bool = True,
                      store_ids: bool = True, output_device: Any = None):
    """Like :func:`khop_in_subgraph`, following edges forwards (nodes reachable from ``nodes``).

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 4]))
    >>> sg, inv = nw.khop_out_subgraph(g, [3, 0], k=1)
    >>> sg.ndata["_ID"].tolist(), inv.tolist()
    ([0, 1, 3, 4], [2, 0])
    """
    return _khop(g, nodes, k, False, relabel_nodes, store_ids, output_device, "khop_out_subgraph")


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
            raise ValueError(f"compact_graphs: graphs[{i}] has nodes {g._num_nodes}, graphs[0] has "
                             f"{g0._num_nodes}; all graphs must share node types and counts")
    used = {nt: np.zeros(g0._num_nodes[nt], bool) for nt in g0._ntypes}
    for g in gl:
        for ct in g._etypes:
            src, dst = _coo(g, ct)
            used[ct[0]][src] = True
            used[ct[2]][dst] = True
    first = {nt: np.zeros(0, np.int64) for nt in g0._ntypes}
    if always_preserve is not None:
        first = _node_sets(g0, always_preserve, "always_preserve")
    keep = {}
    for nt in g0._ntypes:
        pre = first[nt]
        _, idx = np.unique(pre, return_index=True)
        pre = pre[np.sort(idx)]
        used[nt][pre] = False
        keep[nt] = np.concatenate([pre, np.flatnonzero(used[nt])]).astype(np.int64)
    out = [_subgraph(g, keep, {ct: np.arange(g._rels[ct].num_edges, dtype=np.int64) for ct in g._etypes},
                     False, copy_ndata, copy_edata) for g in gl]
    for g, o in zip(gl, out):
        for nt in g._ntypes:
            o._node_frames[nt][NID] = _ids(keep[nt], g)
    return out[0] if single else out


# ============================================================================ derived graphs


def khop_graph(g: HeteroGraph, k: int, copy_ndata: bool = True) -> HeteroGraph:
    """The graph whose edges ``u -> v`` are the walks of length ``k`` from ``u`` to ``v`` in ``g``:
    as many parallel edges as there are such walks (the adjacency matrix is ``A**k``, counting
    multi-edges). Edges are sorted by ``(u, v)``; ``k = 0`` gives one self-loop per node.

    >>> import nodeweave as nw
    >>> kg = nw.khop_graph(nw.graph(([0, 0, 1, 2], [1, 2, 3, 3])), 2)
    >>> [t.tolist() for t in kg.edges()]
    [[0, 0], [3, 3]]
    """
    import scipy.sparse as sp

    _check_graph(g)
    nt, ct = _homo_types(g, "khop_graph")
    k = _check_k(k, "khop_graph")
    n = g._num_nodes[nt]
    src, dst = _coo(g, ct)
    a = sp.csr_matrix((np.ones(len(src), np.int64), (src, dst)), shape=(n, n))
    # Walk counts grow exponentially; count them in floating point first so an impossible result
    # is refused before the exact int64 power could overflow.
    w = np.ones(n)
    for _ in range(k):
        w = a @ w
    total = float(w.sum())
    limit = 2 ** 31 - 1 if g._idtype_name == "int32" else 2 ** 34
    if total > limit:
        raise ValueError(f"khop_graph: the result would have {total:.3g} edges (walks of length {k}), "
                         f"more than the limit of {limit}")
    m = sp.identity(n, dtype=np.int64, format="csr")
    for _ in range(k):
        m = m @ a
    m = m.tocsr()
    m.sum_duplicates()
    m.sort_indices()
    m.eliminate_zeros()
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(m.indptr))
    counts = m.data.astype(np.int64)
    s, d = np.repeat(rows, counts), np.repeat(m.indices.astype(np.int64), counts)
    batch_edges = {}
    if g._batch_num_nodes is not None:
        batch_edges[ct] = np.bincount(_node_graphs(g, nt)[s], minlength=g.batch_size).astype(np.int64)
    return _rebuild(g, {ct: (s, d, Frame(len(s)))}, copy_ndata, batch_edges)


def line_graph(g: HeteroGraph, backtracking: bool = True, shared: bool = False) -> HeteroGraph:
    """The line graph: one node per edge of ``g``, and an edge ``e1 -> e2`` wherever ``e1 = (u, v)``
    and ``e2 = (v, w)``. Without ``backtracking``, pairs with ``w == u`` are left out. Edges are
    ordered by ``e1``, then ``e2``. ``shared=True`` makes ``g``'s edge features the node features.

    >>> import nodeweave as nw
    >>> lg = nw.line_graph(nw.graph(([0, 1, 1], [1, 0, 2])), backtracking=False)
    >>> lg.num_nodes(), [t.tolist() for t in lg.edges()]
    (3, [[0], [2]])
    """
    _check_graph(g)
    nt, ct = _homo_types(g, "line_graph")
    src, dst = _coo(g, ct)
    indptr, _, eids = g._host(ct).csr()
    indptr = indptr.astype(np.int64)
    e1 = np.repeat(np.arange(len(src), dtype=np.int64), np.diff(indptr)[dst])
    e2 = eids[_ragged_positions(indptr, dst)].astype(np.int64)
    if not backtracking:
        ok = dst[e2] != src[e1]
        e1, e2 = e1[ok], e2[ok]
    lnt = nt
    lct = (lnt, ct[1], lnt)
    nframes = {lnt: g._edge_frames[ct].clone_shallow()} if shared else None
    out = _build({lnt: len(src)}, {lct: (e1, e2)}, g._idtype_name, g._device, nframes)
    if g._batch_num_nodes is not None:
        out._batch_num_nodes = {lnt: _bne(g)[ct]}
        out._batch_num_edges = {lct: np.bincount(_edge_graphs(g, ct)[e1],
                                                 minlength=g.batch_size).astype(np.int64)}
    return out


# ============================================================================ type conversions


def _stack_features(frames: list[Frame], names: Sequence[str] | None, what: str, types: list,
                    counts: list[int]) -> dict[str, Any]:
    """Per-type feature columns ``names`` concatenated in type order (same row shape and dtype)."""
    if not names:
        return {}
    out = {}
    for key in names:
        parts, scheme = [], None
        for t, f, n in zip(types, frames, counts):
            if key not in f:
                if n == 0:
                    continue
                raise ValueError(f"to_homogeneous: {what} type {t!r} has no feature {key!r}")
            B = backend.of(f[key])
            s = (tuple(B.shape(f[key])[1:]), B.dtype_name(f[key]))
            if scheme is not None and s != scheme:
                raise ValueError(f"to_homogeneous: feature {key!r} of {what} type {t!r} has row shape "
                                 f"{s[0]} and dtype {s[1]}, other types have {scheme[0]} and {scheme[1]}")
            scheme = s
            parts.append(f[key])
        if parts:
            out[key] = backend.of(parts[0]).cat(parts, 0)
    return out


def to_homogeneous(g: HeteroGraph, ndata: Sequence[str] | None = None, edata: Sequence[str] | None = None,
                   store_type: bool = True, return_count: bool = False):
    """One graph with all node types and edge types merged: nodes are numbered type by type (in
    :attr:`ntypes` order), edges relation by relation (in canonical edge type order).

    ``ndata['_TYPE']`` / ``edata['_TYPE']`` hold each node's / edge's type index (int64) and
    ``ndata['_ID']`` / ``edata['_ID']`` its id within its type (idtype), unless
    ``store_type=False``. Features named in ``ndata`` / ``edata`` are concatenated across types
    (same row shape and dtype required). ``return_count=True`` also returns the node and edge
    counts per type.

    >>> import nodeweave as nw
    >>> hg = nw.heterograph({("user", "plays", "game"): ([0, 1], [0, 0])})
    >>> h = nw.to_homogeneous(hg)  # node types in order: game, user
    >>> [t.tolist() for t in h.edges()], h.ndata["_TYPE"].tolist(), h.ndata["_ID"].tolist()
    ([[1, 2], [0, 0]], [0, 1, 1], [0, 0, 1])
    """
    _check_graph(g)
    for arg, v in (("ndata", ndata), ("edata", edata)):
        if isinstance(v, str):
            raise TypeError(f"to_homogeneous: {arg} must be a list of feature names, got the string {v!r}")
    ncount = [g._num_nodes[nt] for nt in g._ntypes]
    ecount = [g._rels[ct].num_edges for ct in g._etypes]
    offset = dict(zip(g._ntypes, np.concatenate([[0], np.cumsum(ncount)]).astype(np.int64)))
    srcs, dsts = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for ct in g._etypes:
        s, d = _coo(g, ct)
        srcs.append(s + offset[ct[0]])
        dsts.append(d + offset[ct[2]])
    n = int(sum(ncount))
    nf = Frame(n, _stack_features([g._node_frames[t] for t in g._ntypes], ndata, "node", g._ntypes, ncount))
    ef = Frame(int(sum(ecount)), _stack_features([g._edge_frames[t] for t in g._etypes], edata, "edge",
                                                 g._etypes, ecount))
    if store_type:
        B = backend.current()
        starts = np.array([offset[nt] for nt in g._ntypes], np.int64)
        ar = np.arange(n, dtype=np.int64) - np.repeat(starts, ncount)
        nf[NTYPE] = B.int_tensor(_segment_ids(np.array(ncount, np.int64)), g._device, "int64")
        nf[NID] = _ids(ar, g)
        ecum = np.concatenate([[0], np.cumsum(ecount)]).astype(np.int64)
        ef[ETYPE] = B.int_tensor(_segment_ids(np.array(ecount, np.int64)), g._device, "int64")
        ef[EID] = _ids(np.arange(int(sum(ecount)), dtype=np.int64) -
                       np.repeat(ecum[:-1], ecount), g)
    out = _build({"_N": n}, {("_N", "_E", "_N"): (np.concatenate(srcs), np.concatenate(dsts))},
                 g._idtype_name, g._device, {"_N": nf}, {("_N", "_E", "_N"): ef})
    return (out, ncount, ecount) if return_count else out


def _type_ids(frame: Frame, field: str, count: int, rows: int, what: str) -> np.ndarray:
    if field not in frame:
        if rows == 0:
            return np.zeros(0, np.int64)
        raise ValueError(f"to_heterogeneous: the graph has no {what} feature {field!r} holding type ids")
    arr = backend.of(frame[field]).to_numpy(frame[field])
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise ValueError(f"to_heterogeneous: {what} feature {field!r} must be a 1-D integer tensor, got "
                         f"shape {arr.shape} and dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    bad = (arr < 0) | (arr >= count)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"to_heterogeneous: {what} feature {field!r}[{i}] = {int(arr[i])} is not a type "
                         f"index below {count}")
    return arr


def to_heterogeneous(g: HeteroGraph, ntypes: Sequence[str], etypes: Sequence[str | tuple],
                     ntype_field: str = NTYPE, etype_field: str = ETYPE, metagraph: Any = None) -> HeteroGraph:
    """The inverse of :func:`to_homogeneous`: splits a homogeneous graph into node types
    ``ntypes[ndata[ntype_field]]`` and edge types ``etypes[edata[etype_field]]``.

    ``etypes`` are names or canonical ``(src_type, etype, dst_type)`` tuples; for a name the
    source/destination types are inferred from the edges (all edges of one type must agree).
    Within a type, nodes and edges keep their relative order. Other features are sliced per type;
    ``ndata['_ID']`` / ``edata['_ID']`` receive the ids in ``g``. ``metagraph`` is ignored.

    >>> import nodeweave as nw
    >>> hg = nw.heterograph({("user", "plays", "game"): ([0, 1], [0, 0])})
    >>> back = nw.to_heterogeneous(nw.to_homogeneous(hg), hg.ntypes, hg.etypes)
    >>> back.canonical_etypes, [t.tolist() for t in back.edges()]
    ([('user', 'plays', 'game')], [[0, 1], [0, 0]])
    """
    _check_graph(g)
    nt0, ct0 = _homo_types(g, "to_heterogeneous") if g._etypes else (g._ntype(None), None)
    ntypes = list(ntypes)
    etypes = [tuple(e) if isinstance(e, (list, tuple)) else e for e in etypes]
    if len(set(ntypes)) != len(ntypes) or not all(isinstance(t, str) for t in ntypes):
        raise ValueError(f"to_heterogeneous: ntypes must be distinct strings, got {ntypes}")
    n = g._num_nodes[nt0]
    ntid = _type_ids(g._node_frames[nt0], ntype_field, len(ntypes), n, "node")
    order = np.argsort(ntid, kind="stable")
    ncount = np.bincount(ntid, minlength=len(ntypes)).astype(np.int64)
    local = np.empty(n, np.int64)
    local[order] = np.arange(n, dtype=np.int64) - np.repeat(np.cumsum(ncount) - ncount, ncount)
    num_nodes = {t: int(c) for t, c in zip(ntypes, ncount)}
    starts = np.cumsum(ncount) - ncount
    node_ids = {t: order[starts[i]:starts[i] + ncount[i]] for i, t in enumerate(ntypes)}
    if ct0 is None:
        src = dst = np.zeros(0, np.int64)
        etid = np.zeros(0, np.int64)
        eframe = Frame(0)
    else:
        src, dst = _coo(g, ct0)
        eframe = g._edge_frames[ct0]
        etid = _type_ids(eframe, etype_field, len(etypes), len(src), "edge")
    coo, eids = {}, {}
    for j, et in enumerate(etypes):
        e = np.flatnonzero(etid == j)
        st, dt = np.unique(ntid[src[e]]), np.unique(ntid[dst[e]])
        if isinstance(et, tuple):
            if len(et) != 3 or et[0] not in num_nodes or et[2] not in num_nodes:
                raise ValueError(f"to_heterogeneous: etypes[{j}] = {et!r} is not a (src_type, etype, "
                                 f"dst_type) triple of the node types {ntypes}")
            ct = et
            if e.size and (st.tolist() != [ntypes.index(et[0])] or dt.tolist() != [ntypes.index(et[2])]):
                raise ValueError(f"to_heterogeneous: edges of type {et!r} join node types "
                                 f"{[ntypes[i] for i in st]} -> {[ntypes[i] for i in dt]}")
        else:
            if not isinstance(et, str):
                raise TypeError(f"to_heterogeneous: etypes[{j}] must be a name or a canonical triple, "
                                f"got {et!r}")
            if len(st) > 1 or len(dt) > 1:
                raise ValueError(f"to_heterogeneous: edges of type {et!r} join several node type pairs "
                                 f"({[ntypes[i] for i in st]} -> {[ntypes[i] for i in dt]}); all edges of "
                                 "one type must share source and destination types")
            if e.size:
                ct = (ntypes[st[0]], et, ntypes[dt[0]])
            elif len(ntypes) == 1:
                ct = (ntypes[0], et, ntypes[0])
            else:
                raise ValueError(f"to_heterogeneous: edge type {et!r} has no edges, so its node types can't "
                                 "be inferred; pass canonical (src_type, etype, dst_type) tuples")
        if ct in coo:
            raise ValueError(f"to_heterogeneous: edge type {ct!r} appears twice in etypes")
        coo[ct] = (local[src[e]], local[dst[e]])
        eids[ct] = e
    nframes = {}
    for t in ntypes:
        f = g._node_frames[nt0].subframe(node_ids[t])
        if ntype_field in f:
            del f[ntype_field]
        f[NID] = _ids(node_ids[t], g)
        nframes[t] = f
    eframes = {}
    for ct, e in eids.items():
        f = eframe.subframe(e)
        if etype_field in f:
            del f[etype_field]
        f[EID] = _ids(e, g)
        eframes[ct] = f
    return _build(num_nodes, coo, g._idtype_name, g._device, nframes, eframes)


def _check_perm(p: Any, n: int, name: str) -> np.ndarray:
    arr, _ = as_int_array(p, name)
    if len(arr) != n or not np.array_equal(np.sort(arr), np.arange(n)):
        raise ValueError(f"{name} must be a permutation of 0..{n - 1} ({n} distinct ids), got "
                         f"{len(arr)} ids" + ("" if len(arr) != n else " that are not distinct"))
    return arr


def reorder_graph(g: HeteroGraph, node_permute_algo: str | None = None, edge_permute_algo: str = "src",
                  store_ids: bool = True, permute_config: dict | None = None) -> HeteroGraph:
    """The same graph with nodes and edges renumbered (features permuted along).

    Parameters
    ----------
    node_permute_algo : None, 'rcmk' or 'custom'
        None keeps node ids; 'rcmk' uses reverse Cuthill-McKee
        (``scipy.sparse.csgraph.reverse_cuthill_mckee``); 'custom' uses
        ``permute_config['nodes_perm']``. New node ``i`` is old node ``perm[i]``.
    edge_permute_algo : 'src', 'dst' or 'custom'
        Sort edges stably by new source ('src') or destination ('dst') id, or use
        ``permute_config['edges_perm']`` (new edge ``j`` is old edge ``perm[j]``).
    store_ids : bool
        Store the original ids in ``ndata['_ID']`` and ``edata['_ID']``.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
    >>> rg = nw.reorder_graph(g, "custom", permute_config={"nodes_perm": [2, 0, 1]})
    >>> rg.ndata["_ID"].tolist(), [t.tolist() for t in rg.edges()], rg.edata["_ID"].tolist()
    ([2, 0, 1], [[0, 1, 2], [1, 2, 0]], [2, 0, 1])
    """
    _check_graph(g)
    nt, ct = _homo_types(g, "reorder_graph")
    n = g._num_nodes[nt]
    src, dst = _coo(g, ct)
    cfg = permute_config or {}
    if node_permute_algo is None:
        perm = np.arange(n, dtype=np.int64)
    elif node_permute_algo == "rcmk":
        import scipy.sparse as sp
        from scipy.sparse.csgraph import reverse_cuthill_mckee

        a = sp.csr_matrix((np.ones(len(src), np.float64), (src, dst)), shape=(n, n))
        perm = np.asarray(reverse_cuthill_mckee(a), np.int64) if n else np.zeros(0, np.int64)
    elif node_permute_algo == "custom":
        if "nodes_perm" not in cfg:
            raise ValueError("reorder_graph: node_permute_algo='custom' needs permute_config['nodes_perm']")
        perm = _check_perm(cfg["nodes_perm"], n, "permute_config['nodes_perm']")
    else:
        raise ValueError(f"reorder_graph: node_permute_algo must be None, 'rcmk' or 'custom', got "
                         f"{node_permute_algo!r}")
    inv = np.empty(n, np.int64)
    inv[perm] = np.arange(n, dtype=np.int64)
    ns, nd = inv[src], inv[dst]
    if edge_permute_algo == "src":
        eperm = np.argsort(ns, kind="stable")
    elif edge_permute_algo == "dst":
        eperm = np.argsort(nd, kind="stable")
    elif edge_permute_algo == "custom":
        if "edges_perm" not in cfg:
            raise ValueError("reorder_graph: edge_permute_algo='custom' needs permute_config['edges_perm']")
        eperm = _check_perm(cfg["edges_perm"], len(src), "permute_config['edges_perm']")
    else:
        raise ValueError(f"reorder_graph: edge_permute_algo must be 'src', 'dst' or 'custom', got "
                         f"{edge_permute_algo!r}")
    nf = g._node_frames[nt].subframe(perm)
    ef = g._edge_frames[ct].subframe(eperm)
    if store_ids:
        nf[NID] = _ids(perm, g)
        ef[EID] = _ids(eperm, g)
    return _build({nt: n}, {ct: (ns[eperm], nd[eperm])}, g._idtype_name, g._device, {nt: nf}, {ct: ef})
