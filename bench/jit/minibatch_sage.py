"""Mini-batch GraphSAGE training steps, eager and traced (nodeweave.core.jit), over sampled blocks
whose node and edge counts change every batch, in one run, same threads.

The traced step is traced on the first two batches; their programs are generalized into one whose
sizes follow the blocks (core_framework/jit/dynamic_sizes.h), and every later batch runs it: per
batch, the program (generalized after the passes) is instantiated for the batch's sizes and the
executor is built (the "prepare" column), then it replays with no Python per op. Without the generalization
(``dynamic=False``) every batch would trace anew: that column is timed too.

Model: examples/sage_minibatch.py's SAGE (2 SAGEConv layers, mean aggregator, dropout 0.5), 64
input features, 128 hidden, 16 classes; the step is forward, ``nc.autograd.grad`` and Adam. Graph:
R-MAT (Graph500 parameters a=0.57, b=0.19, c=0.19), 2^16 nodes, 2^20 edges, seed 0. Blocks:
NeighborSampler fanouts [10, 25], batches of 1024 seeds, sampled before timing (sampling is not
what is compared); features are gathered outside the step, as the DataLoader does.

Run:  .venv/bin/python bench/jit/minibatch_sage.py [--threads 1] [--batches 40]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "examples")]

import nodeweave as nw  # noqa: E402
import nodeweave.core as nc  # noqa: E402
from nodeweave import _C  # noqa: E402
from nodeweave.core import nn, optim  # noqa: E402

from sage_minibatch import SAGE  # noqa: E402  (examples/sage_minibatch.py's model)

F = nn.functional


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batches", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--retrace-batches", type=int, default=5, help="batches timed with dynamic=False")
    args = p.parse_args()
    nc.set_num_threads(args.threads)
    nc.manual_seed(0)
    g = nw.rmat_graph(1 << 16, 1 << 20, seed=0)
    rng = np.random.default_rng(0)
    X = nc.tensor(rng.standard_normal((g.num_nodes(), 64)).astype(np.float32))
    Y = rng.integers(0, 16, g.num_nodes())
    sampler = nw.dataloading.NeighborSampler([10, 25])
    order = rng.permutation(g.num_nodes())
    batches = []
    for i in range(args.batches):
        seeds = nc.tensor(order[i * args.batch_size:(i + 1) * args.batch_size])
        _, _, blocks = sampler.sample(g, seeds, random_seed=i)
        x = X[nc.tensor(blocks[0].srcdata[nw.NID].numpy())]
        y = nc.tensor(Y[blocks[-1].dstdata[nw.NID].numpy()])
        batches.append((blocks, x, y))

    model = SAGE(64, 128, 16, "mean", 0.5)
    model.train()
    params = list(model.parameters())
    opt = optim.Adam(params, lr=0.01)

    def step(blocks, x, y):
        loss = F.cross_entropy(model(blocks, x), y)
        return loss, nc.autograd.grad(loss, params)

    def run(fn, batch):
        t0 = time.perf_counter()
        loss, grads = fn(*batch)
        for q, gr in zip(params, grads):
            q.grad = gr
        opt.step()
        return time.perf_counter() - t0

    compiled = nc.jit.trace(step)
    run(compiled, batches[0])
    run(compiled, batches[1])  # the second trace: generalized here
    assert compiled.dynamic_status == "dynamic", compiled.dynamic_status  # passes not rerun per call
    eager, traced, prepare = [], [], []
    for batch in batches[2:]:
        eager.append(run(step, batch))
        traced.append(run(compiled, batch))
        # What the traced step spent before replaying: instantiating, passes, executor.
        dyn = next(reversed(compiled._dynamic.values()))
        blocks, x, y = batch
        rels = [b._rels[b.canonical_etypes[0]] for b in blocks]
        t0 = time.perf_counter()
        prog = dyn.program.instantiate([x, y], rels)
        if not dyn.optimized:
            prog.run_passes([])
        _C._jit.Executor(prog, True)
        prepare.append(time.perf_counter() - t0)
    assert compiled.num_traces == 2, compiled.num_traces
    retraced = nc.jit.trace(step, dynamic=False)
    retrace = [run(retraced, batch) for batch in batches[2:2 + args.retrace_batches]]
    sizes = [(b[0][0].num_src_nodes(), b[0][0].num_edges(), b[0][1].num_edges()) for b in batches]
    e, t, pr, rt = (statistics.median(v) for v in (eager, traced, prepare, retrace))
    print(f"threads {args.threads}, medians of {len(eager)} batches (forward, grad, Adam); "
          f"input nodes per batch {min(s[0] for s in sizes)}-{max(s[0] for s in sizes)}, "
          f"edges {min(s[1] + s[2] for s in sizes)}-{max(s[1] + s[2] for s in sizes)}")
    print("| eager ms | traced ms (dynamic) | eager / traced | prepare ms (in traced) | "
          "retraced ms (dynamic=False) | program nodes |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {1e3 * e:.1f} | {1e3 * t:.1f} | {e / t:.2f} | {1e3 * pr:.2f} | {1e3 * rt:.1f} | "
          f"{compiled.program.num_nodes} |")


if __name__ == "__main__":
    main()
