"""User-defined edge functions on the PyTorch backend, with endpoint reads deferred
(nodeweave.graph.edge_operands): every result and gradient must equal the literal computation
(gather the rows with torch indexing, then run the function as written), in float64; the fused
kernels must run where the module says they do (a spy on gsddmm), and everything else must fall
back to the gathered tensor."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import nodeweave as nw  # noqa: E402
import nodeweave.backend as nwb  # noqa: E402
import nodeweave.ops as nw_ops  # noqa: E402
from nodeweave.graph import edge_operands  # noqa: E402

N, E = 9, 40


@pytest.fixture
def torch_backend():
    nwb.set_backend("pytorch")
    yield
    nwb.set_backend("native")


@pytest.fixture
def spy(monkeypatch):
    calls = []
    real = nw_ops.gsddmm

    def recording(g, op, lhs, rhs, lhs_target="u", rhs_target="v", etype=None):
        calls.append((op, lhs_target, rhs_target))
        return real(g, op, lhs, rhs, lhs_target, rhs_target, etype)

    monkeypatch.setattr(nw_ops, "gsddmm", recording)
    return calls


def make(rng, node_shape=(4,), edge_shape=(4,)):
    src, dst = rng.integers(0, N, E), rng.integers(0, N, E)
    g = nw.graph((src, dst), num_nodes=N)
    h = torch.tensor(rng.standard_normal((N,) + node_shape), requires_grad=True)
    k = torch.tensor(rng.standard_normal((N,) + node_shape) + 3.0, requires_grad=True)   # away from 0 for div
    w = torch.tensor(rng.standard_normal((E,) + edge_shape) + 3.0, requires_grad=True)
    g.ndata["h"], g.ndata["k"], g.edata["w"] = h, k, w
    return g, torch.as_tensor(src), torch.as_tensor(dst), (h, k, w)


def run(g, leaves, func, literal, src, dst):
    """Output and gradients of ``func`` through apply_edges and of ``literal`` on gathered rows."""
    g.apply_edges(lambda e: {"o": func(e)})
    got = g.edata["o"]
    assert type(got) is torch.Tensor
    weights = torch.linspace(-1, 2, got.numel(), dtype=got.dtype).reshape(got.shape)
    got_grads = torch.autograd.grad((got * weights).sum(), leaves, allow_unused=True)
    h, k, w = leaves
    want = literal(h[src], h[dst], k[src], k[dst], w)
    want_grads = torch.autograd.grad((want * weights).sum(), leaves, allow_unused=True)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    for a, b in zip(got_grads, want_grads):
        if b is None:
            assert a is None or not a.abs().sum()
        else:
            torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


OPS = {"mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "div": lambda a, b: a / b}


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("sides", [("src", "dst"), ("src", "e"), ("e", "dst"), ("dst", "src")])
def test_binary_ops_fuse_into_one_gsddmm(torch_backend, rng, spy, op, sides):
    g, src, dst, leaves = make(rng)
    pick = {"src": lambda e: e.src["h"], "dst": lambda e: e.dst["k"], "e": lambda e: e.data["w"]}
    ref = {"src": lambda hs, hd, ks, kd, w: hs, "dst": lambda hs, hd, ks, kd, w: kd, "e": lambda hs, hd, ks, kd, w: w}
    f = OPS[op]
    run(g, leaves, lambda e: f(pick[sides[0]](e), pick[sides[1]](e)),
        lambda *a: f(ref[sides[0]](*a), ref[sides[1]](*a)), src, dst)
    target = {"src": "u", "dst": "v", "e": "e"}
    assert spy == [(op, target[sides[0]], target[sides[1]])]


@pytest.mark.parametrize("form", ["method", "dim kw", "torch.sum", "tuple dim", "keepdim"])
def test_sum_of_a_product_is_one_dot(torch_backend, rng, spy, form):
    g, src, dst, leaves = make(rng)
    sums = {"method": lambda p: p.sum(-1), "dim kw": lambda p: p.sum(dim=-1), "torch.sum": lambda p: torch.sum(p, -1),
            "tuple dim": lambda p: p.sum((1,)), "keepdim": lambda p: p.sum(-1, keepdim=True)}
    s = sums[form]
    run(g, leaves, lambda e: s(e.src["h"] * e.dst["h"]), lambda hs, hd, ks, kd, w: s(hs * hd), src, dst)
    assert spy == [("dot", "u", "v")]


def test_broadcast_over_heads(torch_backend, rng, spy):
    """(N, H, d) node features with (E, H, 1) edge weights, and a per-head dot: torch's and the
    kernel's broadcasting agree when both operands have as many dimensions."""
    g, src, dst, leaves = make(rng, node_shape=(3, 5), edge_shape=(3, 1))
    run(g, leaves, lambda e: e.src["h"] * e.data["w"], lambda hs, hd, ks, kd, w: hs * w, src, dst)
    run(g, leaves, lambda e: (e.src["h"] * e.dst["k"]).sum(-1), lambda hs, hd, ks, kd, w: (hs * kd).sum(-1), src, dst)
    assert spy == [("mul", "u", "e"), ("dot", "u", "v")]


FALLBACKS = {
    "a function first": (lambda e: torch.relu(e.src["h"]) * e.dst["h"], lambda hs, hd, ks, kd, w: torch.relu(hs) * hd),
    "a scalar": (lambda e: e.src["h"] * 2.0 + e.dst["h"], lambda hs, hd, ks, kd, w: hs * 2.0 + hd),
    "indexing": (lambda e: e.src["h"][:, :2] * e.dst["h"][:, 1:3], lambda hs, hd, ks, kd, w: hs[:, :2] * hd[:, 1:3]),
    "the same side": (lambda e: e.src["h"] * e.src["k"], lambda hs, hd, ks, kd, w: hs * ks),
    "a sum over rows": (lambda e: (e.src["h"] * e.dst["h"]).sum(0, keepdim=True).expand(E, 4),
                        lambda hs, hd, ks, kd, w: (hs * hd).sum(0, keepdim=True).expand(E, 4)),
    "a product used twice": (lambda e: (lambda p: p.sum(-1) + p.mean(-1))(e.src["h"] * e.dst["h"]),
                             lambda hs, hd, ks, kd, w: (lambda p: p.sum(-1) + p.mean(-1))(hs * hd)),
    "a sum of a sum": (lambda e: (e.src["h"] + e.dst["h"]).sum(-1), lambda hs, hd, ks, kd, w: (hs + hd).sum(-1)),
    "a chain": (lambda e: e.src["h"] * e.dst["h"] * e.data["w"], lambda hs, hd, ks, kd, w: hs * hd * w),
    "an edge vector of another width": (lambda e: e.src["h"] * e.data["w"][:, :1].squeeze(1).reshape(E, 1),
                                        lambda hs, hd, ks, kd, w: hs * w[:, :1].squeeze(1).reshape(E, 1)),
    "a bare read": (lambda e: e.dst["h"], lambda hs, hd, ks, kd, w: hd),
    "torch.cat": (lambda e: torch.cat([e.src["h"], e.dst["h"]], 1), lambda hs, hd, ks, kd, w: torch.cat([hs, hd], 1)),
}


@pytest.mark.parametrize("case", sorted(FALLBACKS))
def test_everything_else_runs_as_written(torch_backend, rng, case):
    g, src, dst, leaves = make(rng)
    run(g, leaves, *FALLBACKS[case], src, dst)


def test_metadata_does_not_gather(torch_backend, rng, spy):
    g, src, dst, leaves = make(rng)
    seen = {}

    def inspect(e):
        x = e.src["h"]
        seen.update(shape=tuple(x.shape), dtype=x.dtype, dim=x.dim(), len=len(x), tensor=isinstance(x, torch.Tensor),
                    size=tuple(x.size()), grad=x.requires_grad)
        return {"o": e.data["w"]}

    g.apply_edges(inspect)
    assert seen == dict(shape=(E, 4), dtype=torch.float64, dim=2, len=E, tensor=True, size=(E, 4), grad=True)
    assert spy == []


def test_mixed_dtypes_promote_as_torch_does(torch_backend, rng):
    g, src, dst, (h, k, w) = make(rng)
    g.ndata["f"] = h.detach().float()
    g.apply_edges(lambda e: {"o": e.src["f"] * e.dst["h"]})
    torch.testing.assert_close(g.edata["o"], h.detach().float()[src] * h.detach()[dst])
    assert g.edata["o"].dtype == torch.float64


def test_update_all_message_from_a_product(torch_backend, rng, spy):
    g, src, dst, (h, k, w) = make(rng)
    g.update_all(lambda e: {"m": e.src["h"] * e.data["w"]}, lambda n: {"o": n.mailbox["m"].amax(1)})
    got = g.ndata["o"]
    assert spy[0] == ("mul", "u", "e")
    m = (h[src] * w).detach().numpy()
    want = np.zeros((N, 4))
    for v in range(N):
        at = (dst == v).numpy()
        if at.any():
            want[v] = m[at].max(0)
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12)


def test_gradcheck_through_the_fused_kernels(torch_backend, rng):
    g, src, dst, (h, k, w) = make(rng)

    def f(h, k, w):
        g.ndata["h"], g.ndata["k"], g.edata["w"] = h, k, w
        g.apply_edges(lambda e: {"s": (e.src["h"] * e.dst["k"]).sum(-1), "m": e.src["h"] / e.data["w"]})
        return g.edata["s"], g.edata["m"]

    assert torch.autograd.gradcheck(f, (h, k, w))


def test_switched_off_gives_the_same(torch_backend, rng, spy, monkeypatch):
    g, src, dst, leaves = make(rng)
    g.apply_edges(lambda e: {"o": (e.src["h"] * e.dst["h"]).sum(-1)})
    on = g.edata["o"].detach().clone()
    monkeypatch.setattr(edge_operands, "ENABLED", False)
    kinds = []

    def f(e):
        kinds.append(type(e.src["h"]).__name__)
        return {"o": (e.src["h"] * e.dst["h"]).sum(-1)}

    g.apply_edges(f)
    torch.testing.assert_close(g.edata["o"], on, rtol=1e-12, atol=1e-12)
    assert kinds == ["Tensor"] and [c[0] for c in spy] == ["dot", "copy_lhs", "copy_lhs"]


def test_native_backend_is_untouched(rng):
    """The native backend's tensors are gathered at once (the rewriting is torch-only)."""
    g = nw.graph((rng.integers(0, N, E), rng.integers(0, N, E)), num_nodes=N)
    g.ndata["h"] = nw.core.tensor(rng.standard_normal((N, 4)))
    kinds = []
    g.apply_edges(lambda e: kinds.append(type(e.src["h"]).__name__) or {"o": e.src["h"]})
    assert kinds == ["Tensor"] and nwb.of(g.edata["o"]).name == "native"


def test_native_user_does_not_import_torch(tmp_path):
    """A native-backend UDF must not import torch (the deferred reads are torch-only)."""
    import subprocess
    import sys

    code = ("import sys, numpy as np, nodeweave as nw\n"
            "g = nw.graph(([0, 1], [1, 2]), num_nodes=3)\n"
            "g.ndata['h'] = nw.core.tensor(np.ones((3, 2)))\n"
            "g.apply_edges(lambda e: {'s': (e.src['h'] * e.dst['h']).sum(-1)})\n"
            "print(g.edata['s'].tolist(), 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["[2.0,", "2.0]", "False"], out.stdout
