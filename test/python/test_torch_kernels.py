"""The PyTorch binding of the graph kernels (nodeweave.backend.pytorch / torch_autograd).

- zero-copy: the address the C++ kernel views is the torch tensor's own address, outputs are the
  torch tensors the binding allocated, and the extension does not link against libtorch;
- values: every gSpMM / gSDDMM op, edge softmax, segment ops, gather_mm and segment_mm on torch
  tensors equal the native engine's results on the same data (same kernels) and a dense NumPy
  reference;
- gradients: torch.autograd.gradcheck (float64 central differences) for every op, second
  derivatives for the ops whose backward is itself built from kernels, and grad_fn types;
- half precision and autocast, bad inputs, and message passing with torch features.
"""

import itertools
import subprocess

import numpy as np
import pytest
import torch
from torch.utils.dlpack import to_dlpack

import nodeweave as nw
import nodeweave.core as nc
from nodeweave import _C
from nodeweave.backend import torch_autograd as TA
from nodeweave.backend import torch_kernels as TK

SPMM_OPS = ("add", "sub", "mul", "div", "copy_lhs", "copy_rhs")
REDUCES = ("sum", "mean", "max", "min")
SDDMM_OPS = ("add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs")


@pytest.fixture
def graph():
    """8 nodes with a self-loop, multi-edges, a node without in-edges (7) and one without out-edges."""
    src = np.array([0, 1, 2, 3, 4, 5, 6, 0, 0, 2, 5, 1, 3])
    dst = np.array([1, 2, 3, 4, 5, 6, 0, 1, 0, 6, 3, 4, 3])
    return nw.graph((src, dst), num_nodes=8), src, dst


def rel_of(g):
    return g._rels[g.canonical_etypes[0]]


def positive(rng, shape, dtype=np.float64):
    """Values in [0.5, 1.5): away from 0 (divisors), and almost surely without the ties (also
    between sums of two operands) that would put max/min on a kink of its gradient."""
    return (0.5 + rng.random(shape)).astype(dtype)


# ------------------------------------------------------------------------------------- zero-copy
def test_kernel_view_is_the_torch_memory():
    base = torch.arange(40, dtype=torch.float32).reshape(10, 4)
    for t in (base, base[3:7], base[:, 1:]):
        assert _C.dlpack_kernels.view_address(to_dlpack(t)) == t.data_ptr()


def test_kernel_writes_into_the_torch_allocated_output(graph):
    g, src, dst = graph
    x = torch.arange(16, dtype=torch.float64).reshape(8, 2)
    out = torch.full((8, 2), -1.0, dtype=torch.float64)
    before = out.data_ptr()
    _C.dlpack_kernels.spmm(rel_of(g), "copy_lhs", "sum", to_dlpack(x), None, to_dlpack(out), None,
                           None, 0)
    assert out.data_ptr() == before
    ref = np.zeros((8, 2))
    np.add.at(ref, dst, x.numpy()[src])
    np.testing.assert_array_equal(out.numpy(), ref)


def test_extension_does_not_link_libtorch():
    so = _C.__file__
    needed = subprocess.run(["readelf", "-d", so], capture_output=True, text=True, check=True).stdout
    assert "NEEDED" in needed
    assert "torch" not in needed and "c10" not in needed


def test_capsule_errors():
    x = torch.ones(3, 2)
    cap = to_dlpack(x)
    torch.utils.dlpack.from_dlpack(cap)  # consumes it
    with pytest.raises(ValueError, match="already consumed"):
        _C.dlpack_kernels.view_address(cap)
    with pytest.raises(TypeError, match="DLPack capsule"):
        _C.dlpack_kernels.view_address(x)


# ---------------------------------------------------------------------------------------- values
def dense_spmm(op, red, x, w, src, dst, n):
    """Per-edge messages reduced per destination with NumPy (0 where a node has no in-edge)."""
    lhs = x[src] if x is not None else None
    m = {"add": lambda: lhs + w, "sub": lambda: lhs - w, "mul": lambda: lhs * w,
         "div": lambda: lhs / w, "copy_lhs": lambda: lhs, "copy_rhs": lambda: w}[op]()
    out = np.zeros((n,) + m.shape[1:])
    for v in range(n):
        rows = m[dst == v]
        if len(rows):
            out[v] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0),
                      "min": rows.min(0)}[red]
    return out


@pytest.mark.parametrize("op,red", list(itertools.product(SPMM_OPS, REDUCES)))
def test_gspmm_matches_native_and_dense(graph, rng, op, red):
    g, src, dst = graph
    x = positive(rng, (8, 3))
    w = positive(rng, (len(src), 1))  # broadcasts over the 3 features
    lt = torch.from_numpy(x) if op != "copy_rhs" else None
    rt = torch.from_numpy(w) if op != "copy_lhs" else None
    got = nw.ops.gspmm(g, op, red, lt, rt)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float64
    ref_native = nw.ops.gspmm(g, op, red, nc.tensor(x) if lt is not None else None,
                              nc.tensor(w) if rt is not None else None)
    np.testing.assert_array_equal(got.numpy(), ref_native.numpy())
    np.testing.assert_allclose(got.numpy(), dense_spmm(op, red, x, w, src, dst, 8), rtol=1e-12)


@pytest.mark.parametrize("op", SDDMM_OPS)
@pytest.mark.parametrize("lt,rt", [("u", "v"), ("u", "e"), ("e", "v"), ("v", "u")])
def test_gsddmm_matches_native(graph, rng, op, lt, rt):
    g, src, dst = graph
    rows = {"u": 8, "v": 8, "e": len(src)}
    x, y = positive(rng, (rows[lt], 2, 3)), positive(rng, (rows[rt], 2, 3))
    got = nw.ops.gsddmm(g, op, torch.from_numpy(x), torch.from_numpy(y), lt, rt)
    want = nw.ops.gsddmm(g, op, nc.tensor(x), nc.tensor(y), lt, rt)
    np.testing.assert_array_equal(got.detach().numpy(), want.numpy())
    pick = {"u": src, "v": dst, "e": np.arange(len(src))}
    a, b = x[pick[lt]], y[pick[rt]]
    dense = {"add": a + b, "sub": a - b, "mul": a * b, "div": a / b,
             "dot": (a * b).sum(-1, keepdims=True), "copy_lhs": a, "copy_rhs": b}[op]
    np.testing.assert_allclose(got.numpy(), dense, rtol=1e-12)


@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_edge_softmax_matches_dense(graph, rng, norm_by):
    g, src, dst = graph
    s = rng.standard_normal((len(src), 2))
    got = nw.ops.edge_softmax(g, torch.from_numpy(s), norm_by=norm_by).numpy()
    key = dst if norm_by == "dst" else src
    ref = np.empty_like(s)
    for v in np.unique(key):
        e = key == v
        z = np.exp(s[e] - s[e].max(0))
        ref[e] = z / z.sum(0)
    np.testing.assert_allclose(got, ref, rtol=1e-12)


@pytest.mark.parametrize("red", REDUCES)
def test_segment_reduce_matches_native(rng, red):
    x = positive(rng, (9, 2))
    seglen = [2, 0, 4, 3]
    got = nw.ops.segment_reduce(torch.tensor(seglen), torch.from_numpy(x), red)
    want = nw.ops.segment_reduce(nc.tensor(seglen), nc.tensor(x), red)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_typed_matmuls_match_dense(rng):
    a, b = rng.standard_normal((6, 3)), rng.standard_normal((2, 3, 4))
    types = np.array([1, 0, 1, 1, 0, 0])
    got = nw.ops.gather_mm(torch.from_numpy(a), torch.from_numpy(b), idx_b=torch.from_numpy(types))
    np.testing.assert_allclose(got.numpy(), np.einsum("ik,ikn->in", a, b[types]), rtol=1e-12)
    got = nw.ops.segment_mm(torch.from_numpy(a), torch.from_numpy(b), [2, 4])
    ref = np.concatenate([a[:2] @ b[0], a[2:] @ b[1]])
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)


# ------------------------------------------------------------------------------------- gradients
def leaf(rng, shape, positive_values=False):
    v = positive(rng, shape) if positive_values else rng.standard_normal(shape)
    return torch.tensor(v, dtype=torch.float64, requires_grad=True)


@pytest.mark.parametrize("op,red", list(itertools.product(SPMM_OPS, REDUCES)))
def test_gspmm_gradcheck(graph, rng, op, red):
    g = graph[0]
    x = leaf(rng, (8, 1, 3), True) if op != "copy_rhs" else None
    w = leaf(rng, (13, 2, 1), True) if op != "copy_lhs" else None  # broadcast on both sides
    inputs = tuple(t for t in (x, w) if t is not None)

    def f(*ts):
        it = iter(ts)
        return nw.ops.gspmm(g, op, red, next(it) if x is not None else None,
                            next(it) if w is not None else None)

    assert torch.autograd.gradcheck(f, inputs)
    assert type(f(*inputs).grad_fn).__name__ == "GSpMMBackward"


@pytest.mark.parametrize("op", SDDMM_OPS)
@pytest.mark.parametrize("lt,rt", [("u", "v"), ("v", "u"), ("u", "e"), ("e", "v")])
def test_gsddmm_gradcheck(graph, rng, op, lt, rt):
    g = graph[0]
    rows = {"u": 8, "v": 8, "e": 13}
    x = leaf(rng, (rows[lt], 2, 3), True)
    y = leaf(rng, (rows[rt], 1, 3), True)
    assert torch.autograd.gradcheck(lambda a, b: nw.ops.gsddmm(g, op, a, b, lt, rt), (x, y))


@pytest.mark.parametrize("op", ["mul", "div", "dot", "sub"])
def test_gsddmm_second_derivatives(graph, rng, op):
    g = graph[0]
    x, y = leaf(rng, (8, 3), True), leaf(rng, (8, 3), True)
    assert torch.autograd.gradgradcheck(lambda a, b: nw.ops.gsddmm(g, op, a, b, "u", "v"), (x, y))


@pytest.mark.parametrize("op", ["mul", "copy_lhs", "div"])
def test_gspmm_second_derivatives(graph, rng, op):
    g = graph[0]
    x, w = leaf(rng, (8, 2), True), leaf(rng, (13, 2), True)
    assert torch.autograd.gradgradcheck(
        lambda a, b: nw.ops.gspmm(g, op, "sum", a, None if op == "copy_lhs" else b), (x, w))


@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_edge_softmax_gradcheck_and_second_order(graph, rng, norm_by):
    g = graph[0]
    s = leaf(rng, (13, 2))
    f = lambda t: nw.ops.edge_softmax(g, t, norm_by=norm_by)  # noqa: E731
    assert torch.autograd.gradcheck(f, (s,))
    assert torch.autograd.gradgradcheck(f, (s,))
    assert type(f(s).grad_fn).__name__ == "EdgeSoftmaxBackward"


@pytest.mark.parametrize("red", REDUCES)
def test_segment_reduce_gradcheck(rng, red):
    x = leaf(rng, (9, 2), True)
    assert torch.autograd.gradcheck(lambda t: nw.ops.segment_reduce([2, 0, 4, 3], t, red), (x,))


def test_segment_softmax_gradcheck(rng):
    x = leaf(rng, (9, 2))
    f = lambda t: nw.ops.segment_softmax([2, 0, 4, 3], t)  # noqa: E731
    assert torch.autograd.gradcheck(f, (x,))
    assert torch.autograd.gradgradcheck(f, (x,))


def test_typed_matmul_gradchecks(rng):
    a, b = leaf(rng, (6, 3)), leaf(rng, (2, 3, 4))
    ia = torch.tensor([5, 0, 2, 2, 1, 3])
    ib = torch.tensor([1, 0, 1, 1, 0, 0])
    gm = lambda x, w: nw.ops.gather_mm(x, w, idx_a=ia, idx_b=ib)  # noqa: E731
    sm = lambda x, w: nw.ops.segment_mm(x, w, [2, 4])  # noqa: E731
    for f in (gm, sm):
        assert torch.autograd.gradcheck(f, (a, b))
        assert torch.autograd.gradgradcheck(f, (a, b))


def test_gradients_match_native(graph, rng):
    """One GAT-like chain (u_add_v, edge softmax, u_mul_e sum) on both backends."""
    g = graph[0]
    x, el = rng.standard_normal((8, 2, 3)), rng.standard_normal((8, 2, 1))
    up = rng.standard_normal((8, 2, 3))

    def run(mk, grad_of):
        xs, es = mk(x), mk(el)
        e = nw.ops.u_add_v(g, es, es)
        a = nw.ops.edge_softmax(g, e)
        out = nw.ops.u_mul_e_sum(g, xs, a)
        (out * mk(up, False)).sum().backward()
        return [grad_of(t) for t in (xs, es)]

    tg = run(lambda a, rg=True: torch.tensor(a, requires_grad=rg), lambda t: t.grad.numpy())
    ng = run(lambda a, rg=True: nc.tensor(a, requires_grad=rg), lambda t: t.grad.numpy())
    for a, b in zip(tg, ng):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------------ half precision, autocast
def test_half_features_compute_in_float32_and_come_back(graph):
    g = graph[0]
    x = torch.randn(8, 4).to(torch.bfloat16).requires_grad_()
    out = nw.ops.copy_u_sum(g, x)
    assert out.dtype == torch.bfloat16
    ref = nw.ops.copy_u_sum(g, x.detach().float())
    torch.testing.assert_close(out.float(), ref, rtol=1e-2, atol=1e-2)
    out.float().sum().backward()
    assert x.grad.dtype == torch.bfloat16


def test_autocast_keeps_working(graph):
    g = nw.add_self_loop(graph[0])
    nw.set_backend("pytorch")
    try:
        from nodeweave.nn.pytorch import GATConv, GraphConv

        model = torch.nn.ModuleList([GraphConv(4, 8), GATConv(8, 3, num_heads=2)])
        x = torch.randn(g.num_nodes(), 4)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = model[0](g, x)
            out = model[1](g, h)
        assert out.dtype in (torch.float32, torch.bfloat16)
        out.float().sum().backward()
        assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    finally:
        nw.set_backend("native")


# ------------------------------------------------------------------------------------- bad inputs
def test_bad_inputs_raise_clear_errors(graph):
    g = graph[0]
    with pytest.raises(ValueError, match="lhs has 5 rows"):
        nw.ops.copy_u_sum(g, torch.ones(5, 2))
    with pytest.raises(TypeError, match="float32 or float64"):
        nw.ops.copy_u_sum(g, torch.ones(8, 2, dtype=torch.int64))
    with pytest.raises(TypeError, match="same dtype"):
        nw.ops.u_mul_e_sum(g, torch.ones(8, 2), torch.ones(13, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="do not broadcast"):
        nw.ops.u_add_e_sum(g, torch.ones(8, 2), torch.ones(13, 3))
    with pytest.raises(ValueError, match="dot"):
        nw.ops.u_dot_v(g, torch.ones(8, 2), torch.ones(8, 3))
    with pytest.raises(ValueError, match="x has 4 rows but offsets\\[-1\\] is 5"):
        nw.ops.segment_reduce([3, 2], torch.ones(4, 1))
    with pytest.raises(IndexError):
        nw.ops.gather_mm(torch.ones(2, 3), torch.ones(2, 3, 4), idx_b=torch.tensor([0, 5]))
    with pytest.raises(ValueError, match="seglen sums to"):
        nw.ops.segment_mm(torch.ones(4, 3), torch.ones(2, 3, 4), [1, 2])


def test_empty_graph_and_no_edges():
    g = nw.graph(([], []), num_nodes=3)
    x = torch.ones(3, 2, requires_grad=True)
    out = nw.ops.copy_u_max(g, x)
    assert out.tolist() == [[0.0, 0.0]] * 3
    out.sum().backward()
    assert x.grad is None or float(x.grad.abs().sum()) == 0.0
    assert nw.ops.edge_softmax(g, torch.ones(0, 1)).shape == (0, 1)


# ------------------------------------------------------------------------- message passing, frames
def test_message_passing_with_torch_features(graph):
    g, src, dst = graph
    import nodeweave.function as fn

    x = torch.randn(8, 3, dtype=torch.float64, requires_grad=True)
    g.ndata["h"] = x
    g.update_all(fn.copy_u("h", "m"), fn.sum("m", "fused"))
    g.update_all(lambda e: {"m": e.src["h"]}, lambda n: {"udf": n.mailbox["m"].sum(1)})
    assert isinstance(g.ndata["fused"], torch.Tensor)
    torch.testing.assert_close(g.ndata["fused"], g.ndata["udf"])
    g.apply_edges(fn.u_dot_v("h", "h", "s"))
    assert g.edata["s"].shape == (len(src), 1)
    (g.ndata["fused"].sum() + g.edata["s"].sum()).backward()
    assert x.grad is not None and x.grad.shape == (8, 3)


def test_graph_queries_follow_the_active_backend(graph):
    g = graph[0]
    assert isinstance(g.in_degrees(), nc.Tensor)
    nw.set_backend("pytorch")
    try:
        assert isinstance(g.in_degrees(), torch.Tensor)
        assert isinstance(g.edges()[0], torch.Tensor) and g.edges()[0].dtype == torch.int64
    finally:
        nw.set_backend("native")


@pytest.mark.parametrize("backend", ["native", "pytorch"])
def test_backward_caches_the_reverse_graphs_csc_on_the_graph(backend):
    """The input gradient walks the reversed graph's in-edges, which are the graph's out-edge CSR:
    the first backward builds it on the graph itself, so later passes do not sort the edges again."""
    nw.set_backend(backend)
    g = nw.graph(([0, 1, 2, 2], [1, 2, 0, 1]), num_nodes=3)
    (rel,) = g._rels.values()
    x = (torch if backend == "pytorch" else nc).ones((3, 2), requires_grad=True)
    nw.ops.copy_u_sum(g, x).sum().backward()
    assert "csr" in rel.created_formats
    np.testing.assert_allclose(x.grad.numpy(), [[1, 1], [1, 1], [2, 2]])
