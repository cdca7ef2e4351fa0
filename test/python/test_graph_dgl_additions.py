"""Graph functions DGL scripts call that nodeweave adds: CSR/CSC rows sorted by tag and biased
sampling over them, merge, slice_batch, block_to_graph, nodeweave.convert, 'SRC/t' / 'DST/t' names
on uni-bipartite graphs, is_unibipartite as a property, bool masks padded with False,
nodeweave.random.choice, and adjacency matrices in the relation's own row order. Both backends."""

import collections

import numpy as np
import pytest

import nodeweave as nw
from conftest import np_of


def _t(arr):
    return nw.backend.current().from_numpy(np.asarray(arr))


@pytest.mark.parametrize("tag_type", ["node", "edge"])
def test_rows_sorted_by_tag(backend_name, rng, tag_type):
    g = nw.graph((rng.integers(0, 12, 80), rng.integers(0, 12, 80)), num_nodes=12)
    g.edata["w"] = _t(np.arange(80, dtype=np.float32))
    src, dst = (np_of(t) for t in g.edges())
    for sorter, fmt, rows_key, nbrs_key in ((nw.sort_csr_by_tag, "csr", src, dst), (nw.sort_csc_by_tag, "csc", dst, src)):
        tag = rng.integers(0, 4, 12 if tag_type == "node" else 80)
        sg = sorter(g, _t(tag), tag_type=tag_type)
        np.testing.assert_array_equal(np_of(sg.edges()[0]), src)        # same edges, same ids
        np.testing.assert_array_equal(np_of(sg.edata["w"]), np.arange(80))
        indptr, indices, eids = (np_of(t) for t in sg.adj_tensors(fmt))
        scipy_rows = sg.adj_external(transpose=fmt == "csc", scipy_fmt="csr")
        np.testing.assert_array_equal(scipy_rows.indices, indices)      # SciPy sees the same row order
        offsets = np_of(sg.ndata["_TAG_OFFSET"])
        assert offsets.shape == (12, int(tag.max()) + 2)
        for r in range(12):
            e = eids[indptr[r]:indptr[r + 1]]
            np.testing.assert_array_equal(indices[indptr[r]:indptr[r + 1]], nbrs_key[e])
            want = np.flatnonzero(rows_key == r)                         # the row's edges, ids ascending
            key = tag[nbrs_key[want]] if tag_type == "node" else tag[want]
            np.testing.assert_array_equal(e, want[np.argsort(key, kind="stable")])   # stable by tag
            np.testing.assert_array_equal(offsets[r], np.r_[0, np.cumsum(np.bincount(key, minlength=offsets.shape[1] - 1))])
    with pytest.raises(ValueError, match="one value per edge"):
        nw.sort_csr_by_tag(g, _t(np.zeros(3, np.int64)), tag_type="edge")


def test_biased_sampling_follows_the_tag_weights(backend_name, rng):
    n = 40
    src = np.repeat(np.arange(n), 20)
    dst = np.concatenate([rng.choice(n, 20, replace=False) for _ in range(n)])
    g = nw.graph((src, dst), num_nodes=n)
    tag = rng.integers(0, 3, n)
    bias = _t(np.array([0.0, 1.0, 9.0], np.float32))
    counts = collections.Counter()
    sg = nw.sort_csc_by_tag(g, _t(tag))
    for seed in range(5):
        f = nw.sampling.sample_neighbors_biased(sg, np.arange(n), 4, bias, random_seed=seed)
        s, d = (np_of(t) for t in f.edges())
        counts.update(tag[s].tolist())
        assert (np.bincount(d, minlength=n) <= 4).all()
        eid = np_of(f.edata[nw.EID])
        np.testing.assert_array_equal(src[eid], s)
    assert counts[0] == 0 and counts[2] > 3 * counts[1]
    out = nw.sampling.sample_neighbors_biased(nw.sort_csr_by_tag(g, _t(tag)), np.arange(n), 4, bias,
                                              edge_dir="out", random_seed=0)
    assert (tag[np_of(out.edges()[1])] != 0).all()
    with pytest.raises(KeyError, match="sort_csc_by_tag"):
        nw.sampling.sample_neighbors_biased(g, [0], 2, bias)
    with pytest.raises(ValueError, match="one weight per tag"):
        nw.sampling.sample_neighbors_biased(sg, [0], 2, _t(np.ones(2, np.float32)))


def test_merge(backend_name):
    a = nw.heterograph({("u", "r", "v"): ([0, 1], [1, 0])})
    b = nw.heterograph({("u", "r", "v"): ([1, 2, 3], [2, 3, 5])})
    a.nodes["u"].data["x"] = _t(np.array([1.0, 1.0], np.float32))
    b.nodes["u"].data["x"] = _t(np.array([2.0, 2.0, 2.0, 2.0], np.float32))
    b.nodes["v"].data["y"] = _t(np.arange(6, dtype=np.float32))
    a.edges["r"].data["e"] = _t(np.array([7, 8]))
    b.edges["r"].data["e"] = _t(np.array([1, 2, 3]))
    m = nw.merge([a, b])
    assert (m.num_nodes("u"), m.num_nodes("v")) == (4, 6)
    assert [np_of(t).tolist() for t in m.edges()] == [[0, 1, 1, 2, 3], [1, 0, 2, 3, 5]]
    assert np_of(m.nodes["u"].data["x"]).tolist() == [2.0, 2.0, 2.0, 2.0]       # the later graph wins
    assert np_of(m.nodes["v"].data["y"]).tolist() == list(range(6))
    assert np_of(m.edges["r"].data["e"]).tolist() == [7, 8, 1, 2, 3]
    with pytest.raises(KeyError, match="no edge feature 'e'"):
        nw.merge([a, nw.heterograph({("u", "r", "v"): ([0], [0])})])
    with pytest.raises(ValueError, match="must not be empty"):
        nw.merge([])


def test_slice_batch_matches_unbatch(backend_name, rng):
    graphs = []
    for n in (3, 5, 2):
        g = nw.heterograph({("a", "r", "a"): (rng.integers(0, n, 4), rng.integers(0, n, 4)),
                            ("a", "s", "b"): (rng.integers(0, n, 3), rng.integers(0, 2, 3))},
                           num_nodes_dict={"a": n, "b": 2})
        g.nodes["a"].data["h"] = _t(rng.standard_normal((n, 2)).astype(np.float32))
        g.edges["s"].data["w"] = _t(rng.standard_normal(3).astype(np.float32))
        graphs.append(g)
    bg = nw.batch(graphs)
    for i, ref in enumerate(nw.unbatch(bg)):
        s = nw.slice_batch(bg, i, store_ids=True)
        for ct in ref.canonical_etypes:
            for x, y in zip(s.edges(etype=ct), ref.edges(etype=ct)):
                np.testing.assert_array_equal(np_of(x), np_of(y))
        np.testing.assert_array_equal(np_of(s.nodes["a"].data["h"]), np_of(ref.nodes["a"].data["h"]))
        np.testing.assert_array_equal(np_of(s.edges["s"].data["w"]), np_of(ref.edges["s"].data["w"]))
        off = sum(g.num_nodes("a") for g in graphs[:i])
        np.testing.assert_array_equal(np_of(s.nodes["a"].data[nw.NID]), off + np.arange(graphs[i].num_nodes("a")))
    with pytest.raises(IndexError, match="gid"):
        nw.slice_batch(bg, 3)


def test_block_to_graph_shares_features(backend_name):
    b = nw.create_block({("A", "AB", "B"): ([1, 2, 3], [2, 1, 0]), ("B", "BA", "A"): ([2, 3], [3, 4])})
    x = _t(np.arange(4, dtype=np.float32))
    b.srcnodes["A"].data["x"] = x
    g = nw.block_to_graph(b)
    assert not g.is_block and sorted(g.ntypes) == ["A_dst", "A_src", "B_dst", "B_src"]
    assert ("A_src", "AB", "B_dst") in g.canonical_etypes
    assert g.num_nodes("A_src") == b.num_src_nodes("A") and g.num_nodes("A_dst") == b.num_dst_nodes("A")
    assert g.nodes["A_src"].data["x"] is x
    assert [np_of(t).tolist() for t in g.edges(etype="AB")] == [[1, 2, 3], [2, 1, 0]]
    with pytest.raises(TypeError, match="Block"):
        nw.block_to_graph(nw.graph(([0], [1])))


def test_convert_module_and_side_names(backend_name):
    assert nw.convert.heterograph is nw.heterograph and nw.convert.block_to_graph is nw.block_to_graph
    g = nw.heterograph({("user", "buys", "item"): ([0, 1], [2, 0])})
    assert g.is_unibipartite is True and nw.graph(([0], [1])).is_unibipartite is False
    g.nodes["user"].data["h"] = _t(np.array([1.0, 2.0], np.float32))
    assert g.nodes["SRC/user"].data["h"] is g.srcdata["h"]
    assert g.num_nodes("DST/item") == 3
    with pytest.raises(ValueError, match="unknown node type 'SRC/item'"):
        g.num_nodes("SRC/item")
    with pytest.raises(ValueError, match="unknown node type 'SRC/_N'"):
        nw.graph(([0], [1])).num_nodes("SRC/_N")        # not uni-bipartite: no side names


def test_bool_masks_padded_with_false(backend_name):
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    sg = nw.node_subgraph(g, np.array([True, False, True, False, False]))
    assert np_of(sg.ndata[nw.NID]).tolist() == [0, 2]
    with pytest.raises(ValueError, match="True past the end"):
        nw.node_subgraph(g, np.array([True, False, False, True]))
    with pytest.raises(ValueError, match="bool mask"):
        nw.node_subgraph(g, np.array([True, False]))


def test_random_choice(backend_name):
    nw.seed(3)
    a = np_of(nw.random.choice(10, 4, replace=False))
    nw.seed(3)
    assert np_of(nw.random.choice(10, 4, replace=False)).tolist() == a.tolist()
    assert len(set(a.tolist())) == 4 and set(a.tolist()) <= set(range(10))
    pool = _t(np.array([10, 20, 30, 40]))
    drawn = np_of(nw.random.choice(pool, 3, replace=False, prob=_t(np.array([0.0, 1.0, 1.0, 1.0]))))
    assert sorted(drawn.tolist()) == [20, 30, 40]
    counts = np.bincount(np_of(nw.random.choice(3, 30000, prob=[1.0, 2.0, 7.0])), minlength=3) / 30000
    np.testing.assert_allclose(counts, [0.1, 0.2, 0.7], atol=0.02)
    with pytest.raises(ValueError, match="distinct"):
        nw.random.choice(3, 4, replace=False)
    with pytest.raises(ValueError, match="non-negative weights"):
        nw.random.choice(3, 1, prob=[1.0, -1.0, 1.0])


def test_adjacency_keeps_repeated_edges_as_entries():
    g = nw.graph(([0, 0, 1], [1, 1, 2]))
    m = g.adj_external(scipy_fmt="csr")
    assert m.nnz == 3 and m.toarray()[0, 1] == 2          # DGL keeps both entries; they sum in toarray
    c = g.adj_external(transpose=True, scipy_fmt="csc")
    np.testing.assert_array_equal(c.toarray(), m.toarray().T)
