"""Graphs built from point coordinates: k-nearest-neighbour graphs (:func:`knn_graph`,
:func:`segmented_knn_graph`) and radius graphs (:func:`radius_graph`), and DGL's module forms
``KNNGraph``, ``SegmentedKNNGraph``, ``RadiusGraph``.

The neighbours are found by brute force in float64 on the host (chunks of rows against all points,
O(N^2) time, O(N) memory per row chunk): exact, deterministic and the same on both backends and on
every device. Every ``algorithm`` name DGL accepts therefore gives the same, exact graph (DGL's
``'nn-descent'`` is approximate; here it is exact). Ties in distance go to the lower point index.
The graph is placed on the points' device; the distances :func:`radius_graph` returns are computed
from the points with the tensor library, so they are differentiable in ``x``.

>>> import nodeweave as nw, nodeweave.core as nc
>>> x = nc.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0], [0.0, 2.0]])
>>> g = nw.knn_graph(x, 2)          # each point's 2 nearest points (itself included) point to it
>>> [t.tolist() for t in g.edges()]
[[0, 1, 1, 0, 2, 3, 3, 2], [0, 0, 1, 1, 2, 2, 3, 3]]
>>> g, d = nw.radius_graph(x, 1.5, get_distances=True)
>>> [t.tolist() for t in g.edges()], d.flatten().tolist()
([[0, 1, 2, 3], [1, 0, 3, 2]], [1.0, 1.0, 1.0, 1.0])
"""

from __future__ import annotations

import math
import numbers
from typing import Any, List, Sequence, Tuple

import numpy as np

from ._ns import B, T, nn
from nodeweave import errors as nwerr
from nodeweave.graph.construct import graph

__all__ = ["knn_graph", "segmented_knn_graph", "radius_graph", "KNNGraph", "SegmentedKNNGraph", "RadiusGraph"]

# DGL's algorithm names; all are computed by the same exact brute force here.
KNN_ALGORITHMS = ("bruteforce-blas", "bruteforce", "bruteforce-sharemem", "kd-tree", "nn-descent")
KNN_DISTANCES = ("euclidean", "cosine")
# torch.cdist's compute modes, accepted for DGL's RadiusGraph signature: the distances here are
# always computed from coordinate differences (the precise mode).
CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")
_CHUNK_ELEMS = 1 << 22   # float64 elements of one chunk of coordinate differences (32 MiB)


# ------------------------------------------------------------------------------------- checks
def _points(x: Any, fn: str, dims: Tuple[int, ...]) -> np.ndarray:
    """``x`` as a float64 host array after checking it is a non-empty float tensor of an allowed rank."""
    if not isinstance(x, T.Tensor):
        raise nwerr.TypeError(f"{fn}: x must be a tensor of point coordinates, got {type(x).__name__}")
    if x.numel() == 0:
        raise nwerr.ValueError(f"{fn}: x is an empty point set (shape {tuple(x.shape)})")
    if x.dim() not in dims:
        want = " or ".join(f"{d}-D" for d in dims)
        raise nwerr.ValueError(f"{fn}: x must be {want} (points x coordinates), got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise nwerr.TypeError(f"{fn}: x must hold floating point coordinates, got dtype {x.dtype}")
    arr = np.asarray(B.to_numpy(x), dtype=np.float64)
    if not np.isfinite(arr).all():
        raise nwerr.ValueError(f"{fn}: x holds NaN or infinite coordinates")
    return arr


def _knn_options(k: Any, algorithm: Any, dist: Any, exclude_self: Any, fn: str) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise nwerr.TypeError(f"{fn}: k must be an int, got {k!r}")
    # DGL's rule: k >= 1, or k = 0 with exclude_self (no neighbours: a graph without edges).
    if k < (0 if exclude_self else 1):
        raise nwerr.ValueError(f"{fn}: k must be positive{' or 0 with exclude_self=True' if exclude_self else ''}, "
                               f"got k = {k}")
    if algorithm not in KNN_ALGORITHMS:
        raise nwerr.ValueError(f"{fn}: algorithm must be one of {KNN_ALGORITHMS}, got {algorithm!r}")
    if dist not in KNN_DISTANCES:
        raise nwerr.ValueError(f"{fn}: dist must be 'euclidean' or 'cosine', got {dist!r}")
    return int(k)


def _radius_options(r: Any, p: Any, compute_mode: Any, who: str) -> None:
    if isinstance(r, bool) or not isinstance(r, numbers.Real) or not r > 0:
        raise nwerr.ValueError(f"{who}: r must be a positive number, got {r!r}")
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not p > 0:
        raise nwerr.ValueError(f"{who}: p must be a positive number (math.inf allowed), got {p!r}")
    if compute_mode not in CDIST_MODES:
        raise nwerr.ValueError(f"{who}: compute_mode must be one of {CDIST_MODES}, got {compute_mode!r}")


def _segments(segs: Any, n: int, fn: str) -> List[int]:
    if isinstance(segs, T.Tensor):
        segs = B.to_numpy(segs).tolist()
    arr = np.asarray(segs)
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
        raise nwerr.TypeError(f"{fn}: segs must be a non-empty list of point counts (ints), got {segs!r}")
    if (arr < 1).any():
        raise nwerr.ValueError(f"{fn}: every segment of segs must hold at least one point, got {arr.tolist()}")
    if int(arr.sum()) != n:
        raise nwerr.ValueError(f"{fn}: segs sums to {int(arr.sum())}, but x has {n} points")
    return [int(s) for s in arr]


# ------------------------------------------------------------------------------ host distances
def _row_chunks(n: int, m: int, d: int):
    step = max(1, _CHUNK_ELEMS // max(1, m * d))
    for lo in range(0, n, step):
        yield lo, min(n, lo + step)


def _pairwise(a: np.ndarray, metric: str, p: float = 2.0):
    """Yields ``(lo, hi, D)``: the distances from rows ``lo:hi`` of ``a`` to every row, float64."""
    if metric == "cosine":
        unit = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
        for lo, hi in _row_chunks(len(a), len(a), 1):
            yield lo, hi, 1.0 - unit[lo:hi] @ unit.T
        return
    for lo, hi in _row_chunks(len(a), len(a), a.shape[1]):
        diff = np.abs(a[lo:hi, None, :] - a[None, :, :])
        if p == 2:
            out = np.sqrt((diff * diff).sum(-1))
        elif p == 1:
            out = diff.sum(-1)
        elif math.isinf(p):
            out = diff.max(-1)
        else:
            out = (diff ** p).sum(-1) ** (1.0 / p)
        yield lo, hi, out


def _knn_edges(a: np.ndarray, k: int, segs: Sequence[int], dist: str,
               exclude_self: bool) -> Tuple[np.ndarray, np.ndarray]:
    """For every point of every segment, its ``k`` nearest points of the same segment (sources,
    nearest first, ties to the lower index) pointing to it; grouped by destination point."""
    srcs, dsts, off = [], [], 0
    for n in segs:
        for lo, hi, d in _pairwise(a[off:off + n], dist):
            if exclude_self:
                d[np.arange(hi - lo), np.arange(lo, hi)] = np.inf
            near = np.argsort(d, axis=1, kind="stable")[:, :k]
            srcs.append(near.reshape(-1) + off)
            dsts.append(np.repeat(np.arange(lo, hi) + off, k))
        off += n
    return np.concatenate(srcs).astype(np.int64), np.concatenate(dsts).astype(np.int64)


def _clamped_k(k: int, segs: Sequence[int], exclude_self: bool, fn: str) -> int:
    """``k`` limited to the points the smallest segment offers (as DGL: one k for all segments),
    with a warning when it had to be lowered."""
    room = min(segs) - (1 if exclude_self else 0)
    if k > room:
        nwerr.warn(f"{fn}: k = {k} exceeds the {room} neighbours the smallest point set offers"
                   f"{' (itself excluded)' if exclude_self else ''}; using k = {room}", stacklevel=3)
        return room
    return k


def _graph(src: np.ndarray, dst: np.ndarray, n: int, like: Any) -> Any:
    return graph((src, dst), num_nodes=n, device=B.device_str(like))


def _batched(g: Any, segs: Sequence[int], k: int) -> Any:
    g.set_batch_num_nodes(np.asarray(segs, np.int64))
    g.set_batch_num_edges(np.asarray(segs, np.int64) * k)
    return g


# ------------------------------------------------------------------------------------ functions
def knn_graph(x: Any, k: int, algorithm: str = "bruteforce-blas", dist: str = "euclidean",
              exclude_self: bool = False) -> Any:
    """The k-nearest-neighbour graph of points ``x``: an edge from each of a point's ``k`` nearest
    points to the point (so its in-edges are its neighbours, nearest first).

    Parameters
    ----------
    x : tensor
        ``(N, D)`` coordinates, or ``(B, N, D)``: ``B`` point sets of ``N`` points each, giving a
        batched graph of ``B`` graphs (``batch_num_nodes`` ``[N] * B``).
    k : int
        Neighbours per point. More than a point set offers is lowered to what it offers (with a
        warning), for every set alike.
    algorithm : str
        One of DGL's names (``'bruteforce-blas'``, ``'bruteforce'``, ``'bruteforce-sharemem'``,
        ``'kd-tree'``, ``'nn-descent'``); all give the same exact result here.
    dist : str
        ``'euclidean'`` or ``'cosine'`` (``1 - cos`` of the angle; a zero vector is at distance 1 of
        every point).
    exclude_self : bool
        Leave a point out of its own neighbours (no self-loops); ``k = 0`` is then allowed.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.knn_graph(nc.tensor([[0.0], [1.0], [5.0]]), 1, exclude_self=True)
    >>> [t.tolist() for t in g.edges()]
    [[1, 0, 1], [0, 1, 2]]
    """
    fn = "knn_graph"
    a = _points(x, fn, (2, 3))
    k = _knn_options(k, algorithm, dist, exclude_self, fn)
    segs = [a.shape[1]] * a.shape[0] if a.ndim == 3 else [a.shape[0]]
    k = _clamped_k(k, segs, exclude_self, fn)
    a = a.reshape(-1, a.shape[-1])
    src, dst = _knn_edges(a, k, segs, dist, exclude_self)
    g = _graph(src, dst, len(a), x)
    return _batched(g, segs, k) if x.dim() == 3 else g


def segmented_knn_graph(x: Any, k: int, segs: Any, algorithm: str = "bruteforce-blas", dist: str = "euclidean",
                        exclude_self: bool = False) -> Any:
    """:func:`knn_graph` of several point sets of different sizes, stored one after the other in
    ``x`` ``(N, D)``; ``segs`` (ints summing to ``N``) gives their sizes. A batched graph of
    ``len(segs)`` graphs; neighbours never cross sets.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.segmented_knn_graph(nc.tensor([[0.0], [1.0], [5.0], [7.0]]), 1, [2, 2], exclude_self=True)
    >>> [t.tolist() for t in g.edges()], g.batch_num_nodes().tolist()
    ([[1, 0, 3, 2], [0, 1, 2, 3]], [2, 2])
    """
    fn = "segmented_knn_graph"
    a = _points(x, fn, (2,))
    k = _knn_options(k, algorithm, dist, exclude_self, fn)
    segs = _segments(segs, len(a), fn)
    k = _clamped_k(k, segs, exclude_self, fn)
    src, dst = _knn_edges(a, k, segs, dist, exclude_self)
    return _batched(_graph(src, dst, len(a), x), segs, k)


def _norm_rows(diff: Any, p: float) -> Any:
    """The ``p``-norm of each row of ``diff``, differentiable with a zero gradient (not NaN) at
    coincident points."""
    mag = diff.abs()
    if p == 1:
        return mag.sum(dim=1)
    if math.isinf(p):
        return mag.amax(dim=1)
    nz = mag > 0
    powered = T.where(nz, T.where(nz, mag, T.ones_like(mag)) ** p, T.zeros_like(mag)).sum(dim=1)
    pos = powered > 0
    return T.where(pos, T.where(pos, powered, T.ones_like(powered)) ** (1.0 / p), T.zeros_like(powered))


def radius_graph(x: Any, r: float, p: float = 2, self_loop: bool = False,
                 compute_mode: str = "donot_use_mm_for_euclid_dist", get_distances: bool = False) -> Any:
    """The graph with an edge between every two points of ``x`` ``(N, D)`` at most ``r`` apart
    (``p``-norm distance): both directions, edges ordered by source then destination.

    Parameters
    ----------
    x : tensor
        ``(N, D)`` coordinates.
    r : float
        Radius, > 0.
    p : float
        Order of the Minkowski distance (> 0; ``math.inf`` for the largest coordinate difference).
    self_loop : bool
        Also an edge from every point to itself.
    compute_mode : str
        ``torch.cdist``'s modes, accepted as DGL's signature has them; distances are always
        computed from coordinate differences.
    get_distances : bool
        Also return the ``(E, 1)`` distances of the edges, in ``x``'s dtype and differentiable in
        ``x`` (the gradient at a self-loop is 0).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.radius_graph(nc.tensor([[0.0], [1.0], [5.0]]), 1.0, self_loop=True)
    >>> [t.tolist() for t in g.edges()]
    [[0, 0, 1, 1, 2], [0, 1, 0, 1, 2]]
    """
    fn = "radius_graph"
    _radius_options(r, p, compute_mode, fn)
    a = _points(x, fn, (2,))
    srcs, dsts = [], []
    for lo, hi, d in _pairwise(a, "minkowski", float(p)):
        near = d <= r
        if not self_loop:
            near[np.arange(hi - lo), np.arange(lo, hi)] = False
        s, t = np.nonzero(near)
        srcs.append(s + lo)
        dsts.append(t)
    src, dst = np.concatenate(srcs).astype(np.int64), np.concatenate(dsts).astype(np.int64)
    g = _graph(src, dst, len(a), x)
    if not get_distances:
        return g
    si = T.as_tensor(src, dtype=T.int64, device=x.device)
    di = T.as_tensor(dst, dtype=T.int64, device=x.device)
    diff = x.index_select(0, si) - x.index_select(0, di)
    return g, _norm_rows(diff, float(p)).unsqueeze(-1)


# -------------------------------------------------------------------------------------- modules
def _int_k(k: Any, cls: str) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise nwerr.TypeError(f"{cls}: k must be an int, got {k!r}")
    return int(k)


class KNNGraph(nn.Module):
    """:func:`knn_graph` with a fixed ``k`` (DGL's ``KNNGraph``); ``k`` is checked when called, where
    ``exclude_self`` is known (``k = 0`` is valid only with it).

    ``forward(x, algorithm='bruteforce-blas', dist='euclidean', exclude_self=False)``.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import KNNGraph
    >>> KNNGraph(2)(nc.randn(2, 5, 3)).batch_num_nodes().tolist()
    [5, 5]
    """

    def __init__(self, k: int) -> None:
        super().__init__()
        self.k = _int_k(k, "KNNGraph")

    def forward(self, x: Any, algorithm: str = "bruteforce-blas", dist: str = "euclidean",
                exclude_self: bool = False) -> Any:
        return knn_graph(x, self.k, algorithm=algorithm, dist=dist, exclude_self=exclude_self)

    def extra_repr(self) -> str:
        return f"k={self.k}"


class SegmentedKNNGraph(nn.Module):
    """:func:`segmented_knn_graph` with a fixed ``k`` (DGL's ``SegmentedKNNGraph``).

    ``forward(x, segs, algorithm='bruteforce-blas', dist='euclidean', exclude_self=False)``.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import SegmentedKNNGraph
    >>> SegmentedKNNGraph(2)(nc.randn(7, 3), [3, 4]).batch_num_edges().tolist()
    [6, 8]
    """

    def __init__(self, k: int) -> None:
        super().__init__()
        self.k = _int_k(k, "SegmentedKNNGraph")

    def forward(self, x: Any, segs: Any, algorithm: str = "bruteforce-blas", dist: str = "euclidean",
                exclude_self: bool = False) -> Any:
        return segmented_knn_graph(x, self.k, segs, algorithm=algorithm, dist=dist, exclude_self=exclude_self)

    def extra_repr(self) -> str:
        return f"k={self.k}"


class RadiusGraph(nn.Module):
    """:func:`radius_graph` with fixed ``r``, ``p``, ``self_loop`` and ``compute_mode`` (DGL's
    ``RadiusGraph``, the arguments checked here). ``forward(x, get_distances=False)``.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import RadiusGraph
    >>> g, dist = RadiusGraph(1.5)(nc.tensor([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]]), get_distances=True)
    >>> g.num_edges(), dist.flatten().tolist()
    (2, [1.0, 1.0])
    """

    def __init__(self, r: float, p: float = 2, self_loop: bool = False,
                 compute_mode: str = "donot_use_mm_for_euclid_dist") -> None:
        super().__init__()
        _radius_options(r, p, compute_mode, "RadiusGraph")
        self.r, self.p, self.self_loop, self.compute_mode = r, p, bool(self_loop), compute_mode

    def forward(self, x: Any, get_distances: bool = False) -> Any:
        return radius_graph(x, self.r, self.p, self.self_loop, self.compute_mode, get_distances)

    def extra_repr(self) -> str:
        return f"r={self.r}, p={self.p}, self_loop={self.self_loop}"
