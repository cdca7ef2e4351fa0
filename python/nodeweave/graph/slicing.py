"""Relation slicing, ``g[etype]`` and ``g[src_type, etype, dst_type]``, as DGL has it.

A key names edge types: an edge type name, a canonical ``(src_type, etype, dst_type)`` tuple, or
such a tuple with ``:`` for any part (``g['user', :, 'game']``).

- When it names **one** edge type, the result is a view of that relation: a graph with only that
  edge type and its node types, sharing the relation graph and the *same* feature frames as ``g``.
  Setting or deleting a feature on the view shows in ``g`` (and the reverse), so
  ``g['plays'].update_all(...)`` writes the result into ``g.nodes['game'].data``. A batched graph's
  counts come along.
- When it names **several**, the result is a new graph (DGL's flattening): the source types are
  merged into one node type named ``'+'.join(sorted(types))``, likewise the destination types (one
  type when both sets are the same) and the edge types; nodes and edges are numbered in the graph's
  type order. ``ndata[nw.NTYPE]`` /
  ``edata[nw.ETYPE]`` hold each node's / edge's type index in ``g`` and ``ndata[nw.NID]`` /
  ``edata[nw.EID]`` its id within its type (int64, as DGL). A feature is carried over (copied) when
  every merged type has it; differing row shapes or dtypes raise nwerr.ValueError.

>>> import nodeweave as nw, nodeweave.core as nc, nodeweave.function as fn
>>> g = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 2]),
...                     ("user", "plays", "game"): ([0, 1, 2], [0, 0, 1])})
>>> g.nodes["user"].data["h"] = nc.tensor([1.0, 2.0, 4.0])
>>> g["plays"].update_all(fn.copy_u("h", "m"), fn.sum("m", "total"))
>>> g.nodes["game"].data["total"].tolist()
[3.0, 4.0]
>>> g["user", :, :].canonical_etypes
[('user', 'follows+plays', 'game+user')]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave.graph.frame import Frame
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms._common import EID, ETYPE, NID, NTYPE, _build, _coo
from nodeweave import errors as nwerr

__all__ = ["getitem", "install"]

Canonical = tuple


def _matching(g: HeteroGraph, key: Any) -> list[Canonical]:
    """The canonical edge types ``key`` names, in the graph's order."""
    if isinstance(key, str):
        found = [ct for ct in g._etypes if ct[1] == key]
        if not found:
            raise nwerr.ValueError(f"g[{key!r}]: unknown edge type {key!r} (the graph has {g.etypes})")
        return found
    if isinstance(key, tuple) and len(key) == 3:
        parts = []
        for k in key:
            if isinstance(k, slice) and k == slice(None):
                parts.append(None)
            elif isinstance(k, str):
                parts.append(k)
            else:
                raise nwerr.TypeError(f"g[{key!r}]: each part of an edge type key must be a string or ':', "
                                      f"got {k!r}")
        found = [ct for ct in g._etypes if all(p is None or p == c for p, c in zip(parts, ct))]
        if not found:
            raise nwerr.ValueError(f"g[{key!r}]: no edge type matches (the graph has {g._etypes})")
        return found
    raise nwerr.TypeError(f"a graph is indexed by an edge type name or a (src_type, etype, dst_type) tuple "
                          f"(':' matches any part), got {key!r}")


def _relation_view(g: HeteroGraph, ct: Canonical) -> HeteroGraph:
    st, _, dt = ct
    counts = {st: g._num_nodes[st]}
    counts[dt] = g._num_nodes[dt]
    view = HeteroGraph._create(counts, {ct: g._rels[ct]}, device=g._device)
    view._node_frames = {nt: g._node_frames[nt] for nt in counts}  # the frames themselves: shared
    view._edge_frames = {ct: g._edge_frames[ct]}
    if g._batch_num_nodes is not None:
        view._batch_num_nodes = {nt: g._batch_num_nodes[nt] for nt in counts}
        view._batch_num_edges = {ct: g._batch_num_edges[ct]}
    return view


def _merged_frame(frames: list[Frame], type_ids: list[int], counts: list[int], id_name: str,
                  type_name: str, device: str, what: str) -> Frame:
    """One frame over the concatenated rows of ``frames``: the features all of them have, plus
    the type index and per-type id of every row."""
    B = backend.current()
    out = Frame(int(sum(counts)), device=device)
    shared = [k for k in frames[0] if all(k in f for f in frames[1:])]
    for k in shared:
        cols = [f[k] for f in frames]
        schemes = {(tuple(backend.of(c).shape(c)[1:]), backend.of(c).dtype_name(c)) for c in cols}
        if len(schemes) > 1:
            raise nwerr.ValueError(f"cannot merge {what} feature {k!r}: the types have different row shapes "
                                   f"or dtypes {sorted(schemes, key=str)}")
        out[k] = backend.of(cols[0]).cat(cols, 0)
    counts_arr = np.asarray(counts, np.int64)
    starts = np.concatenate([[0], np.cumsum(counts_arr)[:-1]]).astype(np.int64)
    out[type_name] = B.int_tensor(np.repeat(np.asarray(type_ids, np.int64), counts_arr), device, "int64")
    out[id_name] = B.int_tensor(np.arange(int(counts_arr.sum()), dtype=np.int64) -
                                np.repeat(starts, counts_arr), device, "int64")
    return out


def _flatten(g: HeteroGraph, cts: list[Canonical]) -> HeteroGraph:
    src = [nt for nt in g._ntypes if any(ct[0] == nt for ct in cts)]
    dst = [nt for nt in g._ntypes if any(ct[2] == nt for ct in cts)]
    # Names joined in sorted order, as DGL names them; nodes and edges come in the graph's type order.
    sname, dname = "+".join(sorted(src)), "+".join(sorted(dst))
    ename = "+".join(sorted(ct[1] for ct in cts))
    offset = {}
    for side in (src, dst):
        counts = [g._num_nodes[nt] for nt in side]
        offset[tuple(side)] = dict(zip(side, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)))
    s_all, d_all = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for ct in cts:
        s, d = _coo(g, ct)
        s_all.append(s + offset[tuple(src)][ct[0]])
        d_all.append(d + offset[tuple(dst)][ct[2]])
    nframes = {}
    for name, side in ((sname, src), (dname, dst)):
        nframes[name] = _merged_frame([g._node_frames[nt] for nt in side],
                                      [g._ntypes.index(nt) for nt in side],
                                      [g._num_nodes[nt] for nt in side], NID, NTYPE, g._device, "node")
    new_ct = (sname, ename, dname)
    eframe = _merged_frame([g._edge_frames[ct] for ct in cts], [g._etypes.index(ct) for ct in cts],
                           [g._rels[ct].num_edges for ct in cts], EID, ETYPE, g._device, "edge")
    num_nodes = {sname: sum(g._num_nodes[nt] for nt in src)}
    num_nodes[dname] = sum(g._num_nodes[nt] for nt in dst)
    return _build(num_nodes, {new_ct: (np.concatenate(s_all), np.concatenate(d_all))}, g._idtype_name,
                  g._device, nframes, {new_ct: eframe})


def getitem(g: HeteroGraph, key: Any) -> HeteroGraph:
    """``g[key]``: a view of one relation, or the flattened graph of several (see the module)."""
    cts = _matching(g, key)
    return _relation_view(g, cts[0]) if len(cts) == 1 else _flatten(g, cts)


def install(cls: type) -> None:
    """Makes ``cls[key]`` call :func:`getitem` (a :class:`~nodeweave.graph.block.Block` keeps its
    own ``__getitem__``)."""
    def __getitem__(self: HeteroGraph, key: Any) -> HeteroGraph:
        return getitem(self, key)

    __getitem__.__doc__ = getitem.__doc__
    cls.__getitem__ = __getitem__
