"""A whole training step in one traced program: zero_grad(), forward, backward() and the optimizer's
step. Each replay must leave the parameters, the optimizer's state and every .grad exactly where the
same step run eagerly leaves them, for each fused optimizer, with a scheduler changing the learning
rate between runs, and over batches of changing sizes; what a replay could not redo is refused."""

import contextlib

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
import nodeweave.core.nn as nn
import nodeweave.core.nn.functional as F
from nodeweave import errors as nwerr
from nodeweave.nn import GINConv, GraphConv

OPTIMIZERS = {
    "sgd": lambda ps: nc.optim.SGD(ps, lr=0.1),
    "sgd_nesterov_wd": lambda ps: nc.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "sgd_dampening": lambda ps: nc.optim.SGD(ps, lr=0.05, momentum=0.8, dampening=0.3),
    "adam": lambda ps: nc.optim.Adam(ps, lr=0.02),
    "adam_amsgrad_l2": lambda ps: nc.optim.Adam(ps, lr=0.02, amsgrad=True, weight_decay=1e-2),
    "adamw_maximize": lambda ps: nc.optim.AdamW(ps, lr=0.02, maximize=True),
    "adagrad": lambda ps: nc.optim.Adagrad(ps, lr=0.1, lr_decay=0.01, weight_decay=1e-3),
    "rmsprop_centered_momentum": lambda ps: nc.optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
    "rmsprop": lambda ps: nc.optim.RMSprop(ps, lr=0.01),
}


@contextlib.contextmanager
def _one_thread():
    # Bit-equality with eager holds on one thread: the same kernels, in the same order.
    before = nc.get_num_threads()
    nc.set_num_threads(1)
    try:
        yield
    finally:
        nc.set_num_threads(before)


def _problem(rng):
    g = nw.add_self_loop(nw.graph((rng.integers(0, 30, 120), rng.integers(0, 30, 120)), num_nodes=30))
    xs = [nc.tensor(rng.standard_normal((30, 8)).astype(np.float32)) for _ in range(3)]
    y = nc.tensor(rng.integers(0, 4, 30))
    return g, xs, y


def _model():
    nc.manual_seed(0)
    return GraphConv(8, 16, activation=F.relu), GraphConv(16, 4)


def _snapshot(params, opt):
    state = []
    for p in params:
        s = opt.state[p]
        state.append({k: (v.numpy().copy() if isinstance(v, nc.Tensor) else v) for k, v in s.items()})
    return ([p.detach().numpy().copy() for p in params], [p.grad.numpy().copy() for p in params], state)


def _assert_same(got, want):
    for a, b in zip(got[0] + got[1], want[0] + want[1]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got[2], want[2]):
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_traced_training_step_equals_eager_steps(name, rng):
    """zero_grad / forward / backward / step traced once, then replayed: parameters, gradients and
    optimizer state equal eager training's bit for bit (one thread, the same kernels in the same
    order), with the number of traces 1."""
    g, xs, y = _problem(rng)

    def train(traced):
        l1, l2 = _model()
        params = list(l1.parameters()) + list(l2.parameters())
        opt = OPTIMIZERS[name](params)

        def step(x):
            opt.zero_grad()
            loss = F.cross_entropy(l2(g, l1(g, x)), y)
            loss.backward()
            opt.step()
            return loss

        run = nc.jit.trace(step) if traced else step
        history = []
        with _one_thread():
            for i in range(7):
                loss = run(xs[i % 3])
                history.append((loss.item(), _snapshot(params, opt)))
        return history, run

    eager, _ = train(False)
    traced, fn = train(True)
    assert fn.num_traces == 1
    assert any(n in str(fn.program) for n in ("adam_update_(", "sgd_update_(", "adagrad_update_(", "rmsprop_update_("))
    for (loss, snap), (want_loss, want_snap) in zip(traced, eager):
        assert loss == want_loss
        _assert_same(snap, want_snap)
    assert eager[-1][0] != eager[0][0]  # the steps moved something


def test_grad_pattern_and_a_scheduler_changing_the_learning_rate(rng):
    """Gradients from nc.autograd.grad assigned to .grad inside the step; a StepLR scheduler
    halves the learning rate between replays, which the program reads at each run."""
    g, xs, y = _problem(rng)

    def train(traced):
        l1, l2 = _model()
        params = list(l1.parameters()) + list(l2.parameters())
        opt = nc.optim.Adam(params, lr=0.05)
        sched = nc.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

        def step(x):
            loss = F.cross_entropy(l2(g, l1(g, x)), y)
            for p, gr in zip(params, nc.autograd.grad(loss, params)):
                p.grad = gr
            opt.step()
            return loss

        run = nc.jit.trace(step) if traced else step
        out = []
        with _one_thread():
            for i in range(8):
                run(xs[i % 3])
                sched.step()
                out.append(_snapshot(params, opt))
        return out, run

    eager, _ = train(False)
    traced, fn = train(True)
    assert fn.num_traces == 1 and fn.num_guard_failures == 0
    for a, b in zip(traced, eager):
        _assert_same(a, b)


def test_other_optimizer_state_traces_again(rng):
    """load_state_dict swaps the state tensors the program holds: the next call traces again and
    goes on from the loaded state, as eager code would."""
    g, xs, y = _problem(rng)
    l1, l2 = _model()
    params = list(l1.parameters()) + list(l2.parameters())
    opt = nc.optim.Adam(params, lr=0.05)

    @nc.jit.trace
    def step(x):
        opt.zero_grad()
        loss = F.cross_entropy(l2(g, l1(g, x)), y)
        loss.backward()
        opt.step()
        return loss

    for x in xs:
        step(x)
    saved = opt.state_dict()
    saved = {"state": {k: {n: (v.clone() if isinstance(v, nc.Tensor) else v) for n, v in s.items()}
                       for k, s in saved["state"].items()}, "param_groups": saved["param_groups"]}
    opt.load_state_dict(saved)
    step(xs[0])
    assert step.num_traces == 2 and step.num_guard_failures == 1
    assert all(opt.state[p]["step"] == 4 for p in params)


def test_backward_into_gradients_from_before_the_trace_is_refused(rng):
    g, xs, y = _problem(rng)
    l1, l2 = _model()
    params = list(l1.parameters()) + list(l2.parameters())
    opt = nc.optim.SGD(params, lr=0.1)

    @nc.jit.trace
    def step(x):  # zero_grad() left to the caller
        loss = F.cross_entropy(l2(g, l1(g, x)), y)
        loss.backward()
        opt.step()
        return loss

    step(xs[0])  # no gradients yet: backward() writes them
    opt.zero_grad()
    step(xs[1])  # replays
    assert step.num_traces == 1
    # Without zero_grad() eager code would add to the last step's gradients, which the program
    # does not: the call traces again, and that trace refuses.
    with pytest.raises(nwerr.TracingError, match=r"backward\(\) adds to the \.grad a leaf tensor .* had before "
                                                 r"the trace.*opt\.zero_grad\(\)"):
        step(xs[2])


def test_a_training_step_is_not_saved(rng, tmp_path):
    g, xs, y = _problem(rng)
    l1, l2 = _model()
    params = list(l1.parameters()) + list(l2.parameters())
    opt = nc.optim.Adam(params)

    @nc.jit.trace
    def step(x):
        opt.zero_grad()
        loss = F.cross_entropy(l2(g, l1(g, x)), y)
        loss.backward()
        opt.step()
        return loss

    step(xs[0])
    with pytest.raises(nwerr.ValueError, match="writes gradients .* or steps an optimizer"):
        nc.jit.save(step, tmp_path / "step.nwp")
    with pytest.raises(ValueError, match="adam_update .*updates the parameters it holds"):
        nc.jit.save(step.program, tmp_path / "step.nwp")
    assert not (tmp_path / "step.nwp").exists()


def test_sparse_updates_inside_a_trace_are_refused():
    emb = nn.Embedding(10, 4, sparse=True)
    opt = nc.optim.SparseAdam(list(emb.parameters()))

    @nc.jit.trace
    def step(ids):
        opt.zero_grad()
        emb(ids).sum().backward()
        opt.step()

    with pytest.raises(nwerr.TracingError, match="SparseAdam's row-sparse update cannot be traced"):
        step(nc.tensor([1, 2]))


def test_update_node_in_program_text_round_trips():
    w = nc.nn.Parameter(nc.tensor([[1.0, -1.0], [0.5, 2.0]]))
    opt = nc.optim.SGD([w], lr=0.1, momentum=0.9)

    @nc.jit.trace
    def step(x):
        opt.zero_grad()
        ((x @ w) * (x @ w)).sum().backward()
        opt.step()

    step(nc.ones(1, 2))
    text = str(step.program)
    assert "sgd_update_(" in text
    assert str(nc.jit.Program.parse(text)) == text
    # An update written without the trailing '_' is not an in-place node: the parser refuses it.
    with pytest.raises(ValueError, match="updates its inputs and must be written in place"):
        nc.jit.Program.parse(text.replace("sgd_update_(", "sgd_update("))


def test_minibatch_gin_training_with_the_optimizer_in_the_dynamic_program(rng):
    """Batches of graphs of other sizes: after two traces one program, whose sizes follow the
    batch, runs forward, backward and Adam for every later batch, matching eager training."""
    graphs = []
    for _ in range(6):
        n = int(rng.integers(5, 12))
        e = int(rng.integers(n, 3 * n))
        graphs.append(nw.graph((rng.integers(0, n, e), rng.integers(0, n, e)), num_nodes=n))
    batches = [nw.batch(graphs[i:i + 2]) for i in range(0, 6, 2)] * 2
    feats = [nc.tensor(rng.standard_normal((b.num_nodes(), 6)).astype(np.float32)) for b in batches]
    labels = nc.tensor(rng.integers(0, 3, 2))

    def train(traced):
        nc.manual_seed(0)
        conv = GINConv(nn.Linear(6, 8), "sum")
        head = nn.Linear(8, 3)
        params = list(conv.parameters()) + list(head.parameters())
        opt = nc.optim.Adam(params, lr=0.01)

        def step(bg, x):
            opt.zero_grad()
            h = nw.readout_nodes(bg, F.relu(conv(bg, x)), op="sum")
            loss = F.cross_entropy(head(h), labels)
            loss.backward()
            opt.step()
            return loss

        run = nc.jit.trace(step) if traced else step
        out = []
        with _one_thread():
            for bg, x in zip(batches, feats):
                out.append((run(bg, x).item(), _snapshot(params, opt)))
        return out, run

    eager, _ = train(False)
    traced, fn = train(True)
    assert fn.dynamic_status == "dynamic", fn.dynamic_status
    assert fn.num_dynamic_runs > 0
    for (loss, snap), (want_loss, want_snap) in zip(traced, eager):
        np.testing.assert_allclose(loss, want_loss, rtol=1e-6)
        for a, b in zip(snap[0] + snap[1], want_snap[0] + want_snap[1]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
