"""The jit pass fuse_gat_edge_pipeline: GAT's u_add_v -> leaky_relu -> edge_softmax -> u_mul_e-sum,
and its backward when grad() is traced, become gat_aggregate / gat_aggregate_backward; the fused
program computes what eager code does (float64 to rounding, float32 to 1e-5), and the pass leaves
alone what it cannot prove safe (the attention read elsewhere, second derivatives)."""

import os

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import GATConv

PASS = "fuse_gat_edge_pipeline"


def _graph(rng, n=40, e=200, self_loops=True):
    g = nw.graph((rng.integers(0, n, e), rng.integers(0, n, e)), num_nodes=n)
    return nw.add_self_loop(g) if self_loops else g


def _ops(program):
    """Op names of the program's nodes, in order."""
    names = []
    for line in str(program).splitlines():
        if " = " in line and "(" in line.split(" = ", 1)[1]:
            names.append(line.split(" = ", 1)[1].split("(", 1)[0].rstrip("_"))
    return names


def _close(a, b, rtol):
    a, b = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, float(np.abs(b).max(initial=0))))


def _step(g, layer):
    params = list(layer.parameters())

    def step(x):
        h = layer(g, x)
        loss = (h * h).sum() + h.sum()
        return loss, nc.autograd.grad(loss, params + [x])

    return step


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-11), (np.float32, 2e-5)])
def test_fused_training_step_gives_eager_outputs_and_gradients(rng, dtype, rtol):
    g = _graph(rng)
    nc.manual_seed(0)
    layer = GATConv(8, 5, num_heads=3, negative_slope=0.3, allow_zero_in_degree=True)
    if dtype == np.float64:
        layer = layer.double()
    step = _step(g, layer)
    compiled = nc.jit.trace(step)
    x0 = nc.tensor(rng.standard_normal((40, 8)).astype(dtype), requires_grad=True)
    compiled(x0)
    ops = _ops(compiled.program)
    assert "gat_aggregate" in ops and "gat_aggregate_backward" in ops
    assert "edge_softmax" not in ops and "edge_softmax_backward" not in ops
    for _ in range(2):  # replays
        x = nc.tensor(rng.standard_normal((40, 8)).astype(dtype), requires_grad=True)
        (loss, grads), (want_loss, want_grads) = compiled(x), step(x)
        _close(loss, want_loss, rtol)
        assert len(grads) == len(want_grads)
        for got, want in zip(grads, want_grads):
            _close(got, want, rtol)
    assert compiled.num_traces == 1


def test_float32_fused_step_is_as_accurate_as_eager_float32(rng):
    """Fused and eager float32 sum in different orders, so they differ by rounding (a few 1e-6 of
    the largest gradient where the softmax's backward cancels); measured against the float64 step,
    the fused error is of the size of eager's own: a few float32 roundings."""
    g = _graph(rng, n=60, e=600)
    nc.manual_seed(3)
    layer32 = GATConv(8, 4, num_heads=2, allow_zero_in_degree=True)
    layer64 = GATConv(8, 4, num_heads=2, allow_zero_in_degree=True).double()
    with nc.no_grad():
        for p32, p64 in zip(layer32.parameters(), layer64.parameters()):
            p64.copy_(nc.tensor(p32.detach().numpy().astype(np.float64)))
    step32, step64 = _step(g, layer32), _step(g, layer64)
    compiled = nc.jit.trace(step32)
    x = rng.standard_normal((60, 8))
    compiled(nc.tensor(x.astype(np.float32), requires_grad=True))
    assert "gat_aggregate_backward" in _ops(compiled.program)
    fused = compiled(nc.tensor(x.astype(np.float32), requires_grad=True))[1]
    eager = step32(nc.tensor(x.astype(np.float32), requires_grad=True))[1]
    exact = step64(nc.tensor(x, requires_grad=True))[1]
    for f, e, t in zip(fused, eager, exact):
        t = t.numpy()
        scale = np.abs(t).max()
        err_fused = np.abs(f.numpy() - t).max() / scale
        err_eager = np.abs(e.numpy() - t).max() / scale
        # Both are a few float32 roundings (2^-23) off; neither order is the exact one.
        assert err_fused <= 4 * max(err_eager, 2.0 ** -23), (err_fused, err_eager)


def test_zero_in_degree_destinations_and_a_bipartite_block(rng):
    # Destinations without in-edges output 0 (eager's gspmm does too) and pass no gradient.
    src, dst = rng.integers(0, 30, 90), rng.integers(0, 12, 90)
    dst[dst == 5] = 6  # destination 5 gets no edge
    g = nw.heterograph({("u", "to", "v"): (src, dst)}, num_nodes_dict={"u": 30, "v": 12})
    nc.manual_seed(1)
    layer = GATConv((6, 4), 3, num_heads=2, allow_zero_in_degree=True).double()
    params = list(layer.parameters())

    def step(xs, xd):
        h = layer(g, (xs, xd))
        loss = (h * nc.tanh(h)).sum()
        return h, nc.autograd.grad(loss, params + [xs, xd])

    compiled = nc.jit.trace(step)
    args = [nc.tensor(rng.standard_normal((30, 6)), requires_grad=True),
            nc.tensor(rng.standard_normal((12, 4)), requires_grad=True)]
    compiled(*args)
    assert "gat_aggregate_backward" in _ops(compiled.program)
    args = [nc.tensor(rng.standard_normal(a.shape), requires_grad=True) for a in args]
    (h, grads), (want_h, want_grads) = compiled(*args), step(*args)
    _close(h, want_h, 1e-11)
    assert np.all(h.detach().numpy()[5] == layer.bias.detach().numpy().reshape(2, 3))
    for got, want in zip(grads, want_grads):
        _close(got, want, 1e-11)


def test_inference_fuses_the_forward_alone_and_disabling_the_pass_keeps_the_four_ops(rng):
    g = _graph(rng)
    layer = GATConv(8, 4, num_heads=2).eval()
    x = nc.tensor(rng.standard_normal((40, 8)).astype(np.float32))
    with nc.no_grad():
        fused = nc.jit.trace(lambda x: layer(g, x))
        plain = nc.jit.trace(lambda x: layer(g, x), disable_passes=(PASS,))
        got, want, eager = fused(x), plain(x), layer(g, x)
    ops = _ops(fused.program)
    assert ops.count("gat_aggregate") == 1 and "gat_aggregate_backward" not in ops
    assert {"gsddmm", "leaky_relu", "edge_softmax", "gspmm"} <= set(_ops(plain.program))
    assert "gat_aggregate" not in _ops(plain.program)
    _close(got, eager, 2e-6)
    _close(want, eager, 0)
    assert PASS in nc.jit.pass_names()


def test_two_layers_fuse_twice_and_eager_backward_runs_through_the_fused_op(rng):
    g = _graph(rng)
    nc.manual_seed(2)
    l1, l2 = GATConv(8, 4, num_heads=2).double(), GATConv(8, 3, num_heads=1).double()
    fwd = nc.jit.trace(lambda x: l2(g, l1(g, x).flatten(1)).sum())
    x = nc.tensor(rng.standard_normal((40, 8)), requires_grad=True)
    fwd(x)
    assert _ops(fwd.program).count("gat_aggregate") == 2
    x = nc.tensor(rng.standard_normal((40, 8)), requires_grad=True)
    loss = fwd(x)  # a replay records autograd through gat_aggregate
    loss.backward()
    got = x.grad.numpy().copy()
    x2 = nc.tensor(x.detach().numpy(), requires_grad=True)
    l2(g, l1(g, x2).flatten(1)).sum().backward()
    np.testing.assert_allclose(got, x2.grad.numpy(), rtol=1e-11, atol=1e-12)


def test_attention_read_elsewhere_or_second_derivatives_are_not_fused(rng):
    g = _graph(rng)
    layer = GATConv(8, 4, num_heads=2).double()
    x = nc.tensor(rng.standard_normal((40, 8)), requires_grad=True)
    with nc.no_grad():
        att = nc.jit.trace(lambda x: layer(g, x, get_attention=True))
        out, a = att(x)
    assert "gat_aggregate" not in _ops(att.program)  # the attention is an output
    want_out, want_a = layer(g, x, get_attention=True)
    _close(a, want_a, 0)

    def second(x):
        (gx,) = nc.autograd.grad(layer(g, x).sum(), [x], create_graph=True)
        return nc.autograd.grad((gx * gx).sum(), [x])

    twice = nc.jit.trace(second)
    twice(x)
    assert "gat_aggregate" not in _ops(twice.program)
    (got,), (want,) = twice(x), second(x)
    _close(got, want, 1e-12)


def test_a_fused_program_prints_parses_and_saves(rng, tmp_path):
    g = _graph(rng)
    layer = GATConv(8, 4, num_heads=2)
    step = nc.jit.trace(_step(g, layer))
    x = nc.tensor(rng.standard_normal((40, 8)).astype(np.float32), requires_grad=True)
    step(x)
    text = str(step.program)
    assert "backward #" in text  # the fused backward's region
    assert str(nc.jit.Program.parse(text)) == text
    path = os.path.join(tmp_path, "gat.nwp")
    nc.jit.save(step, path)
    loaded = nc.jit.load(path)
    x = nc.tensor(rng.standard_normal((40, 8)).astype(np.float32), requires_grad=True)
    got, want = loaded(x), step(x)
    _close(got[0], want[0], 0)
    for a, b in zip(got[1:], want[1]):
        _close(a, b, 0)


def test_attention_dropout_fuses_and_drops_what_eager_drops(rng):
    """With attn_drop in training, the fused op draws the dropout seed where bernoulli_mask did and
    redraws its mask: after the same manual_seed, the compiled step drops the same attention
    entries (and feature entries) as eager, and gives eager's outputs and gradients."""
    g = _graph(rng, n=50, e=300)
    nc.manual_seed(4)
    layer = GATConv(8, 4, num_heads=3, feat_drop=0.3, attn_drop=0.5).double().train()
    step = _step(g, layer)
    compiled = nc.jit.trace(step)
    x = nc.tensor(rng.standard_normal((50, 8)), requires_grad=True)
    compiled(x)
    ops = _ops(compiled.program)
    assert "gat_aggregate" in ops and "gat_aggregate_backward" in ops and "edge_softmax" not in ops
    assert ops.count("bernoulli_mask") == 1  # the feature dropout's; the attention's is fused
    for seed in (5, 6):
        nc.manual_seed(seed)
        loss, grads = compiled(x)
        nc.manual_seed(seed)
        want_loss, want_grads = step(x)
        _close(loss, want_loss, 1e-11)
        for got, want in zip(grads, want_grads):
            _close(got, want, 1e-11)
    nc.manual_seed(5)
    a = compiled(x)[0].item()
    nc.manual_seed(7)
    assert compiled(x)[0].item() != a  # another seed, another mask


def test_two_layer_training_step_fuses_both_layers_forward_and_backward(rng):
    g = _graph(rng)
    nc.manual_seed(8)
    l1 = GATConv(8, 4, num_heads=2, attn_drop=0.3, feat_drop=0.2).double().train()
    l2 = GATConv(8, 3, num_heads=1, attn_drop=0.3).double().train()
    params = list(l1.parameters()) + list(l2.parameters())

    def step(x):
        h = l2(g, nc.relu(l1(g, x)).flatten(1))
        loss = (h * h).sum()
        return loss, nc.autograd.grad(loss, params)

    compiled = nc.jit.trace(step)
    x = nc.tensor(rng.standard_normal((40, 8)))
    compiled(x)
    ops = _ops(compiled.program)
    assert ops.count("gat_aggregate") == 2 and ops.count("gat_aggregate_backward") == 2
    nc.manual_seed(9)
    loss, grads = compiled(x)
    nc.manual_seed(9)
    want_loss, want_grads = step(x)
    _close(loss, want_loss, 1e-11)
    for got, want in zip(grads, want_grads):
        _close(got, want, 1e-11)
