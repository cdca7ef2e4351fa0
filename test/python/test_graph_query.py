"""Structure queries of HeteroGraph checked against networkx / SciPy / NumPy on many small graphs."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import nodeweave as nw
import nodeweave.core as nc


def _cases():
    rng = np.random.default_rng(7)
    out = []
    n = 30
    out.append(("random", n, rng.integers(0, n, 120), rng.integers(0, n, 120)))
    out.append(("isolated", 40, rng.integers(0, 10, 25), rng.integers(0, 10, 25)))
    out.append(("self_loops", 5, np.array([0, 1, 1, 2, 4, 4]), np.array([0, 1, 2, 2, 4, 3])))
    out.append(("multi_edges", 4, np.array([0, 0, 0, 1, 1, 3, 0]), np.array([1, 1, 1, 2, 2, 0, 1])))
    out.append(("no_edges", 6, np.zeros(0, np.int64), np.zeros(0, np.int64)))
    out.append(("empty", 0, np.zeros(0, np.int64), np.zeros(0, np.int64)))
    return out


CASES = _cases()


def _reference(n, src, dst):
    ref = nx.MultiDiGraph()
    ref.add_nodes_from(range(n))
    for e, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        ref.add_edge(u, v, key=e)
    return ref


@pytest.fixture(params=[(c, idt) for c in CASES for idt in ("int32", "int64")],
                ids=lambda p: f"{p[0][0]}-{p[1]}")
def case(request):
    (name, n, src, dst), idtype = request.param
    g = nw.graph((src, dst), num_nodes=n, idtype=idtype)
    return g, n, np.asarray(src), np.asarray(dst), _reference(n, src, dst), idtype


def _np(t):
    return t.numpy()


def test_sizes_and_types(case):
    g, n, src, dst, ref, idtype = case
    assert g.num_nodes() == g.number_of_nodes() == n
    assert g.num_edges() == g.number_of_edges() == len(src)
    assert g.idtype == getattr(nc, idtype)
    assert g.device == "cpu"
    assert g.is_homogeneous
    assert g.ntypes == ["_N"] and g.etypes == ["_E"] and g.canonical_etypes == [("_N", "_E", "_N")]


def test_degrees(case):
    g, n, src, dst, ref, idtype = case
    ind, outd = g.in_degrees(), g.out_degrees()
    assert ind.dtype == getattr(nc, idtype)
    np.testing.assert_array_equal(_np(ind), [ref.in_degree(v) for v in range(n)])
    np.testing.assert_array_equal(_np(outd), [ref.out_degree(v) for v in range(n)])
    if n:
        assert g.in_degrees(n - 1) == ref.in_degree(n - 1)
        assert isinstance(g.out_degrees(0), int)
        sel = np.array([n - 1, 0, n - 1])
        np.testing.assert_array_equal(_np(g.in_degrees(sel)), [ref.in_degree(int(v)) for v in sel])
        np.testing.assert_array_equal(_np(g.out_degrees(nc.tensor(sel))), [ref.out_degree(int(v)) for v in sel])


def test_edges_orders(case):
    g, n, src, dst, ref, idtype = case
    u, v = g.edges()
    assert u.dtype == getattr(nc, idtype)
    np.testing.assert_array_equal(_np(u), src)
    np.testing.assert_array_equal(_np(v), dst)
    np.testing.assert_array_equal(_np(g.edges(form="eid")), np.arange(len(src)))
    u, v, e = g.all_edges(form="all", order="srcdst")
    expect = sorted(zip(src.tolist(), dst.tolist(), range(len(src))))
    assert list(zip(_np(u).tolist(), _np(v).tolist(), _np(e).tolist())) == expect


def test_in_out_edges(case):
    g, n, src, dst, ref, idtype = case
    for v in range(n):
        s, d, e = g.in_edges(v, form="all")
        expect = sorted((k, a) for a, _, k in ref.in_edges(v, keys=True))
        assert list(zip(_np(e).tolist(), _np(s).tolist())) == expect
        assert set(_np(d).tolist()) <= {v}
        s, d, e = g.out_edges(v, form="all")
        expect = sorted((k, b) for _, b, k in ref.out_edges(v, keys=True))
        assert list(zip(_np(e).tolist(), _np(d).tolist())) == expect
        np.testing.assert_array_equal(_np(g.successors(v)), [b for _, b in expect])
        np.testing.assert_array_equal(
            _np(g.predecessors(v)), [a for _, a in sorted((k, a) for a, _, k in ref.in_edges(v, keys=True))])
    if n:
        nodes = [n - 1, 0]
        s, d = g.in_edges(nodes)
        want = [(a, b) for b in nodes for _, a in sorted((k, a) for a, _, k in ref.in_edges(b, keys=True))]
        assert list(zip(_np(s).tolist(), _np(d).tolist())) == want
        e = g.out_edges(nodes, form="eid")
        assert _np(e).tolist() == [k for a in nodes for k in sorted(k for _, _, k in ref.out_edges(a, keys=True))]


def test_edge_lookup(case, rng):
    g, n, src, dst, ref, idtype = case
    if n == 0:
        return
    qu = rng.integers(0, n, 50)
    qv = rng.integers(0, n, 50)
    qu[:len(src[:10])] = src[:10]
    qv[:len(dst[:10])] = dst[:10]
    has = _np(g.has_edges_between(qu, qv))
    np.testing.assert_array_equal(has, [ref.has_edge(int(a), int(b)) for a, b in zip(qu, qv)])
    present = has.astype(bool)
    if present.any():
        ids = _np(g.edge_ids(qu[present], qv[present]))
        np.testing.assert_array_equal(ids, [min(ref[int(a)][int(b)]) for a, b in zip(qu[present], qv[present])])
        a, b, e = g.edge_ids(qu[present], qv[present], return_uv=True)
        got = sorted(zip(_np(a).tolist(), _np(b).tolist(), _np(e).tolist()))
        want = sorted((int(x), int(y), k) for x, y in zip(qu[present], qv[present]) for k in ref[int(x)][int(y)])
        assert got == want
        x, y = int(qu[present][0]), int(qv[present][0])
        assert int(g.edge_ids(x, y)) == min(ref[x][y])
        assert g.has_edges_between(x, y) is True
    if (~present).any():
        with pytest.raises(ValueError, match="no edge"):
            g.edge_ids(qu, qv)
    if len(src):
        eids = rng.integers(0, len(src), 20)
        a, b = g.find_edges(eids)
        np.testing.assert_array_equal(_np(a), src[eids])
        np.testing.assert_array_equal(_np(b), dst[eids])


def test_adjacency(case):
    g, n, src, dst, ref, idtype = case
    want = nx.to_scipy_sparse_array(ref, nodelist=range(n), weight=None).toarray() if n else np.zeros((0, 0))
    for fmt in ("csr", "csc", "coo"):
        a = g.adj(scipy_fmt=fmt)
        assert a.format == fmt and a.shape == (n, n)
        np.testing.assert_array_equal(a.toarray(), want)
    np.testing.assert_array_equal(g.adj_external(transpose=True, scipy_fmt="csr").toarray(), want.T)
    np.testing.assert_array_equal(g.adj_external(transpose=True).to_dense().numpy(), want.T)


@pytest.mark.parametrize("formats", [["coo"], ["csr"], ["csc"], ["csr", "csc"]])
def test_restricted_formats_answer_the_same(formats):
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 12, 40), rng.integers(0, 12, 40)
    full = nw.graph((src, dst), num_nodes=15)
    g = nw.graph((src, dst), num_nodes=15, formats=formats)
    for a, b in zip(g.edges(form="all"), full.edges(form="all")):
        np.testing.assert_array_equal(_np(a), _np(b))
    np.testing.assert_array_equal(_np(g.in_degrees()), _np(full.in_degrees()))
    np.testing.assert_array_equal(_np(g.successors(3)), _np(full.successors(3)))
    np.testing.assert_array_equal(_np(g.predecessors(3)), _np(full.predecessors(3)))
    info = g.formats()
    assert set(info["created"]) | set(info["not created"]) == set(formats)
    assert g.formats()["created"]  # queries never build a format the graph does not allow


def test_formats_and_idtype_conversion():
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    g.ndata["h"] = nc.ones(3)
    assert g.formats() == {"created": ["coo"], "not created": ["csr", "csc"]}
    g2 = g.formats("csr")
    assert g2.formats() == {"created": ["csr"], "not created": []}
    assert "h" in g2.ndata
    g.create_formats_()
    assert g.formats()["not created"] == []
    gi = g.int()
    assert gi.idtype == nc.int32 and gi.edges()[0].dtype == nc.int32
    assert gi.long().idtype == nc.int64
    assert g.long() is g and g.to("cpu") is g and g.cpu() is g
    assert gi.ndata["h"].tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="idtype"):
        g.astype("float32")
    with pytest.raises(ValueError, match="unknown format"):
        g.formats("dense")


def _hetero():
    data = {
        ("user", "follows", "user"): (np.array([0, 1, 2, 2]), np.array([1, 2, 0, 3])),
        ("user", "plays", "game"): (np.array([0, 0, 3]), np.array([1, 2, 2])),
        ("game", "played_by", "user"): (np.array([1, 2, 2]), np.array([0, 0, 3])),
    }
    return nw.heterograph(data, num_nodes_dict={"user": 5, "game": 3, "store": 2}), data


def test_heterograph_queries():
    g, data = _hetero()
    assert g.ntypes == ["game", "store", "user"]
    assert g.canonical_etypes == sorted(data)
    assert not g.is_homogeneous
    assert g.num_nodes() == 10 and g.num_nodes("user") == 5 and g.num_nodes("store") == 2
    assert g.num_edges() == 10 and g.num_edges("plays") == 3
    for ct, (s, d) in data.items():
        a, b = g.edges(etype=ct)
        np.testing.assert_array_equal(_np(a), s)
        np.testing.assert_array_equal(_np(b), d)
        a2, _ = g.edges(etype=ct[1])
        np.testing.assert_array_equal(_np(a2), s)
        st, _, dt = ct
        np.testing.assert_array_equal(_np(g.in_degrees(etype=ct)), np.bincount(d, minlength=g.num_nodes(dt)))
        np.testing.assert_array_equal(_np(g.out_degrees(etype=ct)), np.bincount(s, minlength=g.num_nodes(st)))
        A = g.adj(etype=ct).to_dense().numpy()
        assert A.shape == (g.num_nodes(st), g.num_nodes(dt))
        np.testing.assert_array_equal(A, sp.coo_matrix((np.ones(len(s)), (s, d)), shape=A.shape).toarray())
    assert _np(g.successors(0, etype="plays")).tolist() == [1, 2]
    assert int(g.edge_ids(3, 2, etype="plays")) == 2
    mg = g.metagraph()
    assert sorted(mg.edges(keys=True)) == sorted((s, d, e) for s, e, d in data)
    assert g.to_canonical_etype("follows") == ("user", "follows", "user")
    assert g.get_etype_id(("user", "plays", "game")) == g.canonical_etypes.index(("user", "plays", "game"))
    with pytest.raises(ValueError, match="etype must be given"):
        g.edges()
    with pytest.raises(ValueError, match="unknown edge type 'likes'"):
        g.num_edges("likes")
    with pytest.raises(ValueError, match="unknown node type 'item'"):
        g.num_nodes("item")
    with pytest.raises(ValueError, match="ntype must be given"):
        g.nodes()
    # a node id valid for 'user' but not for 'game'
    with pytest.raises(IndexError, match="nodes of type 'game'"):
        g.in_degrees(4, etype="plays")
    assert "metagraph" in repr(g)


def test_ambiguous_etype_needs_canonical():
    g = nw.heterograph({("a", "r", "b"): ([0], [0]), ("b", "r", "a"): ([0], [0])})
    with pytest.raises(ValueError, match="ambiguous"):
        g.edges(etype="r")
    assert g.num_edges(("a", "r", "b")) == 1


def test_unibipartite_src_dst_types():
    g = nw.heterograph({("user", "buys", "item"): ([0, 1], [2, 0])})
    assert g.is_unibipartite
    assert g.srctypes == ["user"] and g.dsttypes == ["item"]
    assert g.num_src_nodes() == 2 and g.num_dst_nodes() == 3
    h, _ = _hetero()
    assert h.srctypes == h.ntypes


BAD_QUERIES = [
    (lambda g: g.in_degrees(5), IndexError, r"v\[0\] = 5 is out of range: the graph has 5 nodes"),
    (lambda g: g.out_degrees([0, -1]), IndexError, r"u\[1\] = -1"),
    (lambda g: g.in_degrees([0.5]), TypeError, "v must hold integer ids"),
    (lambda g: g.in_edges(7), ValueError, r"v\[0\] = 7"),
    (lambda g: g.out_edges([[0, 1]]), ValueError, "one-dimensional"),
    (lambda g: g.successors(9), IndexError, "out of range"),
    (lambda g: g.successors([0, 1]), TypeError, "single node"),
    (lambda g: g.find_edges([0, 4]), IndexError, r"eid\[1\] = 4 is out of range: the graph has 4 edges"),
    (lambda g: g.edge_ids([0, 1], [1]), ValueError, "same length"),
    (lambda g: g.edge_ids(1, 0), ValueError, "no edge 1 -> 0"),
    (lambda g: g.has_edges_between(0, 99), IndexError, r"v\[0\] = 99"),
    (lambda g: g.edges(form="xy"), ValueError, "form must be"),
    (lambda g: g.edges(order="random"), ValueError, "order must be"),
    (lambda g: g.adj(scipy_fmt="dia"), ValueError, "scipy_fmt"),
    (lambda g: g.in_degrees("a"), TypeError, "integer ids"),
    (lambda g: g.in_degrees(True), TypeError, "bool"),
    (lambda g: g.num_edges(("_N", "x", "_N")), ValueError, "unknown edge type"),
]


@pytest.mark.parametrize("call,exc,msg", BAD_QUERIES)
def test_bad_query_arguments(call, exc, msg):
    g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 4]))
    with pytest.raises(exc, match=msg):
        call(g)


def test_out_of_range_is_both_index_and_value_error():
    g = nw.graph(([0], [1]))
    with pytest.raises(ValueError):
        g.in_degrees(2)
    with pytest.raises(IndexError):
        g.in_degrees(2)


def test_has_nodes():
    g = nw.graph(([0], [1]), num_nodes=3)
    assert g.has_nodes(2) is True and g.has_nodes(3) is False
    assert g.has_nodes([0, 3, -1]).tolist() == [True, False, False]
