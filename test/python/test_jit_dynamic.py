"""nodeweave.core.jit over changing graphs: graphs are program inputs, and a second trace that
differs from the first only in sizes is generalized into one program that every later sampled
block runs on (outputs and gradients equal to eager). What the program cannot follow to another
graph (structure read on the host, a block's own features captured) keeps one trace per graph."""

import os
import subprocess
import sys

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
import nodeweave.core.nn.functional as F
from nodeweave import errors as nwerr
from nodeweave.nn import GATConv, GraphConv, SAGEConv


def _graph(rng, n=300, e=2400):
    return nw.graph((rng.integers(0, n, e), rng.integers(0, n, e)), num_nodes=n)


def _batches(g, batch, fanouts, num, seed=0):
    """``num`` mini-batches of blocks from a NeighborSampler, as a DGL training loop sees them."""
    sampler = nw.dataloading.NeighborSampler(fanouts)
    order = np.random.default_rng(seed).permutation(g.num_nodes())
    out = []
    for i in range(num):
        seeds = nc.tensor(order[i * batch:(i + 1) * batch])
        _, _, blocks = sampler.sample(g, seeds, random_seed=seed + i)
        out.append(blocks)
    return out


def _close(a, b, rtol=1e-6):
    a, b = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, float(np.abs(b).max(initial=0))))


def _features(rng, n, f=8, classes=4):
    return (nc.tensor(rng.standard_normal((n, f)).astype(np.float32)), rng.integers(0, classes, n))


def _step_fn(kind):
    """A training step of the two LAYERS[kind] layers over a list of blocks: the loss and the
    gradients of every parameter."""
    layers = LAYERS[kind]()
    params = [p for layer in layers for p in layer.parameters()]

    def step(blocks, x, y):
        h = x
        for i, (layer, block) in enumerate(zip(layers, blocks)):
            h = layer(block, h)
            if i + 1 < len(layers):
                h = F.relu(h.flatten(1) if h.dim() > 2 else h)
        h = h.mean(1) if h.dim() > 2 else h
        loss = F.cross_entropy(h, y)
        return loss, nc.autograd.grad(loss, params)
    return step


def _run_batches(compiled, step, batches, X, Y, rtol=1e-6):
    for blocks in batches:
        x = X[nc.tensor(blocks[0].srcdata[nw.NID].numpy())]
        y = nc.tensor(Y[blocks[-1].dstdata[nw.NID].numpy()])
        (loss, grads), (want_loss, want_grads) = compiled(blocks, x, y), step(blocks, x, y)
        _close(loss, want_loss, rtol)
        assert len(grads) == len(want_grads)
        for got, want in zip(grads, want_grads):
            _close(got, want, rtol)


LAYERS = {
    "sage": lambda: [SAGEConv(8, 16, "mean"), SAGEConv(16, 4, "mean")],
    "sage_pool": lambda: [SAGEConv(8, 16, "pool"), SAGEConv(16, 4, "gcn")],
    "gcn": lambda: [GraphConv(8, 16, allow_zero_in_degree=True), GraphConv(16, 4, allow_zero_in_degree=True)],
    "gat": lambda: [GATConv(8, 4, num_heads=2, allow_zero_in_degree=True),
                    GATConv(8, 4, num_heads=1, allow_zero_in_degree=True)],
}


@pytest.mark.parametrize("kind", sorted(LAYERS))
def test_minibatch_step_over_changing_blocks_runs_one_generalized_program(kind, rng):
    g = _graph(rng)
    X, Y = _features(rng, g.num_nodes())
    step = _step_fn(kind)
    # The fused GAT pipeline sums in another order (its accuracy: test_jit_gat_fusion.py).
    compiled = nc.jit.trace(step, disable_passes=("fuse_gat_edge_pipeline",) if kind == "gat" else ())
    batches = _batches(g, 16, [4, 4], 8)
    sizes = {tuple((b.num_src_nodes(), b.num_dst_nodes(), b.num_edges()) for b in blocks) for blocks in batches}
    assert len(sizes) == 8  # every batch has other node and edge counts
    _run_batches(compiled, step, batches, X, Y)
    assert compiled.dynamic_status == "dynamic"
    assert compiled.num_traces == 2  # the first two batches; the other six replay one program
    assert compiled.num_dynamic_runs == 6


def test_fused_gat_pipeline_runs_on_every_block(rng):
    g = _graph(rng)
    X, Y = _features(rng, g.num_nodes())
    step = _step_fn("gat")
    compiled = nc.jit.trace(step)
    _run_batches(compiled, step, _batches(g, 16, [4, 4], 5), X, Y, rtol=2e-5)
    assert compiled.num_traces == 2 and compiled.num_dynamic_runs == 3
    assert "gat_aggregate" in str(compiled.program)


def test_a_batch_of_another_size_traces_again_and_the_program_stays(rng):
    g = _graph(rng)
    X, Y = _features(rng, g.num_nodes())
    step = _step_fn("sage")
    compiled = nc.jit.trace(step)
    batches = _batches(g, 16, [4, 4], 3)
    _run_batches(compiled, step, batches, X, Y)
    assert (compiled.num_traces, compiled.num_dynamic_runs) == (2, 1)
    # The batch size (16) was the same in both traces, so it is fixed: a last, smaller batch
    # traces once more, and batches of 16 go on replaying the generalized program.
    _run_batches(compiled, step, _batches(g, 5, [4, 4], 1, seed=50), X, Y)
    assert compiled.num_traces == 3
    _run_batches(compiled, step, _batches(g, 16, [4, 4], 2, seed=70), X, Y)
    assert (compiled.num_traces, compiled.num_dynamic_runs) == (3, 3)


def test_graph_inputs_appear_in_the_program_text(rng):
    g = _graph(rng)
    X, Y = _features(rng, g.num_nodes())
    # (A fused elementwise body prints its steps, which the parser does not read back.)
    compiled = nc.jit.trace(_step_fn("sage"), disable_passes=("fuse_elementwise",))
    blocks = _batches(g, 16, [4, 4], 1)[0]
    compiled(blocks, X[nc.tensor(blocks[0].srcdata[nw.NID].numpy())], nc.tensor(Y[:16]))
    text = str(compiled.program)
    b0, b1 = blocks
    assert f"@0: relation_graph[{b0.num_src_nodes()}, {b0.num_dst_nodes()}, {b0.num_edges()}]" in text
    assert f"@1: relation_graph[{b1.num_src_nodes()}, {b1.num_dst_nodes()}, {b1.num_edges()}]" in text
    assert "opaque(relation_graph @0)" in text
    assert "opaque(relation_graph @1 derived 1)" in text  # the backward pass's reversed block
    assert str(nc.jit.Program.parse(text)) == text


def test_structure_read_on_the_host_keeps_one_trace_per_graph(rng):
    g = _graph(rng)
    X, _ = _features(rng, g.num_nodes())
    w = nc.tensor(rng.standard_normal((8, 4)).astype(np.float32), requires_grad=True)

    def step(block, x):
        # Degrees through NumPy: the program cannot count them again for the next block.
        deg = nc.tensor(block.in_degrees().numpy().astype(np.float32)).reshape(-1, 1)
        h = nw.ops.copy_u_sum(block, x @ w) / deg.clamp(min=1)
        return (h * h).sum()

    compiled = nc.jit.trace(step)
    blocks = [b[0] for b in _batches(g, 16, [4], 4)]
    with pytest.warns(nw.NodeweaveWarning, match="traced 4 times .* cannot share one program: the traced "
                                                  "code read a graph argument's structure"):
        for b in blocks:
            x = X[nc.tensor(b.srcdata[nw.NID].numpy())]
            _close(compiled(b, x), step(b, x))
    assert compiled.num_traces == 4 and compiled.num_dynamic_runs == 0
    assert "structure on the host (a structure query)" in compiled.dynamic_status


def test_a_blocks_own_features_read_inside_keep_one_trace_per_graph(rng):
    g = _graph(rng)
    g.ndata["feat"] = _features(rng, g.num_nodes())[0]
    layer = SAGEConv(8, 4, "mean")

    def step(block):
        return layer(block, block.srcdata["feat"]).sum()

    compiled = nc.jit.trace(step)
    blocks = [b[0] for b in _batches(g, 16, [4], 3)]
    for b in blocks:
        _close(compiled(b), step(b))
    assert compiled.num_traces == 3
    # The sampler's srcdata["feat"] is gathered where it is read, by row ids of each block.
    assert "holds other values in each trace" in compiled.dynamic_status


def test_dynamic_false_traces_each_graph(rng):
    g = _graph(rng)
    X, Y = _features(rng, g.num_nodes())
    step = _step_fn("sage")
    compiled = nc.jit.trace(step, dynamic=False)
    _run_batches(compiled, step, _batches(g, 16, [4, 4], 3), X, Y)
    assert (compiled.num_traces, compiled.num_dynamic_runs) == (3, 0)
    assert compiled.dynamic_status == "off (dynamic=False)"


def test_the_same_graph_again_replays_without_generalizing(rng):
    g = nw.add_self_loop(_graph(rng, 40, 200))
    layer = GraphConv(8, 4)
    compiled = nc.jit.trace(lambda graph, x: layer(graph, x).sum())
    for _ in range(3):
        x = _features(rng, 40)[0]
        _close(compiled(g, x), layer(g, x).sum())
    assert compiled.num_traces == 1


def test_bad_graph_inputs_give_clear_errors(rng):
    g = _graph(rng, 30, 120)
    layer = SAGEConv(8, 4, "mean")
    compiled = nc.jit.trace(lambda graph, x: layer(graph, x).sum())
    x = _features(rng, 30)[0]
    compiled(g, x)
    ex = _C_executor(compiled)
    with pytest.raises(nwerr.ValueError, match="takes 1 object inputs"):
        ex.run([x], [])
    other = _graph(rng, 30, 100)
    with pytest.raises(nwerr.ValueError, match=r"object input @0 \(a relation_graph\) has sizes \[30, 30, 100\], "
                                                r"the program was traced for \[30, 30, 120\]"):
        ex.run([x], [other._rels[other.canonical_etypes[0]]])


def _C_executor(compiled):
    return next(reversed(compiled._cache.values())).executor


def test_saved_program_with_a_graph_input_runs_on_that_graph_in_a_fresh_process(tmp_path, rng):
    g = _graph(rng, 30, 120)
    layer = SAGEConv(8, 4, "mean")
    layer.eval()
    compiled = nc.jit.trace(lambda graph, x: layer(graph, x))
    x = _features(rng, 30)[0]
    with nc.no_grad():
        want = compiled(g, x).numpy()
    path = tmp_path / "sage.nwp"
    nc.jit.save(compiled, str(path))
    src, dst = (t.numpy() for t in g.edges())
    np.savez(tmp_path / "io.npz", src=src, dst=dst, x=x.numpy(), want=want)
    code = f"""
import numpy as np, nodeweave as nw, nodeweave.core as nc
d = np.load({str(tmp_path / 'io.npz')!r})
g = nw.graph((d['src'], d['dst']), num_nodes=30)
with nc.no_grad():
    (out,) = nc.jit.load({str(path)!r})(nc.tensor(d['x']), graphs=[g])
assert np.array_equal(out.numpy(), d['want']), 'differs'
print('ok')
"""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_graph_classification_over_changing_batches_runs_one_program(rng):
    # GIN with sum pooling over batches of 8 random graphs: the readout's segment offsets come
    # from the batch's counts, which are inputs of the program.
    from nodeweave.nn import GINConv, SumPooling
    import nodeweave.core.nn as nn

    conv1, conv2 = GINConv(nn.Linear(8, 16), "sum"), GINConv(nn.Linear(16, 16), "sum")
    head, pool = nn.Linear(16, 2), SumPooling()
    params = [p for m in (conv1, conv2, head) for p in m.parameters()]

    def step(bg, x, y):
        h = F.relu(conv1(bg, x))
        h = F.relu(conv2(bg, h))
        loss = F.cross_entropy(head(pool(bg, h)), y)
        return loss, nc.autograd.grad(loss, params)

    compiled = nc.jit.trace(step)
    for _ in range(6):
        graphs = []
        for _ in range(8):
            n = int(rng.integers(3, 12))
            e = int(rng.integers(n, 3 * n))
            graphs.append(nw.graph((rng.integers(0, n, e), rng.integers(0, n, e)), num_nodes=n))
        bg = nw.batch(graphs)
        x = nc.tensor(rng.standard_normal((bg.num_nodes(), 8)).astype(np.float32))
        y = nc.tensor(rng.integers(0, 2, 8))
        (loss, grads), (want_loss, want_grads) = compiled(bg, x, y), step(bg, x, y)
        _close(loss, want_loss)
        for got, want in zip(grads, want_grads):
            _close(got, want)
    assert compiled.dynamic_status == "dynamic"
    assert (compiled.num_traces, compiled.num_dynamic_runs) == (2, 4)
    assert "segment_offsets" in str(compiled.program)


# ---- what a review found: each of these once gave a wrong result or an error where eager works


def _ring(n, drop=0):
    src = np.concatenate([np.arange(n), np.arange(n)])
    dst = np.concatenate([(np.arange(n) + 1) % n, (np.arange(n) - 1) % n])
    return nw.graph((src[:len(src) - drop], dst[:len(dst) - drop]), num_nodes=n)


def test_an_integer_two_sizes_explain_is_checked_at_each_call():
    # On rings num_edges == 2 * num_nodes, so the slice end 2n fits both: a call on a graph where
    # they part must not take num_edges for it.
    def f(g, h):
        return nc.cat([h, h + 1.0, h + 2.0], 0)[:2 * g.num_nodes()]

    compiled = nc.jit.trace(f)
    for n in (5, 7):
        compiled(_ring(n), nc.zeros(n, 2))
    assert compiled.dynamic_status == "dynamic"
    g, h = _ring(6, drop=3), nc.zeros(6, 2)  # 9 edges, 12 = 2n rows
    assert tuple(compiled(g, h).shape) == tuple(f(g, h).shape) == (12, 2)
    assert compiled.num_traces == 3  # the tie broke: traced, and generalized anew


def test_a_structure_read_of_a_derived_graph_keeps_one_trace_per_graph(rng):
    def regular(n, holes=0):  # every in-degree 3 (but for `holes` edges)
        return nw.graph((rng.integers(0, n, 3 * n)[holes:], np.repeat(np.arange(n), 3)[holes:]), num_nodes=n)

    def f(g, h):
        deg = g.formats("csc").in_degrees().float()  # host-read degrees of a graph made from g
        return nw.ops.copy_u_sum(g, h) / deg.reshape(-1, 1).clamp(min=1)

    compiled = nc.jit.trace(f)
    for n in (6, 9):
        compiled(regular(n), nc.tensor(rng.standard_normal((n, 2)).astype(np.float32)))
    assert "structure on the host" in compiled.dynamic_status
    g, h = regular(8, holes=2), nc.tensor(rng.standard_normal((8, 2)).astype(np.float32))
    np.testing.assert_allclose(compiled(g, h).numpy(), f(g, h).numpy(), rtol=1e-6)
    assert compiled.num_dynamic_runs == 0


def test_a_program_that_read_its_graph_argument_on_the_host_is_not_saved(tmp_path, rng):
    g = _graph(rng, 20, 80)
    compiled = nc.jit.trace(lambda graph, h: h * graph.in_degrees().float().reshape(-1, 1))
    compiled(g, nc.ones(20, 2))
    with pytest.raises(nwerr.ValueError, match="read the structure of a graph argument on the host"):
        nc.jit.save(compiled, str(tmp_path / "f.nwp"))


def test_batch_counts_read_on_the_host_guard_instead_of_refusing(rng):
    from nodeweave.nn import PNAConv

    conv = PNAConv(3, 3, ["mean"], ["identity"], delta=1.0)  # reads batch_num_nodes().tolist()
    bg = nw.batch([_graph(rng, 4, 8), _graph(rng, 5, 9)])
    x = nc.tensor(rng.standard_normal((9, 3)).astype(np.float32))
    compiled = nc.jit.trace(lambda g, h: conv(g, h))
    for _ in range(2):
        _close(compiled(bg, x), conv(bg, x))
    assert compiled.num_traces == 1


def test_graphs_sharing_relations_and_a_captured_graph_next_to_graph_inputs(rng):
    g = _graph(rng, 3, 3)
    f = nc.jit.trace(lambda a, b, h: nw.ops.copy_u_sum(a, h) + nw.ops.copy_u_sum(b, h))
    _close(f(g, g.local_var(), nc.ones(3, 2)), 2 * nw.ops.copy_u_sum(g, nc.ones(3, 2)))
    held = _graph(rng, 5, 10)
    z = nc.ones(5, 2)
    f = nc.jit.trace(lambda a, h: nw.ops.copy_u_sum(a, h).sum() + nw.ops.copy_u_sum(held, z).sum())
    for n in (6, 9, 7):
        a, h = _graph(rng, n, 3 * n), nc.ones(n, 2)
        _close(f(a, h), nw.ops.copy_u_sum(a, h).sum() + nw.ops.copy_u_sum(held, z).sum())
    assert f.dynamic_status == "dynamic" and f.num_traces == 2


def test_a_smaller_last_batch_keeps_the_program_for_the_next_epoch(rng):
    from nodeweave.nn import SumPooling

    pool = SumPooling()
    compiled = nc.jit.trace(lambda g, h: pool(g, h))

    def call(b):
        bg = nw.batch([_graph(rng, int(rng.integers(3, 8)), int(rng.integers(3, 12))) for _ in range(b)])
        h = nc.tensor(rng.standard_normal((bg.num_nodes(), 2)).astype(np.float32))
        _close(compiled(bg, h), pool(bg, h))

    for b in (4, 4, 4, 3, 4, 4, 4):
        call(b)
    assert compiled.dynamic_status == "dynamic"
    assert compiled.num_traces == 3  # two batches of 4, then the batch of 3 frees the batch size


def test_calls_of_sizes_seen_before_reuse_their_instantiation(rng):
    from nodeweave.nn import SumPooling

    pool = SumPooling()
    compiled = nc.jit.trace(lambda g, h: pool(g, h) * 2.0)
    graphs = [[_graph(rng, int(rng.integers(3, 8)), 10) for _ in range(4)] for _ in range(3)]
    for _ in range(3):  # three epochs over the same three batches, batched anew each epoch
        for gs in graphs:
            b = nw.batch(gs)
            h = nc.tensor(rng.standard_normal((b.num_nodes(), 2)).astype(np.float32))
            _close(compiled(b, h), pool(b, h) * 2.0)
    dyn = next(reversed(compiled._dynamic.values()))
    assert compiled.num_traces == 2 and compiled.num_dynamic_runs == 7
    assert len(dyn.executors) == 3  # one per batch size seen: reused on the later epochs
