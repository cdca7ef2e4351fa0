"""In-place mutation (``add_nodes``, ``add_edges``, ``remove_nodes``, ``remove_edges``) against NumPy
references on both backends: structure in edge-id order, every format built afterwards, features of
new rows (given or zero) and of kept rows, stored ids, batch counts (dropped when adding, reduced when
removing, as DGL), relations and frames the change does not touch left alone, and bad input raising
before anything changes."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.function as fn
from conftest import np_of


def feat(arr):
    return nwb.current().from_numpy(np.ascontiguousarray(arr))


def edges_np(g, etype=None):
    s, d = g.edges(etype=etype)
    return np_of(s).astype(np.int64), np_of(d).astype(np.int64)


def assert_structure(g, src, dst, num_src, num_dst, etype=None):
    """``g``'s relation ``etype`` is exactly these edges, in every format and in the queries."""
    s, d = edges_np(g, etype)
    np.testing.assert_array_equal(s, src)
    np.testing.assert_array_equal(d, dst)
    ct = g.to_canonical_etype(etype)
    assert (g.num_nodes(ct[0]), g.num_nodes(ct[2])) == (num_src, num_dst)
    indptr, indices, eids = (np_of(t) for t in g.adj_tensors("csr", etype))
    np.testing.assert_array_equal(indptr, np.concatenate([[0], np.cumsum(np.bincount(src, minlength=num_src))]))
    np.testing.assert_array_equal(np.sort(indices), np.sort(dst))
    np.testing.assert_array_equal(src[eids], np.repeat(np.arange(num_src), np.diff(indptr)))
    np.testing.assert_array_equal(dst[eids], indices)
    np.testing.assert_array_equal(np_of(g.in_degrees(etype=etype)), np.bincount(dst, minlength=num_dst))
    np.testing.assert_array_equal(np_of(g.out_degrees(etype=etype)), np.bincount(src, minlength=num_src))


def random_graph(rng, n=12, m=30, idtype="int64"):
    src, dst = rng.integers(0, n - 2, m), rng.integers(0, n - 2, m)
    src[1], dst[1] = src[2], dst[2]
    g = nw.graph((src, dst), num_nodes=n, idtype=idtype)
    h = rng.standard_normal((n, 3)).astype(np.float32)
    w = rng.standard_normal(m)
    g.ndata["h"], g.edata["w"] = feat(h), feat(w)
    return g, src, dst, h, w


def hetero(rng):
    data = {("user", "follows", "user"): (rng.integers(0, 5, 8), rng.integers(0, 5, 8)),
            ("user", "plays", "game"): (rng.integers(0, 5, 6), rng.integers(0, 4, 6)),
            ("game", "has", "tag"): (rng.integers(0, 4, 3), rng.integers(0, 2, 3))}
    g = nw.heterograph(data, {"user": 5, "game": 4, "tag": 2})
    for nt in g.ntypes:
        g.nodes[nt].data["h"] = feat(rng.standard_normal((g.num_nodes(nt), 2)).astype(np.float32))
    for ct in g.canonical_etypes:
        g.edges[ct].data["w"] = feat(rng.standard_normal(g.num_edges(ct)))
    return g, {ct: tuple(np.asarray(a, np.int64) for a in uv) for ct, uv in data.items()}


# ----------------------------------------------------------------------------- add_nodes


@pytest.mark.parametrize("idtype", ["int32", "int64"])
def test_add_nodes_extends_structure_and_features(backend_name, idtype):
    rng = np.random.default_rng(0)
    g, src, dst, h, w = random_graph(rng, idtype=idtype)
    g.in_degrees()  # builds the query cache, which the change must invalidate
    x = rng.standard_normal((3, 2))
    g.add_nodes(3, {"x": feat(x)})
    assert str(g.idtype).endswith(idtype)
    assert_structure(g, src, dst, 15, 15)
    np.testing.assert_array_equal(np_of(g.ndata["h"]), np.concatenate([h, np.zeros((3, 3), np.float32)]))
    np.testing.assert_array_equal(np_of(g.ndata["x"]), np.concatenate([np.zeros((12, 2)), x]))
    assert nwb.of(g.ndata["x"]).dtype_name(g.ndata["x"]) == "float64"
    np.testing.assert_array_equal(np_of(g.edata["w"]), w)
    g.add_nodes(1, {"h": feat(np.ones((1, 3), np.float32))})
    np.testing.assert_array_equal(np_of(g.ndata["h"])[-1], [1, 1, 1])
    np.testing.assert_array_equal(np_of(g.ndata["x"])[-1], [0, 0])


def test_add_nodes_of_one_type_in_a_heterograph(backend_name):
    g, data = hetero(np.random.default_rng(1))
    tag_rel = g._rels[("game", "has", "tag")]
    g.add_nodes(2, ntype="user")
    assert g.num_nodes("user") == 7 and g.num_nodes("game") == 4
    for ct, (s, d) in data.items():
        assert_structure(g, s, d, g.num_nodes(ct[0]), g.num_nodes(ct[2]), ct)
    assert g._rels[("game", "has", "tag")] is tag_rel  # a relation without users is untouched
    assert np_of(g.nodes["user"].data["h"]).shape == (7, 2)
    with pytest.raises(ValueError, match="ntype must be given"):
        g.add_nodes(1)
    with pytest.raises(ValueError, match="unknown node type 'item'"):
        g.add_nodes(1, ntype="item")


def test_add_nodes_bad_input_changes_nothing(backend_name):
    g, src, dst, h, w = random_graph(np.random.default_rng(2))
    with pytest.raises(ValueError, match=r"data\['h'\]: expected 2 rows \(one per new node\), got 3"):
        g.add_nodes(2, {"h": feat(np.zeros((3, 3), np.float32))})
    with pytest.raises(ValueError, match=r"data\['h'\] has row shape \(2,\) and dtype float32"):
        g.add_nodes(2, {"h": feat(np.zeros((2, 2), np.float32))})
    with pytest.raises(ValueError, match=r"data\['h'\] has row shape \(3,\) and dtype float64"):
        g.add_nodes(2, {"h": feat(np.zeros((2, 3)))})
    with pytest.raises(ValueError, match="num must be non-negative"):
        g.add_nodes(-1)
    with pytest.raises(TypeError, match="num must be an int"):
        g.add_nodes(2.0)
    with pytest.raises(TypeError, match="data must be a dict"):
        g.add_nodes(2, [feat(np.zeros(2))])
    g.add_nodes(0)
    assert_structure(g, src, dst, 12, 12)
    np.testing.assert_array_equal(np_of(g.ndata["h"]), h)
    assert set(g.ndata) == {"h"}


def test_add_nodes_mixing_backends_raises():
    nw.set_backend("native")
    g, *_ = random_graph(np.random.default_rng(3))
    import torch

    with pytest.raises(TypeError, match=r"data\['h'\] is a pytorch tensor, but the graph's feature 'h' is a "
                                        "native tensor"):
        g.add_nodes(1, {"h": torch.zeros(1, 3)})


# ----------------------------------------------------------------------------- add_edges


@pytest.mark.parametrize("idtype", ["int32", "int64"])
def test_add_edges_appends_with_features(backend_name, idtype):
    rng = np.random.default_rng(4)
    g, src, dst, h, w = random_graph(rng, idtype=idtype)
    g.out_degrees()
    u, v = np.array([3, 0, 9]), np.array([3, 11, 2])
    w_new = rng.standard_normal(3)
    g.add_edges(feat(u), v.tolist(), {"w": feat(w_new), "e": feat(np.arange(3))})
    src2, dst2 = np.concatenate([src, u]), np.concatenate([dst, v])
    assert_structure(g, src2, dst2, 12, 12)
    np.testing.assert_array_equal(np_of(g.edata["w"]), np.concatenate([w, w_new]))
    np.testing.assert_array_equal(np_of(g.edata["e"]), np.concatenate([np.zeros(30), np.arange(3)]))
    eid = g.edge_ids(0, 11)  # new edges get the next ids; one pair of ints gives an int
    assert eid == 31 and isinstance(eid, int)
    g.add_edges(5, [0, 1])  # one source for both: broadcast; features zero
    assert_structure(g, np.concatenate([src2, [5, 5]]), np.concatenate([dst2, [0, 1]]), 12, 12)
    np.testing.assert_array_equal(np_of(g.edata["w"])[-2:], [0, 0])
    # Message passing sees the new structure.
    g.update_all(fn.copy_u("h", "m"), fn.sum("m", "agg"))
    s, d = edges_np(g)
    want = np.zeros((12, 3), np.float32)
    np.add.at(want, d, h[s])
    np.testing.assert_allclose(np_of(g.ndata["agg"]), want, rtol=1e-5, atol=1e-6)


def test_add_edges_adds_missing_nodes(backend_name):
    g, src, dst, h, w = random_graph(np.random.default_rng(5))
    g.add_edges([13], [2])
    assert g.num_nodes() == 14
    np.testing.assert_array_equal(np_of(g.ndata["h"])[12:], np.zeros((2, 3), np.float32))
    hg, data = hetero(np.random.default_rng(6))
    hg.add_edges([1], [6], etype="plays")  # only the destination type grows
    assert (hg.num_nodes("user"), hg.num_nodes("game")) == (5, 7)
    s, d = data[("user", "plays", "game")]
    assert_structure(hg, np.append(s, 1), np.append(d, 6), 5, 7, "plays")
    s, d = data[("game", "has", "tag")]
    assert_structure(hg, s, d, 7, 2, "has")
    np.testing.assert_array_equal(np_of(hg.nodes["game"].data["h"])[4:], np.zeros((3, 2), np.float32))


def test_add_edges_bad_input_changes_nothing(backend_name):
    g, src, dst, h, w = random_graph(np.random.default_rng(7))
    with pytest.raises(ValueError, match="u and v must have the same length"):
        g.add_edges([0, 1], [1, 2, 3])
    with pytest.raises(IndexError, match=r"v\[1\] = -2 is a negative node id"):
        g.add_edges([0, 1], [1, -2])
    with pytest.raises(ValueError, match=r"data\['w'\]: expected 2 rows \(one per new edge\), got 1"):
        g.add_edges([0, 1], [20, 2], {"w": feat(np.zeros(1))})
    with pytest.raises(TypeError, match="u must hold integer ids"):
        g.add_edges([0.5], [1])
    hg, _ = hetero(np.random.default_rng(8))
    with pytest.raises(ValueError, match="etype must be given"):
        hg.add_edges([0], [0])
    with pytest.raises(ValueError, match="unknown edge type 'likes'"):
        hg.add_edges([0], [0], etype="likes")
    assert_structure(g, src, dst, 12, 12)  # nothing was added, not even the nodes of edge 20
    g.add_edges([], [])
    assert_structure(g, src, dst, 12, 12)


def test_adding_drops_batch_counts_as_dgl():
    a, b = nw.graph(([0, 1], [1, 2])), nw.graph(([0], [1]))
    bg = nw.batch([a, b])
    bg.add_edges([0], [4])
    assert bg.batch_size == 1 and np_of(bg.batch_num_nodes()).tolist() == [5]
    bg = nw.batch([a, b])
    bg.add_nodes(1)
    assert bg.batch_size == 1 and np_of(bg.batch_num_edges()).tolist() == [3]


def test_kept_formats_and_blocks():
    g = nw.graph(([0, 1, 2], [1, 2, 0])).formats("csc")
    g.add_edges([2], [2])
    assert g.formats() == {"created": ["csc"], "not created": []}
    assert_structure(g, np.array([0, 1, 2, 2]), np.array([1, 2, 0, 2]), 3, 3)
    g.remove_nodes([0])
    assert g.formats() == {"created": ["csc"], "not created": []}
    assert_structure(g, np.array([0, 1]), np.array([1, 1]), 2, 2)
    block = nw.to_block(nw.graph(([0, 1], [1, 1])), [1])
    for call in (lambda: block.add_nodes(1), lambda: block.add_edges([0], [0]),
                 lambda: block.remove_nodes([0]), lambda: block.remove_edges([0])):
        with pytest.raises(TypeError, match="a block cannot be changed in place"):
            call()


# ----------------------------------------------------------------------------- remove_edges


@pytest.mark.parametrize("store_ids", [False, True])
def test_remove_edges_matches_numpy(backend_name, store_ids):
    rng = np.random.default_rng(9)
    g, src, dst, h, w = random_graph(rng)
    g.in_degrees()
    drop = np.array([3, 0, 29, 3, 17])  # a repeat is fine
    g.remove_edges(feat(drop), store_ids=store_ids)
    keep = np.setdiff1d(np.arange(30), drop)
    assert_structure(g, src[keep], dst[keep], 12, 12)
    np.testing.assert_array_equal(np_of(g.edata["w"]), w[keep])
    np.testing.assert_array_equal(np_of(g.ndata["h"]), h)
    assert (nw.EID in g.edata) == store_ids and nw.NID not in g.ndata
    if store_ids:
        np.testing.assert_array_equal(np_of(g.edata[nw.EID]), keep)


def test_remove_edges_of_one_type_leaves_the_others(backend_name):
    g, data = hetero(np.random.default_rng(10))
    follows = g._rels[("user", "follows", "user")]
    user_h = g.nodes["user"].data["h"]
    w_plays = np_of(g.edges["plays"].data["w"])
    g.remove_edges([0, 5], etype=("user", "plays", "game"))
    s, d = data[("user", "plays", "game")]
    assert_structure(g, s[1:5], d[1:5], 5, 4, "plays")
    np.testing.assert_array_equal(np_of(g.edges["plays"].data["w"]), w_plays[1:5])
    assert g._rels[("user", "follows", "user")] is follows and g.nodes["user"].data["h"] is user_h
    g.remove_edges([1], etype="follows", store_ids=True)  # ids are stored for every edge type
    np.testing.assert_array_equal(np_of(g.edges["has"].data[nw.EID]), [0, 1, 2])
    np.testing.assert_array_equal(np_of(g.edges["follows"].data[nw.EID]), [0] + list(range(2, 8)))


def test_remove_edges_bad_input(backend_name):
    g, src, dst, *_ = random_graph(np.random.default_rng(11))
    with pytest.raises(IndexError, match=r"eids\[1\] = 30 is out of range: the graph has 30 edges"):
        g.remove_edges([1, 30])
    with pytest.raises(IndexError, match=r"eids\[0\] = -1 is out of range"):
        g.remove_edges([-1])
    with pytest.raises(TypeError, match="eids must hold integer ids"):
        g.remove_edges([1.0])
    g.remove_edges([])
    assert_structure(g, src, dst, 12, 12)


# ----------------------------------------------------------------------------- remove_nodes


@pytest.mark.parametrize("store_ids", [False, True])
def test_remove_nodes_matches_numpy(backend_name, store_ids):
    rng = np.random.default_rng(12)
    g, src, dst, h, w = random_graph(rng)
    drop = np.array([4, 0, 11])
    g.remove_nodes(drop.tolist(), store_ids=store_ids)
    kept = np.setdiff1d(np.arange(12), drop)
    new_id = -np.ones(12, np.int64)
    new_id[kept] = np.arange(len(kept))
    alive = ~np.isin(src, drop) & ~np.isin(dst, drop)
    assert_structure(g, new_id[src[alive]], new_id[dst[alive]], 9, 9)
    np.testing.assert_array_equal(np_of(g.ndata["h"]), h[kept])
    np.testing.assert_array_equal(np_of(g.edata["w"]), w[alive])
    if store_ids:
        np.testing.assert_array_equal(np_of(g.ndata[nw.NID]), kept)
        np.testing.assert_array_equal(np_of(g.edata[nw.EID]), np.flatnonzero(alive))
    else:
        assert nw.NID not in g.ndata and nw.EID not in g.edata


def test_remove_nodes_in_a_heterograph_removes_incident_edges_of_every_type(backend_name):
    g, data = hetero(np.random.default_rng(13))
    h_user = np_of(g.nodes["user"].data["h"])
    has_rel = g._rels[("game", "has", "tag")]
    g.remove_nodes([1, 3], ntype="user", store_ids=True)
    new_id = np.array([0, -1, 1, -1, 2])
    for ct in [("user", "follows", "user"), ("user", "plays", "game")]:
        s, d = data[ct]
        alive = (new_id[s] >= 0) & ((new_id[d] >= 0) if ct[2] == "user" else True)
        assert_structure(g, new_id[s[alive]], d[alive] if ct[2] == "game" else new_id[d[alive]],
                         3, g.num_nodes(ct[2]), ct)
        np.testing.assert_array_equal(np_of(g.edges[ct].data[nw.EID]), np.flatnonzero(alive))
    assert g._rels[("game", "has", "tag")] is has_rel
    np.testing.assert_array_equal(np_of(g.nodes["user"].data["h"]), h_user[[0, 2, 4]])
    np.testing.assert_array_equal(np_of(g.nodes["game"].data[nw.NID]), np.arange(4))
    with pytest.raises(ValueError, match="ntype must be given"):
        g.remove_nodes([0])


def test_remove_nodes_bad_input(backend_name):
    g, src, dst, *_ = random_graph(np.random.default_rng(14))
    with pytest.raises(IndexError, match=r"nids\[0\] = 12 is out of range: the graph has 12 nodes"):
        g.remove_nodes([12])
    with pytest.raises(TypeError, match="nids must hold integer ids"):
        g.remove_nodes("0")
    g.remove_nodes([])
    assert_structure(g, src, dst, 12, 12)


# ----------------------------------------------------------------------------- batched graphs


def test_removing_from_a_batch_keeps_per_graph_counts(backend_name):
    rng = np.random.default_rng(15)
    parts = [random_graph(rng, n, m)[0] for n, m in [(5, 6), (6, 9), (4, 3)]]
    bg = nw.batch(parts)
    # Nodes 1 (graph 0), 6 and 8 (graph 1): counts drop per graph, incident edges go with them.
    bg.remove_nodes([6, 1, 8])
    np.testing.assert_array_equal(np_of(bg.batch_num_nodes()), [4, 4, 4])
    want_edges = []
    for p, drop in zip(parts, [[1], [1, 3], []]):
        s, d = edges_np(p)
        want_edges.append(int((~np.isin(s, drop) & ~np.isin(d, drop)).sum()))
    np.testing.assert_array_equal(np_of(bg.batch_num_edges()), want_edges)
    bg.remove_edges([0, bg.num_edges() - 1])  # first edge of graph 0, last of graph 2
    np.testing.assert_array_equal(np_of(bg.batch_num_edges()),
                                  [want_edges[0] - 1, want_edges[1], want_edges[2] - 1])
    # The counts still split the batch into graphs whose edges stay within their own nodes.
    sizes = [x.num_nodes() for x in nw.unbatch(bg)]
    assert sizes == [4, 4, 4]
