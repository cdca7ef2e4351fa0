"""batch / unbatch: structure against a NumPy reference, features, counts, nesting, scheme checks."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
from transform_helpers import assert_graphs_equal, edges_np, rand_graph, rand_hetero

SIZES = [(6, 10), (0, 0), (4, 0), (9, 20), (1, 1)]


@pytest.mark.parametrize("idtype", ["int32", "int64"])
def test_batch_structure_and_features(rng, idtype):
    parts = [rand_graph(rng, n, m, idtype) for n, m in SIZES]
    bg = nw.batch(parts)
    assert bg.idtype == parts[0].idtype and bg.batch_size == len(parts)
    nn = np.array([p.num_nodes() for p in parts])
    off = np.concatenate([[0], np.cumsum(nn)[:-1]])
    s = np.concatenate([edges_np(p)[0] + o for p, o in zip(parts, off)])
    d = np.concatenate([edges_np(p)[1] + o for p, o in zip(parts, off)])
    np.testing.assert_array_equal(edges_np(bg)[0], s)
    np.testing.assert_array_equal(edges_np(bg)[1], d)
    np.testing.assert_array_equal(bg.batch_num_nodes().numpy(), nn)
    np.testing.assert_array_equal(nw.batch_num_edges(bg).numpy(), [p.num_edges() for p in parts])
    assert nw.batch_num_nodes(bg).dtype == nc.int64
    np.testing.assert_array_equal(bg.ndata["h"].numpy(), np.concatenate([p.ndata["h"].numpy() for p in parts]))
    np.testing.assert_array_equal(bg.edata["w"].numpy(), np.concatenate([p.edata["w"].numpy() for p in parts]))
    back = nw.unbatch(bg)
    assert len(back) == len(parts)
    for a, b in zip(back, parts):
        assert_graphs_equal(a, b)


def test_batch_hetero_round_trip(rng):
    parts = [rand_hetero(rng) for _ in range(3)]
    bg = nw.batch(parts)
    for t in bg.ntypes:
        np.testing.assert_array_equal(bg.batch_num_nodes(t).numpy(), [p.num_nodes(t) for p in parts])
    for ct in bg.canonical_etypes:
        np.testing.assert_array_equal(bg.batch_num_edges(ct).numpy(), [p.num_edges(ct) for p in parts])
    for a, b in zip(nw.unbatch(bg), parts):
        assert_graphs_equal(a, b)


def test_nested_batch_flattens(rng):
    a, b, c = (rand_graph(rng, n, m) for n, m in [(3, 4), (5, 6), (2, 1)])
    bg = nw.batch([nw.batch([a, b]), c])
    assert bg.batch_size == 3
    np.testing.assert_array_equal(bg.batch_num_nodes().numpy(), [3, 5, 2])
    for x, y in zip(nw.unbatch(bg), [a, b, c]):
        assert_graphs_equal(x, y)
    assert_graphs_equal(bg, nw.batch([a, b, c]))


def test_batch_feature_selection(rng):
    parts = [rand_graph(rng, 4, 5) for _ in range(2)]
    parts[0].ndata["only0"] = nc.zeros(4)
    bg = nw.batch(parts, ndata=["h"], edata=None)
    assert set(bg.ndata) == {"h"} and len(bg.edata) == 0
    with pytest.raises(ValueError, match=r"graphs\[1\] has no node feature 'only0'"):
        nw.batch(parts, ndata=["only0"])


def test_batch_scheme_errors(rng):
    a, b = rand_graph(rng, 4, 5), rand_graph(rng, 3, 2)
    b.ndata["extra"] = nc.zeros(3)
    with pytest.raises(ValueError, match=r"graphs\[1\] node feature 'extra'"):
        nw.batch([a, b])
    del b.ndata["extra"]
    b.ndata["h"] = nc.zeros((3, 4))
    with pytest.raises(ValueError, match=r"graphs\[1\] node feature 'h' has row shape \(4,\)"):
        nw.batch([a, b])
    b.ndata["h"] = nc.zeros((3, 3), dtype=nc.float64)
    with pytest.raises(ValueError, match=r"graphs\[1\].*'h'.*float64"):
        nw.batch([a, b])
    b.ndata["h"] = nc.zeros((3, 3))
    b.edata["w"] = nc.zeros(2, dtype=nc.int64)
    with pytest.raises(ValueError, match=r"graphs\[1\] edge feature 'w'"):
        nw.batch([a, b])
    with pytest.raises(ValueError, match="idtype"):
        nw.batch([a, rand_graph(rng, 3, 2, "int32")])
    with pytest.raises(ValueError, match=r"graphs\[1\] has node types"):
        nw.batch([a, rand_hetero(rng)])
    with pytest.raises(ValueError, match="empty"):
        nw.batch([])
    with pytest.raises(TypeError, match="list"):
        nw.batch(a)
    with pytest.raises(TypeError, match=r"graphs\[1\]"):
        nw.batch([a, "b"])


def test_empty_graph_without_features_batches(rng):
    a = rand_graph(rng, 4, 5)
    empty = nw.graph(([], []), num_nodes=0)
    bg = nw.batch([a, empty, a])
    assert bg.batch_num_nodes().numpy().tolist() == [4, 0, 4]
    parts = nw.unbatch(bg)
    assert parts[1].num_nodes() == 0 and "h" in parts[1].ndata  # zero-row column restored


def test_unbatch_splits_and_errors(rng):
    g = nw.graph(([0, 1, 3], [1, 0, 2]), num_nodes=4)
    g.ndata["x"] = nc.arange(4)
    parts = nw.unbatch(g, node_split=[2, 2], edge_split=[2, 1])
    assert [p.num_nodes() for p in parts] == [2, 2]
    assert parts[1].ndata["x"].numpy().tolist() == [2, 3]
    assert [t.tolist() for t in edges_np(parts[1])] == [[1], [0]]
    with pytest.raises(ValueError, match="belongs to graph"):
        nw.unbatch(g, node_split=[2, 2], edge_split=[1, 2])
    with pytest.raises(ValueError, match="summing to 4"):
        nw.unbatch(g, node_split=[2, 1], edge_split=[2, 1])
    assert len(nw.unbatch(g)) == 1


def test_batch_num_errors(rng):
    h = nw.batch([rand_hetero(rng), rand_hetero(rng)])
    with pytest.raises(ValueError, match="ntype"):
        nw.batch_num_nodes(h)
    assert nw.batch_num_nodes(h, "user").numpy().tolist() == [6, 6]
    with pytest.raises(ValueError, match="etype"):
        nw.batch_num_edges(h)
