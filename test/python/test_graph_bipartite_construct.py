"""Bipartite graphs and matrix views of relations: ``nw.rand_bipartite`` (distinct uniform pairs,
seeded), ``nw.bipartite_from_scipy`` / ``nw.bipartite_from_networkx`` (DGL's conventions: side-wise
sorted numbering, COO or networkx edge order or given edge ids, features), ``g.inc`` (incidence
matrices against loops over the edges, as torch sparse tensors or SciPy matrices) and
``g.to_networkx()`` on homogeneous and heterogeneous graphs (numbered as ``to_homogeneous``); both
backends; bad input raising by name."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import nodeweave as nw
import nodeweave.backend as nwb
from conftest import np_of


def uv(g, etype=None):
    return [np_of(t).tolist() for t in g.edges(etype=etype)]


@pytest.mark.parametrize("idtype", ["int32", "int64"])
def test_rand_bipartite_draws_distinct_uniform_pairs(backend_name, idtype):
    g = nw.rand_bipartite("user", "buys", "game", 30, 40, 300, idtype=idtype, seed=1)
    assert g.canonical_etypes == [("user", "buys", "game")]
    assert (g.num_nodes("user"), g.num_nodes("game"), g.num_edges()) == (30, 40, 300)
    assert str(g.idtype).endswith(idtype)
    s, d = uv(g)
    assert len(set(zip(s, d))) == 300 and max(s) < 30 and max(d) < 40
    assert uv(nw.rand_bipartite("user", "buys", "game", 30, 40, 300, seed=1)) == [s, d]
    nw.seed(5)
    first = uv(nw.rand_bipartite("a", "r", "b", 10, 10, 20))
    nw.seed(5)
    assert uv(nw.rand_bipartite("a", "r", "b", 10, 10, 20)) == first
    # Every pair: each exactly once, in a random order.
    full = nw.rand_bipartite("a", "r", "b", 4, 5, 20, seed=0)
    assert sorted(zip(*uv(full))) == [(i, j) for i in range(4) for j in range(5)]
    # Uniform: in 4000 draws of 2 of the 4 pairs, each pair is drawn about half the time.
    counts = np.zeros(4)
    rng = np.random.default_rng(0)
    for _ in range(2000):
        s2, d2 = uv(nw.rand_bipartite("a", "r", "b", 2, 2, 2, seed=rng))
        np.add.at(counts, np.array(s2) * 2 + np.array(d2), 1)
    assert np.all(np.abs(counts - 1000) < 5 * np.sqrt(500))
    assert nw.rand_bipartite("a", "r", "b", 0, 3, 0).num_edges() == 0
    same = nw.rand_bipartite("n", "e", "n", 5, 5, 7, seed=0)
    assert same.ntypes == ["n"] and same.num_edges() == 7


def test_rand_bipartite_bad_input(backend_name):
    with pytest.raises(ValueError, match="num_edges=13 is more than the 3 x 4 = 12"):
        nw.rand_bipartite("a", "r", "b", 3, 4, 13)
    with pytest.raises(ValueError, match="num_edges must be non-negative"):
        nw.rand_bipartite("a", "r", "b", 3, 4, -1)
    with pytest.raises(TypeError, match="num_src_nodes must be an int"):
        nw.rand_bipartite("a", "r", "b", 3.0, 4, 1)
    with pytest.raises(TypeError, match="etype must be a type name"):
        nw.rand_bipartite("a", 1, "b", 3, 4, 1)
    with pytest.raises(ValueError, match="must be equal"):
        nw.rand_bipartite("a", "r", "a", 3, 4, 1)


def test_bipartite_from_scipy(backend_name):
    w = np.array([0.2, 0.3, 0.5])
    mat = sp.coo_matrix((w, (np.array([2, 3, 4]), np.array([1, 2, 3]))))
    g = nw.bipartite_from_scipy(mat, "user", "plays", "game", idtype="int32")
    assert (g.num_src_nodes(), g.num_dst_nodes(), g.num_edges()) == (5, 4, 3)
    assert uv(g) == [[2, 3, 4], [1, 2, 3]] and str(g.idtype).endswith("int32")
    g = nw.bipartite_from_scipy(mat.tocsr(), "_U", "_E", "_V", eweight_name="w")
    np.testing.assert_array_equal(np_of(g.edata["w"]), w)
    assert nwb.current().dtype_name(g.edata["w"]) == "float64"
    # A non-square matrix onto one node type is refused; a square one gives a one-type graph.
    with pytest.raises(ValueError, match="both 'n'"):
        nw.bipartite_from_scipy(mat, "n", "e", "n")
    sq = nw.bipartite_from_scipy(sp.identity(3, format="csr"), "n", "e", "n")
    assert sq.ntypes == ["n"] and uv(sq) == [[0, 1, 2], [0, 1, 2]]
    with pytest.raises(TypeError, match="sp_mat must be a SciPy sparse matrix"):
        nw.bipartite_from_scipy(np.eye(2), "a", "r", "b")


def dgl_example_nx():
    G = nx.DiGraph()
    G.add_nodes_from([1, 3], bipartite=0, feat1=np.zeros(2), feat2=np.ones(2))
    G.add_nodes_from([2, 4, 5], bipartite=1, feat3=np.zeros(3))
    G.add_edge(1, 4, weight=np.ones(1), eid=np.array([1]))
    G.add_edge(3, 5, weight=np.full(1, 2.0), eid=np.array([0]))
    return G


def test_bipartite_from_networkx(backend_name):
    G = dgl_example_nx()
    g = nw.bipartite_from_networkx(G, "user", "plays", "game", idtype="int32")
    assert (g.num_src_nodes(), g.num_dst_nodes(), g.num_edges()) == (2, 3, 2)
    assert uv(g) == [[0, 1], [1, 2]]
    g = nw.bipartite_from_networkx(G, "_U", "_E", "V", u_attrs=["feat1", "feat2"], e_attrs=["weight"],
                                   v_attrs=["feat3"])
    np.testing.assert_array_equal(np_of(g.srcdata["feat1"]), np.zeros((2, 2)))
    np.testing.assert_array_equal(np_of(g.srcdata["feat2"]), np.ones((2, 2)))
    np.testing.assert_array_equal(np_of(g.dstdata["feat3"]), np.zeros((3, 3)))
    np.testing.assert_array_equal(np_of(g.edata["weight"]), [[1.0], [2.0]])
    g = nw.bipartite_from_networkx(G, "_U", "_E", "V", e_attrs=["weight"], edge_id_attr_name="eid")
    assert uv(g) == [[1, 0], [2, 1]]
    np.testing.assert_array_equal(np_of(g.edata["weight"]), [[2.0], [1.0]])
    # A multigraph keeps parallel edges; edge ids follow networkx's edge order (by source node).
    M = nx.MultiDiGraph()
    M.add_nodes_from(["b", "a"], bipartite=0)
    M.add_nodes_from(["x"], bipartite=1)
    M.add_edges_from([("a", "x"), ("b", "x"), ("b", "x")])
    assert list(M.edges()) == [("b", "x"), ("b", "x"), ("a", "x")]
    assert uv(nw.bipartite_from_networkx(M, "u", "r", "v")) == [[1, 1, 0], [0, 0, 0]]


def test_bipartite_from_networkx_bad_input(backend_name):
    G = dgl_example_nx()
    with pytest.raises(ValueError, match="must be directed"):
        nw.bipartite_from_networkx(G.to_undirected(), "u", "r", "v")
    H = G.copy()
    H.add_node(9)
    with pytest.raises(ValueError, match="node 9 must have attribute bipartite=0 or 1, got none"):
        nw.bipartite_from_networkx(H, "u", "r", "v")
    H = G.copy()
    H.add_edge(4, 1)
    with pytest.raises(ValueError, match=r"edge \(4, 1\) must go from a bipartite=0 node"):
        nw.bipartite_from_networkx(H, "u", "r", "v")
    with pytest.raises(ValueError, match="no edge id attribute 'id'"):
        nw.bipartite_from_networkx(G, "u", "r", "v", edge_id_attr_name="id")
    H = G.copy()
    H.edges[3, 5]["eid"] = np.array([1])
    with pytest.raises(ValueError, match="number the 2 edges 0..1"):
        nw.bipartite_from_networkx(H, "u", "r", "v", edge_id_attr_name="eid")
    with pytest.raises(ValueError, match="no attribute 'feat3'"):
        nw.bipartite_from_networkx(G, "u", "r", "v", u_attrs=["feat3"])
    with pytest.raises(TypeError, match="nx_graph must be a networkx graph"):
        nw.bipartite_from_networkx({1: 2}, "u", "r", "v")


def dense(m):
    return m.to_dense().numpy() if nwb.current().name == "pytorch" else m.toarray()


def ref_inc(kind, src, dst, n, e):
    out = np.zeros((n, e))
    for i, (u, v) in enumerate(zip(src, dst)):
        if kind == "in":
            out[v, i] = 1
        elif kind == "out":
            out[u, i] = 1
        elif u != v:
            out[u, i], out[v, i] = -1, 1
    return out


def test_incidence_matrices(backend_name):
    g = nw.heterograph({("user", "follows", "user"): ([0, 1, 2, 2], [1, 2, 2, 0]),
                        ("user", "plays", "game"): ([0, 1, 2, 1], [0, 0, 1, 1])})
    B = nwb.current()
    for kind in ("in", "out", "both"):
        m = g.inc(kind, etype="follows")
        if B.name == "pytorch":
            import torch

            assert m.layout == torch.sparse_coo and m.dtype == torch.float32 and m.is_coalesced()
        else:
            assert sp.issparse(m) and m.dtype == np.float32
        np.testing.assert_array_equal(dense(m), ref_inc(kind, [0, 1, 2, 2], [1, 2, 2, 0], 3, 4))
        np.testing.assert_array_equal(dense(g["follows"].incidence_matrix(kind)), dense(m))
    np.testing.assert_array_equal(dense(g.inc("in", etype="plays")), ref_inc("in", [0, 1, 2, 1], [0, 0, 1, 1], 2, 4))
    np.testing.assert_array_equal(dense(g.inc("out", etype="plays")), ref_inc("out", [0, 1, 2, 1], [0, 0, 1, 1], 3, 4))
    # DGL's documented example (edge 0 a self-loop)
    h = nw.graph(([0, 1], [0, 2]))
    np.testing.assert_array_equal(dense(h.inc("both")), [[0, 0], [0, -1], [0, 1]])
    with pytest.raises(ValueError, match="typestr='both' needs an edge type from a node type to itself"):
        g.inc("both", etype="plays")
    with pytest.raises(ValueError, match="typestr must be 'in', 'out' or 'both'"):
        h.inc("all")
    with pytest.raises(ValueError, match="etype must be given"):
        g.inc("in")


def test_incidence_ctx_on_the_native_backend():
    with pytest.raises(ValueError, match="lives on the CPU"):
        nw.graph(([0], [1])).inc("in", ctx="cuda:0")


def test_to_networkx_method_and_heterographs(backend_name):
    g = nw.graph(([0, 1, 1], [1, 2, 2]))
    g.ndata["h"] = nwb.current().tensor([[1.0], [2.0], [3.0]])
    G = g.to_networkx(node_attrs=["h"])
    assert sorted(G.edges(data="id")) == [(0, 1, 0), (1, 2, 1), (1, 2, 2)]
    assert G.nodes[2]["h"].tolist() == [3.0] and "ntype" not in G.nodes[0]
    hg = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 2]),
                         ("user", "follows", "topic"): ([1, 1], [1, 2]),
                         ("user", "plays", "game"): ([0, 3], [3, 4])})
    hg.nodes["user"].data["n"] = nwb.current().tensor([1.0, 2.0, 3.0, 4.0])
    hg.edges["plays"].data["e"] = nwb.current().tensor([[5.0], [6.0]])
    H = hg.to_networkx(node_attrs=["n"], edge_attrs=["e"])
    homo = nw.to_homogeneous(hg)
    hs, hd = (np_of(t) for t in homo.edges())
    assert H.number_of_nodes() == homo.num_nodes() and H.number_of_edges() == homo.num_edges()
    for u, v, data in H.edges(data=True):
        assert (hs[data["id"]], hd[data["id"]]) == (u, v)
        assert data["etype"] == hg.canonical_etypes[int(np_of(homo.edata[nw.ETYPE])[data["id"]])]
        assert ("e" in data) == (data["etype"][1] == "plays")
    ntype = np_of(homo.ndata[nw.NTYPE])
    for v, data in H.nodes(data=True):
        assert data["ntype"] == hg.ntypes[ntype[v]]
        assert ("n" in data) == (data["ntype"] == "user")
    users = [d["n"] for _, d in sorted(H.nodes(data=True)) if d["ntype"] == "user"]
    assert users == [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(ValueError, match="'ntype' names both"):
        hg.to_networkx(node_attrs=["ntype"])
    with pytest.raises(TypeError, match="attribute names must be strings"):
        nw.to_networkx(hg, eid_attr=3)
