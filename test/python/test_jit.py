"""nodeweave.core.jit: a traced step replays what eager code computes (every GNN layer family, forward
and gradients, and a whole training loop), guards retrace or refuse, and what a program cannot
replay is refused while tracing."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
import nodeweave.core.nn as nn
import nodeweave.core.nn.functional as F
from nodeweave import errors as nwerr
from nodeweave.nn import APPNPConv, GATConv, GINConv, GraphConv, RelGraphConv, SAGEConv


def _graph(rng, n=30, e=120):
    return nw.add_self_loop(nw.graph((rng.integers(0, n, e), rng.integers(0, n, e)), num_nodes=n))


def _layer(kind):
    return {
        "gcn": lambda: GraphConv(8, 4, activation=F.relu),
        "gat": lambda: GATConv(8, 4, num_heads=2),
        "sage": lambda: SAGEConv(8, 4, "mean"),
        "gin": lambda: GINConv(nn.Linear(8, 4), "sum"),
        "appnp": lambda: APPNPConv(3, 0.1),
        "rgcn": lambda: RelGraphConv(8, 4, 3, regularizer="basis", num_bases=2),
    }[kind]()


def _close(a, b, rtol=1e-6):
    a, b = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, float(np.abs(b).max(initial=0))))


@pytest.mark.parametrize("kind", ["gcn", "gat", "sage", "gin", "appnp", "rgcn"])
def test_compiled_step_gives_eager_outputs_and_gradients(kind, rng):
    g = _graph(rng)
    etype = nc.tensor(rng.integers(0, 3, g.num_edges()))
    layer = _layer(kind)
    params = list(layer.parameters())

    def step(x):
        h = layer(g, x, etype) if kind == "rgcn" else layer(g, x)
        loss = (h * h).sum()
        return loss, nc.autograd.grad(loss, params) if params else ()

    # The fused GAT pipeline sums in another order than eager's four kernels; its accuracy is
    # checked against float64 in test_jit_gat_fusion.py. Unfused, a replay runs eager's kernels.
    compiled = nc.jit.trace(step, disable_passes=("fuse_gat_edge_pipeline",) if kind == "gat" else ())
    compiled(nc.tensor(rng.standard_normal((30, 8)).astype(np.float32)))
    for _ in range(2):  # replays, on inputs the trace never saw
        x = nc.tensor(rng.standard_normal((30, 8)).astype(np.float32))
        (loss, grads), (want_loss, want_grads) = compiled(x), step(x)
        _close(loss, want_loss)
        assert len(grads) == len(want_grads)
        for got, want in zip(grads, want_grads):
            _close(got, want)
    assert compiled.num_traces == 1


def test_training_loop_with_a_compiled_step_matches_eager_training(rng):
    g = _graph(rng)
    x = nc.tensor(rng.standard_normal((30, 8)).astype(np.float32))
    y = nc.tensor(rng.integers(0, 4, 30))

    def make():
        nc.manual_seed(0)
        return GraphConv(8, 16, activation=F.relu), GraphConv(16, 4)

    def train(compiled: bool):
        l1, l2 = make()
        params = list(l1.parameters()) + list(l2.parameters())
        opt = nc.optim.Adam(params, lr=0.01)

        def step(feats):
            loss = F.cross_entropy(l2(g, l1(g, feats)), y)
            return loss, nc.autograd.grad(loss, params)

        run = nc.jit.trace(step) if compiled else step
        losses = []
        for _ in range(15):
            loss, grads = run(x)
            for p, gr in zip(params, grads):
                p.grad = gr
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach().numpy().copy() for p in params]

    eager_losses, eager_params = train(False)
    jit_losses, jit_params = train(True)
    np.testing.assert_allclose(jit_losses, eager_losses, rtol=1e-6)
    assert jit_losses[-1] < jit_losses[0]  # it trained
    for a, b in zip(jit_params, eager_params):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_new_shapes_retrace_and_retrace_false_names_the_argument():
    @nc.jit.trace
    def f(x, scale=2.0):
        return x * scale

    f(nc.ones(3))
    f(nc.ones(3))
    assert f.num_traces == 1
    np.testing.assert_array_equal(f(nc.ones(4)).numpy(), np.full(4, 2.0, np.float32))
    np.testing.assert_array_equal(f(nc.ones(4), scale=3.0).numpy(), np.full(4, 3.0, np.float32))
    assert f.num_traces == 3 and len(f.programs) == 3

    strict = nc.jit.trace(lambda x: x + 1, retrace=False)
    strict(nc.ones(2, 3))
    with pytest.raises(nwerr.ValueError, match=r"args\[0\] was a tensor float32\[2, 3\].*got a tensor float32\[2, 4\]"):
        strict(nc.ones(2, 4))
    with pytest.raises(nwerr.ValueError, match="args\\[0\\].*float64"):
        strict(nc.ones(2, 3, dtype=nc.float64))


def test_grad_mode_and_module_mode_are_part_of_the_signature():
    nc.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    f = nc.jit.trace(lambda m, x: m(x))
    x = nc.ones(8, 4)
    model.eval()
    a = f(model, x)
    np.testing.assert_allclose(f(model, x).detach().numpy(), a.detach().numpy())  # eval: replayed
    model.train()
    b1, b2 = f(model, x).detach().numpy(), f(model, x).detach().numpy()  # a new trace, with dropout
    assert f.num_traces == 2
    assert (b1 == 0).any() and not np.array_equal(b1, b2)  # the random op draws anew each run
    with nc.no_grad():
        f(model, x)
    assert f.num_traces == 3


def test_host_reads_of_traced_values_are_refused():
    def reads_item(x):
        return x * x.sum().item()

    def branches(x):
        return x if bool((x > 0).all()) else -x

    def to_numpy(x):
        return nc.tensor(x.numpy() * 2)

    for fn in (reads_item, branches, to_numpy):
        with pytest.raises(nwerr.TracingError, match="reads the values of a traced tensor"):
            nc.jit.trace(fn)(nc.ones(3))
    # the failed trace left no observer behind: eager code runs and reads as usual
    assert nc.ones(3).sum().item() == 3.0


def test_backward_in_a_trace_writes_grad_on_every_call():
    w = nc.ones(3, requires_grad=True)

    @nc.jit.trace
    def step(x):
        (x * w).sum().backward()
        return x * 1

    for values in ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]):
        w.grad = None
        step(nc.tensor(values))
        assert w.grad.tolist() == values  # d/dw sum(x * w) = x, replayed per call
    assert step.num_traces == 1
    # w.grad left set: the program's guard fails, and the new trace would add into a grad from before it
    with pytest.raises(nwerr.TracingError, match="clear the gradients first"):
        step(nc.tensor([7.0, 8.0, 9.0]))


def test_a_read_of_an_input_free_value_is_guarded_and_retraces_when_it_changes():
    flag = nc.tensor([1.0])

    @nc.jit.trace
    def f(x):
        return x * 2 if flag.item() > 0 else x * 3

    x = nc.ones(2)
    assert f(x).tolist() == [2.0, 2.0]
    assert f(x).tolist() == [2.0, 2.0]
    flag.fill_(-1.0)
    assert f(x).tolist() == [3.0, 3.0]  # the guard failed: traced again
    assert f.num_traces == 2 and f.num_guard_failures == 1


def test_captures_are_read_by_reference_and_created_tensors_are_constants():
    table = nc.ones(3)

    @nc.jit.trace
    def f(x):
        acc = nc.zeros(3)
        acc.add_(x)
        return acc + table

    x = nc.tensor([1.0, 2.0, 3.0])
    f(x)
    table.fill_(10.0)
    assert f(x).tolist() == [11.0, 12.0, 13.0]
    assert f(x).tolist() == [11.0, 12.0, 13.0]  # acc starts from zeros at every run


def test_program_text_round_trips_and_passes_can_be_turned_off():
    def f(x):
        y = nc.exp(x) * 2.0
        unused = nc.log(x)  # noqa: F841
        return y + nc.exp(x)

    full = nc.jit.trace(f)
    full(nc.ones(3))
    text = str(full.program)
    assert "log" not in text and text.count("exp(") == 1
    assert str(nc.jit.Program.parse(text)) == text
    bare = nc.jit.trace(f, disable_passes=tuple(nc.jit.pass_names()))
    bare(nc.ones(3))
    assert "log(" in str(bare.program) and str(bare.program).count("exp(") == 2
    np.testing.assert_allclose(full(nc.ones(3) * 2).numpy(), bare(nc.ones(3) * 2).numpy())


def test_bad_arguments():
    with pytest.raises(nwerr.ValueError, match="unknown pass 'fold'"):
        nc.jit.trace(lambda x: x, disable_passes=("fold",))
    with pytest.raises(nwerr.TypeError, match="must be callable"):
        nc.jit.trace(3)
    with pytest.raises(nwerr.ValueError, match="max_programs"):
        nc.jit.trace(lambda x: x, max_programs=0)
    with pytest.raises(nwerr.TypeError, match=r"args\[0\] is a numpy.ndarray"):
        nc.jit.trace(lambda x: x)(np.ones(3))
    with pytest.raises(nwerr.RuntimeError, match="not been called"):
        nc.jit.trace(lambda x: x).program
    with pytest.raises(nwerr.ValueError, match="line 1: unknown dtype"):
        nc.jit.Program.parse("program(%0: float99[2]) {\n  return (%0)\n}\n")


def test_an_exception_in_the_traced_function_leaves_no_trace_behind():
    calls = []

    @nc.jit.trace
    def f(x):
        calls.append(1)
        if len(calls) == 1:
            raise KeyError("first call fails")
        return x + 1

    with pytest.raises(KeyError):
        f(nc.ones(2))
    assert f(nc.ones(2)).tolist() == [2.0, 2.0]
    assert f(nc.ones(2)).tolist() == [2.0, 2.0] and len(calls) == 2


def _inference_program(tmp_path, rng, kind):
    g = _graph(rng, n=40, e=160)
    layer = _layer(kind)
    layer.eval()
    x = nc.tensor(rng.standard_normal((40, 8)).astype(np.float32))
    with nc.no_grad():
        f = nc.jit.trace(lambda feats: layer(g, feats))
        f(x)  # traces (and runs eagerly)
        want = f(x)  # the program's own result: with GAT's fused pipeline it rounds unlike eager
    path = tmp_path / f"{kind}.nwp"
    nc.jit.save(f, str(path))
    np.save(tmp_path / "x.npy", x.numpy())
    return path, want.numpy()


@pytest.mark.parametrize("kind", ["gcn", "gat"])
def test_saved_program_runs_bit_identically_in_a_fresh_process(tmp_path, rng, kind):
    import subprocess
    import sys

    path, want = _inference_program(tmp_path, rng, kind)
    code = (
        "import sys, numpy as np, nodeweave.core as nc\n"
        "nc.set_num_threads(1)\n"
        "prog = nc.jit.load(sys.argv[1])\n"
        "(out,) = prog(nc.from_numpy(np.load(sys.argv[2])))\n"
        "np.save(sys.argv[3], out.numpy())\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path), str(tmp_path / "x.npy"), str(tmp_path / "out.npy")],
                   check=True, timeout=120)
    got = np.load(tmp_path / "out.npy")
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()  # bit for bit, one thread in both processes


def test_nodeweave_run_command_line(tmp_path, rng):
    import subprocess
    import sys

    path, want = _inference_program(tmp_path, rng, "sage")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "nodeweave.core.jit_run", *map(str, args)],
                              capture_output=True, text=True, timeout=120)

    r = run(path, tmp_path / "x.npy", "--out", tmp_path / "res", "--threads", 1)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "res" / "output_0.npy"), want)
    r = run(path, "--print")
    assert r.returncode == 0 and r.stdout.startswith("program(%0: float32[40, 8])")
    np.save(tmp_path / "bad.npy", np.ones((3, 8), np.float32))
    (tmp_path / "junk.nwp").write_bytes(b"not a program")
    truncated = tmp_path / "cut.nwp"
    truncated.write_bytes(path.read_bytes()[:-5])
    for args, msg in [((path,), "takes 1 inputs, got 0"),
                      ((path, tmp_path / "bad.npy"), "input 0 must be float32[40, 8]"),
                      ((path, tmp_path / "missing.npy"), "cannot read"),
                      ((tmp_path / "junk.nwp",), "not a nodeweave program file"),
                      ((truncated,), "truncated"),
                      ((tmp_path / "none.nwp",), "cannot open")]:
        r = run(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert msg in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_save_refuses_what_is_not_a_program(tmp_path):
    with pytest.raises(nwerr.TypeError, match="traced function or a Program"):
        nc.jit.save(lambda x: x, str(tmp_path / "f.nwp"))
    with pytest.raises(nwerr.ValueError, match="newer than this nodeweave"):
        f = nc.jit.trace(lambda x: x * 2)
        f(nc.ones(2))
        nc.jit.save(f, str(tmp_path / "f.nwp"))
        data = bytearray((tmp_path / "f.nwp").read_bytes())
        data[8] = 9
        (tmp_path / "g.nwp").write_bytes(bytes(data))
        nc.jit.load(str(tmp_path / "g.nwp"))
