"""The fused GAT edge pipeline (jit pass ``fuse_gat_edge_pipeline``) against the same traced step
without it and against eager mode, in one run, same threads.

The case: one ``nodeweave.nn.GATConv`` layer (``--heads`` x ``--out`` features) on an R-MAT graph of
2^``--scale`` nodes and ``--edges-per-node`` x 2^scale edges (a=0.57, b=0.19, c=0.19, seed 0) plus a
self loop per node, optionally with attention dropout (``--attn-drop``, fused too: the kernel redraws
the mask from its seed); the step is the forward, a loss, and ``nc.autograd.grad`` of it for the layer's
parameters and the input features (so the backward of the whole pipeline runs). Unfused, the step
writes several (edges x heads) arrays (scores, leaky ReLU, attention, their gradients); fused, only
per-node arrays.

Peak: the most tensor storage allocated during a step beyond what was allocated before it
(``nc.max_memory_allocated``), with the memory plan off (``plan_memory=False``) so that the figure is
each step's own transient memory for all three. Each variant runs interleaved with the others, and
the table shows medians of ``--reps`` steps after ``--warmup``.

Run:  .venv/bin/python bench/jit/gat_fusion.py [--threads 1] [--scale 18] [--edges-per-node 16] [--attn-drop 0] [--reps 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import GATConv

PASS = "fuse_gat_edge_pipeline"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--scale", type=int, default=18)
    p.add_argument("--edges-per-node", type=int, default=16)
    p.add_argument("--attn-drop", type=float, default=0.0, help="attention dropout (training mode)")
    p.add_argument("--in-feats", type=int, default=64)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--out", type=int, default=8)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    args = p.parse_args()
    nc.set_num_threads(args.threads)

    n = 2 ** args.scale
    g = nw.add_self_loop(nw.remove_self_loop(nw.rmat_graph(num_nodes=n, num_edges=args.edges_per_node * n, seed=0)))
    rng = np.random.default_rng(0)
    x = nc.tensor(rng.standard_normal((n, args.in_feats), dtype=np.float32), requires_grad=True)
    nc.manual_seed(0)
    layer = GATConv(args.in_feats, args.out, num_heads=args.heads, attn_drop=args.attn_drop).train()
    params = list(layer.parameters())

    def step(feats):
        h = layer(g, feats)
        loss = (h * h).sum()
        return loss, nc.autograd.grad(loss, params + [feats])

    variants = {
        "eager": step,
        "traced, unfused": nc.jit.trace(step, disable_passes=(PASS,), plan_memory=False),
        "traced, fused": nc.jit.trace(step, plan_memory=False),
    }
    results = {name: [] for name in variants}
    peaks = {name: 0 for name in variants}
    outs = {}
    for _ in range(args.warmup):
        for name, fn in variants.items():
            nc.manual_seed(1)  # the same dropout masks for the check below
            outs[name] = fn(x)
    for _ in range(args.reps):
        for name, fn in variants.items():
            base = nc.memory_allocated()
            nc.reset_peak_memory_stats()
            t0 = time.perf_counter()
            out = fn(x)
            results[name].append(time.perf_counter() - t0)
            peaks[name] = max(peaks[name], nc.max_memory_allocated() - base)
            del out
    # The fused step computes what eager does (float32 rounding).
    want = outs["eager"][1]
    for name in ("traced, unfused", "traced, fused"):
        for a, b in zip(outs[name][1], want):
            a, b = a.numpy(), b.numpy()
            err = float(np.abs(a - b).max() / max(1e-30, np.abs(b).max()))
            assert err < 1e-4, f"{name}: gradients differ from eager by {err:.2e} (relative to max)"
    fused_ops = str(variants["traced, fused"].program).count("gat_aggregate")
    assert fused_ops >= 2, "the pass did not fuse the pipeline (forward and backward)"

    print(f"GATConv({args.in_feats} -> {args.heads} x {args.out}, attn_drop {args.attn_drop}) on R-MAT 2^{args.scale} nodes, "
          f"{g.num_edges()} edges (with self loops); threads {args.threads}; "
          f"median of {args.reps} forward+backward steps after {args.warmup}")
    print("| variant | ms | vs eager | vs traced, unfused | peak MB |")
    print("|---|---:|---:|---:|---:|")
    med = {k: statistics.median(v) for k, v in results.items()}
    for name in variants:
        print(f"| {name} | {1e3 * med[name]:.0f} | {med['eager'] / med[name]:.2f} | "
              f"{med['traced, unfused'] / med[name]:.2f} | {peaks[name] / 2**20:.0f} |")
    print(f"peak memory, traced unfused / fused: {peaks['traced, unfused'] / max(1, peaks['traced, fused']):.2f}")


if __name__ == "__main__":
    main()
