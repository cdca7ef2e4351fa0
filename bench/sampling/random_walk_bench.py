"""Random walks per second: nodeweave's uniform, weighted and node2vec walks at 1 and 2 threads on
an R-MAT graph, and DGL's ``random_walk`` / ``node2vec_random_walk`` on the same graph when DGL is
importable (run it with ``bench/.venv-peers/bin/python``, see ``bench/peers/README.md``).

Graph: ``nw.rmat_graph(scale=20, num_edges=2**24, seed=1)`` — 2^20 nodes, 16,777,216 directed edges,
Graph500's a/b/c/d = .57/.19/.19/.05, self-loops and multi-edges kept, int64 ids. Weighted walks
read float32 edge weights drawn uniformly from [0, 1) (NumPy seed 0). node2vec uses p = 0.5,
q = 2. Walks of length 80 start from every node (``--starts N``: from N distinct nodes drawn at
random, NumPy seed 0, for shorter runs; DGL's node2vec takes many minutes on every node), one walk per start, traces only
(no edge ids). Each figure is the best of ``--reps`` runs, each timing the full Python call (the
C++ walk plus the id tensor it returns); building the graph's CSR is done once beforehand. DGL
runs in a child process per thread count with ``OMP_NUM_THREADS`` set, on the same edges and
starts, so both libraries see the same machine state. The ratio is DGL's time over nodeweave's.

    PYTHONPATH=python python bench/sampling/random_walk_bench.py                  # nodeweave only
    PYTHONPATH=python bench/.venv-peers/bin/python bench/sampling/random_walk_bench.py
    PYTHONPATH=python python bench/sampling/random_walk_bench.py --scale 18 --edges 4194304   # smoke
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

KINDS = ("uniform", "weighted", "node2vec")

# The DGL side, run in a fresh process so that OMP_NUM_THREADS fixes its thread pool.
DGL_CHILD = r"""
import json, sys, time
import numpy as np, torch, dgl
d = np.load(sys.argv[1])
kinds, length, p, q, reps = json.loads(sys.argv[2])
g = dgl.graph((torch.from_numpy(d["src"]), torch.from_numpy(d["dst"])), num_nodes=int(d["n"]))
g.edata["w"] = torch.from_numpy(d["w"])
g.create_formats_()
starts = torch.from_numpy(d["starts"])
run = {
    "uniform": lambda: dgl.sampling.random_walk(g, starts, length=length),
    "weighted": lambda: dgl.sampling.random_walk(g, starts, length=length, prob="w"),
    "node2vec": lambda: dgl.sampling.node2vec_random_walk(g, starts, p, q, length),
}
out = {}
for k in kinds:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter(); run[k](); best = min(best, time.perf_counter() - t)
    out[k] = best
print(json.dumps({"version": dgl.__version__, "times": out}))
"""


def time_best(fn, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=20, help="2^scale nodes")
    ap.add_argument("--edges", type=int, default=1 << 24)
    ap.add_argument("--length", type=int, default=80)
    ap.add_argument("--starts", type=int, default=None,
                    help="walk from N distinct nodes drawn at random (NumPy seed 0; default: every node)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--p", type=float, default=0.5)
    ap.add_argument("--q", type=float, default=2.0)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--no-dgl", action="store_true", help="skip DGL even when it is importable")
    args = ap.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    for k in kinds:
        if k not in KINDS:
            ap.error(f"unknown kind {k!r} (choose from {', '.join(KINDS)})")
    threads = [int(t) for t in args.threads.split(",")]

    import nodeweave as nw
    import nodeweave.core as nc
    import nodeweave.sampling  # noqa: F401

    t0 = time.perf_counter()
    g = nw.rmat_graph(scale=args.scale, num_edges=args.edges, seed=1)
    w = np.random.default_rng(0).random(args.edges, dtype=np.float32)
    g.edata["w"] = nc.tensor(w)
    n = g.num_nodes()
    starts = (np.arange(n, dtype=np.int64) if args.starts is None or args.starts >= n else
              np.sort(np.random.default_rng(0).choice(n, args.starts, replace=False)).astype(np.int64))
    nw.sampling.random_walk(g, starts[:1], length=1, random_seed=0)  # builds the out-edge CSR once
    print(f"R-MAT scale {args.scale}: {n} nodes, {g.num_edges()} edges (built in "
          f"{time.perf_counter() - t0:.1f} s); {len(starts)} walks of length {args.length}; "
          f"node2vec p={args.p} q={args.q}; best of {args.reps}", flush=True)

    run = {
        "uniform": lambda: nw.sampling.random_walk(g, starts, length=args.length, random_seed=1),
        "weighted": lambda: nw.sampling.random_walk(g, starts, length=args.length, prob="w", random_seed=1),
        "node2vec": lambda: nw.sampling.node2vec_random_walk(g, starts, args.p, args.q, args.length,
                                                             random_seed=1),
    }
    ours: dict[tuple[str, int], float] = {}
    for t in threads:
        nc.set_num_threads(t)
        for k in kinds:
            ours[(k, t)] = time_best(run[k], args.reps)

    dgl_times: dict[tuple[str, int], float] = {}
    dgl_version = None
    have_dgl = not args.no_dgl and subprocess.run([sys.executable, "-c", "import dgl"],
                                                  capture_output=True).returncode == 0
    if have_dgl:
        src, dst = (x.numpy() if hasattr(x, "numpy") else np.asarray(x) for x in g.edges())
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "graph.npz")
            np.savez(path, src=src.astype(np.int64), dst=dst.astype(np.int64), w=w, starts=starts, n=n)
            for t in threads:
                env = dict(os.environ, OMP_NUM_THREADS=str(t))
                res = subprocess.run([sys.executable, "-c", DGL_CHILD, path,
                                      json.dumps([kinds, args.length, args.p, args.q, args.reps])],
                                     env=env, capture_output=True, text=True)
                if res.returncode != 0:
                    print(f"DGL at {t} threads failed:\n{res.stderr[-2000:]}")
                    continue
                rec = json.loads(res.stdout.strip().splitlines()[-1])
                dgl_version = rec["version"]
                for k, v in rec["times"].items():
                    dgl_times[(k, t)] = v
    else:
        print("DGL is not importable from this interpreter: nodeweave only "
              "(run with bench/.venv-peers/bin/python for the comparison)")

    head = f"{'walk':10s} {'threads':>7s} {'nodeweave walks/s':>18s} {'steps/s':>10s}"
    if dgl_times:
        head += f" {'DGL ' + str(dgl_version) + ' walks/s':>22s} {'DGL time / ours':>16s}"
    print(head)
    for k in kinds:
        for t in threads:
            s = ours[(k, t)]
            line = f"{k:10s} {t:7d} {len(starts) / s:18,.0f} {len(starts) * args.length / s:10.3g}"
            if (k, t) in dgl_times:
                d = dgl_times[(k, t)]
                line += f" {len(starts) / d:22,.0f} {d / s:16.2f}"
            print(line)


if __name__ == "__main__":
    main()
