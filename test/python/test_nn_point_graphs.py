"""k-nearest-neighbour and radius graphs (nw.knn_graph, nw.segmented_knn_graph, nw.radius_graph and
the KNNGraph, SegmentedKNNGraph, RadiusGraph modules) on both backends: the edges against
SciPy's distances (each point's in-edges its k nearest points, nearest first, ties to the lower
index; every pair within r), batches and segments, k larger than a point set, exclude_self and
self-loops, coincident points, the radius graph's distances and their gradients (against torch
float64 and finite differences), the graph's device, and bad input."""

import math

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cdist

import nodeweave as nw

from layer_ref_helpers import BACKENDS, check_layer, fd_check, side, to_numpy


def edges_of(g):
    return [to_numpy(t).tolist() for t in g.edges()]


def ref_knn(points, k, segs, metric, exclude_self):
    """(src, dst): for each point, its k nearest points of its own segment, nearest first."""
    src, dst, off = [], [], 0
    for n in segs:
        seg = points[off:off + n]
        d = cdist(seg, seg, "euclidean" if metric == "euclidean" else "cosine")
        for v in range(n):
            order = sorted((u for u in range(n) if not (exclude_self and u == v)), key=lambda u: (d[v, u], u))
            src += [off + u for u in order[:k]]
            dst += [off + v] * min(k, len(order))
        off += n
    return [src, dst]


def ref_radius(points, r, p, self_loop):
    d = cdist(points, points, "chebyshev") if math.isinf(p) else cdist(points, points, "minkowski", p=p)
    src, dst = np.nonzero(d <= r)
    keep = self_loop | (src != dst)
    return [src[keep].tolist(), dst[keep].tolist()], d[src[keep], dst[keep]]


# ---------------------------------------------------------------------------- k nearest neighbours
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("exclude_self", [False, True])
def test_knn_graph(backend, metric, exclude_self):
    ns = side(backend)
    rng = np.random.default_rng(0)
    pts = rng.standard_normal((12, 3)) + 0.5
    g = nw.knn_graph(ns.T.tensor(pts), 4, dist=metric, exclude_self=exclude_self)
    assert edges_of(g) == ref_knn(pts, 4, [12], metric, exclude_self)
    assert g.num_nodes() == 12 and g.batch_size == 1
    assert isinstance(g.edges()[0], ns.T.Tensor)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("exclude_self", [False, True])
def test_knn_graph_of_a_batch_of_point_sets(backend, exclude_self):
    ns = side(backend)
    rng = np.random.default_rng(1)
    pts = rng.standard_normal((3, 6, 2))
    g = ns.nn.KNNGraph(2)(ns.T.tensor(pts, dtype=ns.T.float32), exclude_self=exclude_self)
    assert edges_of(g) == ref_knn(pts.reshape(18, 2).astype(np.float32), 2, [6, 6, 6], "euclidean", exclude_self)
    assert to_numpy(g.batch_num_nodes()).tolist() == [6, 6, 6]
    assert to_numpy(g.batch_num_edges()).tolist() == [12, 12, 12]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("exclude_self", [False, True])
def test_segmented_knn_graph(backend, metric, exclude_self):
    ns = side(backend)
    rng = np.random.default_rng(2)
    pts = rng.standard_normal((15, 4))
    segs = [4, 7, 4]
    g = ns.nn.SegmentedKNNGraph(3)(ns.T.tensor(pts), segs, dist=metric, exclude_self=exclude_self)
    assert edges_of(g) == ref_knn(pts, 3, segs, metric, exclude_self)
    assert to_numpy(g.batch_num_nodes()).tolist() == segs
    assert to_numpy(g.batch_num_edges()).tolist() == [12, 21, 12]
    as_tensor = nw.segmented_knn_graph(ns.T.tensor(pts), 3, ns.T.tensor(segs), dist=metric, exclude_self=exclude_self)
    assert edges_of(as_tensor) == edges_of(g)


@pytest.mark.parametrize("algorithm", ["bruteforce-blas", "bruteforce", "bruteforce-sharemem", "kd-tree", "nn-descent"])
def test_every_algorithm_gives_the_exact_graph(algorithm):
    rng = np.random.default_rng(3)
    pts = rng.standard_normal((20, 3))
    g = nw.knn_graph(torch.tensor(pts), 5, algorithm=algorithm)
    assert edges_of(g) == ref_knn(pts, 5, [20], "euclidean", False)


@pytest.mark.parametrize("exclude_self", [False, True])
def test_k_larger_than_a_point_set_is_lowered_with_a_warning(exclude_self):
    rng = np.random.default_rng(4)
    pts = rng.standard_normal((8, 2))
    room = 3 - int(exclude_self)             # the smallest segment has 3 points
    with pytest.warns(UserWarning, match=f"using k = {room}"):
        g = nw.segmented_knn_graph(torch.tensor(pts), 5, [3, 5], exclude_self=exclude_self)
    assert edges_of(g) == ref_knn(pts, room, [3, 5], "euclidean", exclude_self)
    with pytest.warns(UserWarning, match=f"using k = {8 - int(exclude_self)}"):
        g = nw.knn_graph(torch.tensor(pts), 10, exclude_self=exclude_self)
    assert g.num_edges() == 8 * (8 - int(exclude_self))


def test_k_zero_with_exclude_self_gives_no_edges():
    g = nw.knn_graph(torch.rand(4, 2), 0, exclude_self=True)
    assert g.num_nodes() == 4 and g.num_edges() == 0


@pytest.mark.parametrize("exclude_self", [False, True])
def test_coincident_points(exclude_self):
    """All points at one place: ties everywhere go to the lower index; self never chosen with
    exclude_self."""
    g = nw.knn_graph(torch.zeros(5, 3), 2, exclude_self=exclude_self)
    src, dst = edges_of(g)
    assert dst == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert src == ([1, 2, 0, 2, 0, 1, 0, 1, 0, 1] if exclude_self else [0, 1] * 5)


# ---------------------------------------------------------------------------- radius graphs
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("p", [2, 1, 3.5, math.inf])
@pytest.mark.parametrize("self_loop", [False, True])
def test_radius_graph(backend, p, self_loop):
    ns = side(backend)
    rng = np.random.default_rng(5)
    pts = rng.uniform(0, 1, (14, 3))
    r = 0.7 if p == 1 else 0.45
    g, dist = ns.nn.RadiusGraph(r, p=p, self_loop=self_loop)(ns.T.tensor(pts), get_distances=True)
    want_edges, want_dist = ref_radius(pts, r, p, self_loop)
    assert edges_of(g) == want_edges and len(want_edges[0]) > 14
    assert tuple(dist.shape) == (len(want_dist), 1) and dist.dtype == ns.T.float64
    np.testing.assert_allclose(to_numpy(dist)[:, 0], want_dist, rtol=1e-12, atol=1e-15)
    assert edges_of(nw.radius_graph(ns.T.tensor(pts), r, p=p, self_loop=self_loop)) == want_edges


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("p", [2, 1.5, 1])
def test_radius_graph_distance_gradients(backend, p):
    """The distances against torch float64 (values, gradient of the coordinates; 0 at self-loops)
    and against finite differences."""
    rng = np.random.default_rng(6)
    pts = rng.uniform(0, 1, (9, 2))
    edges, _ = ref_radius(pts, 0.5, p, True)
    src, dst = (torch.tensor(e) for e in edges)

    def ref(params, buffers, t):
        diff = (t["x"][src] - t["x"][dst]).abs()
        loop = src == dst
        safe = torch.where(loop[:, None], torch.ones_like(diff), diff)   # no 0 ** (p - 1) at self-loops
        d = (safe ** p).sum(1) ** (1 / p)
        return torch.where(loop, torch.zeros_like(d), d)[:, None]

    def run(module, t):
        return module(t["x"], get_distances=True)[1]

    check_layer(backend, lambda ns: ns.nn.RadiusGraph(0.5, p=p, self_loop=True), run, ref, {"x": pts}, rng)
    fd_check(backend, lambda ns: ns.nn.RadiusGraph(0.5, p=p, self_loop=False), run, {"x": pts}, rng)


def test_radius_graph_from_dgls_documentation():
    """DGL's documented example gives DGL's documented edges and distances."""
    x = torch.tensor([[0.0, 0.0, 1.0], [1.0, 0.5, 0.5], [0.5, 0.2, 0.2], [0.3, 0.2, 0.4]])
    g, dist = nw.radius_graph(x, 0.75, get_distances=True)
    assert edges_of(g) == [[0, 1, 2, 2, 3, 3], [3, 2, 1, 3, 0, 2]]
    np.testing.assert_allclose(dist[:, 0].numpy(), [0.7, 0.6557, 0.6557, 0.2828, 0.7, 0.2828], atol=1e-4)


def test_functions_follow_their_tensor_not_the_active_backend():
    side("native")
    g, dist = nw.radius_graph(torch.tensor([[0.0], [1.0]]), 2.0, get_distances=True)
    assert isinstance(dist, torch.Tensor) and g.num_edges() == 2
    assert nw.knn_graph(torch.rand(3, 2), 1).num_edges() == 3


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_graph_on_the_points_device():
    side("pytorch")
    x = torch.rand(6, 3, device="cuda")
    assert nw.knn_graph(x, 2).device == x.device
    g, dist = nw.radius_graph(x, 0.8, get_distances=True)
    assert g.device == x.device and dist.device == x.device


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_inputs(backend):
    ns = side(backend)
    x = ns.T.rand(6, 2)
    cases = [
        (lambda: nw.knn_graph(x, 0), ValueError, "k must be positive, got k = 0"),
        (lambda: nw.knn_graph(x, -1, exclude_self=True), ValueError, "k must be positive or 0 with exclude_self"),
        (lambda: nw.knn_graph(x, 2.0), TypeError, "k must be an int"),
        (lambda: ns.nn.KNNGraph(0)(x), ValueError, "k must be positive"),
        (lambda: ns.nn.KNNGraph("3"), TypeError, "KNNGraph: k must be an int"),
        (lambda: nw.knn_graph(x, 2, algorithm="ball-tree"), ValueError, "algorithm must be one of"),
        (lambda: nw.knn_graph(x, 2, dist="manhattan"), ValueError, "dist must be 'euclidean' or 'cosine'"),
        (lambda: nw.knn_graph(ns.T.tensor([]), 2), ValueError, "x is an empty point set"),
        (lambda: nw.knn_graph(ns.T.rand(2, 2, 2, 2), 1), ValueError, r"x must be 2-D or 3-D"),
        (lambda: nw.knn_graph(ns.T.ones(3, 2, dtype=ns.T.int64), 1), TypeError, "floating point coordinates"),
        (lambda: nw.knn_graph(ns.T.tensor([[0.0], [math.nan]]), 1), ValueError, "NaN or infinite"),
        (lambda: nw.knn_graph([[0.0, 1.0]], 1), TypeError, "x must be a tensor"),
        (lambda: nw.segmented_knn_graph(x, 2, [2, 3]), ValueError, "segs sums to 5, but x has 6 points"),
        (lambda: nw.segmented_knn_graph(x, 2, [6, 0]), ValueError, "at least one point"),
        (lambda: nw.segmented_knn_graph(x, 2, [2.5, 3.5]), TypeError, "segs must be a non-empty list"),
        (lambda: nw.segmented_knn_graph(ns.T.rand(2, 3, 2), 1, [3, 3]), ValueError, "x must be 2-D"),
        (lambda: nw.radius_graph(x, 0), ValueError, "r must be a positive number"),
        (lambda: ns.nn.RadiusGraph(-1.0), ValueError, "RadiusGraph: r must be a positive number"),
        (lambda: ns.nn.RadiusGraph(1.0, p=0), ValueError, "p must be a positive number"),
        (lambda: ns.nn.RadiusGraph(1.0, compute_mode="fast"), ValueError, "compute_mode must be one of"),
        (lambda: nw.radius_graph(ns.T.rand(2, 2, 2), 1.0), ValueError, "x must be 2-D"),
    ]
    for call, err, msg in cases:
        with pytest.raises(err, match=msg):
            call()
