"""Node/edge features: frames, views, local_scope, repr, and the backend utilities they use."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as backend
import nodeweave.core as nc
from nodeweave.backend import native as B
from nodeweave.graph import Frame


def _g():
    return nw.graph(([0, 1, 2, 3], [1, 2, 3, 4]))


def test_ndata_edata_round_trip(rng):
    g = _g()
    x = nc.tensor(rng.standard_normal((5, 3)).astype(np.float32))
    g.ndata["x"] = x
    g.edata["w"] = nc.arange(4.0)
    assert g.ndata["x"] is x and "x" in g.ndata and len(g.ndata) == 1 and list(g.ndata) == ["x"]
    assert g.nodes["_N"].data["x"] is x and g.srcdata["x"] is x and g.dstdata["x"] is x
    assert g.edges["_E"].data["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert g.edges[("_N", "_E", "_N")].data["w"] is g.edata["w"]
    del g.ndata["x"]
    assert "x" not in g.ndata
    with pytest.raises(KeyError, match="no feature 'x'"):
        g.ndata["x"]
    with pytest.raises(KeyError):
        del g.edata["nothing"]
    assert g.nodes().tolist() == [0, 1, 2, 3, 4]
    assert len(g.nodes) == 5 and len(g.edges) == 4


@pytest.mark.parametrize("setter,msg", [
    (lambda g: g.ndata.__setitem__("h", nc.ones(4)), r"ndata\['h'\]: expected 5 rows \(one per node\), got 4"),
    (lambda g: g.edata.__setitem__("w", nc.ones(5, 2)), r"edata\['w'\]: expected 4 rows \(one per edge\), got 5"),
    (lambda g: g.ndata.__setitem__("s", nc.tensor(1.0)), "0-dimensional"),
])
def test_wrong_rows_raise(setter, msg):
    g = _g()
    with pytest.raises(ValueError, match=msg):
        setter(g)
    assert len(g.ndata) == 0 and len(g.edata) == 0


def test_non_tensor_and_bad_name():
    g = _g()
    with pytest.raises(TypeError, match="expected a tensor, got ndarray"):
        g.ndata["h"] = np.ones(5)
    with pytest.raises(TypeError, match="strings"):
        g.ndata[3] = nc.ones(5)


def test_device_mismatch_is_refused():
    f = Frame(2, name="ndata", row_name="node", device="cuda:0")
    with pytest.raises(ValueError, match=r"ndata\['h'\]: the tensor is on cpu but the graph is on cuda:0"):
        f["h"] = nc.ones(2)


def test_local_scope_discards_new_features_but_keeps_inplace_writes():
    g = _g()
    g.ndata["h"] = nc.zeros(5)
    g.edata["w"] = nc.ones(4)
    with g.local_scope():
        g.ndata["h"] = nc.ones(5) * 7
        g.ndata["tmp"] = nc.ones(5)
        del g.edata["w"]
        assert g.ndata["h"].tolist() == [7.0] * 5
        with g.local_scope():
            g.ndata["inner"] = nc.ones(5)
        assert "inner" not in g.ndata
    assert g.ndata["h"].tolist() == [0.0] * 5
    assert "tmp" not in g.ndata and "w" in g.edata
    with g.local_scope():
        g.ndata["h"].add_(1.0)  # in-place on the shared tensor shows through, as in DGL
    assert g.ndata["h"].tolist() == [1.0] * 5
    with pytest.raises(RuntimeError):
        with g.local_scope():
            g.ndata["gone"] = nc.ones(5)
            raise RuntimeError("boom")
    assert "gone" not in g.ndata


def test_heterograph_features():
    g = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 2]),
                        ("user", "plays", "game"): ([0, 2, 2], [1, 0, 1])})
    g.nodes["user"].data["h"] = nc.ones(3, 2)
    g.nodes["game"].data["h"] = nc.zeros(2, 2)
    h = g.ndata["h"]
    assert set(h) == {"user", "game"} and h["game"].shape == (2, 2)
    g.ndata["y"] = {"game": nc.tensor([1.0, 2.0])}
    assert g.nodes["game"].data["y"].tolist() == [1.0, 2.0] and "y" not in g.nodes["user"].data
    assert set(g.ndata) == {"h", "y"} and "y" in g.ndata
    with pytest.raises(TypeError, match="dict"):
        g.ndata["z"] = nc.ones(3)
    with pytest.raises(ValueError, match=r"nodes\['user'\].data\['z'\]: expected 3 rows"):
        g.ndata["z"] = {"game": nc.ones(2), "user": nc.ones(4)}
    assert "z" not in g.ndata  # nothing stored when one type is wrong
    g.edata["w"] = {"plays": nc.ones(3), ("user", "follows", "user"): nc.zeros(2)}
    assert g.edges["plays"].data["w"].tolist() == [1.0, 1.0, 1.0]
    assert set(g.edata["w"]) == {("user", "plays", "game"), ("user", "follows", "user")}
    with pytest.raises(ValueError, match="unknown node type 'item'"):
        g.nodes["item"]
    with pytest.raises(ValueError, match="unknown edge type 'likes'"):
        g.edges["likes"]
    with pytest.raises(ValueError, match="unknown node type 'x'"):
        g.ndata["q"] = {"x": nc.ones(1)}
    del g.ndata["h"]
    assert "h" not in g.nodes["game"].data and "h" not in g.nodes["user"].data
    with g.local_scope():
        g.nodes["game"].data["tmp"] = nc.ones(2)
    assert "tmp" not in g.nodes["game"].data


def test_bipartite_src_dst_data():
    g = nw.heterograph({("user", "buys", "item"): ([0, 1], [2, 0])})
    g.srcdata["x"] = nc.ones(2)
    g.dstdata["x"] = nc.zeros(3)
    assert g.nodes["user"].data["x"].tolist() == [1.0, 1.0]
    assert g.nodes["item"].data["x"].tolist() == [0.0, 0.0, 0.0]
    assert g.srcnodes().tolist() == [0, 1] and g.dstnodes().tolist() == [0, 1, 2]
    assert g.edata is not None and len(g.edata) == 0


def test_features_survive_conversions():
    g = _g()
    g.ndata["h"] = nc.ones(5)
    for h in (g.int(), g.formats("csc"), g.to("cpu")):
        assert h.ndata["h"].tolist() == [1.0] * 5
    gi = g.int()
    gi.ndata["new"] = nc.ones(5)
    assert "new" not in g.ndata  # converted graphs have their own frames


def test_repr():
    g = _g()
    g.ndata["h"] = nc.ones(5, 3)
    g.edata["w"] = nc.ones(4, dtype=nc.float64)
    assert repr(g) == ("Graph(num_nodes=5, num_edges=4,\n"
                       "      ndata_schemes={'h': Scheme(shape=(3,), dtype=nodeweave.core.float32)}\n"
                       "      edata_schemes={'w': Scheme(shape=(), dtype=nodeweave.core.float64)})")
    h = nw.heterograph({("a", "r", "b"): ([0], [1])})
    assert repr(h) == ("Graph(num_nodes={'a': 1, 'b': 2},\n"
                       "      num_edges={('a', 'r', 'b'): 1},\n"
                       "      metagraph=[('a', 'b', 'r')])")


def test_frame_subframe_and_shallow_clone(rng):
    x = rng.standard_normal((6, 2)).astype(np.float32)
    f = Frame(6, {"x": nc.tensor(x), "i": nc.arange(6)}, name="ndata", row_name="node")
    idx = np.array([5, 0, 0, 3])
    s = f.subframe(idx)
    assert s.num_rows == 4
    np.testing.assert_array_equal(s["x"].numpy(), x[idx])
    assert s["i"].tolist() == [5, 0, 0, 3]
    with pytest.raises(IndexError, match="row 6 is out of range"):
        f.subframe([6])
    c = f.clone_shallow()
    c["y"] = nc.ones(6)
    del c["i"]
    assert set(f) == {"x", "i"} and set(c) == {"x", "y"}
    assert c["x"] is f["x"]
    f.update({"a": nc.ones(6), "b": nc.ones(6)})
    with pytest.raises(ValueError):
        f.update({"c": nc.ones(6), "d": nc.ones(2)})
    assert "c" not in f
    with pytest.raises(ValueError, match="num_rows"):
        Frame(-1)
    assert "Frame(num_rows=6" in repr(f)


def test_batch_info_defaults_and_setters():
    g = _g()
    assert g.batch_size == 1 and g.batch_num_nodes().tolist() == [5] and g.batch_num_edges().tolist() == [4]
    g.set_batch_num_nodes(np.array([2, 3]))
    g.set_batch_num_edges([1, 3])
    assert g.batch_size == 2 and g.batch_num_nodes().tolist() == [2, 3] and g.batch_num_edges().tolist() == [1, 3]
    with pytest.raises(ValueError, match="sums to 4"):
        g.set_batch_num_nodes([2, 2])


# ----------------------------------------------------------------------------- backend


def test_native_backend_functions():
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    t = B.from_numpy(a)
    assert B.is_tensor(t) and not B.is_tensor(a)
    assert B.shape(t) == (4, 3) and B.dtype_name(t) == "float32" and B.device_str(t) == "cpu"
    a[0, 0] = 100.0  # from_numpy copies
    assert B.to_numpy(t)[0, 0] == 0.0
    np.testing.assert_array_equal(B.to_numpy(B.index_select(t, np.array([3, 1]))), np.arange(12).reshape(4, 3)[[3, 1]])
    np.testing.assert_array_equal(B.to_numpy(B.index_select(t, nc.tensor([2]))), [[6, 7, 8]])
    assert B.shape(B.cat([t, t])) == (8, 3) and B.shape(B.cat([t, t], dim=1)) == (4, 6)
    z = B.zeros((2, 2), "int32")
    assert B.dtype_name(z) == "int32" and B.to_numpy(z).tolist() == [[0, 0], [0, 0]]
    assert B.dtype_name(B.zeros((1,), np.float64)) == "float64"
    assert B.dtype_name(B.tensor([1, 2], "int64")) == "int64"
    assert B.dtype_name(B.int_tensor(np.array([1], np.int32))) == "int32"
    assert B.dtype_name(B.int_tensor(np.array([1], np.uint8))) == "int64"
    assert B.dtype_name(B.int_tensor(np.array([1]), "cpu", "int32")) == "int32"
    assert B.to_device(t, "cpu") is t
    assert B.canonical_device(None) == "cpu" and B.canonical_device("cuda") == "cuda:0"
    assert B.canonical_device(nc.device("cpu")) == "cpu"
    with pytest.raises(ValueError, match="device"):
        B.canonical_device("gpu7")


def test_backend_selection(monkeypatch):
    assert backend.current() is B
    with pytest.raises(ValueError, match="unknown backend 'jax'"):
        backend.set_backend("jax")
    with pytest.raises(TypeError, match="string"):
        backend.set_backend(3)
    assert nw.set_backend("pytorch").name == "pytorch" and backend.current().name == "pytorch"
    assert nw.set_backend("torch").name == "pytorch"
    assert backend.set_backend("native") is B and backend.current() is B
    monkeypatch.setattr(backend, "_active", None)
    monkeypatch.setenv("NODEWEAVE_BACKEND", "native")
    assert backend.current() is B
    monkeypatch.setattr(backend, "_active", None)
    monkeypatch.setenv("NODEWEAVE_BACKEND", "PyTorch")
    assert backend.current().name == "pytorch"
    monkeypatch.setattr(backend, "_active", B)
    monkeypatch.setattr(backend, "_active", None)
    monkeypatch.setenv("NODEWEAVE_BACKEND", "mxnet")
    with pytest.raises(ValueError, match="mxnet"):
        backend.current()
    monkeypatch.setattr(backend, "_active", B)


def test_row_subset_views_read_and_write():
    g = nw.heterograph({("a", "r", "b"): ([0, 1, 2, 2], [0, 0, 1, 1]), ("b", "s", "a"): ([1], [2])})
    g.nodes["a"].data["h"] = nc.tensor([[1.0], [2.0], [3.0]])
    assert g.nodes[("a", [2, 0])].data["h"].tolist() == [[3.0], [1.0]]
    assert g.nodes[("a", slice(1, None))].data["h"].tolist() == [[2.0], [3.0]]
    g.nodes[("a", nc.tensor([1]))].data["h"] = nc.tensor([[-2.0]])
    assert g.nodes["a"].data["h"].tolist() == [[1.0], [-2.0], [3.0]]
    # a new feature written on some rows is zero elsewhere, with the value's trailing shape and dtype
    g.nodes[("b", [1])].data["y"] = nc.tensor([[7, 8]], dtype=nc.int64)
    y = g.nodes["b"].data["y"]
    assert y.dtype == nc.int64 and y.tolist() == [[0, 0], [7, 8]]
    # edges: by (etype, ids) and by node pairs
    g.edges[("r", [3])].data["w"] = nc.tensor([4.0])
    assert g.edges["r"].data["w"].tolist() == [0.0, 0.0, 0.0, 4.0]
    assert g.edges[("a", "r", "b"), [3]].data["w"].tolist() == [4.0]
    hg = nw.graph(([0, 1, 2], [1, 2, 0]))
    hg.edata["w"] = nc.tensor([1.0, 2.0, 3.0])
    assert hg.edges[[1, 2], [2, 0]].data["w"].tolist() == [2.0, 3.0]
    assert hg.edges[1, 2].data["w"].tolist() == [2.0]
    assert hg.edges[[0]].data["w"].tolist() == [1.0]


def test_row_subset_write_is_differentiable():
    g = nw.graph(([0, 1], [1, 2]))
    x = nc.ones(2, 3, requires_grad=True)
    g.nodes[[2, 0]].data["h"] = x * nc.tensor([[1.0], [2.0]])
    g.ndata["h"].sum().backward()
    assert x.grad.tolist() == [[1.0] * 3, [2.0] * 3]


def test_row_subset_bad_input():
    g = nw.graph(([0, 1], [1, 2]))
    g.ndata["h"] = nc.zeros(3, 2)
    with pytest.raises(IndexError, match=r"nodes\[\.\.\.\]\[1\] = 3 is out of range"):
        g.nodes[[0, 3]].data["h"]
    with pytest.raises(IndexError, match="out of range"):
        g.edges[[-1]].data
    with pytest.raises(ValueError, match="expected a tensor with 2 rows"):
        g.nodes[[0, 1]].data["h"] = nc.zeros(3, 2)
    with pytest.raises(ValueError, match="no edge 2 -> 0"):
        g.edges[2, 0]
    with pytest.raises(TypeError, match="cannot delete"):
        del g.nodes[[0]].data["h"]
