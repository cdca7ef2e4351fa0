"""Helpers shared by the transform modules (and by :mod:`nodeweave.graph.batch`): argument
parsing (node / edge id sets, masks), graph assembly from per-relation COO arrays, and the
per-graph bookkeeping of batched graphs.

Why no transform module imports another lazily: the transforms only need the graph *class* for
type checks and :meth:`HeteroGraph._create`, and :mod:`nodeweave.graph.heterograph` no longer imports
anything from the transforms (the ``g.reverse()``-style methods are attached to the class by
:mod:`nodeweave.graph.transform_methods` once both sides are loaded, see there). So the import graph
is a plain tree: heterograph <- transforms._common <- transforms.* <- transform_methods.

>>> import nodeweave as nw
>>> from nodeweave.graph.id_sets import node_sets
>>> node_sets(nw.graph(([0], [1]), num_nodes=4), [True, False, False, True], "nodes")["_N"].tolist()
[0, 3]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from nodeweave import backend
from nodeweave.graph.frame import Frame
from nodeweave.graph.heterograph import HeteroGraph, RelationGraph
from nodeweave import errors as nwerr

if TYPE_CHECKING:  # SciPy is optional: imported where a matrix is built
    import scipy.sparse as sp

NID = "_ID"
"""Feature name of original node ids (DGL's ``dgl.NID``)."""
EID = "_ID"
"""Feature name of original edge ids (DGL's ``dgl.EID``)."""
NTYPE = "_TYPE"
"""Feature name of node type indices (DGL's ``dgl.NTYPE``), written by ``to_homogeneous``."""
ETYPE = "_TYPE"
"""Feature name of edge type indices (DGL's ``dgl.ETYPE``), written by ``to_homogeneous``."""

Canonical = tuple


def _check_graph(g: Any, name: str = "g") -> HeteroGraph:
    if not isinstance(g, HeteroGraph):
        raise nwerr.TypeError(f"{name} must be a nodeweave graph, got {type(g).__name__}")
    return g


def _check_k(k: Any, fn: str, low: int = 0) -> int:
    """``k`` as an int of at least ``low`` (0 or 1); ValueError naming ``fn`` otherwise."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < low:
        raise nwerr.ValueError(f"{fn}: k must be a {'positive' if low else 'non-negative'} int, got {k!r}")
    return int(k)


def _edge_weights(g: HeteroGraph, ct: Canonical, name: str, fn: str) -> np.ndarray:
    """Edge feature ``name`` of relation ``ct`` as one float64 number per edge (the feature has
    shape ``(E,)`` or ``(E, 1)``); KeyError / ValueError naming ``fn`` otherwise."""
    frame = g._edge_frames[ct]
    if name not in frame:
        raise nwerr.KeyError(f"{fn}: the graph has no edge feature {name!r} (edge features: {sorted(frame)})")
    w = backend.of(frame[name]).to_numpy(frame[name])
    if w.ndim == 2 and w.shape[1] == 1:
        w = w[:, 0]
    if w.ndim != 1:
        raise nwerr.ValueError(f"{fn}: edge weights {name!r} must have shape (num_edges,) or (num_edges, 1), "
                               f"got {w.shape}")
    return w.astype(np.float64)


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
        raise nwerr.ValueError(f"{fn} needs a graph with one node type and one edge type, got node types "
                               f"{g._ntypes} and edge types {g._etypes}")
    return g._ntypes[0], g._etypes[0]


def _check_unique(ids: np.ndarray, n: int, name: str) -> None:
    """ValueError naming a node that ``ids`` (in ``[0, n)``) holds twice. Marks in an ``n``-long
    mask (linear), and sorts only to name the repeat once one is known to exist."""
    if ids.size < 2:
        return
    seen = np.zeros(n, bool)
    seen[ids] = True
    if np.count_nonzero(seen) != ids.size:
        s = np.sort(ids)
        raise nwerr.ValueError(f"{name} holds node {int(s[1:][s[1:] == s[:-1]][0])} more than once")


def _to_device(g: HeteroGraph, output_device: Any) -> HeteroGraph:
    return g if output_device is None else g.to(output_device)


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


def _adjacency(g: HeteroGraph, fn: str, weights: np.ndarray | None = None) -> sp.csr_matrix:
    """``A[u, v]``: the number of edges ``u -> v`` (or the sum of their ``weights``), float64."""
    import scipy.sparse as sp

    nt, ct = _homo_types(g, fn)
    n = g._num_nodes[nt]
    src, dst = _coo(g, ct)
    data = np.ones(len(src)) if weights is None else weights
    a = sp.csr_matrix((data, (src, dst)), shape=(n, n))
    a.sum_duplicates()
    return a


def _normalized_laplacian(g: HeteroGraph, fn: str, bidirected: bool = True) -> sp.csr_matrix:
    """``I - D^-1/2 A D^-1/2`` with ``D`` the in-degrees (at least 1). ``bidirected``: refuse a
    directed graph (naming ``fn``); else its Laplacian is not symmetric (``A[u, v]`` counts the
    edges ``u -> v``)."""
    import scipy.sparse as sp

    a = _adjacency(g, fn)
    if bidirected and (a != a.T).nnz:
        u, v = (x[0] for x in (a != a.T).nonzero())
        raise nwerr.ValueError(f"{fn} needs a bidirected graph (edge u -> v as often as v -> u), but nodes {u} and "
                               f"{v} are joined {int(a[u, v])} time(s) one way and {int(a[v, u])} the other; "
                               "see nw.to_bidirected")
    n = a.shape[0]
    deg = np.asarray(a.sum(0)).ravel()  # in-degrees (column sums)
    d = sp.diags(np.clip(deg, 1, None) ** -0.5)
    return (sp.identity(n, format="csr") - d @ a @ d).tocsr()
