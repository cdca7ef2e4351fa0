"""Feature initializers (DGL's set_n_initializer / set_e_initializer and dgl.init): what the rows
nobody wrote hold after add_nodes / add_edges, a partial feature write, and a user-defined reduce
that skips nodes without in-edges; per field and per type; carried by local_var / local_scope /
clone and pickling; bad initializers raise. Both backends."""

import pickle

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.function as fn
from conftest import np_of


class _Filler:
    """An initializer filling ``value`` (and recording its arguments in ``calls``); a module-level
    class, so that graphs holding it pickle."""

    def __init__(self, value, calls=None):
        self.value, self.calls = value, calls

    def __call__(self, shape, dtype, ctx, id_range):
        if self.calls is not None:
            self.calls.append((tuple(shape), dtype, ctx, id_range))
        return nw.init.zero_initializer(shape, dtype, ctx, id_range) + self.value


_filler = _Filler


def _t(a):
    return nwb.current().from_numpy(np.asarray(a))


def test_zero_initializer_follows_the_dtype_backend(backend_name):
    T = nwb.current()
    like = T.from_numpy(np.zeros((1, 2), np.float64))
    z = nw.init.zero_initializer((3, 2), T.dtype_of(like), T.device_object("cpu"), slice(0, 3))
    assert nwb.of(z) is T and T.dtype_name(z) == "float64"
    np.testing.assert_array_equal(np_of(z), np.zeros((3, 2)))


def test_add_nodes_fills_with_the_field_or_default_initializer(backend_name):
    T = nwb.current()
    g = nw.graph(([0, 1], [1, 2]))
    g.ndata["h"] = _t(np.arange(6, dtype=np.float32).reshape(3, 2))
    g.ndata["x"] = _t(np.array([5, 6, 7]))
    calls = []
    g.set_n_initializer(_filler(7.0, calls), field="h")
    g.add_nodes(2)
    np.testing.assert_array_equal(np_of(g.ndata["h"])[3:], np.full((2, 2), 7.0))
    np.testing.assert_array_equal(np_of(g.ndata["x"]), [5, 6, 7, 0, 0])  # no initializer: zeros
    (shape, dtype, ctx, ids), = calls
    assert shape == (2, 2) and ids == slice(3, 5)
    assert dtype == T.dtype_of(g.ndata["h"]) and str(ctx) == "cpu"
    # A default initializer covers the other fields; a feature only `data` has gets it for old rows.
    g.set_n_initializer(_filler(-1))
    g.add_nodes(1, {"h": _t(np.ones((1, 2), np.float32)), "y": _t(np.array([9.0]))})
    np.testing.assert_array_equal(np_of(g.ndata["x"]), [5, 6, 7, 0, 0, -1])
    np.testing.assert_array_equal(np_of(g.ndata["h"])[5], [1.0, 1.0])
    np.testing.assert_array_equal(np_of(g.ndata["y"]), [-1, -1, -1, -1, -1, 9])


def test_add_edges_uses_the_edge_type_initializer(backend_name):
    g = nw.heterograph({("user", "plays", "game"): ([0, 1], [0, 1]),
                        ("user", "follows", "user"): ([0], [1])})
    g.edges["plays"].data["w"] = _t(np.array([1.0, 2.0], np.float32))
    g.edges["follows"].data["w"] = _t(np.array([3.0], np.float32))
    g.nodes["game"].data["s"] = _t(np.array([1.0, 1.0], np.float32))
    calls = []
    g.set_e_initializer(_filler(4.0, calls), etype="plays")
    g.set_n_initializer(_filler(8.0), ntype="game")
    g.add_edges([2], [3], etype="plays")            # adds game nodes 2, 3 and user node 2
    g.add_edges([2], [0], etype="follows")
    np.testing.assert_array_equal(np_of(g.edges["plays"].data["w"]), [1.0, 2.0, 4.0])
    np.testing.assert_array_equal(np_of(g.edges["follows"].data["w"]), [3.0, 0.0])
    np.testing.assert_array_equal(np_of(g.nodes["game"].data["s"]), [1.0, 1.0, 8.0, 8.0])
    assert [c[3] for c in calls] == [slice(2, 3)]


def test_first_write_to_some_rows_fills_the_rest(backend_name):
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    g.set_n_initializer(_filler(2.5), field="h")
    g.set_e_initializer(_filler(-3.0))
    g.nodes[[1]].data["h"] = _t(np.array([[1.0]], np.float32))
    g.nodes[[2]].data["other"] = _t(np.array([[1.0]], np.float32))
    g.edges[[0, 2]].data["w"] = _t(np.array([5.0, 6.0], np.float32))
    np.testing.assert_array_equal(np_of(g.ndata["h"]), [[2.5], [1.0], [2.5]])
    np.testing.assert_array_equal(np_of(g.ndata["other"]), [[0.0], [0.0], [1.0]])
    np.testing.assert_array_equal(np_of(g.edata["w"]), [5.0, -3.0, 6.0])


def _mailbox_sum(nodes):
    return {"y": nodes.mailbox["m"].sum(1)}


def test_udf_reduce_leaves_nodes_without_in_edges_to_the_initializer(backend_name):
    g = nw.graph(([1, 2], [0, 0]), num_nodes=4)          # nodes 1..3 get no mail
    g.ndata["h"] = _t(np.array([[1.0], [2.0], [4.0], [8.0]], np.float32))
    g.set_n_initializer(_filler(10.0), field="y")
    g.update_all(fn.copy_u("h", "m"), _mailbox_sum)
    np.testing.assert_array_equal(np_of(g.ndata["y"]), [[6.0], [10.0], [10.0], [10.0]])
    # The apply function runs on every node, after the initializer.
    g.update_all(fn.copy_u("h", "m"), _mailbox_sum, lambda nodes: {"z": nodes.data["y"] * 2})
    np.testing.assert_array_equal(np_of(g.ndata["z"]), [[12.0], [20.0], [20.0], [20.0]])
    # Builtin reducers give 0 to such nodes (the kernel's value), as DGL.
    g.update_all(fn.copy_u("h", "m"), fn.sum("m", "b"))
    np.testing.assert_array_equal(np_of(g.ndata["b"]), [[6.0], [0.0], [0.0], [0.0]])
    # pull of a node without in-edges: its value comes from the initializer (then apply).
    g.set_n_initializer(_filler(1.0), field="p")
    g.pull([0, 3], fn.copy_u("h", "m"), lambda n: {"p": n.mailbox["m"].sum(1)},
           lambda n: {"p": n.data["p"] * 3})
    np.testing.assert_array_equal(np_of(g.ndata["p"]), [[18.0], [1.0], [1.0], [3.0]])


def test_initializers_follow_local_var_local_scope_clone_and_pickle(backend_name):
    g = nw.graph(([0, 1], [1, 1]))
    g.set_n_initializer(_filler(5.0), field="h")
    lg = g.local_var()
    lg.nodes[[0]].data["h"] = _t(np.array([1.0], np.float32))
    np.testing.assert_array_equal(np_of(lg.ndata["h"]), [1.0, 5.0])
    assert "h" not in g.ndata
    lg.set_n_initializer(_filler(6.0), field="h")       # the local graph's own setting
    g.nodes[[0]].data["h"] = _t(np.array([1.0], np.float32))
    np.testing.assert_array_equal(np_of(g.ndata["h"]), [1.0, 5.0])
    with g.local_scope():
        g.nodes[[1]].data["k"] = _t(np.array([2.0], np.float32))
        np.testing.assert_array_equal(np_of(g.ndata["k"]), [0.0, 2.0])
    c = g.clone()
    c.nodes[[1]].data["h"] = _t(np.array([4.0], np.float32))
    np.testing.assert_array_equal(np_of(c.ndata["h"]), [1.0, 4.0])
    np.testing.assert_array_equal(np_of(g.ndata["h"]), [1.0, 5.0])
    g.set_n_initializer(nw.init.zero_initializer)
    back = pickle.loads(pickle.dumps(g))
    back.add_nodes(1)
    np.testing.assert_array_equal(np_of(back.ndata["h"]), [1.0, 5.0, 5.0])


def test_block_initializer_reaches_both_sides():
    b = nw.to_block(nw.graph(([0, 1], [2, 2])), [2])    # sources 2, 0, 1
    b.set_n_initializer(_filler(3.0), field="q")
    b.srcnodes[[1]].data["q"] = nwb.current().from_numpy(np.ones((1,), np.float32))
    np.testing.assert_array_equal(np_of(b.srcdata["q"]), [3.0, 1.0, 3.0])


def test_bad_initializers_raise(backend_name):
    g = nw.graph(([0], [1]))
    g.ndata["h"] = _t(np.zeros((2, 2), np.float32))
    with pytest.raises(TypeError, match="initializer must be callable"):
        g.set_n_initializer("zeros")
    with pytest.raises(TypeError, match="field must be a feature name"):
        g.set_n_initializer(_filler(0.0), field=3)
    with pytest.raises(ValueError, match="unknown node type"):
        g.set_n_initializer(_filler(0.0), ntype="user")
    with pytest.raises(ValueError, match="unknown edge type"):
        g.set_e_initializer(_filler(0.0), etype="likes")
    g.set_n_initializer(lambda shape, dtype, ctx, ids: nw.init.zero_initializer((1,), dtype, ctx, ids))
    with pytest.raises(ValueError, match=r"ndata\['h'\]: the initializer .* must return a tensor of shape \(1, 2\)"):
        g.add_nodes(1)
    T = nwb.current()
    g.set_n_initializer(lambda shape, dtype, ctx, ids: T.zeros(shape, "float64", "cpu"))
    with pytest.raises(TypeError, match="float64 tensor for a .* float32 feature"):
        g.add_nodes(1)
    assert g.num_nodes() == 2  # nothing changed
