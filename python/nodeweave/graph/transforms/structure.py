"""Transforms that rewrite a graph's edges without choosing a subset of its nodes: reversal,
self-loops, merging parallel edges, bidirected graphs and reverse edges (DGL's functions of the
same names).

Each acts on every graph of a batch separately and keeps the batch's per-graph counts: the result
equals ``batch([f(x) for x in unbatch(g)])``. Structure is computed with NumPy on the relations' COO
arrays and rebuilt as new relation graphs; features travel through the active backend.

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
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms._common import (Canonical, _bne, _bnn, _check_graph, _coo, _edge_graphs,
                                                _full_rows, _ids, _node_graphs, _rebuild, _regroup,
                                                _shallow)
from nodeweave import errors as nwerr

__all__ = ["reverse", "add_self_loop", "remove_self_loop", "to_simple", "to_bidirected",
           "add_reverse_edges"]


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
            raise nwerr.ValueError(f"add_self_loop: fill_data must be a number or one of {', '.join(modes)}, "
                                   f"got {fill_data!r}")
    elif isinstance(fill_data, bool) or not isinstance(fill_data, (int, float)):
        raise nwerr.TypeError(f"add_self_loop: fill_data must be a number or one of {', '.join(modes)}, got "
                              f"{type(fill_data).__name__}")
    ct = g.to_canonical_etype(etype)
    if ct[0] != ct[2]:
        raise nwerr.ValueError(f"add_self_loop: edge type {ct!r} joins different node types; self-loops need "
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
        raise nwerr.ValueError(f"remove_self_loop: edge type {ct!r} joins different node types, so it has "
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
        raise nwerr.TypeError(f"return_counts must be a feature name or None, got {return_counts!r}")
    if aggregator not in ("arbitrary", "sum", "mean"):
        raise nwerr.ValueError(f"to_simple: aggregator must be 'arbitrary', 'sum' or 'mean', got {aggregator!r}")
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
            raise nwerr.ValueError(f"to_bidirected: edge type {ct!r} joins different node types; every edge "
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
            raise nwerr.ValueError(f"add_reverse_edges: edge type {ct!r} joins different node types; pass "
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
