"""``nw.shortest_dist`` against SciPy's unweighted ``csgraph.shortest_path`` on random graphs (with
multi-edges and self-loops) on both backends and id types: distances with -1 for no path, from one
root or between all pairs; every returned path is a walk of edge ids of exactly the shortest length,
padded with -1 to the longest distance; DGL's documented example; bad input raising by name."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

import nodeweave as nw
import nodeweave.backend as nwb
from conftest import np_of


def reference(n, src, dst):
    a = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    d = shortest_path(a, directed=True, unweighted=True)
    d[np.isinf(d)] = -1
    return d.astype(np.int64)


def check_paths(paths, dist, roots, src, dst):
    width = int(dist.max()) if dist.size else 0
    assert paths.shape == (len(roots), dist.shape[1], width)
    for r, root in enumerate(roots):
        for v in range(dist.shape[1]):
            d = dist[r, v]
            path = paths[r, v]
            steps = max(d, 0)
            assert (path[steps:] == -1).all()
            at = root
            for e in path[:steps]:
                assert src[e] == at, (root, v, path)
                at = dst[e]
            assert at == v or d == -1


@pytest.mark.parametrize("idtype", ["int32", "int64"])
def test_all_pairs_match_scipy_and_paths_are_shortest_walks(backend_name, idtype):
    for seed in range(4):
        rng = np.random.default_rng(seed)
        n = 25
        m = 20 + 15 * seed
        src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
        src[:3], dst[:3] = 4, 9           # a triple edge
        g = nw.graph((src, dst), num_nodes=n, idtype=idtype)
        want = reference(n, src, dst)
        dist = nw.shortest_dist(g)
        B = nwb.current()
        assert B.is_tensor(dist) and B.dtype_name(dist) == "int64"
        np.testing.assert_array_equal(np_of(dist), want)
        d2, paths = nw.shortest_dist(g, return_paths=True)
        np.testing.assert_array_equal(np_of(d2), want)
        check_paths(np_of(paths), want, list(range(n)), src, dst)
        # Among parallel edges the path takes the lowest id.
        assert np_of(paths)[4, 9, 0] == 0


def test_one_root(backend_name):
    rng = np.random.default_rng(7)
    n = 40
    src, dst = rng.integers(0, n, 90), rng.integers(0, n, 90)
    g = nw.graph((src, dst), num_nodes=n)
    want = reference(n, src, dst)
    for root in (0, 17, nwb.current().int_tensor(np.array([33]))):
        r = int(np_of(root)[0]) if nwb.current().is_tensor(root) else root
        np.testing.assert_array_equal(np_of(nw.shortest_dist(g, root=root)), want[r])
        dist, paths = nw.shortest_dist(g, root, return_paths=True)
        np.testing.assert_array_equal(np_of(dist), want[r])
        p = np_of(paths)
        assert p.ndim == 2
        check_paths(p[None], want[r][None], [r], src, dst)


def test_dgl_documented_example(backend_name):
    g = nw.graph(([0, 1, 1, 2], [2, 0, 3, 3]))
    assert np_of(nw.shortest_dist(g, root=0)).tolist() == [0, -1, 1, 2]
    dist, paths = nw.shortest_dist(g, root=None, return_paths=True)
    assert np_of(dist).tolist() == [[0, -1, 1, 2], [1, 0, 2, 1], [-1, -1, 0, 1], [-1, -1, -1, 0]]
    assert np_of(paths).tolist() == [[[-1, -1], [-1, -1], [0, -1], [0, 3]],
                                     [[1, -1], [-1, -1], [1, 0], [2, -1]],
                                     [[-1, -1], [-1, -1], [-1, -1], [3, -1]],
                                     [[-1, -1], [-1, -1], [-1, -1], [-1, -1]]]


def test_no_edges_no_nodes_and_a_heterograph_relation(backend_name):
    dist, paths = nw.shortest_dist(nw.graph(([], []), num_nodes=3), return_paths=True)
    assert np_of(dist).tolist() == [[0, -1, -1], [-1, 0, -1], [-1, -1, 0]]
    assert np_of(paths).shape == (3, 3, 0)
    dist, paths = nw.shortest_dist(nw.graph(([], []), num_nodes=0), return_paths=True)
    assert np_of(dist).shape == (0, 0) and np_of(paths).shape == (0, 0, 0)
    hg = nw.heterograph({("u", "follows", "u"): ([0, 1], [1, 2]), ("u", "buys", "item"): ([0], [0])})
    assert np_of(nw.shortest_dist(hg["follows"], 0)).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="exactly one edge type"):
        nw.shortest_dist(hg)
    with pytest.raises(ValueError, match="from a node type to itself"):
        nw.shortest_dist(hg["buys"])


def test_bad_input_names_the_argument(backend_name):
    g = nw.graph(([0, 1], [1, 2]))
    with pytest.raises(IndexError, match=r"root\[0\] = 5 is out of range"):
        nw.shortest_dist(g, root=5)
    with pytest.raises(ValueError, match="root must be one node id"):
        nw.shortest_dist(g, root=[0, 1])
    with pytest.raises(TypeError, match="root"):
        nw.shortest_dist(g, root=0.5)
    with pytest.raises(TypeError, match="return_paths"):
        nw.shortest_dist(g, return_paths="yes")
    with pytest.raises(TypeError, match="graph"):
        nw.shortest_dist([(0, 1)])
