"""Graph transforms against independent references (NumPy, SciPy, networkx, brute force)."""

from collections import Counter

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

import nodeweave as nw
import nodeweave.core as nc
from transform_helpers import assert_graphs_equal, edges_np, rand_edges, rand_graph, rand_hetero

IDTYPES = ["int32", "int64"]
# (num_nodes, num_edges): the empty graph, nodes without edges, small and larger random graphs
SIZES = [(0, 0), (5, 0), (6, 12), (40, 150)]


def cases(rng):
    for n, m in SIZES:
        for idt in IDTYPES:
            yield rand_graph(rng, n, m, idt)


def batched(rng, idtype="int64"):
    parts = [rand_graph(rng, n, m, idtype) for n, m in [(6, 10), (0, 0), (4, 0), (9, 20)]]
    return nw.batch(parts), parts


# ----------------------------------------------------------------------------- reverse


def test_reverse(rng):
    for g in cases(rng):
        r = nw.reverse(g, copy_edata=True)
        s, d = edges_np(g)
        rs, rd = edges_np(r)
        np.testing.assert_array_equal(rs, d)
        np.testing.assert_array_equal(rd, s)
        assert r.idtype == g.idtype
        assert r.ndata["h"] is g.ndata["h"] and r.edata["w"] is g.edata["w"]
        assert "w" not in nw.reverse(g).edata and "h" not in nw.reverse(g, copy_ndata=False).ndata


def test_reverse_hetero(rng):
    g = rand_hetero(rng)
    r = nw.reverse(g, copy_edata=True)
    assert r.canonical_etypes == [(d, e, s) for s, e, d in g.canonical_etypes]
    for s, e, d in g.canonical_etypes:
        gs, gd = edges_np(g, (s, e, d))
        rs, rd = edges_np(r, (d, e, s))
        np.testing.assert_array_equal(rs, gd)
        np.testing.assert_array_equal(rd, gs)
        np.testing.assert_array_equal(r.edges[(d, e, s)].data["w"].numpy(), g.edges[(s, e, d)].data["w"].numpy())


# ----------------------------------------------------------------------------- self-loops


def test_add_self_loop(rng):
    for g in cases(rng):
        n, m = g.num_nodes(), g.num_edges()
        a = nw.add_self_loop(g)
        s, d = edges_np(g)
        loops = np.arange(n)
        np.testing.assert_array_equal(edges_np(a)[0], np.concatenate([s, loops]))
        np.testing.assert_array_equal(edges_np(a)[1], np.concatenate([d, loops]))
        w = a.edata["w"].numpy()
        np.testing.assert_array_equal(w[:m], g.edata["w"].numpy())
        np.testing.assert_array_equal(w[m:], np.ones(n))
        assert a.ndata["h"] is g.ndata["h"]
        z = nw.add_self_loop(g, edge_feat_names=[], fill_data=5.0)
        np.testing.assert_array_equal(z.edata["w"].numpy()[m:], np.zeros(n))
        f = nw.add_self_loop(g, edge_feat_names=["w"], fill_data=5)
        np.testing.assert_array_equal(f.edata["w"].numpy()[m:], np.full(n, 5.0))
    with pytest.raises(ValueError, match="fill_data must be a number or one of"):
        nw.add_self_loop(g, fill_data="median")
    with pytest.raises(TypeError, match="fill_data"):
        nw.add_self_loop(g, fill_data=[1.0])


@pytest.mark.parametrize("mode", ["sum", "mean", "max", "min"])
def test_add_self_loop_aggregating_fill(rng, mode):
    ref = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[mode]
    for g in cases(rng):
        n, m = g.num_nodes(), g.num_edges()
        g.edata["x"] = nc.tensor(rng.standard_normal((m, 2, 3)))
        g.edata["k"] = nc.tensor(rng.integers(-50, 50, (m,)), dtype=nc.int64)
        a = nw.add_self_loop(g, fill_data=mode)
        s, d = edges_np(g)
        for name in ("x", "k"):
            old = g.edata[name].numpy()
            want = np.zeros((n,) + old.shape[1:], old.dtype)
            for v in range(n):
                if (d == v).any():
                    want[v] = ref(old[d == v], axis=0)
            got = a.edata[name].numpy()
            np.testing.assert_array_equal(got[:m], old)
            if name == "k" and mode == "mean":
                np.testing.assert_array_equal(got[m:], want.astype(np.int64))
            else:
                np.testing.assert_allclose(got[m:], want, rtol=1e-12)
    # differentiable through the copy_e kernel
    g = nw.graph(([0, 1, 2], [1, 1, 0]))
    w = nc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    g.edata["w"] = w
    nw.add_self_loop(g, fill_data=mode).edata["w"].sum().backward()
    grad = {"sum": [2, 2, 2], "mean": [1.5, 1.5, 2], "max": [1, 2, 2], "min": [2, 1, 2]}[mode]
    assert w.grad.tolist() == grad


def test_add_self_loop_hetero(rng):
    g = rand_hetero(rng)
    a = nw.add_self_loop(g, etype="follows")
    ct = ("user", "follows", "user")
    s, d = edges_np(a, ct)
    n, m = g.num_nodes("user"), g.num_edges(ct)
    np.testing.assert_array_equal(s[m:], np.arange(n))
    np.testing.assert_array_equal(d[m:], np.arange(n))
    for other in g.canonical_etypes:
        if other != ct:
            assert a.num_edges(other) == g.num_edges(other)
    with pytest.raises(ValueError, match="different node types"):
        nw.add_self_loop(g, etype="buys")
    with pytest.raises(ValueError, match="etype"):
        nw.add_self_loop(g)


def test_remove_self_loop(rng):
    for g in cases(rng):
        r = nw.remove_self_loop(g)
        s, d = edges_np(g)
        keep = s != d
        np.testing.assert_array_equal(edges_np(r)[0], s[keep])
        np.testing.assert_array_equal(edges_np(r)[1], d[keep])
        np.testing.assert_array_equal(r.edata["w"].numpy(), g.edata["w"].numpy()[keep])
    with pytest.raises(ValueError, match="different node types"):
        nw.remove_self_loop(rand_hetero(rng), etype="buys")


# ----------------------------------------------------------------------------- simple / bidirected


def test_to_simple(rng):
    for g in cases(rng):
        sg, wb = nw.to_simple(g, writeback_mapping=True, copy_edata=True)
        s, d = edges_np(g)
        cnt = Counter(zip(s.tolist(), d.tolist()))
        pairs = sorted(cnt)
        ss, sd = edges_np(sg)
        assert list(zip(ss.tolist(), sd.tolist())) == pairs
        assert sg.edata["count"].numpy().tolist() == [cnt[p] for p in pairs]
        assert sg.edata["count"].dtype == g.idtype
        wb = wb.numpy()
        np.testing.assert_array_equal(ss[wb], s)
        np.testing.assert_array_equal(sd[wb], d)
        first = {}
        for e, p in enumerate(zip(s.tolist(), d.tolist())):
            first.setdefault(p, e)
        np.testing.assert_array_equal(sg.edata["w"].numpy(), g.edata["w"].numpy()[[first[p] for p in pairs]])
        assert "count" not in nw.to_simple(g, return_counts=None).edata


@pytest.mark.parametrize("how", ["sum", "mean"])
def test_to_simple_aggregates_edge_features(rng, how):
    for g in cases(rng):
        m = g.num_edges()
        g.edata["x"] = nc.tensor(rng.standard_normal((m, 3)))
        g.edata["k"] = nc.tensor(rng.integers(-9, 9, m), dtype=nc.int32)
        sg, wb = nw.to_simple(g, writeback_mapping=True, copy_edata=True, aggregator=how)
        wb = wb.numpy()
        for name in ("x", "k"):
            old = g.edata[name].numpy()
            want = np.zeros((sg.num_edges(),) + old.shape[1:], np.float64)
            np.add.at(want, wb, old)
            if how == "mean":
                cnt = np.bincount(wb, minlength=sg.num_edges()).reshape((-1,) + (1,) * (old.ndim - 1))
                want = want / cnt if name == "x" else np.floor_divide(want, cnt)
            got = sg.edata[name].numpy()
            assert got.dtype == old.dtype
            np.testing.assert_allclose(got, want, rtol=1e-12)
    g = nw.graph(([0, 0, 1], [1, 1, 0]))
    w = nc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    g.edata["w"] = w
    nw.to_simple(g, copy_edata=True, aggregator=how).edata["w"].sum().backward()
    assert w.grad.tolist() == ([1.0] * 3 if how == "sum" else [0.5, 0.5, 1.0])
    with pytest.raises(ValueError, match="aggregator must be"):
        nw.to_simple(g, copy_edata=True, aggregator="max")


def test_to_simple_hetero(rng):
    g = rand_hetero(rng)
    sg, wb = nw.to_simple(g, writeback_mapping=True)
    assert set(wb) == set(g.canonical_etypes)
    for ct in g.canonical_etypes:
        s, d = edges_np(g, ct)
        assert sg.num_edges(ct) == len(set(zip(s.tolist(), d.tolist())))


def test_to_bidirected(rng):
    for g in cases(rng):
        b = nw.to_bidirected(g, copy_ndata=True)
        s, d = edges_np(g)
        ref = nx.DiGraph()
        ref.add_edges_from(zip(s.tolist(), d.tolist()))
        ref.add_edges_from(zip(d.tolist(), s.tolist()))
        bs, bd = edges_np(b)
        assert list(zip(bs.tolist(), bd.tolist())) == sorted(ref.edges())
        assert b.num_nodes() == g.num_nodes() and "h" in b.ndata and len(b.edata) == 0
    with pytest.raises(ValueError, match="different node types"):
        nw.to_bidirected(rand_hetero(rng))


def test_add_reverse_edges(rng):
    for g in cases(rng):
        for excl in (True, False):
            r = nw.add_reverse_edges(g, copy_edata=True, exclude_self=excl)
            s, d = edges_np(g)
            rev = (s != d) if excl else np.ones(len(s), bool)
            np.testing.assert_array_equal(edges_np(r)[0], np.concatenate([s, d[rev]]))
            np.testing.assert_array_equal(edges_np(r)[1], np.concatenate([d, s[rev]]))
            w = g.edata["w"].numpy()
            np.testing.assert_array_equal(r.edata["w"].numpy(), np.concatenate([w, w[rev]]))
    h = rand_hetero(rng)
    with pytest.raises(ValueError, match="ignore_bipartite"):
        nw.add_reverse_edges(h)
    r = nw.add_reverse_edges(h, ignore_bipartite=True)
    assert r.num_edges("buys") == h.num_edges("buys")
    s, d = edges_np(h, "follows")
    assert r.num_edges("follows") == len(s) + int((s != d).sum())


# ----------------------------------------------------------------------------- subgraphs


def check_ids(g, sg, relabeled=True):
    """Every subgraph edge maps back, through '_ID', to the original edge with those endpoints, and
    features were sliced by '_ID'."""
    for ct in sg.canonical_etypes:
        ss, sd = edges_np(sg, ct)
        eid = sg.edges[ct].data["_ID"].numpy()
        assert sg.edges[ct].data["_ID"].dtype == g.idtype
        gs, gd = edges_np(g, ct)
        if relabeled:
            ss = sg.nodes[ct[0]].data["_ID"].numpy()[ss]
            sd = sg.nodes[ct[2]].data["_ID"].numpy()[sd]
        np.testing.assert_array_equal(gs[eid], ss)
        np.testing.assert_array_equal(gd[eid], sd)
        np.testing.assert_array_equal(sg.edges[ct].data["w"].numpy(), g.edges[ct].data["w"].numpy()[eid])
    if relabeled:
        for t in sg.ntypes:
            nid = sg.nodes[t].data["_ID"].numpy()
            np.testing.assert_array_equal(sg.nodes[t].data["h"].numpy(), g.nodes[t].data["h"].numpy()[nid])


def test_node_subgraph(rng):
    for g in cases(rng):
        n = g.num_nodes()
        keep = rng.permutation(n)[: n // 2]
        sg = nw.node_subgraph(g, keep)
        np.testing.assert_array_equal(sg.ndata["_ID"].numpy(), keep)
        check_ids(g, sg)
        s, d = edges_np(g)
        inside = np.isin(s, keep) & np.isin(d, keep)
        np.testing.assert_array_equal(sg.edata["_ID"].numpy(), np.flatnonzero(inside))
        mask = np.zeros(n, bool)
        mask[keep] = True
        sm = nw.node_subgraph(g, nc.tensor(mask))
        np.testing.assert_array_equal(sm.ndata["_ID"].numpy(), np.sort(keep))
        assert sm.num_edges() == sg.num_edges()
        # networkx reference for the induced edge count (multi-edges counted)
        ref = nx.MultiDiGraph()
        ref.add_nodes_from(range(n))
        ref.add_edges_from(zip(s.tolist(), d.tolist()))
        assert ref.subgraph(keep.tolist()).number_of_edges() == sg.num_edges()
        nr = nw.node_subgraph(g, keep, relabel_nodes=False)
        assert nr.num_nodes() == n and "_ID" not in nr.ndata
        check_ids(g, nr, relabeled=False)
        assert "_ID" not in nw.node_subgraph(g, keep, store_ids=False).edata


def test_node_subgraph_errors(rng):
    g = rand_graph(rng, 6, 10)
    with pytest.raises(IndexError, match="nodes"):
        nw.node_subgraph(g, [0, 6])
    with pytest.raises(ValueError, match="bool mask"):
        nw.node_subgraph(g, np.ones(5, bool))
    with pytest.raises(ValueError, match="more than once"):
        nw.node_subgraph(g, [1, 1])
    with pytest.raises(TypeError, match="integer"):
        nw.node_subgraph(g, [0.5])
    h = rand_hetero(rng)
    with pytest.raises(ValueError, match="dict"):
        nw.node_subgraph(h, [0])
    with pytest.raises(ValueError, match="unknown node type"):
        nw.node_subgraph(h, {"nope": [0]})
    with pytest.raises(TypeError, match="graph"):
        nw.node_subgraph("g", [0])


def test_node_subgraph_hetero(rng):
    g = rand_hetero(rng)
    sg = nw.node_subgraph(g, {"user": [4, 0, 2], "item": np.array([True, False, True, True, False])})
    assert sg.num_nodes("user") == 3 and sg.num_nodes("item") == 3 and sg.num_nodes("tag") == 0
    check_ids(g, sg)


def test_edge_subgraph(rng):
    for g in cases(rng):
        m = g.num_edges()
        pick = rng.permutation(m)[: m // 2]
        sg = nw.edge_subgraph(g, pick)
        np.testing.assert_array_equal(sg.edata["_ID"].numpy(), pick)
        check_ids(g, sg)
        s, d = edges_np(g)
        np.testing.assert_array_equal(sg.ndata["_ID"].numpy(), np.unique(np.concatenate([s[pick], d[pick]])))
        nr = nw.edge_subgraph(g, pick, relabel_nodes=False)
        assert nr.num_nodes() == g.num_nodes()
        check_ids(g, nr, relabeled=False)
    with pytest.raises(IndexError, match="edges"):
        nw.edge_subgraph(rand_graph(rng, 5, 4), [4])
    h = rand_hetero(rng)
    sg = nw.edge_subgraph(h, {"buys": [0, 2], ("user", "follows", "user"): [1]})
    assert sg.num_edges("bought_by") == 0 and sg.num_edges("buys") == 2
    check_ids(h, sg)


@pytest.mark.parametrize("fn", ["in", "out"])
def test_in_out_subgraph(rng, fn):
    f = nw.in_subgraph if fn == "in" else nw.out_subgraph
    for g in cases(rng):
        n = g.num_nodes()
        seeds = rng.permutation(n)[: max(n // 3, 0)]
        sg = f(g, seeds)
        assert sg.num_nodes() == n
        check_ids(g, sg, relabeled=False)
        s, d = edges_np(g)
        ends = d if fn == "in" else s
        np.testing.assert_array_equal(sg.edata["_ID"].numpy(), np.flatnonzero(np.isin(ends, seeds)))
        rl = f(g, seeds, relabel_nodes=True)
        check_ids(g, rl)
    h = rand_hetero(rng)
    sg = nw.in_subgraph(h, {"item": [1, 2]})
    assert sg.num_edges("follows") == 0 and sg.num_edges("bought_by") == 0
    _, d = edges_np(h, "buys")
    assert sg.num_edges("buys") == int(np.isin(d, [1, 2]).sum())
    check_ids(h, sg, relabeled=False)


@pytest.mark.parametrize("direction", ["in", "out"])
def test_khop_subgraph(rng, direction):
    f = nw.khop_in_subgraph if direction == "in" else nw.khop_out_subgraph
    for g in cases(rng):
        n = g.num_nodes()
        if n == 0:
            continue
        s, d = edges_np(g)
        ref = nx.DiGraph()
        ref.add_nodes_from(range(n))
        ref.add_edges_from(zip(s.tolist(), d.tolist()) if direction == "out" else zip(d.tolist(), s.tolist()))
        seeds = rng.permutation(n)[:2]
        for k in (0, 1, 2, 5):
            expect = set()
            for v in seeds.tolist():
                expect |= set(nx.single_source_shortest_path_length(ref, v, cutoff=k))
            sg, inv = f(g, seeds, k)
            nid = sg.ndata["_ID"].numpy()
            assert nid.tolist() == sorted(expect)
            np.testing.assert_array_equal(nid[inv.numpy()], seeds)
            check_ids(g, sg)
        sg, inv = f(g, int(seeds[0]), 1)
        assert inv.numpy().tolist() == [int(np.searchsorted(sg.ndata["_ID"].numpy(), seeds[0]))]
    with pytest.raises(ValueError, match="k must be"):
        f(rand_graph(rng, 4, 3), [0], -1)


def test_khop_subgraph_hetero(rng):
    g = rand_hetero(rng)
    sg, inv = nw.khop_in_subgraph(g, {"item": [0]}, 2)
    assert set(inv) == {"item"}
    check_ids(g, sg)
    assert sg.nodes["item"].data["_ID"].numpy()[inv["item"].numpy()].tolist() == [0]


# ----------------------------------------------------------------------------- derived graphs


def test_khop_graph(rng):
    for g in cases(rng):
        n = g.num_nodes()
        s, d = edges_np(g)
        a = np.zeros((n, n), np.int64)
        np.add.at(a, (s, d), 1)
        for k in (0, 1, 2, 3):
            kg = nw.khop_graph(g, k)
            ak = np.linalg.matrix_power(a, k) if n else a
            got = np.zeros((n, n), np.int64)
            ks, kd = edges_np(kg)
            np.add.at(got, (ks, kd), 1)
            np.testing.assert_array_equal(got, ak)
            order = np.lexsort((kd, ks))
            np.testing.assert_array_equal(order, np.arange(len(ks)))
            assert "h" in kg.ndata and kg.idtype == g.idtype
    big = nw.graph((np.zeros(2000, np.int64), np.zeros(2000, np.int64)))
    with pytest.raises(ValueError, match="would have"):
        nw.khop_graph(big, 4)


def brute_line_graph(s, d, backtracking):
    out = []
    for e1 in range(len(s)):
        for e2 in range(len(s)):
            if e1 != e2 and d[e1] == s[e2] and (backtracking or d[e2] != s[e1]):
                out.append((e1, e2))
    return out


def test_line_graph(rng):
    for g in cases(rng):
        if g.num_edges() > 60:
            continue
        s, d = edges_np(g)
        for bt in (True, False):
            lg = nw.line_graph(g, backtracking=bt, shared=True)
            ls, ld = edges_np(lg)
            assert list(zip(ls.tolist(), ld.tolist())) == brute_line_graph(s, d, bt)
            assert lg.num_nodes() == g.num_edges()
            np.testing.assert_array_equal(lg.ndata["w"].numpy(), g.edata["w"].numpy())
    # networkx agrees on a simple graph without self-loops
    g = nw.graph(([0, 1, 2, 2, 3], [1, 2, 0, 3, 1]))
    s, d = edges_np(g)
    ref = nx.line_graph(nx.DiGraph(list(zip(s.tolist(), d.tolist()))))
    lg = nw.line_graph(g)
    pairs = {((s[a], d[a]), (s[b], d[b])) for a, b in zip(*[x.tolist() for x in edges_np(lg)])}
    assert pairs == set(ref.edges())
    with pytest.raises(ValueError, match="one node type"):
        nw.line_graph(rand_hetero(rng))


def test_compact_graphs(rng):
    g1 = nw.graph(([1, 5], [5, 3]), num_nodes=10)
    g2 = nw.graph(([8], [1]), num_nodes=10)
    g1.ndata["h"] = nc.arange(10)
    g1.edata["w"] = nc.tensor([1.0, 2.0])
    c1, c2 = nw.compact_graphs([g1, g2], always_preserve=[9, 3])
    np.testing.assert_array_equal(c1.ndata["_ID"].numpy(), [9, 3, 1, 5, 8])
    np.testing.assert_array_equal(c2.ndata["_ID"].numpy(), [9, 3, 1, 5, 8])
    np.testing.assert_array_equal(c1.ndata["h"].numpy(), [9, 3, 1, 5, 8])
    for g, c in ((g1, c1), (g2, c2)):
        nid = c.ndata["_ID"].numpy()
        cs, cd = edges_np(c)
        gs, gd = edges_np(g)
        np.testing.assert_array_equal(nid[cs], gs)
        np.testing.assert_array_equal(nid[cd], gd)
    assert c1.edata["w"].numpy().tolist() == [1.0, 2.0]
    one = nw.compact_graphs(g2)
    assert one.ndata["_ID"].numpy().tolist() == [1, 8]
    with pytest.raises(ValueError, match="graphs\\[1\\]"):
        nw.compact_graphs([g1, nw.graph(([0], [1]))])
    h = rand_hetero(rng)
    ch = nw.compact_graphs(h)
    assert ch.num_nodes("tag") == 0
    for ct in h.canonical_etypes:
        cs, cd = edges_np(ch, ct)
        gs, gd = edges_np(h, ct)
        np.testing.assert_array_equal(ch.nodes[ct[0]].data["_ID"].numpy()[cs], gs)
        np.testing.assert_array_equal(ch.nodes[ct[2]].data["_ID"].numpy()[cd], gd)


# ----------------------------------------------------------------------------- type conversions


@pytest.mark.parametrize("idtype", IDTYPES)
def test_homogeneous_round_trip(rng, idtype):
    g = rand_hetero(rng, idtype)
    h, nc_, ec_ = nw.to_homogeneous(g, ndata=["h"], edata=["w"], return_count=True)
    assert nc_ == [g.num_nodes(t) for t in g.ntypes] and ec_ == [g.num_edges(c) for c in g.canonical_etypes]
    assert h.idtype == g.idtype
    off = np.concatenate([[0], np.cumsum(nc_)])
    ntype = h.ndata["_TYPE"].numpy()
    nid = h.ndata["_ID"].numpy()
    for i, t in enumerate(g.ntypes):
        np.testing.assert_array_equal(ntype[off[i]:off[i + 1]], i)
        np.testing.assert_array_equal(nid[off[i]:off[i + 1]], np.arange(nc_[i]))
        np.testing.assert_array_equal(h.ndata["h"].numpy()[off[i]:off[i + 1]], g.nodes[t].data["h"].numpy())
    hs, hd = edges_np(h)
    et, eid = h.edata["_TYPE"].numpy(), h.edata["_ID"].numpy()
    for j, ct in enumerate(g.canonical_etypes):
        sel = et == j
        gs, gd = edges_np(g, ct)
        np.testing.assert_array_equal(eid[sel], np.arange(len(gs)))
        np.testing.assert_array_equal(hs[sel] - off[g.ntypes.index(ct[0])], gs)
        np.testing.assert_array_equal(hd[sel] - off[g.ntypes.index(ct[2])], gd)
    back = nw.to_heterogeneous(h, g.ntypes, g.canonical_etypes)
    assert back.canonical_etypes == g.canonical_etypes
    for t in g.ntypes:
        np.testing.assert_array_equal(back.nodes[t].data["h"].numpy(), g.nodes[t].data["h"].numpy())
        np.testing.assert_array_equal(back.nodes[t].data["_ID"].numpy(), np.arange(off[g.ntypes.index(t)],
                                                                                 off[g.ntypes.index(t) + 1]))
    for ct in g.canonical_etypes:
        for x, y in zip(edges_np(back, ct), edges_np(g, ct)):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(back.edges[ct].data["w"].numpy(), g.edges[ct].data["w"].numpy())
    # names instead of canonical triples: inferred (the empty relation can't be)
    g2 = rand_hetero(rng, idtype, empty_rel=False)
    b2 = nw.to_heterogeneous(nw.to_homogeneous(g2), g2.ntypes, g2.etypes)
    assert b2.canonical_etypes == g2.canonical_etypes
    with pytest.raises(ValueError, match="canonical"):
        nw.to_heterogeneous(h, g.ntypes, g.etypes)


def test_to_homogeneous_errors(rng):
    g = rand_hetero(rng)
    g.nodes["user"].data["x"] = nc.zeros(6)
    with pytest.raises(ValueError, match="no feature 'x'"):
        nw.to_homogeneous(g, ndata=["x"])
    g.nodes["item"].data["x"] = nc.zeros((5, 2))
    g.nodes["tag"].data["x"] = nc.zeros((3, 2))
    with pytest.raises(ValueError, match="row shape"):
        nw.to_homogeneous(g, ndata=["x"])
    h = nw.to_homogeneous(g)
    h.ndata["_TYPE"] = nc.full((h.num_nodes(),), 7, dtype=nc.int64)
    with pytest.raises(ValueError, match="type index"):
        nw.to_heterogeneous(h, g.ntypes, g.canonical_etypes)
    h2 = nw.to_homogeneous(g)
    with pytest.raises(ValueError, match="join node types"):
        nw.to_heterogeneous(h2, g.ntypes, [("item", "bad", "item")] + g.canonical_etypes[1:])
    mixed = nw.graph(([0, 1], [2, 2]))
    mixed.ndata["_TYPE"] = nc.tensor([0, 1, 0])
    mixed.edata["_TYPE"] = nc.tensor([0, 0])
    # One edge type name joining two node type pairs becomes two canonical edge types (as DGL).
    split = nw.to_heterogeneous(mixed, ["a", "b"], ["r"])
    assert split.canonical_etypes == [("a", "r", "a"), ("b", "r", "a")]
    assert [t.tolist() for t in split.edges(etype=("b", "r", "a"))] == [[0], [1]]


def test_to_homogeneous_homo_graph(rng):
    g = rand_graph(rng, 6, 10)
    h = nw.to_homogeneous(g, ndata=["h"])
    np.testing.assert_array_equal(edges_np(h)[0], edges_np(g)[0])
    back = nw.to_heterogeneous(h, ["_N"], ["_E"])
    for x, y in zip(edges_np(back), edges_np(g)):
        np.testing.assert_array_equal(x, y)


# ----------------------------------------------------------------------------- reorder


def test_reorder_graph(rng):
    for g in cases(rng):
        n, m = g.num_nodes(), g.num_edges()
        s, d = edges_np(g)
        for algo in (None, "rcmk", "custom"):
            for ealgo in ("src", "dst", "custom"):
                cfg = {"nodes_perm": rng.permutation(n), "edges_perm": rng.permutation(m)}
                rg = nw.reorder_graph(g, algo, ealgo, permute_config=cfg)
                nid, eid = rg.ndata["_ID"].numpy(), rg.edata["_ID"].numpy()
                if algo is None:
                    np.testing.assert_array_equal(nid, np.arange(n))
                elif algo == "rcmk" and n:
                    a = sp.csr_matrix((np.ones(m), (s, d)), shape=(n, n))
                    np.testing.assert_array_equal(nid, reverse_cuthill_mckee(a))
                elif algo == "custom":
                    np.testing.assert_array_equal(nid, cfg["nodes_perm"])
                rs, rd = edges_np(rg)
                np.testing.assert_array_equal(nid[rs], s[eid])
                np.testing.assert_array_equal(nid[rd], d[eid])
                if ealgo == "src":
                    assert np.all(np.diff(rs) >= 0)
                elif ealgo == "dst":
                    assert np.all(np.diff(rd) >= 0)
                else:
                    np.testing.assert_array_equal(eid, cfg["edges_perm"])
                np.testing.assert_array_equal(rg.ndata["h"].numpy(), g.ndata["h"].numpy()[nid])
                np.testing.assert_array_equal(rg.edata["w"].numpy(), g.edata["w"].numpy()[eid])
    g = rand_graph(rng, 5, 6)
    with pytest.raises(ValueError, match="nodes_perm"):
        nw.reorder_graph(g, "custom", permute_config={"nodes_perm": [0, 1, 1, 2, 3]})
    with pytest.raises(ValueError, match="nodes_perm"):
        nw.reorder_graph(g, "custom")
    with pytest.raises(ValueError, match="node_permute_algo"):
        nw.reorder_graph(g, "metis")


# ----------------------------------------------------------------------------- batched graphs


@pytest.mark.parametrize("name", ["reverse", "add_self_loop", "remove_self_loop", "to_simple",
                                  "to_bidirected", "add_reverse_edges", "khop_graph", "line_graph"])
def test_per_graph_transforms_keep_batches(rng, name):
    bg, parts = batched(rng)
    fn = {"khop_graph": lambda g: nw.khop_graph(g, 2),
          "reverse": lambda g: nw.reverse(g, copy_edata=True),
          "add_reverse_edges": lambda g: nw.add_reverse_edges(g, copy_edata=True),
          "to_simple": lambda g: nw.to_simple(g, copy_edata=True)}.get(name, getattr(nw, name))
    got = fn(bg)
    want = nw.batch([fn(p) for p in parts])
    assert_graphs_equal(got, want)
    for a, b in zip(nw.unbatch(got), [fn(p) for p in parts]):
        assert_graphs_equal(a, b)


def test_subgraph_of_batch_is_unbatched(rng):
    bg, _ = batched(rng)
    assert nw.node_subgraph(bg, [0, 1, 2]).batch_size == 1


def test_batched_hetero_transforms(rng):
    parts = [rand_hetero(rng) for _ in range(3)]
    bg = nw.batch(parts)
    for fn in (lambda g: nw.add_self_loop(g, etype="follows"),
               lambda g: nw.remove_self_loop(g, etype="follows"),
               lambda g: nw.to_simple(g, copy_edata=True),
               lambda g: nw.add_reverse_edges(g, ignore_bipartite=True, copy_edata=True),
               lambda g: nw.reverse(g, copy_edata=True)):
        assert_graphs_equal(fn(bg), nw.batch([fn(p) for p in parts]))


def test_features_keep_gradients(rng):
    g = rand_graph(rng, 8, 14)
    x = nc.tensor(rng.standard_normal((8, 3)), requires_grad=True)
    g.ndata["x"] = x
    keep = np.array([5, 1, 2, 7])
    sg = nw.node_subgraph(g, keep)
    (sg.ndata["x"] * 2).sum().backward()
    want = np.zeros((8, 3))
    want[keep] = 2
    np.testing.assert_allclose(x.grad.numpy(), want)
