"""Transform objects that rewrite edges (nodeweave.transforms: AddSelfLoop, RemoveSelfLoop, AddReverse,
ToSimple, LineGraph, KHopGraph, AddMetaPaths, ToLevi) and Compose, on homogeneous graphs and
heterographs, on both backends, against NumPy/SciPy references written from the definitions."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.transforms as T_
from nodeweave.transforms import (AddMetaPaths, AddReverse, AddSelfLoop, BaseTransform, Compose, KHopGraph,
                                  LineGraph, RemoveSelfLoop, ToLevi, ToSimple)

from transforms_support import E, N, bk, hetero, homo, snapshot  # noqa: F401


def test_every_issue_transform_is_exported():
    names = ["Compose", "AddSelfLoop", "RemoveSelfLoop", "AddReverse", "ToSimple", "LineGraph", "KHopGraph",
             "AddMetaPaths", "GCNNorm", "PPR", "GDC", "HeatKernel", "DropNode", "DropEdge", "AddEdge", "FeatMask",
             "RowFeatNormalizer", "SIGNDiffusion", "LaplacianPE", "RandomWalkPE", "NodeShuffle", "ToLevi", "SVDPE"]
    for name in names:
        cls = getattr(T_, name)
        assert issubclass(cls, BaseTransform) and getattr(nw, name) is cls, name
    # the functional transforms are there too, under DGL's names
    assert T_.add_self_loop is nw.add_self_loop and T_.lap_pe is nw.lap_pe


# ----------------------------------------------------------------------------- self-loops


def ref_add_self_loop(s, d, w, n, allow_duplicate, fill):
    keep = np.ones(len(s), bool) if allow_duplicate else s != d
    loops = np.arange(n)
    return (np.concatenate([s[keep], loops]), np.concatenate([d[keep], loops]),
            np.concatenate([w[keep], np.full(n, fill)]))


@pytest.mark.parametrize("allow_duplicate", [False, True])
def test_add_self_loop_homogeneous(bk, rng, allow_duplicate):
    g = homo(rng)
    before = snapshot(g)
    out = AddSelfLoop(allow_duplicate=allow_duplicate, fill_data=2.5)(g)
    s, d = E(g)
    rs, rd, rw = ref_add_self_loop(s, d, N(g.edata["w"]), g.num_nodes(), allow_duplicate, 2.5)
    np.testing.assert_array_equal(E(out)[0], rs)
    np.testing.assert_array_equal(E(out)[1], rd)
    np.testing.assert_allclose(N(out.edata["w"]), rw)
    np.testing.assert_array_equal(N(out.ndata["feat"]), N(g.ndata["feat"]))
    assert snapshot(g) == before  # the input is unchanged


def test_add_self_loop_fill_modes(bk, rng):
    g = homo(rng)
    s, d = E(g)
    w = N(g.edata["w"]).astype(np.float64)
    out = AddSelfLoop(fill_data="mean")(g)
    keep = s != d
    loop_w = N(out.edata["w"])[int(keep.sum()):]
    for v in range(g.num_nodes()):
        into = w[keep & (d == v)]
        want = into.mean() if len(into) else 0.0
        assert loop_w[v] == pytest.approx(want, rel=1e-6)
    zero = AddSelfLoop(edge_feat_names=[], fill_data=7.0)(g)
    np.testing.assert_array_equal(N(zero.edata["w"])[int(keep.sum()):], 0.0)


def test_add_self_loop_heterograph(bk, rng):
    g = hetero(rng)
    out = AddSelfLoop()(g)
    assert out.canonical_etypes == g.canonical_etypes
    s, d = E(g, "follows")
    rs, rd, _ = ref_add_self_loop(s, d, np.zeros(len(s)), 6, False, 0)
    np.testing.assert_array_equal(np.stack(E(out, "follows")), np.stack([rs, rd]))
    for et in ("plays", "played_by"):  # relations between two node types are left alone
        np.testing.assert_array_equal(np.stack(E(out, et)), np.stack(E(g, et)))
        np.testing.assert_array_equal(N(out.edges[et].data["w"]), N(g.edges[et].data["w"]))
    new = AddSelfLoop(new_etypes=True)(g)
    assert new.canonical_etypes == sorted(g.canonical_etypes + [("game", "self", "game"), ("user", "self", "user")])
    for nt in ("game", "user"):
        np.testing.assert_array_equal(np.stack(E(new, (nt, "self", nt))), np.stack([np.arange(g.num_nodes(nt))] * 2))
    np.testing.assert_array_equal(N(new.edges["follows"].data["w"]), N(out.edges["follows"].data["w"]))


def test_remove_self_loop(bk, rng):
    g = homo(rng)
    s, d = E(g)
    out = RemoveSelfLoop()(g)
    np.testing.assert_array_equal(np.stack(E(out)), np.stack([s[s != d], d[s != d]]))
    np.testing.assert_array_equal(N(out.edata["w"]), N(g.edata["w"])[s != d])
    h = hetero(rng)
    ho = RemoveSelfLoop()(h)
    s, d = E(h, "follows")
    np.testing.assert_array_equal(np.stack(E(ho, "follows")), np.stack([s[s != d], d[s != d]]))
    assert ho.num_edges("plays") == h.num_edges("plays")


# ----------------------------------------------------------------------------- reverse edges


@pytest.mark.parametrize("copy_edata", [False, True])
def test_add_reverse_homogeneous(bk, rng, copy_edata):
    g = homo(rng)
    s, d = E(g)
    w = N(g.edata["w"])
    out = AddReverse(copy_edata=copy_edata)(g)
    np.testing.assert_array_equal(np.stack(E(out)), np.stack([np.concatenate([s, d]), np.concatenate([d, s])]))
    np.testing.assert_array_equal(N(out.edata["w"]), np.concatenate([w, w if copy_edata else np.zeros_like(w)]))
    sym = AddReverse(sym_new_etype=True, copy_edata=copy_edata)(g)
    assert sym.canonical_etypes == [("_N", "_E", "_N"), ("_N", "rev__E", "_N")]
    np.testing.assert_array_equal(np.stack(E(sym, "rev__E")), np.stack([d, s]))
    assert ("w" in sym.edges["rev__E"].data) == copy_edata


def test_add_reverse_heterograph(bk, rng):
    g = hetero(rng)
    out = AddReverse(copy_edata=True)(g)
    assert out.canonical_etypes == sorted(g.canonical_etypes + [("game", "rev_plays", "user"),
                                                                ("user", "rev_played_by", "game")])
    for (st, et, dt) in (("user", "plays", "game"), ("game", "played_by", "user")):
        s, d = E(g, et)
        np.testing.assert_array_equal(np.stack(E(out, (dt, f"rev_{et}", st))), np.stack([d, s]))
        np.testing.assert_array_equal(N(out.edges[f"rev_{et}"].data["w"]), N(g.edges[et].data["w"]))
    s, d = E(g, "follows")
    np.testing.assert_array_equal(np.stack(E(out, "follows")), np.stack([np.concatenate([s, d]), np.concatenate([d, s])]))
    clash = nw.heterograph({("a", "r", "b"): ([0], [0]), ("b", "rev_r", "a"): ([0], [0])})
    with pytest.raises(ValueError, match="rev_r"):
        AddReverse()(clash)


# ----------------------------------------------------------------------------- merging parallel edges


@pytest.mark.parametrize("aggregator", ["arbitrary", "sum", "mean"])
def test_to_simple(bk, rng, aggregator):
    g = homo(rng)
    s, d = E(g)
    w = N(g.edata["w"]).astype(np.float64)
    groups = defaultdict(list)
    for i, key in enumerate(zip(s.tolist(), d.tolist())):
        groups[key].append(i)
    keys = sorted(groups)
    out = ToSimple(aggregator=aggregator)(g)
    np.testing.assert_array_equal(np.stack(E(out)), np.array(keys).T)
    np.testing.assert_array_equal(N(out.edata["count"]), [len(groups[k]) for k in keys])
    agg = {"arbitrary": lambda ix: w[min(ix)], "sum": lambda ix: w[ix].sum(), "mean": lambda ix: w[ix].mean()}
    np.testing.assert_allclose(N(out.edata["w"]), [agg[aggregator](groups[k]) for k in keys], rtol=1e-6)
    h = ToSimple(return_counts=None)(hetero(rng))
    assert h.num_edges("follows") == 6 and "count" not in h.edges["follows"].data


# ----------------------------------------------------------------------------- line graph, k-hop graph


@pytest.mark.parametrize("backtracking", [True, False])
def test_line_graph(bk, rng, backtracking):
    g = homo(rng, n=7, m=15)
    s, d = E(g)
    want = [(a, b) for a in range(len(s)) for b in range(len(s))
            if a != b and d[a] == s[b] and (backtracking or d[b] != s[a])]
    lg = LineGraph(backtracking=backtracking)(g)
    assert lg.num_nodes() == g.num_edges()
    assert list(zip(*(x.tolist() for x in E(lg)))) == want  # ordered by (e1, e2)
    np.testing.assert_array_equal(N(lg.ndata["w"]), N(g.edata["w"]))  # edge features become node features
    with pytest.raises(ValueError, match="one node type and one edge type"):
        LineGraph()(hetero(rng))


@pytest.mark.parametrize("k", [0, 1, 3])
def test_khop_graph(bk, rng, k):
    g = homo(rng, n=7, m=12)
    a = np.zeros((7, 7), np.int64)
    np.add.at(a, E(g), 1)
    ak = np.linalg.matrix_power(a, k)
    want = [(u, v) for u in range(7) for v in range(7) for _ in range(ak[u, v])]
    out = KHopGraph(k)(g)
    assert list(zip(*(x.tolist() for x in E(out)))) == want
    np.testing.assert_array_equal(N(out.ndata["feat"]), N(g.ndata["feat"]))


def test_khop_graph_heterograph_rewrites_same_type_relations(bk, rng):
    g = hetero(rng)
    out = KHopGraph(2)(g)
    a = np.zeros((6, 6), np.int64)
    np.add.at(a, E(g, "follows"), 1)
    a2 = a @ a
    want = [(u, v) for u in range(6) for v in range(6) for _ in range(a2[u, v])]
    assert list(zip(*(x.tolist() for x in E(out, "follows")))) == want
    for et in ("plays", "played_by"):
        np.testing.assert_array_equal(np.stack(E(out, et)), np.stack(E(g, et)))
        np.testing.assert_array_equal(N(out.edges[et].data["w"]), N(g.edges[et].data["w"]))
    for nt in g.ntypes:
        np.testing.assert_array_equal(N(out.nodes[nt].data["feat"]), N(g.nodes[nt].data["feat"]))


# ----------------------------------------------------------------------------- metapaths, Levi graph


def test_add_metapaths(bk, rng):
    g = hetero(rng)
    plays = np.zeros((6, 3), bool)
    plays[E(g, "plays")] = True
    played_by = np.zeros((3, 6), bool)
    played_by[E(g, "played_by")] = True
    follows = np.zeros((6, 6), bool)
    follows[E(g, "follows")] = True
    mp = {"co_play": ["plays", "played_by"], "fof_game": [("user", "follows", "user"), "follows", "plays"]}
    out = AddMetaPaths(mp)(g)
    for name, reach in (("co_play", (plays.astype(int) @ played_by) > 0),
                        ("fof_game", (((follows.astype(int) @ follows) > 0).astype(int) @ plays) > 0)):
        ct = [c for c in out.canonical_etypes if c[1] == name][0]
        assert ct == ("user", name, "game" if name == "fof_game" else "user")
        np.testing.assert_array_equal(np.stack(E(out, ct)), np.stack(np.nonzero(reach)))
    for ct in g.canonical_etypes:  # original edges and features kept
        np.testing.assert_array_equal(np.stack(E(out, ct)), np.stack(E(g, ct)))
        np.testing.assert_array_equal(N(out.edges[ct].data["w"]), N(g.edges[ct].data["w"]))
    only = AddMetaPaths({"co_play": ["plays", "played_by"]}, keep_orig_edges=False)(g)
    assert only.canonical_etypes == [("user", "co_play", "user")] and only.num_nodes("game") == 3
    np.testing.assert_array_equal(N(only.nodes["game"].data["feat"]), N(g.nodes["game"].data["feat"]))
    with pytest.raises(ValueError, match="does not chain"):
        AddMetaPaths({"bad": ["plays", "follows"]})(g)
    with pytest.raises(ValueError, match="already has"):
        AddMetaPaths({"follows": ["follows", "follows"]})(g)
    with pytest.raises(ValueError, match="non-empty list"):
        AddMetaPaths({"x": "plays"})
    with pytest.raises(TypeError, match="non-empty dict"):
        AddMetaPaths([["plays"]])


def test_metapath_reachable_graph_function(bk, rng):
    g = hetero(rng)
    mg = nw.metapath_reachable_graph(g, ["follows", "follows"])
    a = np.zeros((6, 6), int)
    a[E(g, "follows")] = 1
    np.testing.assert_array_equal(np.stack(E(mg)), np.stack(np.nonzero(a @ a)))
    assert mg.canonical_etypes == [("user", "_E", "user")]
    with pytest.raises(ValueError, match="non-empty list"):
        nw.metapath_reachable_graph(g, [])


def test_to_levi(bk, rng):
    g = homo(rng, n=6, m=8)
    s, d = E(g)
    levi = ToLevi()(g)
    assert levi.canonical_etypes == [("edge", "e2n", "node"), ("node", "n2e", "edge")]
    assert (levi.num_nodes("node"), levi.num_nodes("edge")) == (6, 8)
    np.testing.assert_array_equal(np.stack(E(levi, "n2e")), np.stack([s, np.arange(8)]))
    np.testing.assert_array_equal(np.stack(E(levi, "e2n")), np.stack([np.arange(8), d]))
    np.testing.assert_array_equal(N(levi.nodes["edge"].data["w"]), N(g.edata["w"]))
    np.testing.assert_array_equal(N(levi.nodes["node"].data["feat"]), N(g.ndata["feat"]))
    with pytest.raises(ValueError, match="one node type and one edge type"):
        ToLevi()(hetero(rng))


# ----------------------------------------------------------------------------- Compose, interface


def test_compose_applies_in_order_and_reprs(bk, rng):
    g = homo(rng)
    t = Compose([RemoveSelfLoop(), AddReverse(copy_edata=True), ToSimple(aggregator="sum"), AddSelfLoop()])
    want = AddSelfLoop()(ToSimple(aggregator="sum")(AddReverse(copy_edata=True)(RemoveSelfLoop()(g))))
    got = t(g)
    assert snapshot(got) == snapshot(want)
    assert repr(t).startswith("Compose([\n  RemoveSelfLoop(),\n  AddReverse(copy_edata=True, sym_new_etype=False)")
    assert Compose([lambda x: nw.reverse(x)])(g).num_edges() == g.num_edges()  # any callable
    with pytest.raises(TypeError, match=r"transforms\[1\] is not callable"):
        Compose([AddSelfLoop(), 3])
    with pytest.raises(TypeError, match="list of callables"):
        Compose(AddSelfLoop())
    with pytest.raises(TypeError):
        BaseTransform()  # abstract


def test_bad_arguments_name_the_argument():
    with pytest.raises(TypeError, match="AddSelfLoop: allow_duplicate must be True or False"):
        AddSelfLoop(allow_duplicate="yes")
    with pytest.raises(ValueError, match="AddSelfLoop: fill_data must be a number or one of"):
        AddSelfLoop(fill_data="median")
    with pytest.raises(TypeError, match="edge_feat_names must be a list"):
        AddSelfLoop(edge_feat_names="w")
    with pytest.raises(ValueError, match="ToSimple: aggregator"):
        ToSimple(aggregator="max")
    with pytest.raises(TypeError, match="return_counts"):
        ToSimple(return_counts=3)
    with pytest.raises(ValueError, match="KHopGraph: k must be a non-negative int"):
        KHopGraph(-1)
    with pytest.raises(TypeError, match="LineGraph: backtracking"):
        LineGraph(backtracking=None)
    with pytest.raises(TypeError, match="KHopGraph takes a nodeweave graph"):
        KHopGraph(2)("not a graph")


def test_batched_graph_keeps_its_batches(bk, rng):
    parts = [homo(rng, n=5, m=7), homo(rng, n=4, m=5)]
    bg = nw.batch(parts)
    for t in (RemoveSelfLoop(), AddSelfLoop(), ToSimple(), KHopGraph(2)):
        got, want = t(bg), nw.batch([t(p) for p in parts])
        assert snapshot(got) == snapshot(want)
        np.testing.assert_array_equal(N(got.batch_num_edges()), N(want.batch_num_edges()))
