"""Backend parity: every export of ``nodeweave.nn`` gives the same numbers on both backends.

Each layer source in ``nodeweave/nn/_layers`` is loaded twice, as ``nodeweave.nn.native`` (on
``nodeweave.core`` tensors, kernels as engine ops) and ``nodeweave.nn.pytorch`` (on torch tensors,
the same C++ kernels behind ``torch.autograd.Function``\\ s through DLPack). For every spec below
and for float32 and float64, the test builds the native module, gives its parameters and buffers
random values, copies them by ``state_dict`` name into the torch module, feeds both the same NumPy
inputs, and compares the forward outputs, then the gradients of every floating input and every
parameter under one shared random cotangent (issue #5).

A spec per exported name is required (:func:`test_every_export_has_a_spec`), so a new layer cannot
be left out. The tolerances are the issue's: 1e-5 relative in float32, 1e-10 in float64, each with
a small absolute floor for values that are near zero (see ``TOLS``).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Dict, Tuple

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.core as nc
import nodeweave.nn.native as nn_native
import nodeweave.nn.pytorch as nn_torch

# rtol is the issue's: 1e-5 in float32, 1e-10 in float64. An entry whose exact value is (near) 0
# has no meaningful relative error, so there is also an absolute floor, 1e-6 (float32) / 1e-12
# (float64), scaled by the largest magnitude in the tensor when that exceeds 1: a small entry is
# usually the cancellation of terms as large as the tensor's others (a bias gradient summed over
# rows and GRU steps, say), and carries their rounding error, ~1e-7 per float32 operation, not
# its own. Far below any real discrepancy: the values here are O(0.1..10), and a 3e-5 relative
# change of any one parameter or input fails every spec that has it.
TOLS = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-10, atol=1e-12)}


def assert_close(actual, desired, tol, what):
    actual, desired = to_numpy(actual), to_numpy(desired)
    scale = max(1.0, float(np.abs(desired).max())) if desired.size else 1.0
    np.testing.assert_allclose(actual, desired, rtol=tol["rtol"], atol=tol["atol"] * scale, err_msg=what)


DTYPES = {"float32": (np.float32, nc.float32, torch.float32),
          "float64": (np.float64, nc.float64, torch.float64)}

# What a spec builds its modules from: the backend's layer package (nwnn), its tensor module
# library for sub-modules (tnn: nodeweave.core.nn or torch.nn) and its tensor library (T).
NATIVE = SimpleNamespace(name="native", nwnn=nn_native, tnn=nc.nn, T=nc, F=nc.nn.functional)
TORCH = SimpleNamespace(name="pytorch", nwnn=nn_torch, tnn=torch.nn, T=torch, F=torch.nn.functional)


# ============================================================================ graphs (NumPy -> nw)
def _edges(rng, ns, nd, p=0.4, loops=False, isolated=()):
    """A simple graph's edges (no repeats, so max-aggregations have no ties) in random edge-id
    order; every destination not in ``isolated`` has an in-edge, those in it have none."""
    m = rng.random((nd, ns)) < p
    if loops:
        np.fill_diagonal(m, True)
    for i in range(nd):
        if not m[i].any():
            m[i, rng.integers(ns)] = True
    for i in isolated:
        m[i] = False
    dst, src = np.nonzero(m)
    perm = rng.permutation(len(src))
    return src[perm].astype(np.int64), dst[perm].astype(np.int64)


def homo(rng, n=7, loops=True, isolated=()):
    return nw.graph(_edges(rng, n, n, loops=loops, isolated=isolated), num_nodes=n)


def bipartite(rng, ns=6, nd=4, isolated=(), block=False):
    g = nw.heterograph({("_U", "_E", "_V"): _edges(rng, ns, nd, isolated=isolated)},
                       num_nodes_dict={"_U": ns, "_V": nd})
    if block:  # the destination nodes are the first source nodes (a sampled message-flow block)
        g.is_block = True
    return g


def batched(rng, sizes=(4, 1, 5), loops=True, edgeless=()):
    parts = []
    for i, n in enumerate(sizes):
        if i in edgeless:
            parts.append(nw.graph((np.zeros(0, np.int64), np.zeros(0, np.int64)), num_nodes=n))
        else:
            parts.append(homo(rng, n, loops=loops))
    return nw.batch(parts)


def readout_batch(rng):
    """Graphs of 4, 1, 6 and 3 nodes; the one-node graph has no edge (readouts of nothing)."""
    return batched(rng, (4, 1, 6, 3), loops=False, edgeless=(1,))


HN = {"user": 5, "game": 4, "shop": 2}
RELS = [("user", "follows", "user"), ("user", "plays", "game"), ("game", "played-by", "user"),
        ("shop", "sells", "game")]


def hetero(rng):
    data = {cet: _edges(rng, HN[cet[0]], HN[cet[2]], p=0.5, isolated=(0,) if cet[2] == "game" else ())
            for cet in RELS}
    return nw.heterograph(data, num_nodes_dict=dict(HN))


# ============================================================================ input helpers
def randn(rng, *shape):
    return rng.standard_normal(shape)


def pos(rng, *shape):
    """Positive weights away from 0 (edge weights, norms)."""
    return rng.uniform(0.2, 2.0, shape)


def ne(g):
    return g.num_edges()


def n_src(g):
    """Rows of a node feature: the source nodes (all nodes of a homogeneous graph)."""
    return g.num_src_nodes()


def pair(x):
    return (x["xs"], x["xd"])


# ============================================================================ the specs
@dataclass
class Spec:
    """One export under one configuration.

    ``build(ns)`` makes the module (or returns the readout function) from a backend namespace;
    ``graph(rng)`` builds the (backend-neutral) graph both sides share; ``data(rng, g)`` gives
    the inputs as NumPy arrays (floating ones become leaves requiring grad unless named in
    ``const``; integer ones stay integer); ``call(obj, g, x)`` runs it on the converted inputs.
    """

    name: str
    variant: str
    build: Callable[[SimpleNamespace], Any]
    graph: Callable[[np.random.Generator], Any]
    data: Callable[[np.random.Generator, Any], Dict[str, np.ndarray]]
    call: Callable[[Any, Any, Dict[str, Any]], Any]
    const: Tuple[str, ...] = ()
    train: bool = False  # train() instead of eval(): only for layers without randomness
    ids: str = field(init=False)

    def __post_init__(self):
        self.ids = f"{self.name}-{self.variant}"


def fn_spec(name, variant, graph, data, call, **kw):
    """A readout function: ``call(f, g, x)`` gets the backend's own function."""
    return Spec(name, variant, lambda ns: getattr(ns.nwnn, name), graph, data, call, **kw)


X = lambda d: (lambda rng, g: {"x": randn(rng, n_src(g), d)})  # noqa: E731
XW = lambda d: (lambda rng, g: {"x": randn(rng, n_src(g), d), "w": pos(rng, ne(g))})  # noqa: E731
PAIR = lambda ds, dd: (lambda rng, g: {"xs": randn(rng, g.num_src_nodes(), ds),  # noqa: E731
                                       "xd": randn(rng, g.num_dst_nodes(), dd)})


def PAIRW(ds, dd):  # noqa: N802
    return lambda rng, g: dict(PAIR(ds, dd)(rng, g), w=pos(rng, ne(g)))


h7 = lambda rng: homo(rng, 7)  # noqa: E731
h7_noloop = lambda rng: homo(rng, 7, loops=False)  # noqa: E731
bip = lambda rng: bipartite(rng)  # noqa: E731
bat = lambda rng: batched(rng)  # noqa: E731
blk = lambda rng: bipartite(rng, ns=7, nd=3, block=True)  # noqa: E731

f_x = lambda m, g, x: m(g, x["x"])  # noqa: E731
f_xw = lambda m, g, x: m(g, x["x"], edge_weight=x["w"])  # noqa: E731
f_pair = lambda m, g, x: m(g, pair(x))  # noqa: E731
f_pairw = lambda m, g, x: m(g, pair(x), edge_weight=x["w"])  # noqa: E731
f_att = lambda m, g, x: m(g, x["x"], get_attention=True)  # noqa: E731


SPECS = [
    # ---------------------------------------------------------------- GraphConv
    Spec("GraphConv", "both", lambda ns: ns.nwnn.GraphConv(4, 3), h7, X(4), f_x),
    Spec("GraphConv", "right-ew-tanh", lambda ns: ns.nwnn.GraphConv(4, 3, norm="right", activation=ns.T.tanh),
         h7, XW(4), f_xw),
    Spec("GraphConv", "none-ew-aggregate-first", lambda ns: ns.nwnn.GraphConv(3, 5, norm="none"), h7, XW(3),
         f_xw),
    Spec("GraphConv", "both-ew", lambda ns: ns.nwnn.GraphConv(4, 3, norm="both"), h7, XW(4), f_xw),
    Spec("GraphConv", "left-bipartite", lambda ns: ns.nwnn.GraphConv(4, 2, norm="left"), bip, PAIR(4, 4),
         f_pair),
    Spec("GraphConv", "both-batched", lambda ns: ns.nwnn.GraphConv(4, 3), bat, X(4), f_x),
    Spec("GraphConv", "zero-in-degree-allowed", lambda ns: ns.nwnn.GraphConv(4, 3, allow_zero_in_degree=True),
         lambda rng: homo(rng, 7, loops=False, isolated=(1, 5)), X(4), f_x),
    Spec("GraphConv", "external-weight", lambda ns: ns.nwnn.GraphConv(4, 3, weight=False, bias=False), h7,
         lambda rng, g: {"x": randn(rng, 7, 4), "weight": randn(rng, 4, 3)},
         lambda m, g, x: m(g, x["x"], weight=x["weight"])),
    # ---------------------------------------------------------------- GATConv
    Spec("GATConv", "plain", lambda ns: ns.nwnn.GATConv(4, 2, 3), h7, X(4), f_att),
    Spec("GATConv", "residual-ew", lambda ns: ns.nwnn.GATConv(4, 2, 2, residual=True), h7, XW(4),
         lambda m, g, x: m(g, x["x"], edge_weight=x["w"], get_attention=True)),
    Spec("GATConv", "residual-identity", lambda ns: ns.nwnn.GATConv(6, 2, 3, residual=True), h7, X(6), f_att),
    Spec("GATConv", "bipartite-residual-relu",
         lambda ns: ns.nwnn.GATConv((5, 3), 2, 2, residual=True, activation=ns.F.relu), bip, PAIR(5, 3),
         lambda m, g, x: m(g, pair(x), get_attention=True)),
    Spec("GATConv", "batched-nobias", lambda ns: ns.nwnn.GATConv(4, 3, 2, bias=False, negative_slope=0.1),
         bat, X(4), f_x),
    Spec("GATConv", "dropout-eval", lambda ns: ns.nwnn.GATConv(4, 3, 2, feat_drop=0.5, attn_drop=0.5), h7,
         X(4), f_att),
    Spec("GATConv", "block", lambda ns: ns.nwnn.GATConv(3, 2, 2, residual=True), blk, X(3), f_x),
    # ---------------------------------------------------------------- GATv2Conv
    Spec("GATv2Conv", "residual", lambda ns: ns.nwnn.GATv2Conv(5, 2, 3, residual=True), h7, X(5), f_att),
    Spec("GATv2Conv", "shared-weights", lambda ns: ns.nwnn.GATv2Conv(5, 2, 3, share_weights=True), h7, X(5),
         f_att),
    Spec("GATv2Conv", "bipartite-residual", lambda ns: ns.nwnn.GATv2Conv((5, 3), 2, 2, residual=True), bip,
         PAIR(5, 3), f_pair),
    Spec("GATv2Conv", "batched-identity-residual-relu",
         lambda ns: ns.nwnn.GATv2Conv(4, 4, 1, residual=True, activation=ns.F.relu), bat, X(4), f_x),
    # ---------------------------------------------------------------- GINConv
    Spec("GINConv", "sum-linear-learn-eps",
         lambda ns: ns.nwnn.GINConv(ns.tnn.Linear(4, 3), "sum", init_eps=0.3, learn_eps=True), h7_noloop, X(4),
         f_x),
    Spec("GINConv", "max-linear-ew", lambda ns: ns.nwnn.GINConv(ns.tnn.Linear(4, 3), "max"), h7_noloop, XW(4),
         f_xw),
    Spec("GINConv", "mean-linear", lambda ns: ns.nwnn.GINConv(ns.tnn.Linear(4, 3), "mean", learn_eps=True),
         h7_noloop, X(4), f_x),
    Spec("GINConv", "sum-none-ew-bipartite", lambda ns: ns.nwnn.GINConv(None, "sum", init_eps=-0.25), bip,
         PAIRW(3, 3), f_pairw),
    Spec("GINConv", "max-none-batched", lambda ns: ns.nwnn.GINConv(None, "max", activation=ns.T.tanh), bat,
         X(3), f_x),
    Spec("GINConv", "mean-none-ew", lambda ns: ns.nwnn.GINConv(None, "mean", init_eps=0.5), h7_noloop, XW(3),
         f_xw),
    # ---------------------------------------------------------------- GINEConv
    Spec("GINEConv", "linear-learn-eps",
         lambda ns: ns.nwnn.GINEConv(ns.tnn.Linear(3, 2), init_eps=0.5, learn_eps=True), h7_noloop,
         lambda rng, g: {"x": randn(rng, 7, 3), "e": randn(rng, ne(g), 3)},
         lambda m, g, x: m(g, x["x"], x["e"])),
    Spec("GINEConv", "none-bipartite", lambda ns: ns.nwnn.GINEConv(None), bip,
         lambda rng, g: dict(PAIR(3, 3)(rng, g), e=randn(rng, ne(g), 3)),
         lambda m, g, x: m(g, pair(x), x["e"])),
    # ---------------------------------------------------------------- SGConv / APPNPConv / TAGConv
    Spec("SGConv", "k2-ew", lambda ns: ns.nwnn.SGConv(4, 3, k=2), h7, XW(4), f_xw),
    Spec("SGConv", "k3-cached", lambda ns: ns.nwnn.SGConv(4, 3, k=3, cached=True), h7, X(4), f_x),
    Spec("SGConv", "k1-layernorm-batched", lambda ns: ns.nwnn.SGConv(4, 2, k=1, norm=ns.tnn.LayerNorm(4)), bat,
         X(4), f_x),
    Spec("APPNPConv", "k3", lambda ns: ns.nwnn.APPNPConv(3, 0.2), h7_noloop, X(3), f_x),
    Spec("APPNPConv", "ew-edge-drop-eval", lambda ns: ns.nwnn.APPNPConv(2, 0.1, edge_drop=0.5), bat, XW(3),
         f_xw),
    Spec("TAGConv", "k2", lambda ns: ns.nwnn.TAGConv(3, 2, k=2), h7, X(3), f_x),
    Spec("TAGConv", "k1-ew-tanh", lambda ns: ns.nwnn.TAGConv(3, 2, k=1, activation=ns.T.tanh), bat, XW(3),
         f_xw),
    # ---------------------------------------------------------------- ChebConv
    Spec("ChebConv", "k3-number", lambda ns: ns.nwnn.ChebConv(3, 2, 3), h7_noloop, X(3),
         lambda m, g, x: m(g, x["x"], lambda_max=1.7)),
    Spec("ChebConv", "k1", lambda ns: ns.nwnn.ChebConv(3, 2, 1), h7_noloop, X(3),
         lambda m, g, x: m(g, x["x"], lambda_max=[2.0])),
    Spec("ChebConv", "k4-batched-list", lambda ns: ns.nwnn.ChebConv(3, 2, 4, bias=False), bat, X(3),
         lambda m, g, x: m(g, x["x"], lambda_max=[1.2, 1.9, 1.5])),
    Spec("ChebConv", "k2-batched-tensor-tanh", lambda ns: ns.nwnn.ChebConv(3, 2, 2, activation=ns.T.tanh), bat,
         lambda rng, g: {"x": randn(rng, n_src(g), 3), "lam": np.array([1.3, 1.6, 1.8])},
         lambda m, g, x: m(g, x["x"], lambda_max=x["lam"]), const=("lam",)),
    # ---------------------------------------------------------------- GCN2Conv
    Spec("GCN2Conv", "project", lambda ns: ns.nwnn.GCN2Conv(4, layer=2, alpha=0.3, lambda_=0.8), h7,
         lambda rng, g: {"x": randn(rng, 7, 4), "x0": randn(rng, 7, 4)}, lambda m, g, x: m(g, x["x"], x["x0"])),
    Spec("GCN2Conv", "no-project-ew", lambda ns: ns.nwnn.GCN2Conv(4, 3, project_initial_features=False), h7,
         lambda rng, g: {"x": randn(rng, 7, 4), "x0": randn(rng, 7, 4), "w": pos(rng, ne(g))},
         lambda m, g, x: m(g, x["x"], x["x0"], edge_weight=x["w"])),
    Spec("GCN2Conv", "batched-relu-nobias",
         lambda ns: ns.nwnn.GCN2Conv(3, 1, activation=ns.F.relu, bias=False), bat,
         lambda rng, g: {"x": randn(rng, 10, 3), "x0": randn(rng, 10, 3)}, lambda m, g, x: m(g, x["x"], x["x0"])),
    # ---------------------------------------------------------------- EdgeConv
    Spec("EdgeConv", "plain", lambda ns: ns.nwnn.EdgeConv(4, 3), h7_noloop, X(4), f_x),
    Spec("EdgeConv", "bipartite", lambda ns: ns.nwnn.EdgeConv(3, 2), bip, PAIR(3, 3), f_pair),
    Spec("EdgeConv", "batch-norm-eval", lambda ns: ns.nwnn.EdgeConv(4, 3, batch_norm=True), h7_noloop, X(4), f_x),
    Spec("EdgeConv", "batch-norm-train", lambda ns: ns.nwnn.EdgeConv(4, 3, batch_norm=True), h7_noloop, X(4),
         f_x, train=True),
    # ---------------------------------------------------------------- EdgeWeightNorm
    *[Spec("EdgeWeightNorm", norm, lambda ns, norm=norm: ns.nwnn.EdgeWeightNorm(norm), bip,
           lambda rng, g: {"w": pos(rng, ne(g))}, lambda m, g, x: m(g, x["w"])) for norm in ("both", "right", "left",
                                                                                         "none")],
    Spec("EdgeWeightNorm", "both-eps-column", lambda ns: ns.nwnn.EdgeWeightNorm("both", eps=0.1), h7,
         lambda rng, g: {"w": pos(rng, ne(g), 1)}, lambda m, g, x: m(g, x["w"])),
    # ---------------------------------------------------------------- SAGEConv
    Spec("SAGEConv", "mean-ew", lambda ns: ns.nwnn.SAGEConv(5, 3, "mean"), lambda rng: homo(rng, 7, isolated=(2,)),
         XW(5), f_xw),
    Spec("SAGEConv", "mean-dropout-eval", lambda ns: ns.nwnn.SAGEConv(3, 4, "mean", feat_drop=0.5), bat, X(3),
         f_x),
    Spec("SAGEConv", "gcn", lambda ns: ns.nwnn.SAGEConv(3, 4, "gcn"), h7, X(3), f_x),
    Spec("SAGEConv", "pool-bipartite-ew", lambda ns: ns.nwnn.SAGEConv((5, 3), 4, "pool"),
         lambda rng: bipartite(rng, isolated=(1,)), PAIRW(5, 3), f_pairw),
    Spec("SAGEConv", "pool-tanh-layernorm",
         lambda ns: ns.nwnn.SAGEConv(4, 3, "pool", activation=ns.T.tanh, norm=ns.tnn.LayerNorm(3)), h7, X(4), f_x),
    Spec("SAGEConv", "lstm-ew", lambda ns: ns.nwnn.SAGEConv(3, 2, "lstm"), lambda rng: homo(rng, 7, isolated=(4,)),
         XW(3), f_xw),
    Spec("SAGEConv", "lstm-batched-nobias", lambda ns: ns.nwnn.SAGEConv(3, 2, "lstm", bias=False), bat, X(3), f_x),
    Spec("SAGEConv", "gcn-bipartite", lambda ns: ns.nwnn.SAGEConv((4, 4), 3, "gcn"), bip, PAIR(4, 4), f_pair),
    Spec("SAGEConv", "mean-block", lambda ns: ns.nwnn.SAGEConv(4, 3, "mean"), blk, X(4), f_x),
    # ---------------------------------------------------------------- GatedGraphConv
    Spec("GatedGraphConv", "one-etype", lambda ns: ns.nwnn.GatedGraphConv(3, 5, n_steps=3, n_etypes=1),
         lambda rng: homo(rng, 7, isolated=(3,)), X(3), f_x),
    Spec("GatedGraphConv", "three-etypes-batched", lambda ns: ns.nwnn.GatedGraphConv(2, 4, n_steps=2, n_etypes=3),
         bat, lambda rng, g: {"x": randn(rng, n_src(g), 2), "et": rng.integers(0, 3, ne(g))},
         lambda m, g, x: m(g, x["x"], x["et"])),
    # ---------------------------------------------------------------- NNConv
    Spec("NNConv", "sum-identity-residual",
         lambda ns: ns.nwnn.NNConv(3, 3, ns.tnn.Linear(2, 9), "sum", residual=True),
         lambda rng: homo(rng, 7, isolated=(4,)),
         lambda rng, g: {"x": randn(rng, 7, 3), "e": randn(rng, ne(g), 2)}, lambda m, g, x: m(g, x["x"], x["e"])),
    Spec("NNConv", "mean", lambda ns: ns.nwnn.NNConv(3, 4, ns.tnn.Linear(2, 12), "mean"), bat,
         lambda rng, g: {"x": randn(rng, 10, 3), "e": randn(rng, ne(g), 2)}, lambda m, g, x: m(g, x["x"], x["e"])),
    Spec("NNConv", "max-bipartite-linear-residual",
         lambda ns: ns.nwnn.NNConv((3, 2), 4, ns.tnn.Linear(2, 12), "max", residual=True),
         lambda rng: bipartite(rng, isolated=(2,)),
         lambda rng, g: dict(PAIR(3, 2)(rng, g), e=randn(rng, ne(g), 2)), lambda m, g, x: m(g, pair(x), x["e"])),
    # ---------------------------------------------------------------- RelGraphConv
    Spec("RelGraphConv", "plain-norm", lambda ns: ns.nwnn.RelGraphConv(4, 6, 3), lambda rng: homo(rng, 8),
         lambda rng, g: {"x": randn(rng, 8, 4), "et": rng.integers(0, 3, ne(g)), "norm": pos(rng, ne(g), 1)},
         lambda m, g, x: m(g, x["x"], x["et"], x["norm"])),
    Spec("RelGraphConv", "basis", lambda ns: ns.nwnn.RelGraphConv(4, 6, 3, "basis", 2), lambda rng: homo(rng, 8),
         lambda rng, g: {"x": randn(rng, 8, 4), "et": rng.integers(0, 3, ne(g))},
         lambda m, g, x: m(g, x["x"], x["et"])),
    Spec("RelGraphConv", "bdd-presorted", lambda ns: ns.nwnn.RelGraphConv(4, 6, 3, "bdd", 2),
         lambda rng: homo(rng, 8),
         lambda rng, g: {"x": randn(rng, 8, 4), "et": np.sort(rng.integers(0, 3, ne(g)))},
         lambda m, g, x: m(g, x["x"], x["et"], presorted=True)),
    Spec("RelGraphConv", "basis-presorted-layernorm-relu",
         lambda ns: ns.nwnn.RelGraphConv(4, 4, 3, "basis", 2, bias=False, self_loop=False, layer_norm=True,
                                         activation=ns.F.relu), bat,
         lambda rng, g: {"x": randn(rng, 10, 4), "et": np.sort(rng.integers(0, 3, ne(g)))},
         lambda m, g, x: m(g, x["x"], x["et"], presorted=True)),
    Spec("RelGraphConv", "bdd-bipartite-norm1d", lambda ns: ns.nwnn.RelGraphConv(4, 6, 3, "bdd", 2), bip,
         lambda rng, g: dict(PAIR(4, 4)(rng, g), et=rng.integers(0, 3, ne(g)), norm=pos(rng, ne(g))),
         lambda m, g, x: m(g, pair(x), x["et"], x["norm"])),
    Spec("RelGraphConv", "basis-dropout-eval-tanh",
         lambda ns: ns.nwnn.RelGraphConv(3, 2, 3, "basis", 3, dropout=0.5, activation=ns.T.tanh),
         lambda rng: homo(rng, 6),
         lambda rng, g: {"x": randn(rng, 6, 3), "et": rng.integers(0, 3, ne(g))},
         lambda m, g, x: m(g, x["x"], x["et"])),
    Spec("RelGraphConv", "plain-block", lambda ns: ns.nwnn.RelGraphConv(4, 2, 3), blk,
         lambda rng, g: {"x": randn(rng, 7, 4), "et": rng.integers(0, 3, ne(g))},
         lambda m, g, x: m(g, x["x"], x["et"])),
    Spec("RelGraphConv", "node-ids-basis", lambda ns: ns.nwnn.RelGraphConv(9, 4, 3, "basis", 2),
         lambda rng: homo(rng, 8),
         lambda rng, g: {"ids": rng.integers(0, 9, 8), "et": rng.integers(0, 3, ne(g)), "norm": pos(rng, ne(g), 1)},
         lambda m, g, x: m(g, x["ids"], x["et"], x["norm"])),
    Spec("RelGraphConv", "node-ids-plain-bipartite", lambda ns: ns.nwnn.RelGraphConv(9, 4, 3), bip,
         lambda rng, g: {"s": rng.integers(0, 9, g.num_src_nodes()), "d": rng.integers(0, 9, g.num_dst_nodes()),
                         "et": np.sort(rng.integers(0, 3, ne(g)))},
         lambda m, g, x: m(g, (x["s"], x["d"]), x["et"], presorted=True)),
    # ---------------------------------------------------------------- TypedLinear
    Spec("TypedLinear", "plain", lambda ns: ns.nwnn.TypedLinear(4, 6, 3), lambda rng: None,
         lambda rng, g: {"x": randn(rng, 9, 4), "t": rng.integers(0, 3, 9)}, lambda m, g, x: m(x["x"], x["t"])),
    Spec("TypedLinear", "basis-sorted", lambda ns: ns.nwnn.TypedLinear(4, 6, 3, "basis", 2), lambda rng: None,
         lambda rng, g: {"x": randn(rng, 9, 4), "t": np.sort(rng.integers(0, 3, 9))},
         lambda m, g, x: m(x["x"], x["t"], sorted_by_type=True)),
    Spec("TypedLinear", "bdd", lambda ns: ns.nwnn.TypedLinear(4, 6, 3, "bdd", 2), lambda rng: None,
         lambda rng, g: {"x": randn(rng, 9, 4), "t": rng.integers(0, 3, 9)}, lambda m, g, x: m(x["x"], x["t"])),
    # ---------------------------------------------------------------- pooling
    Spec("SumPooling", "batch", lambda ns: ns.nwnn.SumPooling(), readout_batch, X(3), f_x),
    Spec("AvgPooling", "batch", lambda ns: ns.nwnn.AvgPooling(), readout_batch, X(3), f_x),
    Spec("MaxPooling", "batch", lambda ns: ns.nwnn.MaxPooling(), readout_batch, X(3), f_x),
    Spec("SortPooling", "k3-padded", lambda ns: ns.nwnn.SortPooling(3), readout_batch, X(4), f_x),
    Spec("SortPooling", "k1", lambda ns: ns.nwnn.SortPooling(1), readout_batch, X(2), f_x),
    Spec("GlobalAttentionPooling", "gate", lambda ns: ns.nwnn.GlobalAttentionPooling(ns.tnn.Linear(3, 1)),
         readout_batch, X(3), f_x),
    Spec("GlobalAttentionPooling", "gate-feat-nn-attention",
         lambda ns: ns.nwnn.GlobalAttentionPooling(ns.tnn.Linear(3, 1), ns.tnn.Linear(3, 5)), readout_batch, X(3),
         lambda m, g, x: m(g, x["x"], get_attention=True)),
    Spec("Set2Set", "one-layer", lambda ns: ns.nwnn.Set2Set(3, n_iters=3, n_layers=1), readout_batch, X(3), f_x),
    Spec("Set2Set", "two-layers", lambda ns: ns.nwnn.Set2Set(2, n_iters=2, n_layers=2), readout_batch, X(2), f_x),
    # ---------------------------------------------------------------- hetero
    Spec("HeteroGraphConv", "mixed-sum-mod-kwargs",
         lambda ns: ns.nwnn.HeteroGraphConv({
             "follows": ns.nwnn.GraphConv(3, 2, norm="right"),
             "plays": ns.nwnn.SAGEConv((3, 2), 2, "pool"),
             "played-by": ns.nwnn.SAGEConv((2, 3), 2, "mean"),
             ("shop", "sells", "game"): ns.nwnn.GraphConv(4, 2, norm="both")}, aggregate="sum"),
         hetero,
         lambda rng, g: {"user": randn(rng, 5, 3), "game": randn(rng, 4, 2), "shop": randn(rng, 2, 4),
                         "w": pos(rng, g.num_edges("plays"))},
         lambda m, g, x: m(g, {k: x[k] for k in ("user", "game", "shop")},
                           mod_kwargs={"plays": {"edge_weight": x["w"]}})),
    Spec("HeteroGraphConv", "gat-stack",
         lambda ns: ns.nwnn.HeteroGraphConv({
             cet[1]: ns.nwnn.GATConv((3, 3), 2, 2) for cet in RELS}, aggregate="stack"),
         hetero, lambda rng, g: {nt: randn(rng, n, 3) for nt, n in HN.items()},
         lambda m, g, x: m(g, {k: x[k] for k in HN})),
    Spec("HeteroGraphConv", "sage-max-pair-inputs",
         lambda ns: ns.nwnn.HeteroGraphConv({
             cet[1]: ns.nwnn.SAGEConv((3, 3), 2, "mean") for cet in RELS}, aggregate="max"),
         hetero, lambda rng, g: {nt: randn(rng, n, 3) for nt, n in HN.items()},
         lambda m, g, x: m(g, ({k: x[k] for k in HN}, {"user": x["user"], "game": x["game"]}))),
    Spec("HeteroGraphConv", "rgcn-mean-mod-args",
         lambda ns: ns.nwnn.HeteroGraphConv({
             cet[1]: ns.nwnn.RelGraphConv(3, 2, 2, "basis", 2, self_loop=False) for cet in RELS},
             aggregate="mean"),
         hetero,
         lambda rng, g: dict({nt: randn(rng, n, 3) for nt, n in HN.items()},
                             **{"et:" + cet[1]: rng.integers(0, 2, g.num_edges(cet)) for cet in RELS}),
         lambda m, g, x: m(g, {k: x[k] for k in HN}, mod_args={cet[1]: (x["et:" + cet[1]],) for cet in RELS})),
    Spec("HeteroGraphConv", "batched-callable-aggregate",
         lambda ns: ns.nwnn.HeteroGraphConv({
             cet[1]: ns.nwnn.GraphConv(3, 2, norm="right") for cet in RELS},
             aggregate=lambda ts, dsttype: ts[0] * 2 + sum(ts[1:])),
         lambda rng: nw.batch([hetero(rng), hetero(rng)]),
         lambda rng, g: {nt: randn(rng, g.num_nodes(nt), 3) for nt in HN},
         lambda m, g, x: m(g, {k: x[k] for k in HN})),
    Spec("HeteroLinear", "node-and-edge-types",
         lambda ns: ns.nwnn.HeteroLinear({"user": 3, ("user", "plays", "game"): 4}, 2), lambda rng: None,
         lambda rng, g: {"user": randn(rng, 5, 3), "plays": randn(rng, 6, 4)},
         lambda m, g, x: m({"user": x["user"], ("user", "plays", "game"): x["plays"]})),
    Spec("HeteroLinear", "nobias", lambda ns: ns.nwnn.HeteroLinear({"a": 2, "b": 3}, 4, bias=False),
         lambda rng: None, lambda rng, g: {"a": randn(rng, 3, 2), "b": randn(rng, 5, 3)},
         lambda m, g, x: m({"a": x["a"], "b": x["b"]})),
    Spec("HeteroEmbedding", "node-and-edge-types",
         lambda ns: ns.nwnn.HeteroEmbedding({"user": 4, ("a", "r", "b"): 3}, 2), lambda rng: None,
         lambda rng, g: {"user": np.array([3, 0, 3, 1]), "r": np.array([[1, 2], [2, 2]])},
         lambda m, g, x: m({"user": x["user"], ("a", "r", "b"): x["r"]})),
    # ---------------------------------------------------------------- readout functions
    *[fn_spec("readout_nodes", f"{op}-weighted", readout_batch,
              lambda rng, g: {"x": randn(rng, n_src(g), 2), "w": randn(rng, n_src(g), 1)},
              lambda f, g, x, op=op: f(g, x["x"], x["w"], op=op)) for op in ("sum", "mean", "max", "min")],
    fn_spec("readout_nodes", "by-name", readout_batch,
            lambda rng, g: {"x": randn(rng, n_src(g), 2), "w": randn(rng, n_src(g), 1)},
            lambda f, g, x: _by_name_nodes(f, g, x)),
    *[fn_spec("readout_edges", f"{op}-weighted", readout_batch,
              lambda rng, g: {"x": randn(rng, ne(g), 3), "w": randn(rng, ne(g))},
              lambda f, g, x, op=op: f(g, x["x"], x["w"], op=op)) for op in ("sum", "mean", "max", "min")],
    fn_spec("sum_nodes", "weight-column", readout_batch,
            lambda rng, g: {"x": randn(rng, n_src(g), 3), "w": randn(rng, n_src(g), 1)},
            lambda f, g, x: f(g, x["x"], x["w"])),
    fn_spec("sum_nodes", "weight-1d-3d-feat", readout_batch,
            lambda rng, g: {"x": randn(rng, n_src(g), 2, 2), "w": randn(rng, n_src(g))},
            lambda f, g, x: f(g, x["x"], x["w"])),
    fn_spec("sum_nodes", "heterograph-ntype", hetero, lambda rng, g: {"x": randn(rng, 4, 3)},
            lambda f, g, x: f(g, x["x"], ntype="game")),
    fn_spec("sum_edges", "heterograph-etype", hetero, lambda rng, g: {"x": randn(rng, g.num_edges("plays"), 2)},
            lambda f, g, x: f(g, x["x"], etype="plays")),
    fn_spec("sum_edges", "plain", readout_batch, lambda rng, g: {"x": randn(rng, ne(g), 3)},
            lambda f, g, x: f(g, x["x"])),
    fn_spec("mean_nodes", "weighted", readout_batch,
            lambda rng, g: {"x": randn(rng, n_src(g), 3), "w": randn(rng, n_src(g), 1)},
            lambda f, g, x: f(g, x["x"], x["w"])),
    fn_spec("mean_edges", "plain", readout_batch, lambda rng, g: {"x": randn(rng, ne(g), 3)},
            lambda f, g, x: f(g, x["x"])),
    fn_spec("max_nodes", "plain", readout_batch, lambda rng, g: {"x": randn(rng, n_src(g), 3)},
            lambda f, g, x: f(g, x["x"])),
    fn_spec("max_edges", "weighted", readout_batch,
            lambda rng, g: {"x": randn(rng, ne(g), 3), "w": pos(rng, ne(g), 1)},
            lambda f, g, x: f(g, x["x"], x["w"])),
    fn_spec("softmax_nodes", "plain", readout_batch, lambda rng, g: {"x": randn(rng, n_src(g), 3)},
            lambda f, g, x: f(g, x["x"])),
    fn_spec("softmax_edges", "plain", readout_batch, lambda rng, g: {"x": randn(rng, ne(g), 2)},
            lambda f, g, x: f(g, x["x"])),
    fn_spec("broadcast_nodes", "plain", readout_batch, lambda rng, g: {"q": randn(rng, g.batch_size, 3)},
            lambda f, g, x: f(g, x["q"])),
    fn_spec("broadcast_edges", "plain", readout_batch, lambda rng, g: {"q": randn(rng, g.batch_size, 2, 2)},
            lambda f, g, x: f(g, x["q"])),
    fn_spec("topk_nodes", "per-column", readout_batch, lambda rng, g: {"x": randn(rng, n_src(g), 3)},
            lambda f, g, x: f(g, x["x"], 3)),
    fn_spec("topk_nodes", "sortby-ascending", readout_batch, lambda rng, g: {"x": randn(rng, n_src(g), 3)},
            lambda f, g, x: f(g, x["x"], 2, descending=False, sortby=1)),
    fn_spec("topk_edges", "per-column-ascending", readout_batch, lambda rng, g: {"x": randn(rng, ne(g), 2)},
            lambda f, g, x: f(g, x["x"], 2, descending=False)),
    fn_spec("topk_edges", "sortby", readout_batch, lambda rng, g: {"x": randn(rng, ne(g), 3)},
            lambda f, g, x: f(g, x["x"], 4, sortby=-1)),
]


# More of DGL's convolutions: attention, edge features, principal aggregation; JK, label propagation
def pna_graph(rng, n=8):
    """Every node has 0, 1 or at least 3 in-edges from distinct other nodes: the odd moments of
    exactly two messages are 0 up to rounding, which their n-th roots blow up."""
    src, dst = [], []
    for v in range(n):
        d = 0 if v == 0 else 1 if v == 1 else int(rng.choice([3, 4, 5]))
        picks = [u for u in rng.permutation(n) if u != v][:d]
        src += picks
        dst += [v] * len(picks)
    return nw.graph((np.array(src, np.int64), np.array(dst, np.int64)), num_nodes=n)


XE = lambda d, de: (lambda rng, g: {"x": randn(rng, n_src(g), d), "e": randn(rng, ne(g), de)})  # noqa: E731
PAIRE = lambda ds, dd, de: (lambda rng, g: dict(PAIR(ds, dd)(rng, g), e=randn(rng, ne(g), de)))  # noqa: E731
f_xe = lambda m, g, x: m(g, x["x"], x["e"])  # noqa: E731
f_pair_e = lambda m, g, x: m(g, pair(x), x["e"])  # noqa: E731
LAYERS = lambda k, d: (lambda rng, g: {f"h{i}": randn(rng, 5, d) for i in range(k)})  # noqa: E731
f_layers = lambda m, g, x: m([x[k] for k in sorted(x)])  # noqa: E731
ALL_STATS = ["mean", "sum", "max", "min", "std", "var", "moment3", "moment4", "moment5"]

SPECS += [
    Spec("GMMConv", "sum-identity-residual", lambda ns: ns.nwnn.GMMConv(4, 4, 2, 3, residual=True), h7,
         lambda rng, g: {"x": randn(rng, 7, 4), "u": randn(rng, ne(g), 2)}, lambda m, g, x: m(g, x["x"], x["u"])),
    Spec("GMMConv", "max-bipartite-linear-residual",
         lambda ns: ns.nwnn.GMMConv((4, 3), 2, 1, 2, "max", residual=True), bip,
         lambda rng, g: dict(PAIR(4, 3)(rng, g), u=randn(rng, ne(g), 1)), lambda m, g, x: m(g, pair(x), x["u"])),
    Spec("GMMConv", "mean-block-nobias", lambda ns: ns.nwnn.GMMConv(3, 2, 2, 2, "mean", bias=False), blk,
         lambda rng, g: {"x": randn(rng, 7, 3), "u": randn(rng, ne(g), 2)}, lambda m, g, x: m(g, x["x"], x["u"])),
    Spec("DotGatConv", "plain", lambda ns: ns.nwnn.DotGatConv(4, 2, 3), h7, X(4), f_att),
    Spec("DotGatConv", "bipartite-two-projections", lambda ns: ns.nwnn.DotGatConv((4, 3), 2, 2), bip, PAIR(4, 3),
         lambda m, g, x: m(g, pair(x), get_attention=True)),
    Spec("DotGatConv", "batched", lambda ns: ns.nwnn.DotGatConv(3, 4, 1), bat, X(3), f_x),
    Spec("AGNNConv", "learn-beta", lambda ns: ns.nwnn.AGNNConv(0.5), h7, X(4), f_x),
    Spec("AGNNConv", "fixed-beta-bipartite", lambda ns: ns.nwnn.AGNNConv(2.0, learn_beta=False), bip, PAIR(3, 3),
         f_pair),
    Spec("EGATConv", "edge-weight-attention", lambda ns: ns.nwnn.EGATConv(4, 3, 2, 5, 2), h7,
         lambda rng, g: dict(XE(4, 3)(rng, g), w=pos(rng, ne(g))),
         lambda m, g, x: m(g, x["x"], x["e"], edge_weight=x["w"], get_attention=True)),
    Spec("EGATConv", "bipartite-nobias", lambda ns: ns.nwnn.EGATConv((4, 3), 2, 3, 2, 2, bias=False), bip,
         PAIRE(4, 3, 2), f_pair_e),
    Spec("EdgeGATConv", "residual-attention", lambda ns: ns.nwnn.EdgeGATConv(4, 3, 2, 2), h7, XE(4, 3),
         lambda m, g, x: m(g, x["x"], x["e"], get_attention=True)),
    Spec("EdgeGATConv", "bipartite-tanh-nobias",
         lambda ns: ns.nwnn.EdgeGATConv((4, 3), 2, 3, 2, activation=ns.T.tanh, bias=False, residual=False), bip,
         PAIRE(4, 3, 2), f_pair_e),
    Spec("EdgeGATConv", "block-dropout-eval", lambda ns: ns.nwnn.EdgeGATConv(3, 2, 2, 2, feat_drop=0.5, attn_drop=0.5),
         blk, XE(3, 2), f_xe),
    # No train-mode batch norm here: A.bias's gradient through it is exactly 0, so float32 compares
    # rounding noise with rounding noise (test_nn_edge_feature_convs.py checks train mode in float64).
    Spec("GatedGCNConv", "bn-eval-residual", lambda ns: ns.nwnn.GatedGCNConv(4, 4, 4), h7, XE(4, 4), f_xe),
    Spec("GatedGCNConv", "no-bn-bipartite-tanh",
         lambda ns: ns.nwnn.GatedGCNConv(3, 2, 3, batch_norm=False, activation=ns.T.tanh), bip, PAIRE(3, 3, 2),
         f_pair_e),
    Spec("CFConv", "plain", lambda ns: ns.nwnn.CFConv(4, 3, 5, 2), h7, XE(4, 3), f_xe),
    Spec("CFConv", "batched", lambda ns: ns.nwnn.CFConv(3, 2, 4, 3), bat, XE(3, 2), f_xe),
    Spec("PNAConv", "all-towers-edge-feats",
         lambda ns: ns.nwnn.PNAConv(4, 4, ALL_STATS, ["identity", "amplification", "attenuation"], 1.3, num_towers=2,
                                    edge_feat_size=3), pna_graph, XE(4, 3), f_xe),
    Spec("PNAConv", "batched-train", lambda ns: ns.nwnn.PNAConv(3, 6, ["mean", "max", "std"], ["attenuation"], 0.9),
         lambda rng: nw.batch([pna_graph(rng, 5), pna_graph(rng, 6)]), X(3), f_x, train=True),
    Spec("DGNConv", "directional-edge-feats",
         lambda ns: ns.nwnn.DGNConv(4, 4, ["mean", "dir1-av", "dir1-dx", "dir2-dx"], ["identity", "amplification"],
                                    1.1, edge_feat_size=2), pna_graph,
         lambda rng, g: dict(XE(4, 2)(rng, g), eig=randn(rng, 8, 2)),
         lambda m, g, x: m(g, x["x"], x["e"], eig_vec=x["eig"])),
    Spec("JumpingKnowledge", "cat", lambda ns: ns.nwnn.JumpingKnowledge("cat"), lambda rng: None, LAYERS(3, 4),
         f_layers),
    Spec("JumpingKnowledge", "max", lambda ns: ns.nwnn.JumpingKnowledge("max"), lambda rng: None, LAYERS(3, 4),
         f_layers),
    Spec("JumpingKnowledge", "lstm", lambda ns: ns.nwnn.JumpingKnowledge("lstm", 4, 3), lambda rng: None,
         LAYERS(3, 4), f_layers),
    Spec("LabelPropagation", "float-labels-sym", lambda ns: ns.nwnn.LabelPropagation(3, 0.6), h7,
         lambda rng, g: {"y": rng.uniform(0, 1, (7, 3)), "known": np.array([0, 2, 3, 6])},
         lambda m, g, x: m(g, x["y"], mask=x["known"])),
    Spec("LabelPropagation", "float-labels-row-normalize-reset",
         lambda ns: ns.nwnn.LabelPropagation(2, 0.8, "row", clamp=False, normalize=True, reset=True), bat,
         lambda rng, g: {"y": rng.uniform(0, 1, (10, 2))}, lambda m, g, x: m(g, x["y"])),
]

# More of DGL's layers: HGT, TWIRLS, EGNN, AtomicConv, dense-adjacency convs, GroupRevRes, graph transformer
def _adj(rng, nd, ns):
    """A weighted dense (N_dst, N_src) adjacency with a row of zeros (a node without in-edges)."""
    a = (rng.random((nd, ns)) < 0.5) * pos(rng, nd, ns)
    a[0] = 0.0
    return a


def _sym_adj(rng, n):
    a = _adj(rng, n, n)
    return a + a.T


def _typed(din, n_nt, n_et):
    return lambda rng, g: {"x": randn(rng, n_src(g), din), "nt": rng.integers(0, n_nt, n_src(g)),
                           "et": rng.integers(0, n_et, ne(g))}


def _sorted_typed(rng, g):
    return {"x": randn(rng, 7, 4), "nt": np.sort(rng.integers(0, 2, 7)), "et": np.sort(rng.integers(0, 3, ne(g)))}


def _mask(rng, b, n):
    m = rng.random((b, n, n)) < 0.35
    for i in range(b):
        np.fill_diagonal(m[i], False)
    return m


_no_graph = lambda rng: None  # noqa: E731
_GT = lambda rng, g: {"x": randn(rng, 2, 4, 6), "b": randn(rng, 2, 4, 4, 3), "mask": _mask(rng, 2, 4)}  # noqa: E731
_f_gt = lambda m, g, x: m(x["x"], x["b"], x["mask"])  # noqa: E731
_f_hgt = lambda m, g, x: m(g, x["x"], x["nt"], x["et"])  # noqa: E731

SPECS += [
    Spec("HGTConv", "identity-residual", lambda ns: ns.nwnn.HGTConv(4, 2, 2, 2, 3), h7, _typed(4, 2, 3), _f_hgt),
    Spec("HGTConv", "residual-weight-norm", lambda ns: ns.nwnn.HGTConv(5, 2, 3, 3, 2, use_norm=True), bat,
         _typed(5, 3, 2), _f_hgt),
    Spec("HGTConv", "presorted", lambda ns: ns.nwnn.HGTConv(4, 2, 2, 2, 3), h7, _sorted_typed,
         lambda m, g, x: m(g, x["x"], x["nt"], x["et"], presorted=True)),
    Spec("HGTConv", "block", lambda ns: ns.nwnn.HGTConv(3, 2, 2, 2, 2), blk, _typed(3, 2, 2), _f_hgt),
    Spec("EGNNConv", "plain", lambda ns: ns.nwnn.EGNNConv(4, 6, 3), h7_noloop,
         lambda rng, g: {"h": randn(rng, 7, 4), "x": randn(rng, 7, 3)}, lambda m, g, x: m(g, x["h"], x["x"])),
    Spec("EGNNConv", "edge-feat-block", lambda ns: ns.nwnn.EGNNConv(3, 4, 2, 2), blk,
         lambda rng, g: {"h": randn(rng, 7, 3), "x": randn(rng, 7, 2), "e": randn(rng, ne(g), 2)},
         lambda m, g, x: m(g, x["h"], x["x"], x["e"])),
    Spec("AtomicConv", "plain", lambda ns: ns.nwnn.AtomicConv([0.5, 0.7, 0.6], [0.1, 0.2, 0.3], [1.0, 0.5, 2.0]),
         h7_noloop, lambda rng, g: {"z": rng.uniform(1, 3, (7, 1)), "r": rng.uniform(-0.8, 0.8, (ne(g), 1))},
         lambda m, g, x: m(g, x["z"], x["r"])),
    Spec("AtomicConv", "typed", lambda ns: ns.nwnn.AtomicConv([0.5, 0.7], [0.1, 0.2], [1.0, 0.5], [1.0, 6.0, 8.0]),
         bat, lambda rng, g: {"z": rng.choice([1.0, 6.0, 7.0, 8.0], (n_src(g), 1)),
                              "r": rng.uniform(-0.8, 0.8, (ne(g), 1))},
         lambda m, g, x: m(g, x["z"], x["r"]), const=("z",)),
    Spec("DenseGraphConv", "both", lambda ns: ns.nwnn.DenseGraphConv(4, 3), _no_graph,
         lambda rng, g: {"a": _sym_adj(rng, 6), "x": randn(rng, 6, 4)}, lambda m, g, x: m(x["a"], x["x"])),
    Spec("DenseGraphConv", "right-bipartite-tanh",
         lambda ns: ns.nwnn.DenseGraphConv(3, 5, norm="right", activation=ns.T.tanh), _no_graph,
         lambda rng, g: {"a": _adj(rng, 4, 6), "x": randn(rng, 6, 3)}, lambda m, g, x: m(x["a"], x["x"])),
    Spec("DenseSAGEConv", "square", lambda ns: ns.nwnn.DenseSAGEConv(4, 3), _no_graph,
         lambda rng, g: {"a": _adj(rng, 6, 6), "x": randn(rng, 6, 4)}, lambda m, g, x: m(x["a"], x["x"])),
    Spec("DenseSAGEConv", "pair-layernorm-relu",
         lambda ns: ns.nwnn.DenseSAGEConv(4, 3, activation=ns.F.relu, norm=ns.tnn.LayerNorm(3)), _no_graph,
         lambda rng, g: {"a": _adj(rng, 4, 6), "xs": randn(rng, 6, 4), "xd": randn(rng, 4, 4)},
         lambda m, g, x: m(x["a"], (x["xs"], x["xd"]))),
    Spec("DenseChebConv", "k3-number", lambda ns: ns.nwnn.DenseChebConv(4, 3, 3), _no_graph,
         lambda rng, g: {"a": _sym_adj(rng, 6), "x": randn(rng, 6, 4)}, lambda m, g, x: m(x["a"], x["x"], 1.6)),
    Spec("DenseChebConv", "k2-eigensolver-nobias", lambda ns: ns.nwnn.DenseChebConv(4, 3, 2, bias=False), _no_graph,
         lambda rng, g: {"a": _sym_adj(rng, 6), "x": randn(rng, 6, 4)}, lambda m, g, x: m(x["a"], x["x"]),
         const=("a",)),
    Spec("GroupRevRes", "graphconv-3", lambda ns: ns.nwnn.GroupRevRes(ns.nwnn.GraphConv(2, 2), 3), h7, X(6), f_x),
    Spec("TWIRLSConv", "default", lambda ns: ns.nwnn.TWIRLSConv(5, 3, 4, 4), h7_noloop, X(5), f_x),
    Spec("TWIRLSConv", "attention-eta-layernorm",
         lambda ns: ns.nwnn.TWIRLSConv(5, 3, 4, 4, attention=True, use_eta=True, attn_bef=True, norm="layer",
                                       num_mlp_before=2, num_mlp_after=2, tau=0.1), h7, X(5), f_x),
    Spec("TWIRLSConv", "eq30-batchnorm-no-mlp-before",
         lambda ns: ns.nwnn.TWIRLSConv(5, 3, 4, 3, precond=False, lam=0.5, alp=0.4, num_mlp_before=0,
                                       num_mlp_after=2, norm="batch"), bat, X(5), f_x),
    Spec("TWIRLSUnfoldingAndAttention", "attention",
         lambda ns: ns.nwnn.TWIRLSUnfoldingAndAttention(4, 0.4, 0.8, 4, attn_aft=2, use_eta=True, T=4.0), h7, X(4),
         f_x),
    Spec("BiasedMHA", "add-mask", lambda ns: ns.nwnn.BiasedMHA(6, 3), _no_graph, _GT, _f_gt),
    Spec("BiasedMHA", "mul-nobias", lambda ns: ns.nwnn.BiasedMHA(6, 3, bias=False, attn_bias_type="mul"), _no_graph,
         _GT, lambda m, g, x: m(x["x"], x["b"])),
    Spec("GraphormerLayer", "post-norm", lambda ns: ns.nwnn.GraphormerLayer(6, 8, 3), _no_graph, _GT, _f_gt),
    Spec("GraphormerLayer", "pre-norm-mul-gelu",
         lambda ns: ns.nwnn.GraphormerLayer(6, 8, 3, attn_bias_type="mul", norm_first=True, activation=ns.tnn.GELU()),
         _no_graph, _GT, _f_gt),
    Spec("DegreeEncoder", "both", lambda ns: ns.nwnn.DegreeEncoder(3, 4), _no_graph,
         lambda rng, g: {"d": rng.integers(0, 6, (2, 2, 5))}, lambda m, g, x: m(x["d"])),
    Spec("DegreeEncoder", "out", lambda ns: ns.nwnn.DegreeEncoder(3, 4, "out"), _no_graph,
         lambda rng, g: {"d": rng.integers(0, 6, (2, 5))}, lambda m, g, x: m(x["d"])),
    Spec("SpatialEncoder", "plain", lambda ns: ns.nwnn.SpatialEncoder(3, 4), _no_graph,
         lambda rng, g: {"d": rng.integers(-1, 6, (2, 5, 5))}, lambda m, g, x: m(x["d"])),
    Spec("PathEncoder", "plain", lambda ns: ns.nwnn.PathEncoder(3, 2, 4), _no_graph,
         lambda rng, g: {"d": rng.integers(0, 5, (2, 4, 4)), "p": randn(rng, 2, 4, 4, 3, 2)},
         lambda m, g, x: m(x["d"], x["p"])),
    Spec("SpatialEncoder3d", "typed", lambda ns: ns.nwnn.SpatialEncoder3d(4, 3, 5), _no_graph,
         lambda rng, g: {"c": randn(rng, 2, 5, 3), "t": rng.integers(-1, 5, (2, 5))},
         lambda m, g, x: m(x["c"], x["t"])),
    Spec("SpatialEncoder3d", "untyped", lambda ns: ns.nwnn.SpatialEncoder3d(4, 2, 5), _no_graph,
         lambda rng, g: {"c": randn(rng, 2, 4, 3)}, lambda m, g, x: m(x["c"])),
]


def _by_name_nodes(f, g, x):
    """``feat`` and ``weight`` named by the graph's node data, as DGL allows."""
    g.ndata["h"] = x["x"]
    g.ndata["hw"] = x["w"]
    try:
        return f(g, "h", "hw", op="mean")
    finally:
        g.ndata.pop("h")
        g.ndata.pop("hw")


# ============================================================================ the harness
def _is_tensor(o):
    return isinstance(o, (nc.Tensor, torch.Tensor))


def flatten(out, prefix="out"):
    """``[(name, tensor)]`` of a tensor, a tuple/list or a dict of them (in a fixed order)."""
    if _is_tensor(out):
        return [(prefix, out)]
    if isinstance(out, (tuple, list)):
        return [kv for i, o in enumerate(out) for kv in flatten(o, f"{prefix}[{i}]")]
    if isinstance(out, dict):
        return [kv for k in sorted(out, key=str) for kv in flatten(out[k], f"{prefix}[{k!r}]")]
    raise TypeError(f"{prefix}: unexpected output type {type(out).__name__}")


def to_numpy(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def is_float(t):
    return t.is_floating_point()



# LapPosEncoder, EdgePredictor, point-cloud graphs, the Set Transformer, WeightAndSum, Sequential and
# the explainers
def _eig(rng, g):
    vals, vecs = np.repeat(rng.uniform(0, 2, (1, 4)), 5, axis=0), randn(rng, 5, 4)
    vals[1, 3] = vecs[1, 3] = np.nan          # padding: one pair of node 1 is absent
    return {"vals": vals, "vecs": vecs}


def _edge_diffs(graph, p):
    """The coordinate differences along the edges of a graph built from points ``p``."""
    src, dst = graph.edges()
    return p.index_select(0, src.long()) - p.index_select(0, dst.long())


_PTS = lambda rng, g: {"p": randn(rng, 10, 3)}  # noqa: E731
_PTS3 = lambda rng, g: {"p": randn(rng, 2, 5, 3)}  # noqa: E731
_PAIRS = lambda rng, g: {"hu": randn(rng, 6, 4), "hv": randn(rng, 6, 4)}  # noqa: E731
_f_pairs = lambda m, g, x: m(x["hu"], x["hv"])  # noqa: E731


def _explained_model(ns, pool):
    """A model taking ``eweight`` (one Linear, a weighted sum of messages, a mean per graph when
    ``pool``), of backend ``ns``."""

    class Model(ns.tnn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ns.tnn.Linear(4, 3)

        def forward(self, graph, feat, eweight=None):
            with graph.local_scope():
                graph.ndata["h"] = self.lin(feat)
                w = ns.T.ones(graph.num_edges(), dtype=feat.dtype) if eweight is None else eweight
                graph.edata["w"] = w.reshape(-1, 1)
                graph.update_all(nw.function.u_mul_e("h", "w", "m"), nw.function.sum("m", "h"))
                return ns.nwnn.AvgPooling()(graph, graph.ndata["h"]) if pool else graph.ndata["h"]

    return Model()


def _hetero_explained_model(ns):
    """Per relation into users and games a Linear of the sources, eweight-scaled and summed; the
    graph's logits are the sum over those two types of their mean."""

    class Model(ns.tnn.Module):
        def __init__(self):
            super().__init__()
            self.lins = ns.tnn.ModuleDict({ct[1]: ns.tnn.Linear(4, 3) for ct in RELS})

        def forward(self, graph, feat, eweight=None):
            with graph.local_scope():
                funcs = {}
                for ct in graph.canonical_etypes:
                    graph.nodes[ct[0]].data[f"h_{ct[1]}"] = self.lins[ct[1]](feat[ct[0]])
                    w = ns.T.ones(graph.num_edges(ct), dtype=feat[ct[0]].dtype) if eweight is None else eweight[ct]
                    graph.edges[ct].data["w"] = w.reshape(-1, 1)
                    funcs[ct] = (nw.function.u_mul_e(f"h_{ct[1]}", "w", "m"), nw.function.sum("m", "out"))
                graph.multi_update_all(funcs, "sum")
                return sum(graph.nodes[nt].data["out"].mean(0, keepdim=True) for nt in ("user", "game"))

    return Model()


def _explainer(ns, hetero=False, **kw):
    """An explainer whose initial masks are fixed NumPy draws (the two backends' generators differ)."""
    base = ns.nwnn.HeteroGNNExplainer if hetero else ns.nwnn.GNNExplainer

    class Fixed(base):
        def _init_masks(self, graph, feat):
            r = np.random.default_rng(7)
            like = next(iter(feat.values())) if isinstance(feat, dict) else feat

            def draw(*shape):
                return ns.T.tensor(r.standard_normal(shape) * 0.3).to(like.dtype)

            if not hetero:
                return draw(1, feat.shape[1]), draw(graph.num_edges())
            return ({nt: draw(1, f.shape[1]) for nt, f in sorted(feat.items())},
                    {ct: draw(graph.num_edges(ct)) for ct in graph.canonical_etypes})

    model = _hetero_explained_model(ns) if hetero else _explained_model(ns, kw.pop("pool"))
    return Fixed(model, num_hops=kw.pop("num_hops", 1), lr=0.1, num_epochs=5, log=False)


_HFEAT = lambda rng, g: {f"x_{nt}": randn(rng, n, 4) for nt, n in HN.items()} | {"s": randn(rng, 4)}  # noqa: E731

SPECS += [
    Spec("LapPosEncoder", "transformer-bn-post", lambda ns: ns.nwnn.LapPosEncoder("Transformer", 2, 4, 6, 2, True, 2),
         _no_graph, _eig, lambda m, g, x: m(x["vals"], x["vecs"])),
    Spec("LapPosEncoder", "deepset", lambda ns: ns.nwnn.LapPosEncoder("DeepSet", 3, 4, 5, num_post_layer=1),
         _no_graph, _eig, lambda m, g, x: m(x["vals"], x["vecs"])),
    Spec("EdgePredictor", "cos-projection", lambda ns: ns.nwnn.EdgePredictor("cos", 4, 3, bias=True), _no_graph,
         _PAIRS, _f_pairs),
    Spec("EdgePredictor", "cat", lambda ns: ns.nwnn.EdgePredictor("cat"), _no_graph, _PAIRS, _f_pairs),
    Spec("KNNGraph", "batch-exclude-self", lambda ns: ns.nwnn.KNNGraph(2), _no_graph, _PTS3,
         lambda m, g, x: _edge_diffs(m(x["p"], exclude_self=True), x["p"].reshape(10, 3))),
    Spec("SegmentedKNNGraph", "cosine", lambda ns: ns.nwnn.SegmentedKNNGraph(3), _no_graph, _PTS,
         lambda m, g, x: _edge_diffs(m(x["p"], [4, 6], dist="cosine"), x["p"])),
    Spec("RadiusGraph", "distances-self-loop", lambda ns: ns.nwnn.RadiusGraph(1.5, self_loop=True), _no_graph, _PTS,
         lambda m, g, x: m(x["p"], get_distances=True)[1]),
    fn_spec("knn_graph", "plain", _no_graph, _PTS, lambda f, g, x: _edge_diffs(f(x["p"], 3), x["p"])),
    fn_spec("segmented_knn_graph", "plain", _no_graph, _PTS,
            lambda f, g, x: _edge_diffs(f(x["p"], 2, [3, 7]), x["p"])),
    fn_spec("radius_graph", "p1", _no_graph, _PTS, lambda f, g, x: f(x["p"], 2.0, p=1, get_distances=True)[1]),
    Spec("SetTransformerEncoder", "sab", lambda ns: ns.nwnn.SetTransformerEncoder(4, 2, 3, 8, 2), bat, X(4), f_x),
    Spec("SetTransformerEncoder", "isab", lambda ns: ns.nwnn.SetTransformerEncoder(4, 2, 3, 8, 1, "isab", m=2), bat,
         X(4), f_x),
    Spec("SetTransformerDecoder", "k2", lambda ns: ns.nwnn.SetTransformerDecoder(4, 2, 3, 8, 1, 2), bat, X(4), f_x),
    Spec("WeightAndSum", "batched", lambda ns: ns.nwnn.WeightAndSum(4), bat, X(4), f_x),
    Spec("Sequential", "one-graph", lambda ns: ns.nwnn.Sequential(ns.nwnn.GraphConv(4, 3), ns.nwnn.GraphConv(3, 2)),
         h7, X(4), f_x),
    Spec("Sequential", "graph-per-module",
         lambda ns: ns.nwnn.Sequential(ns.nwnn.GraphConv(4, 3), ns.nwnn.GraphConv(3, 2)), h7, X(4),
         lambda m, g, x: m([g, g], x["x"])),
    Spec("GNNExplainer", "graph", lambda ns: _explainer(ns, pool=True), bat,
         lambda rng, g: {"x": randn(rng, n_src(g), 4), "s": randn(rng, ne(g))},
         lambda m, g, x: [t * x["s"][:t.shape[0]] for t in m.explain_graph(g, x["x"])]),
    Spec("GNNExplainer", "node", lambda ns: _explainer(ns, pool=False, num_hops=2), h7,
         lambda rng, g: {"x": randn(rng, 7, 4), "s": randn(rng, 4)},
         lambda m, g, x: [t * x["s"][:1] for t in m.explain_node(3, g, x["x"])[2:]]),
    Spec("HeteroGNNExplainer", "graph", lambda ns: _explainer(ns, hetero=True), hetero, _HFEAT,
         lambda m, g, x: [t * x["s"][:1] for d in m.explain_graph(g, {nt: x[f"x_{nt}"] for nt in HN})
                          for t in d.values()]),
]

# Knowledge-graph triple scores and random-walk embeddings. DeepWalk draws its negatives from
# nodeweave's generator, reseeded before each side's forward so both draw the same ones.
_TRIPLES = lambda rng, g: {"h": randn(rng, 6, 4), "t": randn(rng, 6, 4), "r": rng.integers(0, 3, 6)}  # noqa: E731
_f_triples = lambda m, g, x: m(x["h"], x["t"], x["r"])  # noqa: E731
_RING = nw.graph(([0, 1, 2, 3, 4], [1, 2, 3, 4, 0]))
_MP_GRAPH = nw.heterograph({("user", "uc", "company"): ([0, 1, 2], [1, 0, 1]),
                            ("company", "cu", "user"): ([0, 1], [2, 0])})


def _seeded_call(m, walks):
    nw.seed(11)
    return m(walks)


SPECS += [
    Spec("TransE", "l1", lambda ns: ns.nwnn.TransE(3, 4), _no_graph, _TRIPLES, _f_triples),
    Spec("TransR", "l2", lambda ns: ns.nwnn.TransR(3, 2, 4, p=2), _no_graph, _TRIPLES, _f_triples),
    Spec("DeepWalk", "fast-neg", lambda ns: ns.nwnn.DeepWalk(_RING, emb_dim=3, walk_length=4, window_size=2,
                                                              negative_size=2, sparse=False), _no_graph,
         lambda rng, g: {"w": np.array([[(v + k) % 5 for k in range(4)] for v in (0, 3, 3)])},
         lambda m, g, x: _seeded_call(m, x["w"])),
    Spec("DeepWalk", "degree-neg", lambda ns: ns.nwnn.DeepWalk(_RING, emb_dim=3, walk_length=3, window_size=1,
                                                                fast_neg=False, sparse=False), _no_graph,
         lambda rng, g: {"w": np.array([[(v + k) % 5 for k in range(3)] for v in (1, 4)])},
         lambda m, g, x: _seeded_call(m, x["w"])),
    Spec("MetaPath2Vec", "loss", lambda ns: ns.nwnn.MetaPath2Vec(_MP_GRAPH, ["uc", "cu"], 1, emb_dim=3,
                                                                  negative_size=2, sparse=False), _no_graph,
         lambda rng, g: {"u": rng.integers(0, 5, 4), "v": rng.integers(0, 5, 4), "n": rng.integers(0, 5, (4, 2))},
         lambda m, g, x: m(x["u"], x["v"], x["n"])),
]


# PGExplainer / HeteroPGExplainer: graph explanations in eval mode (deterministic)
def _pg_model(ns, hetero=False):
    """Linear messages scaled by edge_weight, summed, tanh (the embeddings); the mean per graph
    (a sum over node types for heterographs) through a Linear gives the logits."""

    class Model(ns.tnn.Module):
        def __init__(self):
            super().__init__()
            self.lins = ns.tnn.ModuleDict({ct[1]: ns.tnn.Linear(4, 3) for ct in (RELS if hetero else [("_N", "e", "_N")])})
            self.out = ns.tnn.Linear(3, 2)

        def forward(self, g, h, embed=False, edge_weight=None):
            hd = h if hetero else {"_N": h}
            wd = edge_weight if hetero or edge_weight is None else {g.canonical_etypes[0]: edge_weight}
            with g.local_scope():
                funcs = {}
                for ct in g.canonical_etypes:
                    key = ct[1] if hetero else "e"
                    g.nodes[ct[0]].data[f"h_{key}"] = self.lins[key](hd[ct[0]])
                    w = ns.T.ones(g.num_edges(ct), dtype=hd[ct[0]].dtype) if wd is None else wd[ct]
                    g.edges[ct].data["w"] = w.reshape(-1, 1)
                    funcs[ct] = (nw.function.u_mul_e(f"h_{key}", "w", "m"), nw.function.sum("m", "z"))
                g.multi_update_all(funcs, "sum")
                like = next(iter(hd.values()))   # a type without in-edges (shop) embeds as zeros
                z = {nt: ns.T.tanh(g.nodes[nt].data["z"]) if "z" in g.nodes[nt].data
                     else ns.T.zeros(g.num_nodes(nt), 3, dtype=like.dtype) for nt in g.ntypes}
            if embed:
                return z if hetero else z["_N"]
            if hetero:
                return self.out(sum(v.mean(0, keepdim=True) for v in z.values()))
            return self.out(ns.nwnn.AvgPooling()(g, z["_N"]))

    return Model()


SPECS += [
    Spec("PGExplainer", "graph", lambda ns: ns.nwnn.PGExplainer(_pg_model(ns), 3), bat,
         lambda rng, g: {"x": randn(rng, n_src(g), 4)}, lambda m, g, x: m.explain_graph(g, x["x"])),
    Spec("HeteroPGExplainer", "graph", lambda ns: ns.nwnn.HeteroPGExplainer(_pg_model(ns, hetero=True), 3), hetero,
         lambda rng, g: {f"x_{nt}": randn(rng, n, 4) for nt, n in HN.items()},
         lambda m, g, x: m.explain_graph(g, {nt: x[f"x_{nt}"] for nt in HN})),
]


# SubgraphX / HeteroSubgraphX: with num_hops=1 the Shapley values are exact, so both sides find the
# same node set (the coalition draws come from nodeweave's generator, reseeded before each side);
# the found ids, and the features of those nodes (a float output to differentiate), are compared.
def _subgraphx_call(m, g, feats, pick):
    nw.seed(3)
    found = m.explain_graph(g, feats, target_class=1)
    return [found, pick(found)] if not isinstance(found, dict) else [*found.values(), *pick(found)]


SPECS += [
    Spec("SubgraphX", "graph", lambda ns: ns.nwnn.SubgraphX(_pg_model(ns), num_hops=1, num_rollouts=3,
                                                             shapley_steps=2), h7,
         lambda rng, g: {"x": randn(rng, 7, 4)},
         lambda m, g, x: _subgraphx_call(m, g, x["x"], lambda ids: x["x"].index_select(0, ids))),
    Spec("HeteroSubgraphX", "graph", lambda ns: ns.nwnn.HeteroSubgraphX(_pg_model(ns, hetero=True), num_hops=1,
                                                                         num_rollouts=3, shapley_steps=2), hetero,
         lambda rng, g: {f"x_{nt}": randn(rng, n, 4) for nt, n in HN.items()},
         lambda m, g, x: _subgraphx_call(m, g, {nt: x[f"x_{nt}"] for nt in HN},
                                         lambda ids: [x[f"x_{nt}"].index_select(0, ids[nt]) for nt in ids])),
]


def randomize(module, rng, np_dtype):
    """Random values for every floating parameter and buffer of the native module (biases and
    BatchNorm statistics start at 0/1 otherwise, which would leave paths unchecked)."""
    with nc.no_grad():
        for _, p in module.named_parameters():
            if p.requires_grad:  # a frozen one is configuration (AtomicConv's atom types), kept as built
                p.copy_(nc.tensor(rng.uniform(-0.8, 0.8, tuple(p.shape)).astype(np_dtype)))
        for name, b in module.named_buffers():
            if b.is_floating_point():
                lo, hi = (0.5, 1.5) if name.endswith("running_var") else (-0.5, 0.5)
                b.copy_(nc.tensor(rng.uniform(lo, hi, tuple(b.shape)).astype(np_dtype)))


def snapshot(module):
    """The module's state_dict as NumPy copies (taken before the forward, which may update buffers)."""
    return {k: np.array(to_numpy(v)) for k, v in module.state_dict().items()}


def copy_state_to_torch(state, tmod):
    dst = tmod.state_dict()
    assert sorted(state) == sorted(dst), f"state_dict keys differ: native {sorted(state)}, torch {sorted(dst)}"
    tmod.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in state.items()}, strict=True)
    for k, v in tmod.state_dict().items():  # copied exactly (same dtype on both sides)
        np.testing.assert_array_equal(to_numpy(v), state[k], err_msg=f"copy of {k}")


def make_inputs(spec, arrays, side, np_dtype):
    out = {}
    for k, a in arrays.items():
        if np.issubdtype(a.dtype, np.floating):
            a = np.ascontiguousarray(a.astype(np_dtype))
            grad = k not in spec.const
            out[k] = (nc.tensor(a, requires_grad=grad) if side is NATIVE
                      else torch.tensor(a, requires_grad=grad))
        else:
            a = np.ascontiguousarray(a.astype(np.int64))
            out[k] = nc.tensor(a) if side is NATIVE else torch.from_numpy(a)
    return out


def run_side(spec, side, g, arrays, dtype_name, state=None, param_rng=None):
    """Builds the module (native: random parameters; torch: ``state``, the native ones, copied),
    runs forward and returns (module or None, its state before the forward, inputs, flat outputs)."""
    np_dtype, nc_dtype, th_dtype = DTYPES[dtype_name]
    nw.set_backend(side.name)  # graph queries hand out this side's tensors
    nc.manual_seed(0)
    torch.manual_seed(0)
    obj = spec.build(side)
    module = None
    if isinstance(obj, (nc.nn.Module, torch.nn.Module)):
        module = obj
        module.to(nc_dtype if side is NATIVE else th_dtype)
        module.train(spec.train)
        if side is NATIVE:
            randomize(module, param_rng, np_dtype)
        else:
            copy_state_to_torch(state, module)
        state = snapshot(module)
    inputs = make_inputs(spec, arrays, side, np_dtype)
    return module, state, inputs, flatten(spec.call(obj, g, inputs))


def grads_of(module, inputs):
    grads = {f"input {k}": v.grad for k, v in inputs.items() if is_float(v) and v.requires_grad}
    if module is not None:
        grads.update({f"parameter {k}": p.grad for k, p in module.named_parameters()})
    return grads


@pytest.fixture
def restore_backend():
    before = nwb.current().name
    yield
    nw.set_backend(before)


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("spec", SPECS, ids=[s.ids for s in SPECS])
def test_native_and_pytorch_agree(spec, dtype_name, restore_backend):
    np_dtype, nc_dtype, th_dtype = DTYPES[dtype_name]
    tol = TOLS[dtype_name]
    rng = np.random.default_rng(zlib.crc32(spec.ids.encode()))  # stable across runs
    g = spec.graph(rng)
    arrays = spec.data(rng, g)

    # ---- forward on both sides
    n_mod, n_state, n_in, n_out = run_side(spec, NATIVE, g, arrays, dtype_name, param_rng=rng)
    t_mod, _, t_in, t_out = run_side(spec, TORCH, g, arrays, dtype_name, state=n_state)

    if t_mod is not None:
        assert isinstance(t_mod, torch.nn.Module)
        assert isinstance(n_mod, nc.nn.Module) and not isinstance(n_mod, torch.nn.Module)
        n_params, t_params = dict(n_mod.named_parameters()), dict(t_mod.named_parameters())
        assert sorted(n_params) == sorted(t_params)
        for k, p in t_params.items():
            assert isinstance(p, torch.nn.Parameter), f"{k} is a {type(p).__name__}"
            assert p.dtype == th_dtype and n_params[k].dtype == nc_dtype, f"{k}: {n_params[k].dtype} / {p.dtype}"
    assert [k for k, _ in n_out] == [k for k, _ in t_out]
    for (k, a), (_, b) in zip(n_out, t_out):
        assert isinstance(a, nc.Tensor), f"native {k} is a {type(a).__name__}"
        assert isinstance(b, torch.Tensor), f"torch {k} is a {type(b).__name__}"
        assert tuple(a.shape) == tuple(b.shape), f"{k}: native {tuple(a.shape)}, torch {tuple(b.shape)}"
        if is_float(b):
            assert a.dtype == nc_dtype and b.dtype == th_dtype, f"{k}: {a.dtype} / {b.dtype}"
            # An identity layer (EdgeWeightNorm('none'), as DGL's) hands back its input leaf.
            identity = any(b is v for v in t_in.values())
            assert b.grad_fn is not None or identity, f"torch output {k} has no grad_fn"
            assert a.requires_grad, f"native output {k} is not part of an autograd graph"
            assert_close(a, b, tol, f"forward {k}")
        else:  # ids (topk indices): the same integer type, exactly equal
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], f"{k}: {a.dtype} / {b.dtype}"
            np.testing.assert_array_equal(to_numpy(a), to_numpy(b), err_msg=f"forward {k}")

    # ---- buffers after the forward (BatchNorm in train mode updates its running statistics)
    if t_mod is not None:
        t_bufs = dict(t_mod.named_buffers())
        for k, b in n_mod.named_buffers():
            assert_close(b, t_bufs[k], tol, f"buffer {k}")

    # ---- backward with one shared cotangent per floating output
    float_outs = [i for i, (_, b) in enumerate(t_out) if is_float(b)]
    assert float_outs, "nothing to differentiate"
    ups = {i: rng.standard_normal(tuple(t_out[i][1].shape)).astype(np_dtype) for i in float_outs}
    nw.set_backend("native")
    sum((n_out[i][1] * nc.tensor(ups[i])).sum() for i in float_outs).backward()
    nw.set_backend("pytorch")
    sum((t_out[i][1] * torch.from_numpy(ups[i])).sum() for i in float_outs).backward()

    n_grads, t_grads = grads_of(n_mod, n_in), grads_of(t_mod, t_in)
    assert sorted(n_grads) == sorted(t_grads)
    assert any(v is not None for v in t_grads.values()), "no gradient reached any input or parameter"
    for k in sorted(n_grads):
        a, b = n_grads[k], t_grads[k]
        if a is None and b is None:
            continue
        assert a is not None and b is not None, \
            f"gradient of {k}: native {'None' if a is None else 'set'}, torch {'None' if b is None else 'set'}"
        assert a.dtype == nc_dtype and b.dtype == th_dtype, f"gradient of {k}: {a.dtype} / {b.dtype}"
        assert tuple(a.shape) == tuple(b.shape), f"gradient of {k}: {tuple(a.shape)} / {tuple(b.shape)}"
        assert_close(a, b, tol, f"gradient of {k}")


# ============================================================================ coverage of the table
def test_every_export_has_a_spec():
    covered = {s.name for s in SPECS}
    missing = sorted(set(nn_native.__all__) - covered)
    assert not missing, f"nodeweave.nn exports without a backend-parity spec: {missing}; add them to SPECS"
    unknown = sorted(covered - set(nn_native.__all__))
    assert not unknown, f"specs for names nodeweave.nn does not export: {unknown}"
    assert sorted(nn_native.__all__) == sorted(nn_torch.__all__)


def test_spec_ids_are_unique():
    ids = [s.ids for s in SPECS]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
