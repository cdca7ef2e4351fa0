"""Graph-object behaviours DGL users rely on: local_var, is_multigraph, send_and_recv / apply_edges
given (u, v) endpoint pairs, push, filter_nodes / filter_edges, the type a UDF's batch names,
apply_node_func's output being what is stored, DGL's top-level edge-wise ops (nw.u_add_v ...),
to_heterogeneous with an edge type joining several node type pairs, the type-subgraph methods and
DGL's older graph constructor. Values against NumPy; both backends."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.function as fn
from conftest import np_of

U = [0, 1, 0, 2, 0, 3, 9]
V = [1, 9, 2, 9, 3, 9, 0]


def _t(a):
    return nwb.current().from_numpy(np.asarray(a))


def test_local_var_has_its_own_features_and_structure(backend_name):
    g = nw.graph((U, V))
    g.ndata["h"] = _t(np.zeros((10, 2), np.float32))
    lg = g.local_var()
    assert type(lg) is type(g) and lg is not g
    lg.ndata["h"] = _t(np.ones((10, 2), np.float32))
    lg.ndata["tmp"] = _t(np.ones(10, np.float32))
    lg.apply_nodes(lambda nodes: {"h": nodes.data["h"] + 10}, [2, 3])
    np.testing.assert_array_equal(np_of(g.ndata["h"]), np.zeros((10, 2)))
    assert "tmp" not in g.ndata
    lg.add_edges([4], [5])                         # structure: the local graph's own
    assert (g.num_edges(), lg.num_edges()) == (7, 8)
    assert g.has_edges_between(4, 5) is False and lg.has_edges_between(4, 5) is True
    shared = g.local_var()
    col = shared.ndata["h"]
    if backend_name == "pytorch":                  # an in-place change shows through
        col += 1
        np.testing.assert_array_equal(np_of(g.ndata["h"]), np.ones((10, 2)))


def test_is_multigraph_over_all_edge_types():
    assert not nw.graph(([0, 1], [1, 2]), num_nodes=6).is_multigraph
    assert nw.graph(([0, 0, 1], [1, 1, 2])).is_multigraph
    simple = {("A", "AB", "B"): ([0, 0, 1, 2], [1, 2, 5, 5]), ("A", "AA", "A"): ([0, 1], [1, 2])}
    assert not nw.heterograph(simple).is_multigraph
    simple[("A", "AA", "A")] = ([0, 0, 1], [1, 1, 2])
    assert nw.heterograph(simple).is_multigraph
    assert not nw.graph(([], []), num_nodes=3).is_multigraph


def _sum_mail(nodes):
    return {"s": nodes.mailbox["m"].sum(1)}


def test_send_and_recv_and_apply_edges_take_endpoint_pairs(backend_name):
    g = nw.graph((U, V))
    x = np.arange(10, dtype=np.float32)[:, None] + 1
    g.ndata["h"] = _t(x)
    g.send_and_recv(([0, 2, 3], [1, 9, 9]), fn.copy_u("h", "m"), fn.sum("m", "s"))
    want = np.zeros((10, 1), np.float32)
    want[1], want[9] = x[0], x[2] + x[3]
    np.testing.assert_array_equal(np_of(g.ndata["s"]), want)
    # The same edges by id, listed out of order: a UDF still sees each node's mail by edge id.
    seen = []
    g.send_and_recv([5, 3, 0], fn.copy_u("h", "m"),
                    lambda nodes: seen.append(np_of(nodes.mailbox["m"])[..., 0].tolist()) or _sum_mail(nodes))
    assert sorted(seen) == [[[1.0]], [[3.0, 4.0]]]
    g.edata["w"] = _t(np.zeros(7, np.float32))
    g.apply_edges(lambda edges: {"w": edges.src["h"][:, 0] * 2}, ([0, 9], [3, 0]))
    np.testing.assert_array_equal(np_of(g.edata["w"]), [0, 0, 0, 0, 2, 0, 20])
    with pytest.raises(ValueError, match="there is no edge 1 -> 2"):
        g.send_and_recv(([1], [2]), fn.copy_u("h", "m"), fn.sum("m", "s"))
    with pytest.raises(ValueError, match=r"\(u, v\) endpoint ids"):
        g.apply_edges(fn.copy_u("h", "c"), (0, 1, 2))
    with pytest.raises(IndexError, match=r"edge ids must be in \[0, 7\)"):
        g.send_and_recv([[0, 1], [2, 9]], fn.copy_u("h", "m"), fn.sum("m", "s"))  # a list is ids


def test_push_is_send_and_recv_on_out_edges(backend_name):
    g = nw.graph((U, V))
    g.ndata["h"] = _t(np.arange(10, dtype=np.float32) + 1)
    g.push([0, 3], fn.copy_u("h", "m"), fn.sum("m", "s"))
    want = np.zeros(10, np.float32)
    want[[1, 2, 3]] = 1.0
    want[9] = 4.0
    np.testing.assert_array_equal(np_of(g.ndata["s"]), want)


def test_filters_and_the_types_a_udf_sees(backend_name):
    g = nw.heterograph({("user", "plays", "game"): ([0, 1, 2], [1, 1, 0])})
    g.nodes["user"].data["a"] = _t(np.array([1.0, -1.0, 2.0], np.float32))
    g.edges["plays"].data["w"] = _t(np.array([0.5, 3.0, -2.0], np.float32))
    seen = []

    def pred_nodes(nodes):
        seen.append(nodes.ntype)
        return nodes.data["a"] > 0

    def pred_edges(edges):
        seen.append(edges.canonical_etype)
        return edges.data["w"] > 0

    assert np_of(g.filter_nodes(pred_nodes, ntype="user")).tolist() == [0, 2]
    assert np_of(g.filter_nodes(pred_nodes, [1, 2], ntype="user")).tolist() == [2]
    assert np_of(g.filter_edges(pred_edges)).tolist() == [0, 1]
    g.update_all(lambda e: (seen.append(e.canonical_etype), {"m": e.src["a"]})[1],
                 lambda n: (seen.append(n.ntype), {"y": n.mailbox["m"].sum(1)})[1])
    assert seen == ["user", "user", ("user", "plays", "game"), ("user", "plays", "game"), "game", "game"]
    with pytest.raises(ValueError, match="one value per item"):
        g.filter_edges(lambda edges: edges.data["w"][:1] > 0)


def test_the_apply_function_output_is_what_is_stored(backend_name):
    g = nw.graph(([0, 1], [1, 2]))
    g.ndata["h"] = _t(np.ones(3, np.float32))
    g.update_all(fn.copy_u("h", "m"), fn.sum("m", "y"), lambda nodes: {"z": nodes.data["y"] * 2})
    assert sorted(g.ndata) == ["h", "z"]          # "y" fed the apply function only, as in DGL
    np.testing.assert_array_equal(np_of(g.ndata["z"]), [0.0, 2.0, 2.0])


OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
       "dot": lambda a, b: (a * b).sum(-1, keepdims=True)}


@pytest.mark.parametrize("op,shape", [(op, shape) for op in OPS for shape in [(), (3,)]
                                      if not (op == "dot" and shape == ())])  # dot needs a feature dim
def test_top_level_edgewise_ops(backend_name, op, shape):
    rng = np.random.default_rng(5)
    g = nw.heterograph({("user", "follow", "user"): ([0, 1, 2], [2, 3, 4]),
                        ("user", "like", "movie"): ([3, 3, 1, 2], [0, 0, 1, 1])})
    x = rng.standard_normal((5,) + shape) + 3.0
    y = rng.standard_normal((5,) + shape) + 3.0
    out = getattr(nw, f"u_{op}_v")(g, _t(x), _t(y), etype="follow")
    s, d = np.array([0, 1, 2]), np.array([2, 3, 4])
    np.testing.assert_allclose(np_of(out), OPS[op](x[s], y[d]), rtol=1e-12)
    m = rng.standard_normal((2,) + shape)
    np.testing.assert_allclose(np_of(nw.copy_u(g, _t(x), etype="like")), x[[3, 3, 1, 2]])
    np.testing.assert_allclose(np_of(nw.copy_v(g, _t(m), etype="like")), m[[0, 0, 1, 1]])


def test_top_level_names_do_not_shadow_the_builtins():
    assert nw.copy_u is nw.ops.copy_u and nw.u_add_v is nw.ops.u_add_v
    assert nw.copy_u is not fn.copy_u and fn.copy_u("h", "m").out_field == "m"
    assert nw.init.zero_initializer is not None and nw.graph is not None


def test_edgewise_gradients(backend_name):
    rng = np.random.default_rng(6)
    g = nw.graph(([0, 1, 2, 2], [1, 2, 0, 1]))
    leaves = [nwb.current().from_numpy(rng.standard_normal((3, 2)) + 2.0).requires_grad_(True) for _ in range(2)]
    if backend_name == "native":
        from nodeweave.core.autograd import gradcheck
    else:
        from torch.autograd import gradcheck
    assert gradcheck(lambda a, b: nw.u_div_v(g, a, b), leaves, eps=1e-6, atol=1e-6)
    assert gradcheck(lambda a, b: nw.u_dot_v(g, a, b) + nw.copy_v(g, b)[:, :1], leaves, eps=1e-6, atol=1e-6)


def test_to_heterogeneous_splits_an_edge_type_by_node_type_pair(backend_name):
    g = nw.graph(([0, 0, 3, 0], [2, 1, 1, 4]))
    g.ndata[nw.NTYPE] = _t(np.array([0, 1, 2, 0, 2]))
    g.edata[nw.ETYPE] = _t(np.array([0, 0, 1, 0]))
    g.edata["w"] = _t(np.array([10.0, 20.0, 30.0, 40.0], np.float32))
    hg = nw.to_heterogeneous(g, ["user", "TV", "movie"], ["watches", "likes"])
    # Ordered by (source type, edge type, destination type) index, as DGL.
    assert hg.canonical_etypes == [("user", "watches", "TV"), ("user", "watches", "movie"),
                                   ("user", "likes", "TV")]
    assert [np_of(t).tolist() for t in hg.edges(etype=("user", "watches", "movie"))] == [[0, 0], [0, 1]]
    np.testing.assert_array_equal(np_of(hg.edges[("user", "watches", "movie")].data["w"]), [10.0, 40.0])
    assert np_of(hg.edges[("user", "watches", "movie")].data[nw.EID]).tolist() == [0, 3]
    assert np_of(hg.edges[("user", "likes", "TV")].data[nw.EID]).tolist() == [2]
    back = nw.to_homogeneous(hg)
    assert back.num_edges() == 4 and back.num_nodes() == 5


def test_type_subgraph_methods(backend_name):
    g = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 2]),
                        ("user", "plays", "game"): ([0], [1]), ("dev", "makes", "game"): ([0], [0])})
    assert g.node_type_subgraph(["user", "game"]).canonical_etypes == [("user", "follows", "user"),
                                                                      ("user", "plays", "game")]
    sub = g.edge_type_subgraph(["makes"])
    assert sub.ntypes == ["dev", "game"] and sub.num_nodes("game") == 2
    g.nodes["game"].data["x"] = _t(np.ones(2, np.float32))   # shared with the parent, as DGL
    np.testing.assert_array_equal(np_of(sub.nodes["game"].data["x"]), [1.0, 1.0])


def test_dgl_older_constructor():
    assert nw.HeteroGraph().num_nodes() == 0 and nw.HeteroGraph().num_edges() == 0
    g = nw.HeteroGraph(nx.path_graph(3))
    assert sorted(zip(*(np_of(t).tolist() for t in g.edges()))) == [(0, 1), (1, 0), (1, 2), (2, 1)]
    g = nw.HeteroGraph(sp.coo_matrix(([1, 1], ([0, 2], [1, 0])), shape=(3, 3)), readonly=True)
    assert g.num_nodes() == 3 and [np_of(t).tolist() for t in g.edges()] == [[0, 2], [1, 0]]
    assert [np_of(t).tolist() for t in nw.HeteroGraph([(0, 1), (2, 3)]).edges()] == [[0, 2], [1, 3]]
    g.ndata["h"] = nwb.current().from_numpy(np.ones(3, np.float32))
    g.update_all(fn.copy_u("h", "m"), fn.sum("m", "y"))
    with pytest.raises(TypeError, match="unexpected keyword"):
        nw.HeteroGraph({"_N": 2}, {}, color="red")
    with pytest.raises(TypeError, match="ignores readonly"):
        nw.HeteroGraph([(0, 1)], sort_csr=True)
    with pytest.raises(TypeError, match="rels"):
        nw.HeteroGraph({"_N": 2})
