"""Batching: many graphs as one disjoint-union graph, and back.

:func:`batch` offsets node ids graph by graph, concatenates features, and records each graph's node
and edge counts per type (``g._batch_num_nodes`` / ``g._batch_num_edges``); :func:`unbatch` uses
those counts to split the structure and the features again. Batching already-batched graphs
flattens their counts, so ``unbatch(batch([batch([a, b]), c]))`` gives ``[a, b, c]``.

>>> import nodeweave as nw, nodeweave.core as nc
>>> a, b = nw.graph(([0], [1])), nw.graph(([0, 1], [1, 2]))
>>> a.ndata["h"], b.ndata["h"] = nc.zeros(2), nc.ones(3)
>>> bg = nw.batch([a, b])
>>> [t.tolist() for t in bg.edges()], bg.batch_num_nodes().tolist()
([[0, 2, 3], [1, 3, 4]], [2, 3])
>>> [x.ndata["h"].tolist() for x in nw.unbatch(bg)]
[[0.0, 0.0], [1.0, 1.0, 1.0]]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave import backend
from nodeweave.graph.frame import Frame
from nodeweave.graph.heterograph import ALL, HeteroGraph, as_int_array
from nodeweave.graph.transforms import EID, NID, _bne, _bnn, _build, _check_graph, _coo, _segment_ids
from nodeweave.graph.transforms._common import _ids
from nodeweave import errors as nwerr

__all__ = ["batch", "unbatch", "slice_batch", "batch_num_nodes", "batch_num_edges"]


def _feature_names(frames: list[Frame], sizes: list[int], spec: Any, what: str, arg: str) -> list[str]:
    """The feature names to batch for one node/edge type, after checking every graph has them with
    the same row shape and dtype. A graph with no rows and no features of the type is skipped (an
    empty graph can't have been given features)."""
    if spec is None:
        return []
    present = [i for i, (f, n) in enumerate(zip(frames, sizes)) if n > 0 or len(f) > 0]
    if spec == ALL:
        if not present:
            return []
        ref = present[0]
        names = list(frames[ref])
        for i in present[1:]:
            if set(frames[i]) != set(names):
                extra = sorted(set(frames[i]) - set(names))
                miss = sorted(set(names) - set(frames[i]))
                key = (extra or miss)[0]
                raise nwerr.ValueError(f"batch: graphs[{i}] {what} feature {key!r} "
                                       f"{'is not in' if extra else 'is missing; it is in'} graphs[{ref}] "
                                       "(all graphs must have the same features)")
    else:
        if isinstance(spec, str):
            raise nwerr.TypeError(f"batch: {arg} must be ALL, None or a list of feature names, got {spec!r}")
        names = list(spec)
        for i in present:
            for k in names:
                if k not in frames[i]:
                    raise nwerr.ValueError(f"batch: graphs[{i}] has no {what} feature {k!r} (named in {arg})")
    for k in names:
        scheme = None
        for i in present:
            t = frames[i][k]
            s = (tuple(t.shape[1:]), backend.of(t).dtype_name(t))
            if scheme is None:
                scheme, first = s, i
            elif s != scheme:
                raise nwerr.ValueError(f"batch: graphs[{i}] {what} feature {k!r} has row shape {s[0]} and dtype "
                                       f"{s[1]}, but graphs[{first}] has {scheme[0]} and {scheme[1]}")
    return names


def _cat_columns(frames: list[Frame], sizes: list[int], names: list[str], total: int) -> Frame:
    out = Frame(total)
    for k in names:
        parts = [f[k] for f, n in zip(frames, sizes) if k in f]
        out[k] = backend.of(parts[0]).cat(parts, 0)
    return out


def batch(graphs: Sequence[HeteroGraph], ndata: Any = ALL, edata: Any = ALL) -> HeteroGraph:
    """One graph holding ``graphs`` as disjoint components (DGL's ``dgl.batch``).

    Nodes of graph ``i`` come after those of graphs ``0..i-1`` (per node type), likewise edges.
    All graphs must have the same node types, canonical edge types, id type and device.

    Parameters
    ----------
    ndata, edata : ALL, None or list of str
        Features to concatenate: all (every graph must have the same names, row shapes and
        dtypes; a type with no rows and no features in a graph is exempt), none, or the named.

    Raises
    ------
    ValueError
        Naming the first graph (``graphs[i]``) and the type or feature that disagrees.

    >>> import nodeweave as nw
    >>> bg = nw.batch([nw.graph(([0], [1])), nw.graph(([1], [0]), num_nodes=3)])
    >>> bg.batch_size, bg.batch_num_edges().tolist(), [t.tolist() for t in bg.edges()]
    (2, [1, 1], [[0, 3], [1, 2]])
    """
    if isinstance(graphs, HeteroGraph) or not isinstance(graphs, (list, tuple)):
        raise nwerr.TypeError(f"batch: graphs must be a list of graphs, got {type(graphs).__name__}")
    if not graphs:
        raise nwerr.ValueError("batch: graphs is empty; there is nothing to batch")
    for i, g in enumerate(graphs):
        _check_graph(g, f"graphs[{i}]")
    g0 = graphs[0]
    for i, g in enumerate(graphs[1:], 1):
        if g._ntypes != g0._ntypes:
            raise nwerr.ValueError(f"batch: graphs[{i}] has node types {g._ntypes}, graphs[0] has {g0._ntypes}")
        if g._etypes != g0._etypes:
            raise nwerr.ValueError(f"batch: graphs[{i}] has edge types {g._etypes}, graphs[0] has {g0._etypes}")
        if g._idtype_name != g0._idtype_name:
            raise nwerr.ValueError(f"batch: graphs[{i}] has idtype {g._idtype_name}, graphs[0] has "
                                   f"{g0._idtype_name}; convert with .int() or .long()")
        if g._device != g0._device:
            raise nwerr.ValueError(f"batch: graphs[{i}] is on {g._device}, graphs[0] on {g0._device}")
    num_nodes, bnn, nframes = {}, {}, {}
    offsets = {}
    for nt in g0._ntypes:
        sizes = [g._num_nodes[nt] for g in graphs]
        offsets[nt] = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        num_nodes[nt] = int(sum(sizes))
        bnn[nt] = np.concatenate([_bnn(g)[nt] for g in graphs])
        frames = [g._node_frames[nt] for g in graphs]
        what = "node" if len(g0._ntypes) == 1 else f"node type {nt!r}"
        names = _feature_names(frames, sizes, ndata, what, "ndata")
        nframes[nt] = _cat_columns(frames, sizes, names, num_nodes[nt])
    coo, bne, eframes = {}, {}, {}
    for ct in g0._etypes:
        srcs, dsts = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        for i, g in enumerate(graphs):
            s, d = _coo(g, ct)
            srcs.append(s + offsets[ct[0]][i])
            dsts.append(d + offsets[ct[2]][i])
        coo[ct] = (np.concatenate(srcs), np.concatenate(dsts))
        sizes = [g._rels[ct].num_edges for g in graphs]
        bne[ct] = np.concatenate([_bne(g)[ct] for g in graphs])
        frames = [g._edge_frames[ct] for g in graphs]
        what = "edge" if len(g0._etypes) == 1 else f"edge type {ct!r}"
        names = _feature_names(frames, sizes, edata, what, "edata")
        eframes[ct] = _cat_columns(frames, sizes, names, int(sum(sizes)))
    return _build(num_nodes, coo, g0._idtype_name, g0._device, nframes, eframes, bnn, bne)


def _split_counts(g: HeteroGraph, split: Any, kind: str) -> dict | None:
    """User-given per-graph counts for unbatch, as ``{type: int64 array}``."""
    if split is None:
        return None
    types = g._ntypes if kind == "node" else g._etypes
    arg = f"{kind}_split"
    if not isinstance(split, dict):
        if len(types) != 1:
            raise nwerr.ValueError(f"unbatch: {arg} must be a dict by {kind} type for a graph with several types")
        split = {types[0]: split}
    out = {}
    for key, v in split.items():
        t = g.to_canonical_etype(key) if kind == "edge" else g._ntype(key)
        arr, _ = as_int_array(v, f"{arg}[{key!r}]")
        total = g._num_nodes[t] if kind == "node" else g._rels[t].num_edges
        if arr.size and arr.min() < 0 or int(arr.sum()) != total:
            raise nwerr.ValueError(f"unbatch: {arg}[{key!r}] must be non-negative counts summing to {total}, "
                                   f"got {arr.tolist()}")
        out[t] = arr
    for t in types:
        if t not in out:
            raise nwerr.ValueError(f"unbatch: {arg} has no counts for {kind} type {t!r}")
    return out


def unbatch(g: HeteroGraph, node_split: Any = None, edge_split: Any = None) -> list[HeteroGraph]:
    """Splits a batched graph into its graphs (the inverse of :func:`batch`), features included.

    ``node_split`` / ``edge_split`` override the recorded per-graph counts (a sequence, or a dict by
    type); an unbatched graph gives a one-element list. Each graph's edges must stay
    within its own nodes, else ValueError.

    >>> import nodeweave as nw
    >>> parts = nw.unbatch(nw.graph(([0, 2], [1, 3])), node_split=[2, 2], edge_split=[1, 1])
    >>> [[t.tolist() for t in p.edges()] for p in parts]
    [[[0], [1]], [[0], [1]]]
    """
    _check_graph(g)
    bnn = _split_counts(g, node_split, "node") or _bnn(g)
    bne = _split_counts(g, edge_split, "edge") or _bne(g)
    sizes = {len(v) for v in bnn.values()} | {len(v) for v in bne.values()}
    if len(sizes) > 1:
        raise nwerr.ValueError(f"unbatch: the per-graph counts disagree on the number of graphs ({sorted(sizes)})")
    nb = sizes.pop() if sizes else 1
    noff = {nt: np.concatenate([[0], np.cumsum(c)]).astype(np.int64) for nt, c in bnn.items()}
    eoff = {ct: np.concatenate([[0], np.cumsum(c)]).astype(np.int64) for ct, c in bne.items()}
    coo = {}
    for ct in g._etypes:
        src, dst = _coo(g, ct)
        eg = _segment_ids(bne[ct])
        for end, nt, arr in (("source", ct[0], src), ("destination", ct[2], dst)):
            ng = np.searchsorted(noff[nt], arr, side="right") - 1
            bad = ng != eg
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise nwerr.ValueError(f"unbatch: edge {i} of type {ct!r} belongs to graph {int(eg[i])} but its "
                                       f"{end} node {int(arr[i])} belongs to graph {int(ng[i])}; the batch counts "
                                       "don't match the structure")
        coo[ct] = (src, dst)
    out = []
    for i in range(nb):
        num_nodes = {nt: int(bnn[nt][i]) for nt in g._ntypes}
        parts, nframes, eframes = {}, {}, {}
        for nt in g._ntypes:
            nframes[nt] = g._node_frames[nt].subframe(np.arange(noff[nt][i], noff[nt][i + 1]))
        for ct in g._etypes:
            lo, hi = eoff[ct][i], eoff[ct][i + 1]
            s, d = coo[ct]
            parts[ct] = (s[lo:hi] - noff[ct[0]][i], d[lo:hi] - noff[ct[2]][i])
            eframes[ct] = g._edge_frames[ct].subframe(np.arange(lo, hi))
        out.append(_build(num_nodes, parts, g._idtype_name, g._device, nframes, eframes))
    return out


def slice_batch(g: HeteroGraph, gid: int, store_ids: bool = False) -> HeteroGraph:
    """Graph ``gid`` of a batched graph, features included (DGL's ``slice_batch``): what
    ``unbatch(g)[gid]`` gives, read from that graph's own node and edge ranges only. With
    ``store_ids`` the ids in ``g`` go to ``ndata[nw.NID]`` / ``edata[nw.EID]``.

    >>> import nodeweave as nw
    >>> bg = nw.batch([nw.graph(([0], [1])), nw.graph(([0, 1], [2, 2]))])
    >>> g1 = nw.slice_batch(bg, 1, store_ids=True)
    >>> [t.tolist() for t in g1.edges()], g1.ndata[nw.NID].tolist()
    ([[0, 1], [2, 2]], [2, 3, 4])
    """
    _check_graph(g)
    bnn, bne = _bnn(g), _bne(g)
    nb = len(next(iter(bnn.values()))) if bnn else 1
    if isinstance(gid, (bool, np.bool_)) or not isinstance(gid, (int, np.integer)) or not -nb <= gid < nb:
        raise nwerr.IndexError(f"slice_batch: gid must be an int in [0, {nb}) (the batch has {nb} graphs), got {gid!r}")
    gid = int(gid) % nb
    nlo = {nt: int(c[:gid].sum()) for nt, c in bnn.items()}
    num_nodes = {nt: int(bnn[nt][gid]) for nt in g._ntypes}
    parts, nframes, eframes = {}, {}, {}
    for nt in g._ntypes:
        nframes[nt] = g._node_frames[nt].subframe(np.arange(nlo[nt], nlo[nt] + num_nodes[nt]))
        if store_ids:
            nframes[nt][NID] = _ids(np.arange(nlo[nt], nlo[nt] + num_nodes[nt]), g)
    for ct in g._etypes:
        lo = int(bne[ct][:gid].sum())
        e = np.arange(lo, lo + int(bne[ct][gid]))
        src, dst = _coo(g, ct)
        parts[ct] = (src[e] - nlo[ct[0]], dst[e] - nlo[ct[2]])
        eframes[ct] = g._edge_frames[ct].subframe(e)
        if store_ids:
            eframes[ct][EID] = _ids(e, g)
    return _build(num_nodes, parts, g._idtype_name, g._device, nframes, eframes)


def batch_num_nodes(g: HeteroGraph, ntype: str | None = None) -> Any:
    """Nodes of ``ntype`` in each graph of a batch, as an int64 tensor (``[num_nodes]`` for an
    unbatched graph). Same as ``g.batch_num_nodes(ntype)``.

    >>> import nodeweave as nw
    >>> nw.batch_num_nodes(nw.batch([nw.graph(([0], [1])), nw.graph(([0], [2]))])).tolist()
    [2, 3]
    """
    _check_graph(g)
    return g.batch_num_nodes(ntype)


def batch_num_edges(g: HeteroGraph, etype: str | tuple | None = None) -> Any:
    """Edges of ``etype`` in each graph of a batch, as an int64 tensor. Same as
    ``g.batch_num_edges(etype)``.

    >>> import nodeweave as nw
    >>> nw.batch_num_edges(nw.batch([nw.graph(([0], [1])), nw.graph(([0, 1], [2, 2]))])).tolist()
    [1, 2]
    """
    _check_graph(g)
    return g.batch_num_edges(etype)
