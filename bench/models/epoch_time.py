"""Time per training epoch (forward, backward, optimizer step) of GCN, GAT and GraphSAGE on Cora,
Citeseer and an R-MAT graph, split into graph kernels, dense ops and the rest.

The split comes from the engine's op profiler (nodeweave.core.profiler): "graph kernels" are the
gSpMM / gSDDMM / edge-softmax / segment ops (forward and backward), "dense ops" every other op the
engine dispatches (GEMM, elementwise, reductions, dropout, optimizer updates ...), "other" the rest
of the wall-clock time (Python, autograd bookkeeping). Each figure is the median over --reps epochs
after --warmup epochs.

Run:  PYTHONPATH=python python bench/models/epoch_time.py [--threads 2] [--reps 10] [--rmat-scale 18]

R-MAT graph: 2^scale nodes, 16 * 2^scale directed edges (about 4M at scale 18) drawn with
(a, b, c, d) = (0.57, 0.19, 0.19, 0.05), seed 0, self-loops added; 128-dimensional random
features, 16 classes, random labels, all nodes in the training set.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.core import nn, optim
from nodeweave.nn import GATConv, GraphConv, SAGEConv

F = nn.functional
# The engine ops of the sparse-kernel layer (backend/native/*_ops.cc), forward and backward.
GRAPH_OPS = {"gspmm", "gsddmm", "edge_softmax", "edge_softmax_backward", "segment_reduce",
             "segment_softmax", "segment_softmax_backward", "gather_mm", "gather_mm_grad_b",
             "segment_mm", "segment_mm_grad_b"}


class GCN(nn.Module):
    def __init__(self, i, h, o):
        super().__init__()
        self.c1, self.c2, self.drop = GraphConv(i, h, activation=F.relu), GraphConv(h, o), nn.Dropout(0.5)

    def forward(self, g, x):
        return self.c2(g, self.drop(self.c1(g, self.drop(x))))


class GAT(nn.Module):
    def __init__(self, i, h, o, heads=8):
        super().__init__()
        self.c1 = GATConv(i, h, heads, feat_drop=0.6, attn_drop=0.6, activation=F.elu)
        self.c2 = GATConv(h * heads, o, 1, feat_drop=0.6, attn_drop=0.6)

    def forward(self, g, x):
        return self.c2(g, self.c1(g, x).flatten(1)).mean(1)


class SAGE(nn.Module):
    def __init__(self, i, h, o):
        super().__init__()
        self.c1, self.c2, self.drop = SAGEConv(i, h, "mean"), SAGEConv(h, o, "mean"), nn.Dropout(0.5)

    def forward(self, g, x):
        return self.c2(g, self.drop(F.relu(self.c1(g, self.drop(x)))))


MODELS = {"GCN": (GCN, 16), "GAT": (GAT, 8), "GraphSAGE": (SAGE, 16)}


def datasets(args):
    from nodeweave import data

    out = []
    for name, cls in (("Cora", data.CoraGraphDataset), ("Citeseer", data.CiteseerGraphDataset)):
        g = cls()[0]
        g = nw.add_self_loop(nw.remove_self_loop(g))
        out.append((name, g, g.ndata["feat"], g.ndata["label"]))
    n = 1 << args.rmat_scale
    g = nw.rmat_graph(num_edges=16 * n, scale=args.rmat_scale, a=0.57, b=0.19, c=0.19, d=0.05, seed=0)
    g = nw.add_self_loop(g)
    rng = np.random.default_rng(0)
    x = nc.tensor(rng.standard_normal((n, 128), dtype=np.float32))
    y = nc.tensor(rng.integers(0, 16, n))
    out.append((f"R-MAT 2^{args.rmat_scale}", g, x, y))
    return out


def time_epochs(model, g, x, y, reps, warmup):
    opt = optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    model.train()

    def epoch():
        loss = F.cross_entropy(model(g, x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    for _ in range(warmup):
        epoch()
    walls, graph, dense = [], [], []
    for _ in range(reps):
        with nc.profiler.profile() as prof:
            t0 = time.perf_counter()
            epoch()
            walls.append(time.perf_counter() - t0)
        graph.append(prof.total(GRAPH_OPS))
        dense.append(prof.total() - graph[-1])
    med = statistics.median
    return med(walls), med(graph), med(dense)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--rmat-scale", type=int, default=18)
    p.add_argument("--models", default="GCN,GAT,GraphSAGE")
    args = p.parse_args()
    if args.threads:
        nc.set_num_threads(args.threads)
    print(f"threads={nc.get_num_threads()}  median of {args.reps} epochs after {args.warmup} warm-up")
    print("| model | graph | nodes | edges | epoch ms | graph kernels | dense ops | other |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for gname, g, x, y in datasets(args):
        n_classes = int(y.max().item()) + 1
        for mname in args.models.split(","):
            cls, hidden = MODELS[mname]
            nc.manual_seed(0)
            model = cls(x.shape[1], hidden, n_classes)
            wall, graph, dense = time_epochs(model, g, x, y, args.reps, args.warmup)
            other = max(wall - graph - dense, 0.0)
            print(f"| {mname} | {gname} | {g.num_nodes()} | {g.num_edges()} | {wall * 1e3:.1f} | "
                  f"{100 * graph / wall:.0f}% | {100 * dense / wall:.0f}% | {100 * other / wall:.0f}% |",
                  flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    main()
