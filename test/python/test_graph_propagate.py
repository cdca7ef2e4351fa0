"""Message propagation along traversal orders (``nw.prop_nodes``, ``prop_edges``,
``prop_nodes_bfs``, ``prop_nodes_topo``, ``prop_edges_dfs`` and the methods ``g.prop_nodes`` /
``g.prop_edges``) against a NumPy replay of the same frontier-by-frontier updates, with builtin and
user-defined functions, on both backends; DGL's documented results; bad functions, frontiers and
cyclic graphs raising by name (a cycle before any feature changes)."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.function as fn
from conftest import np_of


def feat(x):
    return nwb.current().from_numpy(np.asarray(x, np.float32))


def udf_message(edges):
    return {"m": edges.src["x"] * 2}


def udf_reduce(nodes):
    return {"x": nodes.data["x"] + nodes.mailbox["m"].sum(1)}


def replay_nodes(x, src, dst, frontiers):
    """pull with message 2 * x[u] and reduce x[v] + sum, frontier by frontier: nodes of a frontier
    read the features as they were before the frontier; a frontier with edges updates all its
    nodes (those without in-edges get 0, as an empty sum reduced by DGL's UDF path); one without
    any edge leaves them."""
    x = x.copy()
    for f in frontiers:
        f = np.unique(f)
        into = np.isin(dst, f)
        if not into.any():
            continue
        new = np.zeros((len(f),) + x.shape[1:])
        for i, v in enumerate(f):
            ins = into & (dst == v)
            if ins.any():
                new[i] = x[v] + (2 * x[src[ins]]).sum(0)
        x[f] = new
    return x


def replay_edges(x, src, dst, frontiers):
    """send_and_recv of the edges of each frontier: their destinations become x[v] + the sum of
    2 * x[u] over the frontier's edges into v."""
    x = x.copy()
    for f in frontiers:
        f = np.asarray(f, np.int64)
        new = {int(v): x[v] + 2 * x[src[f][dst[f] == v]].sum(0) for v in np.unique(dst[f])}
        for v, val in new.items():
            x[v] = val
    return x


def test_prop_nodes_and_edges_match_the_replay(backend_name):
    rng = np.random.default_rng(0)
    n = 12
    src, dst = rng.integers(0, n, 30), rng.integers(0, n, 30)
    x0 = rng.normal(size=(n, 3))
    g = nw.graph((src, dst), num_nodes=n)
    node_frontiers = [[3, 1], [5], nwb.current().int_tensor(np.array([0, 7, 11])), [2, 3]]
    g.ndata["x"] = feat(x0)
    nw.prop_nodes(g, node_frontiers, udf_message, udf_reduce)
    want = replay_nodes(x0, src, dst, [[3, 1], [5], [0, 7, 11], [2, 3]])
    np.testing.assert_allclose(np_of(g.ndata["x"]), want, rtol=1e-5, atol=1e-5)
    edge_frontiers = [[0, 4, 9], [1], [29, 3, 2]]
    g.ndata["x"] = feat(x0)
    g.prop_edges(edge_frontiers, udf_message, udf_reduce)
    np.testing.assert_allclose(np_of(g.ndata["x"]), replay_edges(x0, src, dst, edge_frontiers), rtol=1e-5,
                               atol=1e-5)


def test_builtins_and_an_apply_function(backend_name):
    # DGL's documented example: 2 and 3 pull from 0 and 1, then 4 pulls their new values.
    g = nw.heterograph({("user", "follows", "user"): ([0, 1, 2, 3], [2, 3, 4, 4])})
    g.nodes["user"].data["h"] = feat([[1.0], [2.0], [3.0], [4.0], [5.0]])
    g["follows"].prop_nodes([[2, 3], [4]], fn.copy_u("h", "m"), fn.sum("m", "h"), etype="follows")
    assert np_of(g.nodes["user"].data["h"]).ravel().tolist() == [1.0, 2.0, 1.0, 2.0, 3.0]
    g.nodes["user"].data["h"] = feat([[1.0], [2.0], [3.0], [4.0], [5.0]])
    g.prop_edges([[0, 1], [2, 3]], fn.copy_u("h", "m"), fn.sum("m", "h"),
                 apply_node_func=lambda nodes: {"h": nodes.data["h"] * 10})
    assert np_of(g.nodes["user"].data["h"]).ravel().tolist() == [1.0, 2.0, 10.0, 20.0, 300.0]


def path_graph():
    """0 - 1 - 2 - 3 - 4, both directions (networkx's path_graph(5) as DGL's tests build it)."""
    u = [0, 1, 1, 2, 2, 3, 3, 4]
    v = [1, 0, 2, 1, 3, 2, 4, 3]
    return nw.graph((u, v))


def sum_into_x(nodes):
    return {"x": nodes.data["x"] + nodes.mailbox["m"].sum(1)}


def copy_x(edges):
    return {"m": edges.src["x"]}


def test_bfs_and_dfs_propagation_give_dgls_documented_sums(backend_name):
    g = path_graph()
    g.ndata["x"] = feat(np.ones((5, 2)))
    nw.prop_nodes_bfs(g, 0, copy_x, sum_into_x)
    assert np_of(g.ndata["x"])[:, 0].tolist() == [2.0, 4.0, 6.0, 8.0, 9.0]
    for kwargs, want in (({}, [1, 2, 3, 4, 5]), ({"has_reverse_edge": True}, [1, 3, 5, 7, 9]),
                         ({"has_nontree_edge": True}, [3, 5, 7, 9, 5])):
        g.ndata["x"] = feat(np.ones((5, 2)))
        nw.prop_edges_dfs(g, 0, copy_x, sum_into_x, **kwargs)
        assert np_of(g.ndata["x"])[:, 0].tolist() == want, kwargs
    # reverse: the same walk on the reversed edges; on a symmetric path the result is the same.
    g.ndata["x"] = feat(np.ones((5, 2)))
    nw.prop_nodes_bfs(g, 4, copy_x, sum_into_x, reverse=True)
    assert np_of(g.ndata["x"])[:, 0].tolist() == [9.0, 8.0, 6.0, 4.0, 2.0]


def test_topological_propagation_sums_a_tree_and_refuses_cycles(backend_name):
    tree = nw.graph(([1, 2, 3, 4], [0, 0, 2, 2]))
    tree.ndata["x"] = feat([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0]])
    nw.prop_nodes_topo(tree, copy_x, sum_into_x)          # the leaves' frontier has no edges: kept
    assert np_of(tree.ndata["x"])[0].tolist() == [3.0, 3.0]
    # reverse: layers from the root (no out-edges) down to the leaves; pulls still read in-edges
    x0 = np.arange(10, dtype=np.float64).reshape(5, 2)
    tree.ndata["x"] = feat(x0)
    nw.prop_nodes_topo(tree, udf_message, udf_reduce, reverse=True)
    src, dst = (np_of(t) for t in tree.edges())
    np.testing.assert_allclose(np_of(tree.ndata["x"]), replay_nodes(x0, src, dst, [[0], [1, 2], [3, 4]]))
    g = path_graph()
    before = np.ones((5, 2))
    g.ndata["x"] = feat(before)
    with pytest.raises(ValueError, match="cycle"):
        nw.prop_nodes_topo(g, copy_x, sum_into_x)
    np.testing.assert_array_equal(np_of(g.ndata["x"]), before)


def test_bad_input_names_the_argument(backend_name):
    g = path_graph()
    g.ndata["x"] = feat(np.ones((5, 2)))
    with pytest.raises(TypeError, match="message_func"):
        nw.prop_nodes(g, [[0]], None, sum_into_x)
    with pytest.raises(TypeError, match="reduce_func"):
        g.prop_edges([[0]], copy_x, "sum")
    with pytest.raises(TypeError, match="apply_node_func"):
        nw.prop_nodes_bfs(g, 0, copy_x, sum_into_x, apply_node_func=3)
    with pytest.raises(TypeError, match="nodes_generator"):
        g.prop_nodes(5, copy_x, sum_into_x)
    with pytest.raises(TypeError, match="edges_generator"):
        nw.prop_edges(g, "01", copy_x, sum_into_x)
    with pytest.raises(IndexError, match="source"):
        nw.prop_edges_dfs(g, 9, copy_x, sum_into_x)
    with pytest.raises(TypeError, match="graph"):
        nw.prop_nodes_topo(None, copy_x, sum_into_x)
    hg = nw.heterograph({("a", "r", "b"): ([0], [0])})
    with pytest.raises(ValueError, match="from a node type to itself"):
        nw.prop_nodes_bfs(hg, 0, copy_x, sum_into_x)
