"""Conversions between a heterograph and one homogeneous graph with type ids as features (DGL's
``to_homogeneous`` / ``to_heterogeneous``).

>>> import nodeweave as nw
>>> hg = nw.heterograph({("user", "plays", "game"): ([0, 1], [0, 0])})
>>> nw.to_homogeneous(hg).num_nodes()
3
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave import backend
from nodeweave.graph.frame import Frame
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms._common import (EID, ETYPE, NID, NTYPE, _build, _check_graph, _coo,
                                                _homo_types, _ids, _segment_ids)
from nodeweave import errors as nwerr

__all__ = ["to_homogeneous", "to_heterogeneous"]


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
                raise nwerr.ValueError(f"to_homogeneous: {what} type {t!r} has no feature {key!r}")
            B = backend.of(f[key])
            s = (tuple(B.shape(f[key])[1:]), B.dtype_name(f[key]))
            if scheme is not None and s != scheme:
                raise nwerr.ValueError(f"to_homogeneous: feature {key!r} of {what} type {t!r} has row shape "
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
            raise nwerr.TypeError(f"to_homogeneous: {arg} must be a list of feature names, got the string {v!r}")
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
        raise nwerr.ValueError(f"to_heterogeneous: the graph has no {what} feature {field!r} holding type ids")
    arr = backend.of(frame[field]).to_numpy(frame[field])
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise nwerr.ValueError(f"to_heterogeneous: {what} feature {field!r} must be a 1-D integer tensor, got "
                               f"shape {arr.shape} and dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    bad = (arr < 0) | (arr >= count)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise nwerr.ValueError(f"to_heterogeneous: {what} feature {field!r}[{i}] = {int(arr[i])} is not a type "
                               f"index below {count}")
    return arr


def to_heterogeneous(g: HeteroGraph, ntypes: Sequence[str], etypes: Sequence[str | tuple],
                     ntype_field: str = NTYPE, etype_field: str = ETYPE, metagraph: Any = None) -> HeteroGraph:
    """The inverse of :func:`to_homogeneous`: splits a homogeneous graph into node types
    ``ntypes[ndata[ntype_field]]`` and edge types ``etypes[edata[etype_field]]``.

    ``etypes`` are names or canonical ``(src_type, etype, dst_type)`` tuples; for a name the
    source/destination types are inferred from the edges, one canonical edge type per pair of node
    types its edges join (as DGL). Canonical edge types are ordered by the indices of their source
    type, edge type and destination type (as DGL). Within a type, nodes and edges keep their
    relative order. Other features are sliced per type; ``ndata['_ID']`` / ``edata['_ID']`` receive
    the ids in ``g``. ``metagraph`` is ignored.

    >>> import nodeweave as nw
    >>> hg = nw.heterograph({("user", "plays", "game"): ([0, 1], [0, 0])})
    >>> back = nw.to_heterogeneous(nw.to_homogeneous(hg), hg.ntypes, hg.etypes)
    >>> back.canonical_etypes, [t.tolist() for t in back.edges()]
    ([('user', 'plays', 'game')], [[0, 1], [0, 0]])
    >>> import nodeweave.core as nc
    >>> g = nw.graph(([0, 0], [1, 2]))
    >>> g.ndata[nw.NTYPE], g.edata[nw.ETYPE] = nc.tensor([0, 1, 2]), nc.tensor([0, 0])
    >>> nw.to_heterogeneous(g, ["user", "TV", "movie"], ["watches"]).canonical_etypes
    [('user', 'watches', 'TV'), ('user', 'watches', 'movie')]
    """
    _check_graph(g)
    nt0, ct0 = _homo_types(g, "to_heterogeneous") if g._etypes else (g._ntype(None), None)
    ntypes = list(ntypes)
    etypes = [tuple(e) if isinstance(e, (list, tuple)) else e for e in etypes]
    if len(set(ntypes)) != len(ntypes) or not all(isinstance(t, str) for t in ntypes):
        raise nwerr.ValueError(f"to_heterogeneous: ntypes must be distinct strings, got {ntypes}")
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
    found = []  # (sort key, canonical etype, edge ids in g)
    for j, et in enumerate(etypes):
        e = np.flatnonzero(etid == j)
        if isinstance(et, tuple):
            if len(et) != 3 or et[0] not in num_nodes or et[2] not in num_nodes:
                raise nwerr.ValueError(f"to_heterogeneous: etypes[{j}] = {et!r} is not a (src_type, etype, "
                                       f"dst_type) triple of the node types {ntypes}")
            st, dt = np.unique(ntid[src[e]]), np.unique(ntid[dst[e]])
            if e.size and (st.tolist() != [ntypes.index(et[0])] or dt.tolist() != [ntypes.index(et[2])]):
                raise nwerr.ValueError(f"to_heterogeneous: edges of type {et!r} join node types "
                                       f"{[ntypes[i] for i in st]} -> {[ntypes[i] for i in dt]}")
            found.append(((ntypes.index(et[0]), j, ntypes.index(et[2])), et, e))
            continue
        if not isinstance(et, str):
            raise nwerr.TypeError(f"to_heterogeneous: etypes[{j}] must be a name or a canonical triple, "
                                  f"got {et!r}")
        if e.size:
            # One canonical edge type per (source type, destination type) pair the edges join, as
            # DGL does: an edge type name may join several pairs ('watches': user -> movie, user -> TV).
            pair = ntid[src[e]] * len(ntypes) + ntid[dst[e]]
            for p in np.unique(pair):
                s_t, d_t = divmod(int(p), len(ntypes))
                found.append(((s_t, j, d_t), (ntypes[s_t], et, ntypes[d_t]), e[pair == p]))
        elif len(ntypes) == 1:
            found.append(((0, j, 0), (ntypes[0], et, ntypes[0]), e))
        else:
            raise nwerr.ValueError(f"to_heterogeneous: edge type {et!r} has no edges, so its node types can't "
                                   "be inferred; pass canonical (src_type, etype, dst_type) tuples")
    # Canonical edge types ordered by (source type, edge type, destination type) index, as DGL.
    coo, eids = {}, {}
    for _, ct, e in sorted(found, key=lambda f: f[0]):
        if ct in coo:
            raise nwerr.ValueError(f"to_heterogeneous: edge type {ct!r} appears twice in etypes")
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
