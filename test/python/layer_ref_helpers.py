"""Shared helpers of the tests of the layers added for DGL parity (test_nn_attention_convs.py,
test_nn_edge_feature_convs.py, test_nn_pna_dgn.py, test_nn_jk_labelprop.py,
test_nn_layers_finite_differences.py).

A layer is run on either backend (``nodeweave.nn.native`` or ``nodeweave.nn.pytorch``) in float64
with random parameters, and compared with its formula written independently in torch float64 on
dense *incidence* matrices (``S_dst[e, v] = 1`` when edge ``e`` ends at ``v``), which represent
repeated edges exactly: gathers are ``S @ x``, sums over in-edges ``S^T @ m``. Values, then the
gradients of every floating input and every parameter under one random cotangent, must agree.
:func:`fd_check` compares a layer's gradients with central finite differences instead.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any, Callable, Dict

import numpy as np
import torch

import nodeweave as nw
import nodeweave.core as nc
import nodeweave.nn.native as nn_native
import nodeweave.nn.pytorch as nn_torch

TF = torch.float64
BACKENDS = ("native", "pytorch")
TOL = dict(rtol=1e-9, atol=1e-11)


# ---------------------------------------------------------------------------- backends
def side(name: str) -> SimpleNamespace:
    """The backend ``name`` made active (graph queries hand out its tensors) and its namespaces:
    ``nn`` the layer package, ``tnn`` its module library, ``T`` its tensor library."""
    nw.set_backend(name)
    if name == "native":
        return SimpleNamespace(name=name, nn=nn_native, tnn=nc.nn, T=nc, F=nc.nn.functional)
    return SimpleNamespace(name=name, nn=nn_torch, tnn=torch.nn, T=torch, F=torch.nn.functional)


def to_numpy(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy()


def tensor(ns: SimpleNamespace, a: Any, grad: bool = False):
    """``a`` (NumPy) as a tensor of backend ``ns``; floats become float64 leaves when ``grad``."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "f":
        return ns.T.tensor(a.astype(np.float64), requires_grad=grad)
    return ns.T.tensor(a)


def randomize(ns: SimpleNamespace, module: Any, rng: np.random.Generator, scale: float = 0.8) -> Any:
    """float64 and random values for every parameter and floating buffer (biases, BatchNorm
    statistics and beta start at 0/1 otherwise, which would leave paths unchecked)."""
    module.double()
    with ns.T.no_grad():
        for _, p in module.named_parameters():
            p.copy_(ns.T.tensor(rng.uniform(-scale, scale, tuple(p.shape))))
        for name, b in module.named_buffers():
            if b.is_floating_point():
                lo, hi = (0.5, 1.5) if name.endswith("running_var") else (-0.5, 0.5)
                b.copy_(ns.T.tensor(rng.uniform(lo, hi, tuple(b.shape))))
    return module


def _flat(out: Any) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check_layer(backend: str, build: Callable, run: Callable, ref: Callable, inputs: Dict[str, np.ndarray],
                rng: np.random.Generator, train: bool = False, const: tuple = (), tol: dict = TOL,
                scale: float = 0.8):
    """Builds ``build(ns)`` on ``backend`` with random float64 parameters, runs
    ``run(module, tensors)`` and compares with ``ref(params, buffers, torch_tensors)`` (torch
    float64 copies of the parameters, leaves; NumPy copies of the buffers): values, then the
    gradients of every floating input (except those named in ``const``) and every parameter.
    Returns the module."""
    ns = side(backend)
    module = randomize(ns, build(ns), rng, scale)
    module.train(train)
    params = dict(module.named_parameters())
    th_params = {k: torch.tensor(to_numpy(p), requires_grad=True) for k, p in params.items()}
    buffers = {k: to_numpy(b).copy() for k, b in module.named_buffers()}
    ours = {k: tensor(ns, v, grad=v.dtype.kind == "f" and k not in const) for k, v in inputs.items()}
    theirs = {k: (torch.tensor(v, requires_grad=k not in const) if v.dtype.kind == "f" else torch.tensor(v))
              for k, v in inputs.items()}
    got, want = _flat(run(module, ours)), _flat(ref(th_params, buffers, theirs))
    assert len(got) == len(want)
    for i, (o, w) in enumerate(zip(got, want)):
        assert isinstance(o, ns.T.Tensor), f"output {i} is a {type(o).__name__}"
        assert tuple(o.shape) == tuple(w.shape), f"output {i}: {tuple(o.shape)} != {tuple(w.shape)}"
        np.testing.assert_allclose(to_numpy(o), to_numpy(w), err_msg=f"output {i}", **tol)
    cots = [rng.standard_normal(tuple(w.shape)) for w in want]
    sum((o * ns.T.tensor(c)).sum() for o, c in zip(got, cots)).backward()
    sum((w * torch.tensor(c)).sum() for w, c in zip(want, cots)).backward()

    def same(a, b, shape, what):
        a = np.zeros(shape) if a is None else to_numpy(a)
        b = np.zeros(shape) if b is None else to_numpy(b)
        np.testing.assert_allclose(a, b, err_msg=f"gradient of {what}", **tol)

    for k, v in inputs.items():
        if v.dtype.kind == "f" and k not in const:
            same(ours[k].grad, theirs[k].grad, v.shape, f"input {k}")
    for k, p in params.items():
        same(p.grad, th_params[k].grad, tuple(p.shape), f"parameter {k}")
    return module


def fd_check(backend: str, build: Callable, run: Callable, inputs: Dict[str, np.ndarray], rng: np.random.Generator,
             train: bool = False, const: tuple = (), eps: float = 1e-6, per_tensor: int = 6, scale: float = 0.8):
    """The layer's own autograd gradients of ``sum(out * R)`` against central finite differences
    in float64, for up to ``per_tensor`` random entries of every floating input (except those in
    ``const``) and of every parameter. Independent of any reference formula: it checks the
    backward of the layer as written (the kernels' and the engine's), not only its forward."""
    ns = side(backend)
    module = randomize(ns, build(ns), rng, scale)
    module.train(train)
    ours = {k: tensor(ns, v, grad=v.dtype.kind == "f" and k not in const) for k, v in inputs.items()}
    outs = _flat(run(module, ours))
    cots = [ns.T.tensor(rng.standard_normal(tuple(o.shape))) for o in outs]

    def loss() -> float:
        with ns.T.no_grad():
            return sum(float((o * c).sum().item()) for o, c in zip(_flat(run(module, ours)), cots))

    sum((o * c).sum() for o, c in zip(outs, cots)).backward()
    targets = [(f"input {k}", t) for k, t in ours.items() if inputs[k].dtype.kind == "f" and k not in const]
    targets += [(f"parameter {k}", p) for k, p in module.named_parameters()]
    assert targets
    for what, t in targets:
        grad = np.zeros(tuple(t.shape)) if t.grad is None else to_numpy(t.grad).copy()
        base = to_numpy(t).copy()
        for flat in rng.permutation(base.size)[:per_tensor]:
            idx = np.unravel_index(flat, base.shape)
            vals = []
            for sign in (1.0, -1.0):
                pert = base.copy()
                pert[idx] += sign * eps
                with ns.T.no_grad():
                    t.copy_(ns.T.tensor(pert))
                vals.append(loss())
            with ns.T.no_grad():
                t.copy_(ns.T.tensor(base))
            numeric = (vals[0] - vals[1]) / (2 * eps)
            assert abs(numeric - grad[idx]) <= 1e-5 * max(1.0, abs(numeric)), \
                f"d/d {what}{idx}: finite difference {numeric}, autograd {grad[idx]}"
    return module


# ---------------------------------------------------------------------------- graphs
class Edges:
    """A graph's edge list with the dense incidence matrices of the references."""

    def __init__(self, src, dst, ns: int, nd: int, sizes=None) -> None:
        self.src, self.dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        self.ns, self.nd = ns, nd
        self.sizes = sizes  # node counts of the members of a batch
        self.S_src = torch.zeros(len(self.src), ns, dtype=TF)
        self.S_src[np.arange(len(self.src)), self.src] = 1
        self.S_dst = torch.zeros(len(self.dst), nd, dtype=TF)
        self.S_dst[np.arange(len(self.dst)), self.dst] = 1

    @property
    def ne(self) -> int:
        return len(self.src)

    def u(self, x):
        """Per edge, the source's row of ``x`` ``(ns, *)``."""
        return torch.einsum("en,n...->e...", self.S_src, x)

    def v(self, x):
        """Per edge, the destination's row of ``x`` ``(nd, *)``."""
        return torch.einsum("en,n...->e...", self.S_dst, x)

    def in_deg(self):
        return self.S_dst.sum(0)

    def sum(self, m):
        """Sum of the edge values ``m`` ``(E, *)`` over each destination's in-edges."""
        return torch.einsum("en,e...->n...", self.S_dst, m)

    def mean(self, m):
        d = self.in_deg().clamp(min=1).reshape((-1,) + (1,) * (m.dim() - 1))
        return self.sum(m) / d

    def extreme(self, m, largest=True):
        """Max (min) over each destination's in-edges; 0 without any."""
        mask = (self.S_dst.T > 0).reshape((self.nd, self.ne) + (1,) * (m.dim() - 1))
        fill = -math.inf if largest else math.inf
        vals = torch.where(mask, m.unsqueeze(0), torch.full((), fill, dtype=TF))
        out = vals.amax(1) if largest else vals.amin(1)
        has = (self.in_deg() > 0).reshape((-1,) + (1,) * (m.dim() - 1))
        return torch.where(has, out, torch.zeros((), dtype=TF))

    def softmax(self, a):
        """Softmax of the edge logits ``a`` ``(E, *)`` over each destination's in-edges."""
        ex = torch.exp(a)
        return ex / self.v(self.sum(ex))


def random_edges(rng: np.random.Generator, ns: int, nd: int, ne: int, isolated=()) -> tuple:
    """``ne`` random edges (repeats allowed) whose destinations avoid ``isolated``; every other
    destination gets at least one in-edge."""
    pool = [v for v in range(nd) if v not in set(isolated)]
    dst = np.concatenate([pool, rng.choice(pool, ne - len(pool))])
    src = rng.integers(0, ns, len(dst))
    perm = rng.permutation(len(dst))
    return src[perm].astype(np.int64), dst[perm].astype(np.int64)


def homo(rng, n=7, ne=18, isolated=()):
    src, dst = random_edges(rng, n, n, ne, isolated)
    return nw.graph((src, dst), num_nodes=n), Edges(src, dst, n, n, sizes=[n])


def bipartite(rng, ns=6, nd=4, ne=13, isolated=(), block=False):
    """A graph with separate source and destination node sets; ``block=True`` marks it as a
    message-flow block (the destinations are the first ``nd`` sources)."""
    src, dst = random_edges(rng, ns, nd, ne, isolated)
    g = nw.heterograph({("_U", "_E", "_V"): (src, dst)}, num_nodes_dict={"_U": ns, "_V": nd})
    if block:
        g.is_block = True
    return g, Edges(src, dst, ns, nd)


def batched(rng, sizes=(4, 1, 5), edges=(7, 0, 11)):
    """A batch whose one-node member has no edges."""
    srcs, dsts, graphs, off = [], [], [], 0
    for n, e in zip(sizes, edges):
        s, d = random_edges(rng, n, n, e) if e else (np.zeros(0, np.int64), np.zeros(0, np.int64))
        graphs.append(nw.graph((s, d), num_nodes=n))
        srcs.append(s + off)
        dsts.append(d + off)
        off += n
    src, dst = np.concatenate(srcs), np.concatenate(dsts)
    return nw.batch(graphs), Edges(src, dst, off, off, sizes=list(sizes))


# ---------------------------------------------------------------------------- dense pieces
def lin(p: dict, name: str, x):
    """``x @ W^T + b`` with the parameters ``name.weight`` (and ``name.bias`` when present)."""
    y = x @ p[name + ".weight"].T
    return y + p[name + ".bias"] if name + ".bias" in p else y


def batch_norm(x, p: dict, buffers: dict, name: str, train: bool, eps: float = 1e-5):
    """BatchNorm1d over the rows of ``x``: batch statistics (biased variance) in training,
    the running ones otherwise."""
    if train:
        mean, var = x.mean(0), x.var(0, unbiased=False)
    else:
        mean = torch.tensor(buffers[name + ".running_mean"])
        var = torch.tensor(buffers[name + ".running_var"])
    return (x - mean) / torch.sqrt(var + eps) * p[name + ".weight"] + p[name + ".bias"]


def leaky_relu(x, slope: float):
    return torch.where(x > 0, x, slope * x)
