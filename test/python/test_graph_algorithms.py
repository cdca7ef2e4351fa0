"""Graph statistics and whole-graph helpers against references written from their definitions:
the homophily measures (per-node and per-edge loops), label informativeness (mutual information of
the classes at the ends of an edge, from entropies), ``laplacian_lambda_max`` (dense float64
eigenvalues, per graph of a batch, and the Lanczos path of large graphs), ``khop_adj`` (dense matrix
powers) and the feature casts ``to_half`` / ``to_float`` / ``to_double`` / ``to_bfloat16``; on both
backends, labels given as either backend's tensors or NumPy; DGL's documented values; bad input
raising by name."""

import math

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
from conftest import np_of


def random_labelled(seed, n=30, m=90, classes=3):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    src[:2], dst[:2] = 3, 3                  # a self-loop, twice
    y = rng.integers(0, classes, n)
    y[:classes] = np.arange(classes)
    return nw.graph((src, dst), num_nodes=n), src, dst, y


def labels(y):
    """The labels as the active backend's int64 tensor."""
    return nwb.current().int_tensor(np.asarray(y, np.int64))


def ref_node_homophily(n, src, dst, y):
    total = 0.0
    for v in range(n):
        ins = [u for u, w in zip(src, dst) if w == v]
        total += sum(y[u] == y[v] for u in ins) / len(ins) if ins else 0.0
    return total / n


def ref_linkx(n, src, dst, y):
    c = int(max(y)) + 1
    value = 0.0
    for k in range(c):
        same = sum(1 for u, v in zip(src, dst) if y[v] == k and y[u] == k)
        deg = sum(1 for v in dst if y[v] == k)
        if deg:
            value += max(0.0, same / deg - sum(y == k) / n)
    return value / (c - 1)


def simple_symmetric(n, src, dst):
    return sorted({(int(u), int(v)) for u, v in zip(src, dst)} | {(int(v), int(u)) for u, v in zip(src, dst)})


def ref_adjusted(n, src, dst, y):
    pairs = simple_symmetric(n, src, dst)
    h = sum(y[u] == y[v] for u, v in pairs) / len(pairs)
    deg = np.zeros(n)
    for _, v in pairs:
        deg[v] += 1
    share = np.array([deg[y == k].sum() for k in range(int(y.max()) + 1)]) / len(pairs)
    a = (share ** 2).sum()
    return (h - a) / (1 - a)


def test_homophily_measures_match_their_definitions(backend_name):
    for seed in range(3):
        g, src, dst, y = random_labelled(seed)
        n = g.num_nodes()
        for y_in in (labels(y), y, y.tolist()):
            assert math.isclose(nw.edge_homophily(g, y_in), float(np.mean(y[src] == y[dst])), rel_tol=1e-12)
            assert math.isclose(nw.node_homophily(g, y_in), ref_node_homophily(n, src, dst, y), rel_tol=1e-12)
            assert math.isclose(nw.linkx_homophily(g, y_in), ref_linkx(n, src, dst, y), rel_tol=1e-12,
                                abs_tol=1e-12)
            assert math.isclose(nw.adjusted_homophily(g, y_in), ref_adjusted(n, src, dst, y), rel_tol=1e-12)


def test_homophily_dgl_documented_values(backend_name):
    g = nw.graph(([1, 2, 0, 4], [0, 1, 2, 3]))
    y = labels([0, 0, 0, 0, 1])
    assert nw.node_homophily(g, y) == pytest.approx(0.6)
    assert nw.edge_homophily(g, y) == pytest.approx(0.75)
    assert nw.adjusted_homophily(g, y) == pytest.approx(-0.1428571492433548, rel=1e-6)
    assert nw.linkx_homophily(nw.graph(([0, 1, 2, 3], [1, 2, 0, 4])), y) == pytest.approx(0.2)


def entropy(p):
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def ref_edge_li(n, src, dst, y):
    """I(y_u; y_v) / H(y_u) for a uniform edge (u, v) of the symmetric simple graph."""
    pairs = simple_symmetric(n, src, dst)
    c = int(y.max()) + 1
    joint = np.zeros((c, c))
    for u, v in pairs:
        joint[y[u], y[v]] += 1 / len(pairs)
    marg = joint.sum(1)
    mutual = entropy(marg) + entropy(joint.sum(0)) - entropy(joint.ravel())
    return mutual / entropy(marg)


def ref_node_li(n, src, dst, y):
    """DGL's node variant: a uniform node with edges, then a uniform edge of it; normalized by the
    class entropy of all nodes, with the degree-weighted class distribution for the neighbour."""
    pairs = simple_symmetric(n, src, dst)
    c = int(y.max()) + 1
    nbrs = {v: [w for u, w in pairs if u == v] for v in range(n)}
    with_edges = [v for v in range(n) if nbrs[v]]
    joint = np.zeros((c, c))
    for u in with_edges:
        for w in nbrs[u]:
            joint[y[u], y[w]] += 1 / (len(with_edges) * len(nbrs[u]))
    p_node = np.bincount(y, minlength=c) / n
    deg = np.array([len(nbrs[v]) for v in range(n)], float)
    p_deg = np.array([deg[y == k].sum() for k in range(c)]) / deg.sum()
    ok = joint > 0
    num = float((joint[ok] * np.log(joint[ok] / np.outer(p_node, p_deg)[ok])).sum())
    return num / entropy(p_node)


def test_label_informativeness_is_normalized_mutual_information(backend_name):
    for seed in range(3):
        g, src, dst, y = random_labelled(seed + 5, classes=2 + seed)
        n = g.num_nodes()
        assert math.isclose(nw.edge_label_informativeness(g, labels(y), eps=0), ref_edge_li(n, src, dst, y),
                            rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(nw.node_label_informativeness(g, y, eps=0), ref_node_li(n, src, dst, y),
                            rel_tol=1e-9, abs_tol=1e-12)
        # DGL's default eps moves the value by about eps * classes^2 * log(eps)
        assert nw.edge_label_informativeness(g, y) == pytest.approx(ref_edge_li(n, src, dst, y), abs=1e-5)
    # A labelling that determines the neighbour's class: 1; classes independent of edges: near 0.
    bip = nw.graph(([0, 1, 2, 3], [4, 5, 6, 7]))
    assert nw.edge_label_informativeness(bip, [0] * 4 + [1] * 4, eps=0) == pytest.approx(1.0)
    ring = nw.graph((list(range(8)), [(i + 1) % 8 for i in range(8)]))
    assert nw.edge_label_informativeness(ring, [0, 0, 1, 1, 0, 0, 1, 1], eps=0) == pytest.approx(0.0, abs=1e-12)


def test_label_informativeness_dgl_documented_values(backend_name):
    g = nw.graph(([0, 1, 2, 2, 3, 4], [1, 2, 0, 3, 4, 5]))
    y = labels([0, 0, 0, 0, 1, 1])
    assert nw.edge_label_informativeness(g, y) == pytest.approx(0.25177597999572754, rel=1e-6)
    assert nw.node_label_informativeness(g, y) == pytest.approx(0.3381872773170471, rel=1e-6)


def test_labels_and_undefined_measures_raise_by_name(backend_name):
    g = nw.graph(([0, 1], [1, 2]))
    with pytest.raises(ValueError, match=r"y must have shape \(3,\)"):
        nw.edge_homophily(g, [0, 1])
    with pytest.raises(TypeError, match="y must hold integer class labels"):
        nw.node_homophily(g, nwb.current().from_numpy(np.zeros(3, np.float32)))
    with pytest.raises(ValueError, match="non-negative"):
        nw.adjusted_homophily(g, [0, -1, 1])
    with pytest.raises(ValueError, match="at least 2 classes"):
        nw.linkx_homophily(g, [0, 0, 0])
    with pytest.raises(ValueError, match="undefined"):
        nw.adjusted_homophily(g, [1, 1, 1])
    with pytest.raises(ValueError, match="no edges"):
        nw.edge_homophily(nw.graph(([], []), num_nodes=2), [0, 1])
    with pytest.raises(ValueError, match="one class"):
        nw.edge_label_informativeness(g, [2, 2, 2])
    with pytest.raises(ValueError, match="eps"):
        nw.node_label_informativeness(g, [0, 1, 0], eps=-1)
    with pytest.raises(ValueError, match="exactly one edge type"):
        nw.edge_homophily(nw.heterograph({("a", "r", "a"): ([0], [1]), ("a", "s", "a"): ([1], [0])}), [0, 1])


def dense_laplacian_max(n, src, dst):
    a = np.zeros((n, n))
    for u, v in zip(src, dst):
        a[u, v] += 1
    deg = np.maximum(a.sum(0), 1)
    lap = np.eye(n) - a / np.sqrt(np.outer(deg, deg))
    return float(np.linalg.eigvalsh(lap)[-1])


def test_laplacian_lambda_max_per_graph_of_a_batch(backend_name):
    graphs, want = [], []
    for seed, n in ((0, 6), (1, 20), (2, 1), (3, 300)):      # 300 nodes: the Lanczos path
        rng = np.random.default_rng(seed)
        s, d = rng.integers(0, n, 3 * n), rng.integers(0, n, 3 * n)
        src, dst = np.concatenate([s, d]), np.concatenate([d, s])
        graphs.append(nw.graph((src, dst), num_nodes=n))
        want.append(dense_laplacian_max(n, src, dst))
    got = nw.laplacian_lambda_max(nw.batch(graphs))
    assert isinstance(got, list) and all(isinstance(x, float) for x in got)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    assert nw.laplacian_lambda_max(graphs[1]) == pytest.approx([want[1]], rel=1e-12)
    ring = nw.graph(([0, 1, 2, 3, 4, 0, 1, 2, 3, 4], [1, 2, 3, 4, 0, 4, 0, 1, 2, 3]))
    assert nw.laplacian_lambda_max(ring) == pytest.approx([1.809016994374948], rel=1e-12)
    with pytest.raises(ValueError, match="bidirected"):
        nw.laplacian_lambda_max(nw.graph(([0], [1])))
    with pytest.raises(ValueError, match="one node type and one edge type"):
        nw.laplacian_lambda_max(nw.heterograph({("a", "r", "b"): ([0], [0])}))


def test_khop_adj_is_a_matrix_power(backend_name):
    rng = np.random.default_rng(4)
    n = 9
    src, dst = rng.integers(0, n, 25), rng.integers(0, n, 25)
    g = nw.graph((src, dst), num_nodes=n)
    a = np.zeros((n, n))
    np.add.at(a, (src, dst), 1)
    B = nwb.current()
    for k in (0, 1, 2, 4):
        out = nw.khop_adj(g, k)
        assert B.is_tensor(out) and B.dtype_name(out) == "float32" and B.device_str(out) == "cpu"
        np.testing.assert_array_equal(np_of(out), np.linalg.matrix_power(a, k))
    ring = nw.graph(([0, 1, 2, 3, 4, 0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 1, 2, 3, 4, 0]))
    assert np_of(nw.khop_adj(ring, 3))[2].tolist() == [1.0, 0.0, 1.0, 3.0, 3.0]
    with pytest.raises(ValueError, match="k must be a non-negative int"):
        nw.khop_adj(g, -1)
    with pytest.raises(ValueError, match="one node type and one edge type"):
        nw.khop_adj(nw.heterograph({("a", "r", "b"): ([0], [0])}), 1)


FLOATS = ("float16", "bfloat16", "float32", "float64")


@pytest.mark.parametrize("cast, want", [(nw.to_half, "float16"), (nw.to_float, "float32"),
                                        (nw.to_double, "float64"), (nw.to_bfloat16, "bfloat16")])
def test_feature_casts_every_float_feature_of_every_type(backend_name, cast, want):
    B = nwb.current()
    g = nw.heterograph({("user", "follows", "user"): ([0, 1, 2], [1, 2, 0]),
                        ("user", "plays", "game"): ([0, 2], [1, 0])})
    values = np.arange(6, dtype=np.float64)

    def col(n, dtype):
        return B.tensor(values[:n].tolist(), dtype=dtype)

    for dtype in FLOATS + ("int32", "int64"):
        g.nodes["user"].data[dtype] = col(3, dtype)
        g.nodes["game"].data[dtype] = col(2, dtype)
        g.edges["follows"].data[dtype] = col(3, dtype)
        g.edges["plays"].data[dtype] = col(2, dtype)
    out = cast(g)
    views = [(out.nodes["user"].data, g.nodes["user"].data), (out.nodes["game"].data, g.nodes["game"].data),
             (out.edges["follows"].data, g.edges["follows"].data), (out.edges["plays"].data, g.edges["plays"].data)]
    for new, old in views:
        for dtype in FLOATS + ("int32", "int64"):
            expect = want if dtype in FLOATS else dtype
            assert B.dtype_name(new[dtype]) == expect, (dtype, expect)
            assert B.dtype_name(old[dtype]) == dtype          # the original graph keeps its features
            np.testing.assert_array_equal(np_of(new[dtype]).astype(np.float64), np_of(old[dtype]).astype(np.float64))
    assert out.canonical_etypes == g.canonical_etypes and out._rels is not None
    assert np_of(out.edges(etype="plays")[0]).tolist() == [0, 2]
    with pytest.raises(TypeError, match="nodeweave graph"):
        nw.to_float({"x": 1})


def test_feature_cast_keeps_a_block_a_block(backend_name):
    block = nw.to_block(nw.graph(([0, 1, 3], [2, 2, 2])), [2])
    block.srcdata["h"] = nwb.current().tensor([[1.0]] * block.num_src_nodes())
    out = nw.to_double(block)
    assert out.is_block and nwb.current().dtype_name(out.srcdata["h"]) == "float64"
    assert nwb.current().dtype_name(block.srcdata["h"]) == "float32"
    # DGL's module path for the casts
    from nodeweave.transforms import functional
    assert functional.to_half is nw.to_half and functional.shortest_dist is nw.shortest_dist
