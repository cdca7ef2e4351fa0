"""gSpMM / gSDDMM / edge softmax / segment ops against dense NumPy references, and float64
gradchecks of every differentiable combination (native backend)."""

import itertools

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.core.autograd import gradcheck

OPS = ["add", "sub", "mul", "div", "copy_lhs", "copy_rhs"]
REDUCES = ["sum", "mean", "max", "min"]
NP_OP = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
         "copy_lhs": lambda a, b: a, "copy_rhs": lambda a, b: b}


def random_graph(rng, n=7, e=25, idtype="int64"):
    """Isolated node (n-1 never used), self-loops and multi-edges guaranteed."""
    src = np.concatenate([rng.integers(0, n - 1, e - 3), [0, 0, 2]])
    dst = np.concatenate([rng.integers(0, n - 2, e - 3), [0, 1, 1]])
    dst[-1] = 1  # duplicate 0->1 below
    src[-2] = 0
    return nw.graph((src, dst), num_nodes=n, idtype=idtype), src, dst


def ref_spmm(src, dst, n, op, reduce, x, w):
    msgs = [NP_OP[op](x[src[i]] if x is not None else None, w[i] if w is not None else None)
            for i in range(len(src))]
    shape = np.broadcast_shapes(*(m.shape for m in msgs)) if msgs else None
    out = None
    for v in range(n):
        ms = [np.broadcast_to(msgs[i], shape) for i in range(len(src)) if dst[i] == v]
        if out is None:
            feat = shape if shape is not None else ()
            out = np.zeros((n,) + tuple(feat))
        if ms:
            stack = np.stack(ms)
            out[v] = {"sum": stack.sum(0), "mean": stack.mean(0), "max": stack.max(0),
                      "min": stack.min(0)}[reduce]
    return out


@pytest.mark.parametrize("op,reduce,dtype,idtype,bcast", list(itertools.product(
    OPS, REDUCES, ["float32", "float64"], ["int32", "int64"], [False, True])))
def test_gspmm_matches_dense_reference(op, reduce, dtype, idtype, bcast):
    rng = np.random.default_rng(0)
    g, src, dst = random_graph(rng, idtype=idtype)
    x = rng.standard_normal((7, 2, 3)) + 3.0  # away from 0 for div
    # (E, 1, 3) broadcasts over x's dim 1; (E, 2, 3) matches it exactly.
    w = rng.standard_normal((len(src), 1 if bcast else 2, 3)) + 3.0
    out = nw.ops.gspmm(g, op, reduce, nc.tensor(x, dtype=dtype), nc.tensor(w, dtype=dtype))
    ref = ref_spmm(src, dst, 7, op, reduce, x, w)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out.numpy(), ref.reshape(out.shape), rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("op,reduce", list(itertools.product(OPS, REDUCES)))
def test_gspmm_gradcheck(op, reduce):
    rng = np.random.default_rng(1)
    g, src, _ = random_graph(rng, n=5, e=12)
    # Distinct values so max/min have no ties (finite differences would straddle them).
    x = nc.tensor(rng.permutation(10).reshape(5, 2) + 2.0, dtype="float64", requires_grad=True)
    w = nc.tensor(rng.permutation(12).reshape(12, 1) * 0.37 + 1.5, dtype="float64",
                  requires_grad=True)
    gradcheck(lambda a, b: nw.ops.gspmm(g, op, reduce, a, b), [x, w])


TARGET_PAIRS = [p for p in itertools.product("uev", repeat=2) if p[0] != p[1]]


@pytest.mark.parametrize("op,targets,idtype", list(itertools.product(
    ["add", "sub", "mul", "div", "dot", "copy_lhs"], TARGET_PAIRS, ["int32", "int64"])))
def test_gsddmm_matches_reference_and_gradcheck(op, targets, idtype):
    rng = np.random.default_rng(2)
    g, src, dst = random_graph(rng, n=6, e=14, idtype=idtype)
    rows = {"u": 6, "v": 6, "e": len(src)}
    pick = {"u": src, "v": dst, "e": np.arange(len(src))}
    lt, rt = targets
    a = rng.standard_normal((rows[lt], 3)) + 3.0
    b = rng.standard_normal((rows[rt], 3)) + 3.0
    out = nw.ops.gsddmm(g, op, nc.tensor(a), nc.tensor(b), lt, rt)
    A, B = a[pick[lt]], b[pick[rt]]
    ref = (A * B).sum(-1, keepdims=True) if op == "dot" else NP_OP[op](A, B)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    ta = nc.tensor(a, requires_grad=True)
    tb = nc.tensor(b, requires_grad=True)
    gradcheck(lambda p, q: nw.ops.gsddmm(g, op, p, q, lt, rt), [ta, tb])


@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_edge_softmax_reference_and_gradcheck(norm_by):
    rng = np.random.default_rng(3)
    g, src, dst = random_graph(rng)
    s = rng.standard_normal((len(src), 2))
    out = nw.ops.edge_softmax(g, nc.tensor(s), norm_by=norm_by).numpy()
    key = dst if norm_by == "dst" else src
    ref = np.zeros_like(s)
    for v in np.unique(key):
        m = key == v
        ex = np.exp(s[m] - s[m].max(0))
        ref[m] = ex / ex.sum(0)
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    t = nc.tensor(s, requires_grad=True)
    gradcheck(lambda x: nw.ops.edge_softmax(g, x, norm_by=norm_by), [t])


def test_edge_softmax_second_order():
    rng = np.random.default_rng(4)
    g, src, _ = random_graph(rng, n=5, e=10)
    t = nc.tensor(rng.standard_normal((10, 1)), requires_grad=True)
    (gr,) = nc.autograd.grad((nw.ops.edge_softmax(g, t) ** 2).sum(), [t], create_graph=True)
    gradcheck(lambda x: nc.autograd.grad((nw.ops.edge_softmax(g, x) ** 2).sum(), [x],
                                         create_graph=True)[0], [t])
    assert gr.shape == t.shape


@pytest.mark.parametrize("reducer", REDUCES)
def test_segment_reduce_reference_and_gradcheck(reducer):
    rng = np.random.default_rng(5)
    seglen = np.array([2, 0, 3, 1])
    x = rng.permutation(12).reshape(6, 2) * 1.0
    out = nw.ops.segment_reduce(seglen, nc.tensor(x), reducer).numpy()
    off = np.concatenate([[0], np.cumsum(seglen)])
    for i in range(4):
        seg = x[off[i]:off[i + 1]]
        ref = np.zeros(2) if len(seg) == 0 else getattr(np, reducer)(seg, 0)
        np.testing.assert_allclose(out[i], ref)
    gradcheck(lambda v: nw.ops.segment_reduce(seglen, v, reducer),
              [nc.tensor(x, requires_grad=True)])
    gradcheck(lambda v: nw.ops.segment_softmax(seglen, v), [nc.tensor(x, requires_grad=True)])


def test_gather_mm_and_segment_mm():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((5, 3))
    b = rng.standard_normal((2, 3, 4))
    idx = np.array([1, 0, 1, 1, 0])
    out = nw.ops.gather_mm(nc.tensor(a), nc.tensor(b), idx_b=nc.tensor(idx)).numpy()
    np.testing.assert_allclose(out, np.einsum("nk,nkj->nj", a, b[idx]), rtol=1e-12)
    seg = nw.ops.segment_mm(nc.tensor(a), nc.tensor(b), [2, 3]).numpy()
    np.testing.assert_allclose(seg, np.concatenate([a[:2] @ b[0], a[2:] @ b[1]]), rtol=1e-12)
    ta, tb = nc.tensor(a, requires_grad=True), nc.tensor(b, requires_grad=True)
    gradcheck(lambda p, q: nw.ops.gather_mm(p, q, idx_b=nc.tensor(idx)), [ta, tb])
    gradcheck(lambda p, q: nw.ops.segment_mm(p, q, [2, 3]), [ta, tb])


def test_builtin_update_all_equals_udf_and_dense():
    import nodeweave.function as fn
    rng = np.random.default_rng(7)
    g, src, dst = random_graph(rng)
    x = rng.standard_normal((7, 4))
    w = rng.standard_normal((len(src), 1))
    g.ndata["h"] = nc.tensor(x)
    g.edata["w"] = nc.tensor(w)
    for red in REDUCES:
        g.update_all(fn.u_mul_e("h", "w", "m"), getattr(fn, red)("m", "b"))
        g.update_all(lambda e: {"m": e.src["h"] * e.data["w"]},
                     lambda n, r=red: {"u": getattr(n.mailbox["m"], {"min": "amin", "max": "amax"}
                                                    .get(r, r))(1)})
        ref = ref_spmm(src, dst, 7, "mul", red, x, w)
        np.testing.assert_allclose(g.ndata["b"].numpy(), ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g.ndata["u"].numpy(), ref, rtol=1e-12, atol=1e-12)


def test_bad_inputs_raise_clear_errors():
    g = nw.graph(([0, 1], [1, 2]), num_nodes=3)
    with pytest.raises(ValueError, match="lhs has 2 rows but the graph has 3 source nodes"):
        nw.ops.gspmm(g, "copy_lhs", "sum", nc.zeros(2, 4), None)
    with pytest.raises(TypeError, match="float32 or float64"):
        nw.ops.gspmm(g, "copy_lhs", "sum", nc.zeros(3, 4, dtype="int64"), None)
    with pytest.raises(TypeError, match="same dtype"):
        nw.ops.gspmm(g, "mul", "sum", nc.zeros(3, 4), nc.zeros(2, 4, dtype="float64"))
    with pytest.raises(ValueError, match="op must be one of"):
        nw.ops.gspmm(g, "pow", "sum", nc.zeros(3, 4), None)
    with pytest.raises(ValueError):
        nw.ops.gsddmm(g, "add", nc.zeros(3, 4), nc.zeros(3, 5), "u", "v")
    with pytest.raises(ValueError, match="rows"):
        nw.ops.edge_softmax(g, nc.zeros(3, 1))


def test_empty_graph_and_edgeless_graph():
    g = nw.graph(([], []), num_nodes=4)
    x = nc.ones(4, 2, requires_grad=True)
    for red in REDUCES:
        out = nw.ops.copy_u_sum(g, x) if red == "sum" else nw.ops.gspmm(g, "copy_lhs", red, x, None)
        assert out.tolist() == [[0.0, 0.0]] * 4
        out.sum().backward()
    e = nw.graph(([], []), num_nodes=0)
    assert nw.ops.copy_u_sum(e, nc.zeros(0, 3)).shape == (0, 3)


def test_partial_updates_and_multi_update_all():
    import nodeweave.function as fn
    g = nw.graph(([0, 1, 2, 0], [1, 2, 0, 2]), num_nodes=3)
    x = np.array([[1.0], [2.0], [4.0]])
    g.ndata["h"] = nc.tensor(x)
    g.ndata["a"] = nc.tensor(np.full((3, 1), -1.0))
    g.pull([2], fn.copy_u("h", "m"), fn.sum("m", "a"))
    assert g.ndata["a"].tolist() == [[-1.0], [-1.0], [3.0]]  # only node 2 changes: 1 + 2
    g.apply_nodes(lambda n: {"a": n.data["h"] * 10}, v=[0])
    assert g.ndata["a"].tolist() == [[10.0], [-1.0], [3.0]]
    hg = nw.heterograph({("u", "r1", "v"): ([0, 1], [0, 0]), ("u", "r2", "v"): ([1], [1])},
                        num_nodes_dict={"u": 2, "v": 2})
    hg.nodes["u"].data["h"] = nc.tensor([[1.0], [2.0]])
    hg.multi_update_all({"r1": (fn.copy_u("h", "m"), fn.sum("m", "o")),
                         "r2": (fn.copy_u("h", "m"), fn.sum("m", "o"))}, "sum")
    assert hg.nodes["v"].data["o"].tolist() == [[3.0], [2.0]]
