"""A training step run eagerly and as a traced program (nodeweave.core.jit), in one run, same
threads: the step is forward, gradients and an Adam update, with dropout on. Traced two ways: the
forward and gradients (``nc.autograd.grad``) traced with Adam run eagerly after each replay, and the
whole step (``zero_grad()``, forward, ``backward()``, ``opt.step()``) traced as one program.

Cases:
- ``gcn-cora`` / ``gat-cora``: bench/models/epoch_time.py's GCN (16 hidden) and GAT (8 heads x 8)
  on Cora, full graph (imported from there);
- ``gin-mutag``: examples/gin.py's GIN (5 layers, 64 hidden, batch norm, sum pooling; imported) on
  batches of 32 MUTAG graphs (about 570 nodes each), a different batch each step (the first 160
  graphs, 5 batches, in turn): small tensors, so the Python per op dominates. The traced step traces
  the first two batches and replays one program, whose sizes follow the batch, on the others;
- ``mlp-small``: a 4-layer MLP (64 wide) on 64 rows: the overhead-bound extreme.

The traced step replays through the same kernels, so what it saves is the Python and autograd
bookkeeping per op; the fusion passes of the design are not in yet. The peak columns are the most
tensor storage allocated during a step beyond what was allocated before it (nc.max_memory_allocated);
the traced step's buffers reused by the memory plan (core_framework/jit/memory_plan.h, the arena in
parentheses) persist between steps and are counted once, when first allocated, so the traced peak
shows what each step allocates anew. Each case
interleaves eager and traced steps and reports medians of --reps steps after --warmup.

Run:  NODEWEAVE_DATA_DIR=../shared/data .venv/bin/python bench/jit/step_time.py [--threads 1] [--reps 30]
"""

from __future__ import annotations

import argparse
import statistics
import time

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "bench" / "models"), str(ROOT / "examples")]

import nodeweave as nw  # noqa: E402
import nodeweave.core as nc  # noqa: E402
from nodeweave.core import nn, optim  # noqa: E402

from epoch_time import GAT, GCN  # noqa: E402  (the models bench/models times)
from gin import GIN  # noqa: E402  (examples/gin.py's model)

F = nn.functional


class MLP(nn.Module):
    def __init__(self, i, h, o):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(),
                                 nn.Linear(h, o))

    def forward(self, g, x):
        return self.net(x)


def cases():
    from nodeweave import data

    cora = data.CoraGraphDataset()[0]
    cora = nw.add_self_loop(nw.remove_self_loop(cora))
    x, y = cora.ndata["feat"], cora.ndata["label"]
    yield "gcn-cora", GCN(x.shape[1], 16, 7), [(cora, x, y)]
    yield "gat-cora", GAT(x.shape[1], 8, 7), [(cora, x, y)]
    mutag = data.TUDataset("MUTAG")
    batches = []
    for start in range(0, 160, 32):
        graphs, labels = zip(*(mutag[i] for i in range(start, start + 32)))
        bg = nw.batch(list(graphs))
        feat = nc.tensor(np.asarray(bg.ndata["feat"].numpy(), np.float32).reshape(bg.num_nodes(), -1))
        ys = nc.tensor(np.array([int(np.asarray(lab).reshape(-1)[0]) for lab in labels]))
        batches.append((bg, feat, ys))
    yield "gin-mutag", GIN(batches[0][1].shape[1], 64, 2, n_layers=5, dropout=0.5), batches
    rng = np.random.default_rng(0)
    yield ("mlp-small", MLP(32, 64, 8), [(None, nc.tensor(rng.standard_normal((64, 32), dtype=np.float32)),
                                          nc.tensor(rng.integers(0, 8, 64)))])


def measure(name, model, batches, reps, warmup):
    params = list(model.parameters())
    opt = optim.Adam(params, lr=0.01)
    model.train()

    def step(g, feats, y):
        loss = F.cross_entropy(model(g, feats), y)
        return loss, nc.autograd.grad(loss, params)

    compiled = nc.jit.trace(step)

    def whole_step(g, feats, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(g, feats), y)
        loss.backward()
        opt.step()
        return loss

    whole = nc.jit.trace(whole_step)

    def run(fn, i):
        if fn is whole:
            fn(*batches[i % len(batches)])
            return
        loss, grads = fn(*batches[i % len(batches)])
        for p, gr in zip(params, grads):
            p.grad = gr
        opt.step()

    for i in range(warmup):
        run(step, i)
        run(compiled, i)
        run(whole, i)
    eager, traced, traced_whole, peak = [], [], [], {step: 0, compiled: 0, whole: 0}
    for i in range(reps):
        for fn, out in ((step, eager), (compiled, traced), (whole, traced_whole)):
            base = nc.memory_allocated()
            nc.reset_peak_memory_stats()
            t0 = time.perf_counter()
            run(fn, warmup + i)
            out.append(time.perf_counter() - t0)
            peak[fn] = max(peak[fn], nc.max_memory_allocated() - base)
    e, t, w = statistics.median(eager), statistics.median(traced), statistics.median(traced_whole)
    assert whole.num_traces == compiled.num_traces, f"{name}: the whole step traced {whole.num_traces} times"
    return {"case": name, "eager_ms": 1e3 * e, "jit_ms": 1e3 * t, "speedup": e / t,
            "whole_ms": 1e3 * w, "whole_speedup": e / w,
            "nodes": compiled.program.num_nodes, "traces": compiled.num_traces,
            "eager_peak_mb": peak[step] / 2**20, "jit_peak_mb": peak[compiled] / 2**20,
            "arena_mb": compiled.memory["arena"] / 2**20,
            "arena_no_inplace_mb": compiled.memory["arena_without_in_place"] / 2**20}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--cases", default="gcn-cora,gat-cora,gin-mutag,mlp-small")
    args = p.parse_args()
    nc.set_num_threads(args.threads)
    wanted = args.cases.split(",")
    print(f"threads {args.threads}, median of {args.reps} steps (forward, grad, Adam) after {args.warmup}")
    print("| case | eager ms | traced ms | eager / traced | whole step traced ms | eager / whole step traced "
          "| program nodes | peak MB eager | peak MB traced (arena) | arena MB without in-place reuse |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, model, batches in cases():
        if name not in wanted:
            continue
        nc.manual_seed(0)
        r = measure(name, model, batches, args.reps, args.warmup)
        assert r["traces"] == min(len(batches), 2), f"{name}: traced {r['traces']} times"
        print(f"| {name} | {r['eager_ms']:.2f} | {r['jit_ms']:.2f} | {r['speedup']:.2f} | {r['whole_ms']:.2f} | "
              f"{r['whole_speedup']:.2f} | {r['nodes']} | "
              f"{r['eager_peak_mb']:.2f} | {r['jit_peak_mb']:.2f} ({r['arena_mb']:.2f}) | "
              f"{r['arena_no_inplace_mb']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
