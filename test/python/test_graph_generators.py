"""Random graph generators: counts, reproducibility, and statistics against their definitions."""

import numpy as np
import pytest

import nodeweave as nw


def _uv(g):
    u, v = g.edges()
    return u.numpy(), v.numpy()


def test_rand_graph_counts_and_seed():
    g = nw.rand_graph(50, 400, seed=1)
    assert g.num_nodes() == 50 and g.num_edges() == 400
    u, v = _uv(g)
    assert u.min() >= 0 and u.max() < 50 and v.max() < 50
    u2, v2 = _uv(nw.rand_graph(50, 400, seed=1))
    np.testing.assert_array_equal(u, u2)
    np.testing.assert_array_equal(v, v2)
    assert not np.array_equal(u, _uv(nw.rand_graph(50, 400, seed=2))[0])
    assert nw.rand_graph(0, 0).num_nodes() == 0
    assert nw.rand_graph(10, 5, idtype="int32").idtype == nw.core.int32
    # endpoints uniform: each node is hit about 2 * 20000 / 20 = 2000 times
    deg = np.bincount(np.concatenate(_uv(nw.rand_graph(20, 20000, seed=0))), minlength=20)
    assert np.all(np.abs(deg - 2000) < 6 * np.sqrt(2000))
    with pytest.raises(ValueError, match="0 nodes"):
        nw.rand_graph(0, 3)
    with pytest.raises(ValueError, match="num_edges must be non-negative"):
        nw.rand_graph(3, -1)
    with pytest.raises(TypeError, match="num_nodes must be an int"):
        nw.rand_graph(3.5, 1)


def test_rmat_quadrant_probabilities_and_skew():
    a, b, c, d = 0.57, 0.19, 0.19, 0.05
    m = 50000
    g = nw.rmat_graph(scale=12, num_edges=m, seed=0)
    assert g.num_nodes() == 4096 and g.num_edges() == m
    u, v = _uv(g)
    half = 2048
    top, left = u < half, v < half
    tol = 5 * np.sqrt(0.25 / m)
    assert abs(np.mean(top & left) - a) < tol
    assert abs(np.mean(top & ~left) - b) < tol
    assert abs(np.mean(~top & left) - c) < tol
    assert abs(np.mean(~top & ~left) - d) < tol
    # heavy-tailed: the largest out-degree is far above that of a uniform graph of the same size
    rmat_max = g.out_degrees().numpy().max()
    unif_max = nw.rand_graph(4096, m, seed=0).out_degrees().numpy().max()
    assert rmat_max > 10 * unif_max
    # node 0 collects a^scale... of the mass: P(src = 0) = (a + b)^12
    assert abs(np.mean(u == 0) - (a + b) ** 12) < 5 * np.sqrt((a + b) ** 12 / m)


def test_rmat_seed_noise_and_non_power_of_two():
    g1 = nw.rmat_graph(1000, 3000, seed=5)
    g2 = nw.rmat_graph(1000, 3000, seed=5)
    assert g1.num_nodes() == 1000
    for x, y in zip(_uv(g1), _uv(g2)):
        np.testing.assert_array_equal(x, y)
    assert max(x.max() for x in _uv(g1)) < 1000
    n1 = _uv(nw.rmat_graph(scale=8, num_edges=2000, noise=0.1, seed=3))
    n2 = _uv(nw.rmat_graph(scale=8, num_edges=2000, noise=0.1, seed=3))
    np.testing.assert_array_equal(n1[0], n2[0])
    assert not np.array_equal(n1[0], _uv(nw.rmat_graph(scale=8, num_edges=2000, seed=3))[0])
    uni = _uv(nw.rmat_graph(scale=6, num_edges=20000, a=0.25, b=0.25, c=0.25, d=0.25, seed=0))
    counts = np.bincount(uni[0], minlength=64)
    assert np.all(np.abs(counts - 20000 / 64) < 6 * np.sqrt(20000 / 64))
    assert nw.rmat_graph(1, 3, seed=0).num_edges() == 3  # one node: only self-loops


@pytest.mark.parametrize("kw,msg", [
    (dict(num_nodes=16, num_edges=4, a=0.5, b=0.5, c=0.5, d=0.5), "must be 1"),
    (dict(num_nodes=16, num_edges=4, a=1.2, b=-0.2, c=0.0, d=0.0), "non-negative"),
    (dict(num_edges=4), "exactly one of num_nodes and scale"),
    (dict(num_nodes=16, scale=4, num_edges=4), "exactly one"),
    (dict(num_nodes=16, num_edges=4, noise=1.5), "noise"),
    (dict(scale=70, num_edges=4), "at most 62"),
    (dict(num_nodes=0, num_edges=4), "0 nodes"),
])
def test_rmat_bad_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        nw.rmat_graph(**kw)


def _block_counts(u, v, offsets):
    bu = np.searchsorted(offsets, u, side="right") - 1
    bv = np.searchsorted(offsets, v, side="right") - 1
    k = len(offsets) - 1
    return np.bincount(bu * k + bv, minlength=k * k).reshape(k, k)


def test_sbm_undirected_densities():
    sizes = [300, 200, 100]
    p = np.array([[0.10, 0.01, 0.02], [0.01, 0.20, 0.0], [0.02, 0.0, 0.05]])
    g = nw.sbm_graph(sizes, p, seed=0)
    u, v = _uv(g)
    assert not np.any(u == v)  # no self-loops
    keys = u * 600 + v
    assert len(np.unique(keys)) == len(keys)  # no multi-edges
    assert sorted(zip(u, v)) == sorted(zip(v, u))  # both directions
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    counts = _block_counts(u, v, offsets)
    for i in range(3):
        for j in range(3):
            pairs = sizes[i] * (sizes[j] - 1) if i == j else sizes[i] * sizes[j]  # ordered pairs
            expect = pairs * p[i, j]
            sd = np.sqrt(max(expect, 1.0))
            # each undirected edge appears twice, so the spread doubles
            assert abs(counts[i, j] - expect) <= 2 * 5 * sd, (i, j, counts[i, j], expect)
    g2 = nw.sbm_graph(sizes, p, seed=0)
    np.testing.assert_array_equal(_uv(g2)[0], u)


def test_sbm_directed_densities():
    sizes = [400, 300]
    p = np.array([[0.05, 0.10], [0.0, 0.02]])
    u, v = _uv(nw.sbm_graph(sizes, p, directed=True, seed=4))
    assert not np.any(u == v)
    counts = _block_counts(u, v, np.array([0, 400, 700]))
    for i in range(2):
        for j in range(2):
            pairs = sizes[i] * (sizes[j] - 1) if i == j else sizes[i] * sizes[j]
            expect = pairs * p[i, j]
            assert abs(counts[i, j] - expect) <= 5 * np.sqrt(max(expect, 1.0))
    assert counts[1, 0] == 0


def test_sbm_scales_to_large_sparse_graphs():
    g = nw.sbm_graph([50000, 50000], [[2e-4, 1e-5], [1e-5, 2e-4]], seed=1)
    assert g.num_nodes() == 100000
    expect = 2 * (2 * 50000 * 49999 / 2 * 2e-4 + 50000 * 50000 * 1e-5)
    assert abs(g.num_edges() - expect) < 0.05 * expect


def test_sbm_full_and_empty_blocks():
    g = nw.sbm_graph([4, 3], [[1.0, 0.0], [0.0, 1.0]], seed=0)
    assert g.num_edges() == 4 * 3 + 3 * 2  # complete blocks, both directions
    assert nw.sbm_graph([0, 5], [[0.5, 0.5], [0.5, 0.0]], seed=0).num_edges() == 0
    assert nw.sbm_graph([], np.zeros((0, 0))).num_nodes() == 0


@pytest.mark.parametrize("sizes,p,kw,exc,msg", [
    ([2, 2], [[0.5, 0.1], [0.2, 0.5]], {}, ValueError, "symmetric"),
    ([2, 2], [[0.5]], {}, ValueError, r"shape \(2, 2\)"),
    ([2], [[1.5]], {}, ValueError, "probabilities"),
    ([2], [[-0.1]], {}, ValueError, "probabilities"),
    ([2], [[np.nan]], {}, ValueError, "probabilities"),
    ([-2], [[0.1]], {}, ValueError, "non-negative"),
    ([2], [["x"]], {}, TypeError, "p_matrix"),
])
def test_sbm_bad_arguments(sizes, p, kw, exc, msg):
    with pytest.raises(exc, match=msg):
        nw.sbm_graph(sizes, p, **kw)
