"""In-place graph mutation as DGL has it: ``g.add_nodes``, ``g.add_edges``, ``g.remove_nodes``,
``g.remove_edges``.

Relation storage is immutable (see the design notes): a mutator builds new relation graphs for the
edge types it changes and swaps them into the graph object, so cached formats are rebuilt for the
new structure, while anything that shares the old relations (a graph made by ``g.formats(...)``,
a block, a running kernel) keeps a consistent one. Relations the change does not touch stay the
same objects, with their cached formats. The query cache of the graph is cleared.

Removal runs the C++ subgraph primitives through :func:`~nodeweave.graph.transforms.node_subgraph`
and :func:`~nodeweave.graph.transforms.edge_subgraph`; adding rebuilds the changed relations from
their COO arrays. Features follow DGL:

- ``add_nodes`` / ``add_edges``: the new rows of a feature come from ``data`` or from the
  feature's initializer (zeros unless ``g.set_n_initializer`` / ``g.set_e_initializer`` chose
  another, see :mod:`nodeweave.init`); a feature that only ``data`` has gets the initializer's
  rows for the old nodes or edges. The batch counts of a batched graph are
  dropped (the new nodes and edges belong to no graph of the batch), as in DGL.
- ``remove_nodes`` / ``remove_edges``: the rows of removed nodes and edges are dropped; removing a
  node removes its edges. The remaining nodes and edges keep their order and are renumbered from 0.
  ``store_ids=True`` records the old ids (``ndata[nw.NID]`` for every node type when removing nodes,
  ``edata[nw.EID]`` for every edge type). A batched graph keeps its batch with the counts reduced.

Blocks cannot be mutated (as in DGL): build a new block instead.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([0, 1], [1, 2]))
>>> g.ndata["h"] = nc.tensor([1.0, 2.0, 3.0])
>>> g.add_edges([2, 4], [4, 0])           # node 4 does not exist yet: nodes 3 and 4 are added
>>> g.num_nodes(), g.ndata["h"].tolist()
(5, [1.0, 2.0, 3.0, 0.0, 0.0])
>>> g.remove_nodes([1], store_ids=True)  # and its two edges
>>> [t.tolist() for t in g.edges()], g.ndata[nw.NID].tolist(), g.edata[nw.EID].tolist()
([[1, 3], [3, 0]], [0, 2, 3, 4], [2, 3])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

import numpy as np

from nodeweave import backend
from nodeweave.graph.frame import Frame
from nodeweave.graph.heterograph import (HeteroGraph, IdRangeError, RelationGraph, as_int_array,
                                         check_range)
from nodeweave.graph.transforms import edge_subgraph, node_subgraph
from nodeweave.graph.transforms._common import (_bne, _bnn, _coo, _new_rel,
                                                _segment_ids)
from nodeweave import errors as nwerr

__all__ = ["add_nodes", "add_edges", "remove_nodes", "remove_edges", "install"]

Canonical = tuple


# ----------------------------------------------------------------------------- helpers


def _check_mutable(g: HeteroGraph, fn: str) -> None:
    if not isinstance(g, HeteroGraph):
        raise nwerr.TypeError(f"{fn}: g must be a nodeweave graph, got {type(g).__name__}")
    if g.is_block:
        raise nwerr.TypeError(f"{fn}: a block cannot be changed in place; build a new block (to_block, "
                              "create_block) from the changed graph instead")


def _count(num: Any) -> int:
    if isinstance(num, (bool, np.bool_)) or not isinstance(num, (int, np.integer)):
        raise nwerr.TypeError(f"add_nodes: num must be an int, got {type(num).__name__}")
    if num < 0:
        raise nwerr.ValueError(f"add_nodes: num must be non-negative, got {int(num)}")
    return int(num)


def _new_rows(frame: Frame, data: Any, n: int, what: str) -> dict[str, Any]:
    """``data`` checked as the features of ``n`` new rows of ``frame``: a mapping of names to
    tensors with ``n`` rows on the graph's device and, for a feature the frame already has, the same
    row shape, dtype and backend. Nothing is changed; errors name ``data[key]``."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise nwerr.TypeError(f"data must be a dict of feature name -> tensor, got {type(data).__name__}")
    Frame(n, dict(data), name="data", row_name=f"new {what}", device=frame.device)  # validates
    for k, v in data.items():
        if k not in frame:
            continue
        old, new = frame[k], v
        Bo, Bn = backend.of(old), backend.of(new)
        if Bo is not Bn:
            raise nwerr.TypeError(f"data[{k!r}] is a {Bn.name} tensor, but the graph's feature {k!r} is a "
                                  f"{Bo.name} tensor")
        so = (tuple(Bo.shape(old)[1:]), Bo.dtype_name(old))
        sn = (tuple(Bn.shape(new)[1:]), Bn.dtype_name(new))
        if so != sn:
            raise nwerr.ValueError(f"data[{k!r}] has row shape {sn[0]} and dtype {sn[1]}, but the graph's "
                                   f"feature {k!r} has {so[0]} and {so[1]}")
    return dict(data)


def _append_rows(frame: Frame, n: int, data: dict[str, Any]) -> Frame:
    """``frame`` with ``n`` more rows: from ``data`` where given, elsewhere what the frame's
    initializers make (zeros by default; see :mod:`nodeweave.init`)."""
    old = frame.num_rows
    out = frame._copy_settings(Frame(old + n, name=frame.name, row_name=frame.row_name,
                                     device=frame.device))
    for k, col in frame.items():
        extra = data[k] if k in data else frame.initial_rows(k, col, old, old + n)
        out[k] = backend.of(col).cat([col, extra], 0)
    for k, v in data.items():
        if k not in frame:
            out[k] = backend.of(v).cat([frame.initial_rows(k, v, 0, old), v], 0)
    return out


def _relation(g: HeteroGraph, old: RelationGraph, num_src: int, num_dst: int, src: np.ndarray,
              dst: np.ndarray) -> RelationGraph:
    """A new relation with these edges, the id type, device and allowed formats of ``old``."""
    rel = _new_rel(num_src, num_dst, src, dst, g._idtype_name, g._device)
    return _same_formats(rel, old)


def _same_formats(rel: RelationGraph, old: RelationGraph) -> RelationGraph:
    allowed = old.allowed_formats
    return rel if set(rel.allowed_formats) == set(allowed) else rel.with_formats(allowed)


def _adopt(g: HeteroGraph, sub: HeteroGraph, changed_ntypes: set, changed_etypes: set,
           store_ids: bool) -> None:
    """Makes ``g`` the subgraph ``sub`` of itself. Types whose nodes/edges all stay in place keep
    their relation objects (and cached formats) and, unless ids were stored, their frames."""
    for ct in g._etypes:
        if ct in changed_etypes:
            g._rels[ct] = _same_formats(sub._rels[ct], g._rels[ct])
            g._edge_frames[ct] = sub._edge_frames[ct]
        elif store_ids:
            g._edge_frames[ct] = sub._edge_frames[ct]
    for nt in g._ntypes:
        g._num_nodes[nt] = sub._num_nodes[nt]
        if nt in changed_ntypes or store_ids:
            g._node_frames[nt] = sub._node_frames[nt]
    g._cache.clear()


def _complement(ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(kept ids in increasing order, kept mask) of ``0..n-1`` without ``ids``."""
    keep = np.ones(n, bool)
    keep[ids] = False
    return np.flatnonzero(keep), keep


# ----------------------------------------------------------------------------- adding


def add_nodes(g: HeteroGraph, num: int, data: Mapping[str, Any] | None = None,
              ntype: str | None = None) -> None:
    """Adds ``num`` nodes of type ``ntype`` (optional for one node type), in place; their ids follow
    the existing ones.

    ``data`` gives features of the new nodes (tensors with ``num`` rows). Features the graph has and
    ``data`` lacks get their initializer's rows for the new nodes (zeros unless
    :meth:`set_n_initializer` chose another); features only ``data`` has get them for the old nodes.
    Batch counts are dropped.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0], [1]))
    >>> g.ndata["h"] = nc.tensor([[1.0], [2.0]])
    >>> g.add_nodes(2, {"x": nc.tensor([5, 6])})
    >>> g.num_nodes(), g.ndata["h"].tolist(), g.ndata["x"].tolist()
    (4, [[1.0], [2.0], [0.0], [0.0]], [0, 0, 5, 6])
    """
    _check_mutable(g, "add_nodes")
    n = _count(num)
    nt = g._ntype(ntype)
    rows = _new_rows(g._node_frames[nt], data, n, "node")
    if n == 0:
        return
    grown = dict(g._num_nodes)
    grown[nt] += n
    for ct in g._etypes:
        if nt in (ct[0], ct[2]):
            s, d = _coo(g, ct)
            g._rels[ct] = _relation(g, g._rels[ct], grown[ct[0]], grown[ct[2]], s, d)
    g._node_frames[nt] = _append_rows(g._node_frames[nt], n, rows)
    g._num_nodes = grown
    g._batch_num_nodes = g._batch_num_edges = None
    g._cache.clear()


def add_edges(g: HeteroGraph, u: Any, v: Any, data: Mapping[str, Any] | None = None,
              etype: Any = None) -> None:
    """Adds the edges ``u[i] -> v[i]`` of ``etype`` (optional for one edge type), in place; their
    ids follow the existing ones. An int (or one id) for ``u`` or ``v`` pairs with every id of the
    other.

    Endpoints beyond the current nodes add nodes up to them (features from the initializers), as DGL
    does.
    ``data`` gives features of the new edges (tensors with one row per new edge); missing features
    come from the edge initializers (:meth:`set_e_initializer`, zeros by default) as in
    :func:`add_nodes`. Batch counts are dropped.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.heterograph({("user", "plays", "game"): ([0], [0])})
    >>> g.edata["w"] = nc.tensor([1.0])
    >>> g.add_edges(2, [0, 1], {"w": nc.tensor([7.0, 8.0])})
    >>> g.num_nodes("user"), g.num_nodes("game"), g.edata["w"].tolist()
    (3, 2, [1.0, 7.0, 8.0])
    """
    _check_mutable(g, "add_edges")
    ct = g.to_canonical_etype(etype)
    us, su = as_int_array(u, "u")
    vs, sv = as_int_array(v, "v")
    if len(us) == 1 and len(vs) != 1:
        us = np.full(len(vs), us[0])
    elif len(vs) == 1 and len(us) != 1:
        vs = np.full(len(us), vs[0])
    elif len(us) != len(vs):
        raise nwerr.ValueError(f"add_edges: u and v must have the same length (or one of them one id), got "
                               f"{len(us)} and {len(vs)}")
    for name, ids in (("u", us), ("v", vs)):
        if ids.size and ids.min() < 0:
            i = int(np.flatnonzero(ids < 0)[0])
            raise IdRangeError(f"add_edges: {name}[{i}] = {int(ids[i])} is a negative node id")
    rows = _new_rows(g._edge_frames[ct], data, len(us), "edge")
    if len(us) == 0:
        return
    st, _, dt = ct
    need = {st: int(us.max()) + 1}
    need[dt] = max(need.get(dt, 0), int(vs.max()) + 1)
    for nt, count in need.items():
        if count > g._num_nodes[nt]:
            add_nodes(g, count - g._num_nodes[nt], ntype=nt)
    s, d = _coo(g, ct)
    g._rels[ct] = _relation(g, g._rels[ct], g._num_nodes[st], g._num_nodes[dt],
                            np.concatenate([s, us]), np.concatenate([d, vs]))
    g._edge_frames[ct] = _append_rows(g._edge_frames[ct], len(us), rows)
    g._batch_num_nodes = g._batch_num_edges = None
    g._cache.clear()


# ----------------------------------------------------------------------------- removing


def remove_edges(g: HeteroGraph, eids: Any, etype: Any = None, store_ids: bool = False) -> None:
    """Removes the edges ``eids`` of ``etype`` (optional for one edge type), in place. Nodes stay;
    the other edges keep their order and are renumbered from 0, their features with them.

    ``store_ids=True`` stores every edge's old id in ``edata[nw.EID]`` (all edge types). A batched
    graph keeps its batch, each graph's edge count reduced by its removed edges.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
    >>> g.edata["w"] = nc.tensor([1.0, 2.0, 3.0])
    >>> g.remove_edges([0, 2])
    >>> [t.tolist() for t in g.edges()], g.edata["w"].tolist(), g.num_nodes()
    ([[1], [2]], [2.0], 3)
    """
    _check_mutable(g, "remove_edges")
    ct = g.to_canonical_etype(etype)
    ids, _ = as_int_array(eids, "eids")
    n = g._rels[ct].num_edges
    check_range(ids, n, "eids", "edges" if len(g._etypes) == 1 else f"edges of type {ct!r}")
    if ids.size == 0:
        return
    kept, mask = _complement(ids, n)
    keep = {c: (kept if c == ct else np.arange(g._rels[c].num_edges, dtype=np.int64)) for c in g._etypes}
    if g._batch_num_edges is not None:
        removed = np.bincount(_segment_ids(_bne(g)[ct])[~mask], minlength=g.batch_size)
        g._batch_num_edges = dict(g._batch_num_edges)
        g._batch_num_edges[ct] = _bne(g)[ct] - removed
    sub = edge_subgraph(g, keep, relabel_nodes=False, store_ids=store_ids)
    _adopt(g, sub, set(), {ct}, store_ids)


def remove_nodes(g: HeteroGraph, nids: Any, ntype: str | None = None, store_ids: bool = False) -> None:
    """Removes the nodes ``nids`` of ``ntype`` (optional for one node type) and every edge touching
    them, in place. The other nodes and edges keep their order and are renumbered from 0, their
    features with them.

    ``store_ids=True`` stores old ids in ``ndata[nw.NID]`` and ``edata[nw.EID]`` (all types). A
    batched graph keeps its batch, with each graph's node and edge counts reduced.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1, 2], [1, 2, 3]))
    >>> g.ndata["h"] = nc.tensor([0.0, 1.0, 2.0, 3.0])
    >>> g.remove_nodes(1)
    >>> [t.tolist() for t in g.edges()], g.ndata["h"].tolist()
    ([[1], [2]], [0.0, 2.0, 3.0])
    """
    _check_mutable(g, "remove_nodes")
    nt = g._ntype(ntype)
    ids, _ = as_int_array(nids, "nids")
    check_range(ids, g._num_nodes[nt], "nids", "nodes" if len(g._ntypes) == 1 else f"nodes of type {nt!r}")
    if ids.size == 0:
        return
    kept, mask = _complement(ids, g._num_nodes[nt])
    touched = {ct for ct in g._etypes if nt in (ct[0], ct[2])}
    if g._batch_num_nodes is not None:
        nb = g.batch_size
        bnn, bne = _bnn(g), _bne(g)
        bnn[nt] = bnn[nt] - np.bincount(_segment_ids(bnn[nt])[~mask], minlength=nb)
        for ct in touched:
            s, d = _coo(g, ct)
            alive = mask[s] if ct[0] == nt else np.ones(len(s), bool)
            if ct[2] == nt:
                alive &= mask[d]
            bne[ct] = np.bincount(_segment_ids(bne[ct])[alive], minlength=nb)
        g._batch_num_nodes, g._batch_num_edges = bnn, bne
    keep = {t: (kept if t == nt else np.arange(g._num_nodes[t], dtype=np.int64)) for t in g._ntypes}
    sub = node_subgraph(g, keep, store_ids=store_ids)
    _adopt(g, sub, {nt}, touched, store_ids)


METHODS: tuple[Callable[..., Any], ...] = (add_nodes, add_edges, remove_nodes, remove_edges)


def install(cls: type) -> None:
    """Adds the mutators to the graph class ``cls`` as methods (see
    :mod:`nodeweave.graph.transform_methods` for why methods are attached, not inherited)."""
    for fn in METHODS:
        setattr(cls, fn.__name__, fn)
