"""Relation slicing (``g[etype]``, ``g[src_type, etype, dst_type]`` with ``:`` wildcards) and message
passing on graphs with one relation without ``etype=``, on both backends: a one-relation slice is a
view sharing the parent's feature frames both ways, results of ``update_all`` / ``apply_edges`` /
``edge_softmax`` match NumPy references and land in the parent, several matching relations flatten
into one (types merged, ``nw.NTYPE`` / ``nw.ETYPE`` / ``nw.NID`` / ``nw.EID`` stored) as DGL does, and
bad keys raise naming what the graph has."""

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


DATA = {("user", "follows", "user"): ([0, 1, 2, 2], [1, 2, 0, 3]),
        ("user", "likes", "user"): ([3], [0]),
        ("user", "plays", "game"): ([0, 1, 1, 3, 2], [0, 0, 1, 2, 2]),
        ("developer", "develops", "game"): ([0, 1], [1, 2]),
        ("game", "played_by", "user"): ([2], [1])}


def make_graph(rng):
    g = nw.heterograph({k: (np.array(s), np.array(d)) for k, (s, d) in DATA.items()},
                       {"user": 4, "game": 3, "developer": 2})
    for nt in g.ntypes:
        g.nodes[nt].data["h"] = feat(rng.standard_normal((g.num_nodes(nt), 2)).astype(np.float32))
    for ct in g.canonical_etypes:
        g.edges[ct].data["w"] = feat(rng.standard_normal(g.num_edges(ct)).astype(np.float32))
    return g


def softmax_by(groups, logits, n):
    out = np.zeros_like(logits, dtype=np.float64)
    for v in range(n):
        m = groups == v
        if m.any():
            e = np.exp(logits[m] - logits[m].max(0))
            out[m] = e / e.sum(0)
    return out


# ----------------------------------------------------------------------------- one relation


def test_relation_view_shares_frames_both_ways(backend_name):
    g = make_graph(np.random.default_rng(0))
    v = g["plays"]
    assert v.canonical_etypes == [("user", "plays", "game")] and v.ntypes == ["user", "game"]
    assert (v.srctypes, v.dsttypes) == (["user"], ["game"])
    assert (v.num_src_nodes(), v.num_dst_nodes(), v.num_edges()) == (4, 3, 5)
    for a, b in zip(edges_np(v), (np.array(DATA[("user", "plays", "game")][0]),
                                  np.array(DATA[("user", "plays", "game")][1]))):
        np.testing.assert_array_equal(a, b)
    assert v.srcdata["h"] is g.nodes["user"].data["h"] and v.edata["w"] is g.edges["plays"].data["w"]
    v.srcdata["x"] = feat(np.arange(4.0))  # the view writes into the parent ...
    np.testing.assert_array_equal(np_of(g.nodes["user"].data["x"]), np.arange(4.0))
    g.nodes["game"].data["y"] = feat(np.ones(3))  # ... and sees what is written there
    assert "y" in v.dstdata
    del v.edata["w"]
    assert "w" not in g.edges["plays"].data
    with v.local_scope():  # a local scope of the view stays local
        v.srcdata["tmp"] = feat(np.zeros(4))
    assert "tmp" not in g.nodes["user"].data and "tmp" not in v.srcdata
    follows = g["follows"]
    assert follows.ntypes == ["user"] and follows.is_homogeneous
    assert follows.ndata["h"] is g.nodes["user"].data["h"]


def test_every_key_form_names_the_same_relation(backend_name):
    g = make_graph(np.random.default_rng(1))
    ct = ("user", "plays", "game")
    for key in ("plays", ct, ("user", slice(None), "game"), (slice(None), "plays", slice(None)),
                ("user", "plays", slice(None))):
        v = g[key]
        assert v.canonical_etypes == [ct], key
        assert v._rels[ct] is g._rels[ct]


def test_message_passing_on_a_view_lands_in_the_parent(backend_name):
    g = make_graph(np.random.default_rng(2))
    s, d = (np.array(a) for a in DATA[("user", "plays", "game")])
    h_user, w = np_of(g.nodes["user"].data["h"]), np_of(g.edges["plays"].data["w"])
    g["plays"].update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "agg"))
    want = np.zeros((3, 2), np.float32)
    np.add.at(want, d, h_user[s] * w[:, None])
    np.testing.assert_allclose(np_of(g.nodes["game"].data["agg"]), want, rtol=1e-5, atol=1e-6)
    g["plays"].apply_edges(fn.u_dot_v("h", "agg", "score"))
    np.testing.assert_allclose(np_of(g.edges["plays"].data["score"])[:, 0],
                               (h_user[s] * want[d]).sum(1), rtol=1e-5, atol=1e-6)
    logits = np_of(g.edges["plays"].data["w"])[:, None]
    att = nw.ops.edge_softmax(g["plays"], feat(logits))
    np.testing.assert_allclose(np_of(att), softmax_by(d, logits, 3), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["bipartite", "same_type_with_extra_type"])
def test_one_relation_graph_needs_no_etype(backend_name, case):
    rng = np.random.default_rng(3)
    if case == "bipartite":
        s, d, ns, nd = np.array([0, 1, 2, 2, 0]), np.array([0, 0, 1, 2, 2]), 3, 3
        g = nw.heterograph({("user", "plays", "game"): (s, d)}, {"user": ns, "game": nd})
    else:  # one relation, but also a node type it does not use
        s, d, ns, nd = np.array([0, 1, 2, 3]), np.array([1, 2, 3, 1]), 4, 4
        g = nw.heterograph({("user", "follows", "user"): (s, d)}, {"user": 4, "tag": 2})
    hs = rng.standard_normal((ns, 3)).astype(np.float32)
    hd = rng.standard_normal((nd, 3)).astype(np.float32)
    if case == "bipartite":
        g.srcdata["h"], g.dstdata["h"] = feat(hs), feat(hd)
        dst_data = g.dstdata
    else:  # several node types: srcdata/dstdata are per-type dicts here (as DGL), so use nodes[]
        g.nodes["user"].data["h"] = feat(hs)
        hd = hs
        dst_data = g.nodes["user"].data
    g.update_all(fn.copy_u("h", "m"), fn.mean("m", "mean"))
    want = np.zeros((nd, 3))
    np.add.at(want, d, hs[s])
    deg = np.bincount(d, minlength=nd)
    want[deg > 0] /= deg[deg > 0, None]
    np.testing.assert_allclose(np_of(dst_data["mean"]), want, rtol=1e-5, atol=1e-6)
    g.update_all(lambda e: {"m": e.src["h"] * 2}, lambda n: {"udf": n.mailbox["m"].sum(1)})
    np.testing.assert_allclose(np_of(dst_data["udf"]), 2 * want * np.maximum(deg, 1)[:, None],
                               rtol=1e-5, atol=1e-5)
    g.apply_edges(fn.u_add_v("h", "h", "e"))
    np.testing.assert_allclose(np_of(g.edata["e"]), hs[s] + hd[d], rtol=1e-6)
    logits = rng.standard_normal((len(s), 2)).astype(np.float32)
    np.testing.assert_allclose(np_of(nw.ops.edge_softmax(g, feat(logits))), softmax_by(d, logits, nd),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np_of(nw.ops.edge_softmax(g, feat(logits), norm_by="src")),
                               softmax_by(s, logits, ns), rtol=1e-5, atol=1e-6)


def test_view_of_a_batch_keeps_the_counts():
    a, b = make_graph(np.random.default_rng(4)), make_graph(np.random.default_rng(5))
    bg = nw.batch([a, b])
    v = bg["plays"]
    np.testing.assert_array_equal(np_of(v.batch_num_nodes("user")), [4, 4])
    np.testing.assert_array_equal(np_of(v.batch_num_edges()), [5, 5])
    assert v.batch_size == 2


def test_block_slicing_still_gives_a_block():
    frontier = nw.heterograph({("user", "plays", "game"): ([0, 1], [1, 1]),
                               ("user", "follows", "user"): ([1], [0])}, {"user": 2, "game": 2})
    block = nw.to_block(frontier, {"game": [1], "user": [0]})
    sub = block["plays"]
    assert sub.is_block and sub.canonical_etypes == [("user", "plays", "game")]


# ----------------------------------------------------------------------------- several relations


def test_several_relations_flatten_as_dgl(backend_name):
    g = make_graph(np.random.default_rng(6))
    g.edges["develops"].data["only_here"] = feat(np.ones(2))
    f = g[:, :, "game"]
    # Source types developer and user merge (sorted names), destination is game.
    assert f.canonical_etypes == [("developer+user", "develops+plays", "game")]
    assert (f.num_nodes("developer+user"), f.num_nodes("game")) == (6, 3)
    off = {"developer": 0, "user": 2}
    want_s = np.concatenate([np.array(DATA[ct][0]) + off[ct[0]] for ct in g.canonical_etypes if ct[2] == "game"])
    want_d = np.concatenate([np.array(DATA[ct][1]) for ct in g.canonical_etypes if ct[2] == "game"])
    s, d = edges_np(f)
    np.testing.assert_array_equal(s, want_s)
    np.testing.assert_array_equal(d, want_d)
    ntid = {nt: i for i, nt in enumerate(g.ntypes)}
    etid = {ct: i for i, ct in enumerate(g.canonical_etypes)}
    src = f.srcdata
    np.testing.assert_array_equal(np_of(src[nw.NTYPE]), [ntid["developer"]] * 2 + [ntid["user"]] * 4)
    np.testing.assert_array_equal(np_of(src[nw.NID]), [0, 1, 0, 1, 2, 3])
    np.testing.assert_array_equal(np_of(src["h"]), np.concatenate(
        [np_of(g.nodes["developer"].data["h"]), np_of(g.nodes["user"].data["h"])]))
    np.testing.assert_array_equal(np_of(f.dstdata[nw.NTYPE]), [ntid["game"]] * 3)
    cts = [ct for ct in g.canonical_etypes if ct[2] == "game"]
    np.testing.assert_array_equal(np_of(f.edata[nw.ETYPE]),
                                  np.repeat([etid[ct] for ct in cts], [g.num_edges(ct) for ct in cts]))
    np.testing.assert_array_equal(np_of(f.edata[nw.EID]), [0, 1, 0, 1, 2, 3, 4])
    np.testing.assert_array_equal(np_of(f.edata["w"]), np.concatenate([np_of(g.edges[ct].data["w"]) for ct in cts]))
    assert "only_here" not in f.edata  # not every merged edge type has it
    assert np_of(f.edata[nw.EID]).dtype == np.int64 and np_of(src[nw.NTYPE]).dtype == np.int64


def test_flatten_with_equal_source_and_destination_types(backend_name):
    g = make_graph(np.random.default_rng(7))
    f = g["user", :, "user"]
    assert f.ntypes == ["user"] and f.canonical_etypes == [("user", "follows+likes", "user")]
    s, d = edges_np(f)
    np.testing.assert_array_equal(s, [0, 1, 2, 2, 3])
    np.testing.assert_array_equal(d, [1, 2, 0, 3, 0])
    np.testing.assert_array_equal(np_of(f.ndata["h"]), np_of(g.nodes["user"].data["h"]))
    f.ndata["h"] = feat(np.zeros((4, 2), np.float32))  # a copy, unlike a one-relation view
    assert np.abs(np_of(g.nodes["user"].data["h"])).sum() > 0


def test_flatten_with_different_feature_schemes_raises():
    g = make_graph(np.random.default_rng(8))
    g.nodes["developer"].data["h"] = feat(np.zeros((2, 5), np.float32))
    with pytest.raises(ValueError, match="cannot merge node feature 'h'"):
        g[:, :, "game"]


def test_bad_keys_raise():
    g = make_graph(np.random.default_rng(9))
    with pytest.raises(ValueError, match=r"unknown edge type 'nope' \(the graph has"):
        g["nope"]
    with pytest.raises(ValueError, match="no edge type matches"):
        g["user", "follows", "game"]
    with pytest.raises(TypeError, match="indexed by an edge type name"):
        g[0]
    with pytest.raises(TypeError, match="must be a string or ':'"):
        g["user", 0:1, "game"]
    with pytest.raises(TypeError, match="indexed by an edge type name"):
        g["user", "plays"]
