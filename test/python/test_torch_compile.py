"""torch.compile over the pytorch backend: the graph kernels as ``nodeweave::`` custom operators
(nodeweave/backend/torch_library.py, issue #16 item 7).

- every operator passes ``torch.library.opcheck`` (schema, fake tensors, autograd registration,
  AOT dispatch with dynamic shapes), and the operator path's gradients pass float64 finite
  differences (gradcheck, and gradgradcheck where the backward is built from kernels);
- the structure tensors stand for the graph: cached per relation, rebuilt from the tensors when
  they were never seen or were written in place;
- a two-layer GAT of ``nodeweave.nn.GATConv`` compiled with ``fullgraph=True`` traces with no
  graph break and gives the eager outputs and parameter gradients within 1e-5 relative (float32),
  with ``aot_eager`` and, on a tiny graph, the default inductor backend;
- GraphConv and SAGEConv go through the same operators and compile without a break too;
- a compiled model run on another graph, or on a graph changed in place, gives that graph's
  result (its guards fail and it recompiles; nothing of the first graph is reused).
"""

from __future__ import annotations

import itertools
import shutil

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.backend as nwb
from nodeweave import _C
from nodeweave import errors as nwerr
from nodeweave.backend import torch_autograd as TA
from nodeweave.backend import torch_library as TL

SPMM_OPS = ("add", "sub", "mul", "div", "copy_lhs", "copy_rhs")
REDUCES = ("sum", "mean", "max", "min")
SDDMM_OPS = ("add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs")
# Relative tolerance of compiled against eager (float32), with an absolute floor scaled by the
# tensor's largest entry, as in test_backend_parity.py.
RTOL, ATOL = 1e-5, 1e-6


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    """Each test compiles from scratch and counts only its own graph breaks."""
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    yield
    torch._dynamo.reset()


@pytest.fixture
def pytorch_backend():
    nwb.set_backend("pytorch")
    yield
    nwb.set_backend("native")


def small_graph():
    """8 nodes: a self-loop, multi-edges, a node without in-edges (7), one without out-edges."""
    src = np.array([0, 1, 2, 3, 4, 5, 6, 0, 0, 2, 5, 1, 3])
    dst = np.array([1, 2, 3, 4, 5, 6, 0, 1, 0, 6, 3, 4, 3])
    return nw.graph((src, dst), num_nodes=8)


def rel_of(g):
    (rel,) = g._rels.values()
    return rel


def random_graph(rng, n: int, edges: int):
    """A random graph with self-loops (so no node has zero in-degree)."""
    return nw.add_self_loop(nw.graph((rng.integers(0, n, edges), rng.integers(0, n, edges)),
                                     num_nodes=n))


def operand(rng, shape, positive=False, grad=True):
    """float64 values; positive ones lie in [0.5, 1.5) (divisors, and no max/min ties)."""
    v = 0.5 + rng.random(shape) if positive else rng.standard_normal(shape)
    return torch.tensor(v, dtype=torch.float64, requires_grad=grad)


def assert_close(actual, desired, what):
    actual, desired = actual.detach().double(), desired.detach().double()
    scale = max(1.0, desired.abs().max().item()) if desired.numel() else 1.0
    torch.testing.assert_close(actual, desired, rtol=RTOL, atol=ATOL * scale, msg=what)


# ------------------------------------------------------------------------------------ opcheck
def test_every_registered_operator_is_checked():
    """A new operator in torch_library.OPS must come with an opcheck case below."""
    checked = {"gspmm", "gsddmm", "edge_softmax", "edge_softmax_backward"}
    assert set(TL.OPS) == checked
    for name in TL.OPS:
        assert hasattr(torch.ops.nodeweave, name)


@pytest.mark.parametrize("op,red", list(itertools.product(SPMM_OPS, REDUCES)))
def test_opcheck_gspmm(rng, op, red):
    g = TL.structure(rel_of(small_graph()))
    x = operand(rng, (8, 1, 3), True) if op != "copy_rhs" else None
    w = operand(rng, (13, 2, 1), True) if op != "copy_lhs" else None  # broadcast both ways
    torch.library.opcheck(torch.ops.nodeweave.gspmm.default,
                          (g.src, g.dst, g.num_src, g.num_dst, op, red, x, w))


@pytest.mark.parametrize("op", SDDMM_OPS)
@pytest.mark.parametrize("lt,rt", [("u", "v"), ("e", "u")])
def test_opcheck_gsddmm(rng, op, lt, rt):
    g = TL.structure(rel_of(small_graph()))
    rows = {"u": 8, "v": 8, "e": 13}
    x, y = operand(rng, (rows[lt], 2, 3), True), operand(rng, (rows[rt], 1, 3), True)
    torch.library.opcheck(torch.ops.nodeweave.gsddmm.default,
                          (g.src, g.dst, g.num_src, g.num_dst, op, x, y, lt, rt))


@pytest.mark.parametrize("by_dst", [True, False])
def test_opcheck_edge_softmax_and_its_backward_kernel(rng, by_dst):
    g = TL.structure(rel_of(small_graph()))
    s = operand(rng, (13, 2))
    torch.library.opcheck(torch.ops.nodeweave.edge_softmax.default,
                          (g.src, g.dst, g.num_src, g.num_dst, s, by_dst))
    # The fused backward has no gradient of its own (create_graph uses the kernel formula).
    out = TL.edge_softmax(g, s.detach(), by_dst)
    torch.library.opcheck(torch.ops.nodeweave.edge_softmax_backward.default,
                          (g.src, g.dst, g.num_src, g.num_dst, out, operand(rng, (13, 2), grad=False),
                           by_dst))


# --------------------------------------------------------------- gradients of the operator path
@pytest.mark.parametrize("op,red", [("mul", "sum"), ("div", "mean"), ("add", "max"),
                                    ("copy_lhs", "min"), ("copy_rhs", "sum")])
def test_operator_path_gradcheck_gspmm(rng, op, red):
    """Operands of different ranks: the gradients come back in each operand's own shape."""
    g = TL.structure(rel_of(small_graph()))
    x = operand(rng, (8, 3), True)
    w = operand(rng, (13, 2, 1), True)
    f = lambda a, b: TA.gspmm(g, op, red, a, b)  # noqa: E731
    assert torch.autograd.gradcheck(f, (x, w))
    if red == "sum":
        assert torch.autograd.gradgradcheck(f, (x, w))
    assert type(f(x, w).grad_fn).__name__.startswith("GeneratedBackwardFor_nodeweave_gspmm")


@pytest.mark.parametrize("op", ["mul", "div", "dot", "sub"])
def test_operator_path_gradcheck_gsddmm(rng, op):
    g = TL.structure(rel_of(small_graph()))
    x, y = operand(rng, (8, 3), True), operand(rng, (8, 1, 3), True)
    f = lambda a, b: TA.gsddmm(g, op, a, b, "u", "v")  # noqa: E731
    assert torch.autograd.gradcheck(f, (x, y))
    assert torch.autograd.gradgradcheck(f, (x, y))


@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_operator_path_gradcheck_edge_softmax(rng, norm_by):
    g = TL.structure(rel_of(small_graph()))
    f = lambda t: TA.edge_softmax(g, t, norm_by)  # noqa: E731
    s = operand(rng, (13, 2))
    assert torch.autograd.gradcheck(f, (s,))
    assert torch.autograd.gradgradcheck(f, (s,))


def test_operator_path_equals_the_eager_functions(rng):
    g = small_graph()
    rel = rel_of(g)
    x, w = operand(rng, (8, 4, 2)), operand(rng, (13, 4, 1))
    for red in REDUCES:
        eager = TA.gspmm(rel, "mul", red, x, w)
        ops = TA.gspmm(TL.structure(rel), "mul", red, x, w)
        torch.testing.assert_close(ops, eager, rtol=0, atol=0)
        ge = torch.autograd.grad(eager.sum(), (x, w))
        go = torch.autograd.grad(ops.sum(), (x, w))
        for a, b in zip(go, ge):
            torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------- structure tensors
def test_structure_is_made_once_per_relation_and_in_edge_id_order():
    g = small_graph()
    rel = rel_of(g)
    a, b = TL.structure(rel), TL.structure(rel)
    assert a.src is b.src and a.dst is b.dst
    src, dst = rel.coo()
    np.testing.assert_array_equal(a.src.numpy(), src)
    np.testing.assert_array_equal(a.dst.numpy(), dst)
    assert (a.num_src, a.num_dst, a.num_edges) == (8, 8, 13)
    assert a.reverse_for_kernels() == (a.dst, a.src, 8, 8)
    np.testing.assert_array_equal(a.in_degrees().numpy(), rel.in_degrees())


def test_structure_of_a_relation_without_coo():
    src, dst = np.array([0, 2, 1, 2]), np.array([3, 0, 3, 1])
    for fmt in ("csc", "csr"):
        rel = _C.RelationGraph.from_coo(3, 4, src, dst, formats=[fmt])
        g = TL.structure(rel)
        np.testing.assert_array_equal(g.src.numpy(), src)
        np.testing.assert_array_equal(g.dst.numpy(), dst)


def test_unseen_or_rewritten_structure_tensors_are_read_as_given():
    """The operators are functions of their tensors: the registry is only a cache."""
    x = torch.tensor([[1.0], [2.0], [4.0]])
    fresh = TL.RelationTensors(torch.tensor([0, 1, 2]), torch.tensor([1, 2, 2]), 3, 3)
    assert TL.gspmm(fresh, "copy_lhs", "sum", x, None).tolist() == [[0.0], [1.0], [6.0]]
    g = TL.structure(rel_of(nw.graph(([0, 1, 2], [1, 2, 2]), num_nodes=3)))
    assert TL.gspmm(g, "copy_lhs", "sum", x, None).tolist() == [[0.0], [1.0], [6.0]]
    g.dst[0] = 0  # edge 0 now ends at node 0
    assert TL.gspmm(g, "copy_lhs", "sum", x, None).tolist() == [[1.0], [0.0], [6.0]]


def test_bad_structure_tensors_raise_nodeweave_errors():
    x = torch.ones(3, 1)
    bad = TL.RelationTensors(torch.tensor([0.0, 1.0]), torch.tensor([1, 2]), 3, 3)
    with pytest.raises(nwerr.TypeError, match="src must be a 1-D int32 or int64 tensor"):
        TL.gspmm(bad, "copy_lhs", "sum", x, None)
    out_of_range = TL.RelationTensors(torch.tensor([0, 5]), torch.tensor([1, 2]), 3, 3)
    with pytest.raises(nwerr.ValueError, match="src"):
        TL.gspmm(out_of_range, "copy_lhs", "sum", x, None)


# --------------------------------------------------------------------------- compiled models
class GAT(torch.nn.Module):
    """Two GATConv layers (4 heads, then 1), ELU between."""

    def __init__(self, in_feats: int, hidden: int, out_feats: int) -> None:
        super().__init__()
        from nodeweave.nn import GATConv

        self.l1 = GATConv(in_feats, hidden, num_heads=4)
        self.l2 = GATConv(hidden * 4, out_feats, num_heads=1)

    def forward(self, g, x):
        h = torch.nn.functional.elu(self.l1(g, x).flatten(1))
        return self.l2(g, h).mean(1)


def step(run, model, g, x):
    """Output of ``run`` (the model or its compiled form) and the gradients of the model's
    parameters of one forward/backward."""
    model.zero_grad()
    out = run(g, x)
    (out * out).sum().backward()
    return out.detach(), {n: p.grad.clone() for n, p in model.named_parameters()}


def assert_same_step(model, compiled, g, x):
    want_out, want_grads = step(model, model, g, x)
    got_out, got_grads = step(compiled, model, g, x)
    assert_close(got_out, want_out, "output")
    assert want_grads.keys() == got_grads.keys()
    for name in want_grads:
        assert_close(got_grads[name], want_grads[name], f"gradient of {name}")


def graph_breaks() -> int:
    return sum(torch._dynamo.utils.counters["graph_break"].values())


def test_gat_compiles_without_graph_breaks_and_matches_eager(rng, pytorch_backend):
    torch.manual_seed(0)
    g = random_graph(rng, 40, 160)
    x = torch.randn(40, 16)
    model = GAT(16, 8, 3)
    explained = torch._dynamo.explain(model)(g, x)
    assert explained.graph_break_count == 0, explained.break_reasons
    assert explained.graph_count == 1
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    assert_same_step(model, compiled, g, x)
    assert_same_step(model, compiled, g, x)  # the cached program, not a new trace
    assert graph_breaks() == 0


def _inductor_unavailable() -> str:
    if not hasattr(torch, "compile"):
        return "this torch has no torch.compile"
    if shutil.which("c++") is None and shutil.which("g++") is None:
        return "inductor compiles C++ kernels on the CPU and no C++ compiler is installed"
    return ""


@pytest.mark.skipif(bool(_inductor_unavailable()), reason=_inductor_unavailable())
def test_gat_with_the_default_inductor_backend(rng, pytorch_backend):
    torch.manual_seed(0)
    g = random_graph(rng, 8, 16)  # tiny: inductor compiles C++ for every kernel it generates
    x = torch.randn(8, 4)
    model = GAT(4, 2, 2)
    compiled = torch.compile(model, fullgraph=True)
    assert_same_step(model, compiled, g, x)
    assert graph_breaks() == 0


def _layers():
    """name -> (input feature size, module factory)."""
    from nodeweave.nn import GraphConv, SAGEConv

    return {
        "graphconv-both": (6, lambda: GraphConv(6, 4)),
        "graphconv-left-project-first": (6, lambda: GraphConv(6, 3, norm="left")),
        "graphconv-right": (3, lambda: GraphConv(3, 5, norm="right")),
        "graphconv-none": (6, lambda: GraphConv(6, 4, norm="none")),
        "sageconv-mean": (6, lambda: SAGEConv(6, 4, "mean")),
        "sageconv-gcn": (6, lambda: SAGEConv(6, 4, "gcn")),
        "sageconv-pool": (6, lambda: SAGEConv(6, 4, "pool")),
    }


@pytest.mark.parametrize("name", list(_layers()))
def test_graphconv_and_sageconv_compile_without_graph_breaks(rng, pytorch_backend, name):
    torch.manual_seed(0)
    in_feats, make = _layers()[name]
    model = make()
    g = random_graph(rng, 12, 40)
    x = torch.randn(12, in_feats)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    assert_same_step(model, compiled, g, x)
    assert graph_breaks() == 0


def compiled_graphs() -> int:
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


def test_a_compiled_model_runs_on_the_next_graph_without_tracing_again(rng, pytorch_backend):
    """The structure tensors are inputs of the compiled program: another graph of the same sizes
    reuses it, other sizes recompile once with dynamic sizes, and a graph changed in place
    (add_edges) gets its new structure, never the one traced first."""
    torch.manual_seed(0)
    model = GAT(5, 3, 2)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    x = torch.randn(10, 5)
    g1, g2 = random_graph(rng, 10, 30), random_graph(rng, 10, 30)
    for g in (g1, g2, g1):
        assert_same_step(model, compiled, g, x)
    assert compiled_graphs() == 1
    g1.add_edges([0, 1, 2], [3, 3, 4])
    assert_same_step(model, compiled, g1, x)
    for n, e in ((12, 50), (15, 45), (20, 80)):  # other node and edge counts
        assert_same_step(model, compiled, random_graph(rng, n, e), torch.randn(n, 5))
    # One program for the first sizes, one with a dynamic edge count, one with dynamic node
    # counts as well; the last graphs reuse it.
    assert compiled_graphs() <= 3
    assert graph_breaks() == 0


def test_sampled_blocks_share_one_compiled_program(rng, pytorch_backend):
    """Mini-batch training: every step brings a new sampled block; after the first sizes change
    the compiled layers run on each block's structure without retracing."""
    from nodeweave.nn import GATConv, SAGEConv

    torch.manual_seed(0)
    g = random_graph(rng, 50, 300)
    x = torch.randn(50, 6)
    layers = [SAGEConv(6, 4, "mean"), GATConv(6, 4, 2)]
    compiled = [torch.compile(m, fullgraph=True, backend="aot_eager") for m in layers]
    for _ in range(6):
        seeds = torch.tensor(rng.choice(50, 8, replace=False))
        block = nw.to_block(nw.sampling.sample_neighbors(g, seeds, 4), seeds)
        feats = x[block.srcdata[nw.NID]]
        for model, run in zip(layers, compiled):
            assert_same_step(model, run, block, feats)
    # Per layer: the first sizes, then a dynamic edge count, then dynamic node counts as well.
    assert compiled_graphs() <= 3 * len(layers)
    assert graph_breaks() == 0


def test_zero_in_degree_check_still_raises_when_compiled(pytorch_backend):
    """The check is evaluated while tracing. Without fullgraph Dynamo runs the raising frame
    eagerly, so the layer's own error comes out; with fullgraph=True tracing stops there and
    Dynamo's error carries the layer's message."""
    from nodeweave.nn import GATConv

    g = nw.graph(([0, 1], [1, 2]), num_nodes=3)  # node 0 has no in-edge
    layer = GATConv(2, 2, 1)
    with pytest.raises(nwerr.ValueError, match="0-in-degree"):
        torch.compile(layer, backend="aot_eager")(g, torch.ones(3, 2))
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.Unsupported, match="0-in-degree"):
        torch.compile(layer, fullgraph=True, backend="aot_eager")(g, torch.ones(3, 2))


# A torch without torch.library.custom_op (2.0-2.3, e.g. the 2.2.1 that DGL 2.1 needs): the backend
# still imports and trains eagerly, and the tensor-structure path (torch.compile's) says which torch
# it needs. Run in a child process with custom_op hidden while nodeweave
# imports, so it checks this whatever torch the venv has.
_WITHOUT_CUSTOM_OP = r"""
import numpy as np, torch
custom_op = torch.library.custom_op
del torch.library.custom_op  # only while nodeweave imports: torch's own modules use it
import nodeweave as nw
from nodeweave import errors as nwerr
from nodeweave.backend import torch_library as TL
nw.set_backend("pytorch")
from nodeweave.nn.pytorch import GATConv, GraphConv
torch.library.custom_op = custom_op
assert not TL.HAS_CUSTOM_OPS and not TL.is_compiling()
src, dst = np.array([0, 1, 2, 3, 0, 2]), np.array([1, 2, 3, 0, 2, 2])
g = nw.graph((src, dst), num_nodes=4)
torch.manual_seed(0)
x = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
conv = GraphConv(5, 3, norm="none", weight=False, bias=False).double()
y = conv(g, x)
dense = torch.zeros(4, 4, dtype=torch.float64)
dense.index_put_((torch.from_numpy(dst), torch.from_numpy(src)), torch.ones(6, dtype=torch.float64),
                 accumulate=True)
assert torch.allclose(y, dense @ x), "GraphConv differs from the dense product"
y.sum().backward()
assert torch.allclose(x.grad, dense.sum(0).unsqueeze(1).expand(4, 5)), "wrong gradient"
gat = GATConv(5, 2, num_heads=2).double()
h = gat(g, x)
h.square().sum().backward()
assert h.shape == (4, 2, 2) and all(p.grad is not None for p in gat.parameters())
try:
    TL.gspmm(TL.structure(g._rels[("_N", "_E", "_N")]), "copy_lhs", "sum", x, None)
except nwerr.RuntimeError as e:
    assert "torch >= 2.4" in str(e) and torch.__version__ in str(e), e
else:
    raise AssertionError("the tensor-structure path ran without custom operators")
print("ok")
"""


def test_torch_without_custom_op_still_trains_eagerly():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _WITHOUT_CUSTOM_OP], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
