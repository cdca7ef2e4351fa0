"""nw.norm_by_dst (DGL's dgl.norm_by_dst): 1 / in-degree of each edge's destination within one edge
type, against counts made edge by edge in plain Python, on both backends; heterographs, blocks,
multigraphs and self-loops, empty relations; bad edge types raise naming the edge type."""

import numpy as np
import pytest

import nodeweave as nw
from conftest import np_of


def _reference(src, dst):
    """1 / (number of edges with the same destination), edge by edge, in float64."""
    count = {}
    for v in dst:
        count[v] = count.get(v, 0) + 1
    return np.array([1.0 / count[v] for v in dst], dtype=np.float64)


def test_homogeneous_matches_edge_by_edge_counts(backend_name, rng):
    src = rng.integers(0, 30, 200)
    dst = rng.integers(0, 30, 200)
    src[:5], dst[:5] = 3, 3  # self-loops and parallel edges count as in-edges too
    g = nw.graph((src, dst), num_nodes=40)  # nodes 30..39 have no in-edge: no edge asks for them
    out = nw.norm_by_dst(g)
    assert type(out).__module__.startswith("torch" if backend_name == "pytorch" else "nodeweave")
    arr = np_of(out)
    assert arr.dtype == np.float32 and arr.shape == (200,)
    np.testing.assert_allclose(arr, _reference(src.tolist(), dst.tolist()), rtol=1e-7)
    assert np.isfinite(arr).all()


def test_documented_example(backend_name):
    g = nw.graph(([0, 1, 1], [1, 1, 2]))
    np.testing.assert_array_equal(np_of(nw.norm_by_dst(g)), np.array([0.5, 0.5, 1.0], np.float32))


def test_degrees_are_counted_within_the_edge_type(backend_name):
    g = nw.heterograph({("user", "follows", "user"): ([0, 1, 2, 2], [1, 1, 1, 0]),
                        ("user", "buys", "item"): ([0, 1, 2], [0, 0, 1]),
                        ("item", "bought-by", "user"): ([0, 1], [1, 1])})
    follows = np_of(nw.norm_by_dst(g, "follows"))
    np.testing.assert_allclose(follows, _reference([0, 1, 2, 2], [1, 1, 1, 0]))  # user 1's 2 bought-by edges ignored
    np.testing.assert_allclose(np_of(nw.norm_by_dst(g, ("user", "buys", "item"))), [0.5, 0.5, 1.0])
    np.testing.assert_allclose(np_of(nw.norm_by_dst(g, "bought-by")), [0.5, 0.5])


def test_each_relation_of_an_rgcn_style_heterograph(backend_name, rng):
    # as DGL's R-GCN example: one norm per canonical edge type, then to_homogeneous keeps them
    rels = [("a", "r", "b"), ("b", "s", "a"), ("a", "t", "a")]
    data = {ct: (rng.integers(0, 6, 25), rng.integers(0, 6, 25)) for ct in rels}
    g = nw.heterograph(data, num_nodes_dict={"a": 6, "b": 6})
    for ct in g.canonical_etypes:
        g.edges[ct].data["norm"] = nw.norm_by_dst(g, ct)
        np.testing.assert_allclose(np_of(g.edges[ct].data["norm"]),
                                   _reference(data[ct][1].tolist(), data[ct][1].tolist()), rtol=1e-7)
    h = nw.to_homogeneous(g, edata=["norm"])
    assert np_of(h.edata["norm"]).shape == (75,)


def test_block_uses_its_destination_nodes(backend_name):
    g = nw.graph(([1, 2, 3, 4, 0, 0, 2], [0, 0, 0, 0, 1, 2, 1]))
    _, _, blocks = nw.dataloading.MultiLayerFullNeighborSampler(1).sample(g, [0, 1])
    b = blocks[0]
    src, dst = (np_of(t) for t in b.edges())
    np.testing.assert_allclose(np_of(nw.norm_by_dst(b)), _reference(src.tolist(), dst.tolist()))
    assert sorted(np_of(nw.norm_by_dst(b)).tolist()) == [0.25] * 4 + [0.5] * 2


def test_no_edges(backend_name):
    g = nw.heterograph({("a", "r", "a"): ([], []), ("a", "s", "a"): ([0], [1])}, num_nodes_dict={"a": 2})
    out = np_of(nw.norm_by_dst(g, "r"))
    assert out.shape == (0,) and out.dtype == np.float32


def test_names_the_edge_type_it_cannot_resolve():
    g = nw.heterograph({("a", "r", "b"): ([0], [0]), ("b", "r", "a"): ([0], [0])})
    with pytest.raises(ValueError, match="etype must be given"):
        nw.norm_by_dst(g)
    with pytest.raises(ValueError, match="'r' is ambiguous"):
        nw.norm_by_dst(g, "r")
    with pytest.raises(ValueError, match="unknown edge type 'x'"):
        nw.norm_by_dst(g, "x")
    with pytest.raises(TypeError, match="g must be a nodeweave graph"):
        nw.norm_by_dst("not a graph")


def test_same_function_under_dgl_names():
    import nodeweave.transforms as T

    assert T.norm_by_dst is nw.norm_by_dst and T.functional.norm_by_dst is nw.norm_by_dst
