"""MiniGCDataset: each family's graphs have the family's structure (checked against networkx
generators), classes are split as DGL splits them, and the same seed gives the same graphs;
GraphDataLoader(batch_size=None) yields the items unbatched with 0-d labels, on both backends."""

import networkx as nx
import numpy as np
import pytest

import nodeweave as nw
from conftest import np_of
from nodeweave.data import GraphDataLoader, MiniGCDataset


def _undirected(g):
    src, dst = (np_of(t) for t in g.edges())
    n = g.num_nodes()
    assert sorted(zip(src.tolist(), dst.tolist())) == sorted(zip(dst.tolist(), src.tolist()))  # both directions
    assert (np.sort(src[src == dst]) == np.arange(n)).all()                                    # one self-loop each
    h = nx.Graph()
    h.add_nodes_from(range(n))
    h.add_edges_from((int(s), int(d)) for s, d in zip(src, dst) if s != d)
    return h


def test_families_and_labels():
    ds = MiniGCDataset(80, 10, 30, seed=1)
    assert len(ds) == 80 and ds.num_classes == 8
    labels = np.array([int(np_of(ds[i][1])) for i in range(80)])
    np.testing.assert_array_equal(np.bincount(labels), [10] * 8)
    for i in range(80):
        g, label = ds[i]
        h, n, lab = _undirected(g), g.num_nodes(), int(np_of(label))
        degrees = sorted(d for _, d in h.degree())
        if lab == 0:
            assert nx.is_isomorphic(h, nx.cycle_graph(n)) and 10 <= n < 30
        elif lab == 1:
            assert nx.is_isomorphic(h, nx.star_graph(n - 1))
        elif lab == 2:
            assert nx.is_isomorphic(h, nx.wheel_graph(n))
        elif lab == 3:
            path = n - max(degrees)                # the clique node joined to the path has m = n - path
            assert 2 <= path < n // 2 and nx.is_isomorphic(h, nx.lollipop_graph(n - path, path))
        elif lab == 4:
            d = int(np.log2(n))
            assert 2 ** d == n and nx.is_isomorphic(h, nx.hypercube_graph(d))
        elif lab == 5:
            assert any(nx.is_isomorphic(h, nx.grid_2d_graph(r, n // r)) for r in range(2, n) if n % r == 0)
        elif lab == 6:
            assert nx.is_isomorphic(h, nx.complete_graph(n))
        else:
            assert n % 2 == 0 and nx.is_isomorphic(h, nx.circular_ladder_graph(n // 2))
    again = MiniGCDataset(80, 10, 30, seed=1)
    assert all(again[i][0].num_edges() == ds[i][0].num_edges() for i in range(80))
    assert [int(np_of(MiniGCDataset(3, 10, 20)[i][1])) for i in range(3)] == [7, 7, 7]


def test_errors():
    with pytest.raises(ValueError, match="min_num_v"):
        MiniGCDataset(8, 4, 10)
    with pytest.raises(ValueError, match="max_num_v"):
        MiniGCDataset(8, 10, 10)
    with pytest.raises(IndexError, match="out of range"):
        MiniGCDataset(8, 10, 12)[8]


def test_unbatched_loader(backend_name):
    ds = MiniGCDataset(8, 10, 12)
    loader = GraphDataLoader(ds, batch_size=None)
    items = list(loader)
    assert len(loader) == len(items) == 8
    for (g, label), i in zip(items, range(8)):
        assert not g.batch_size > 1 and g.num_nodes() == ds[i][0].num_nodes()
        assert nw.backend.current().shape(label) == () and int(np_of(label)) == i
    with pytest.raises(ValueError, match="positive int or None"):
        GraphDataLoader(ds, batch_size=0)
