"""A full-graph training step on Cora: PyG with ``torch.compile`` against nodeweave's traced step
(nodeweave.core.jit), each next to its own eager step, in one run, same threads.

Models are bench/peers' (models_torch.py for PyG, models_nodeweave.py for nodeweave): GCN (16
hidden) and GAT (8 heads of 8), dropout on, the graph with its self-loops. One step is the forward,
cross-entropy on every node, the gradients and an Adam update (lr 0.01, weight decay 5e-4):

- PyG: ``loss.backward()`` then ``opt.step()``, eagerly and with the model wrapped in
  ``torch.compile`` (inductor, the default; compiled during the warm-up steps);
- nodeweave: the step returns ``nc.autograd.grad(loss, params)``, eagerly and traced
  (``nc.jit.trace``), then ``p.grad = ...`` and ``opt.step()``.

PyG runs in bench/.venv-peers (``bash bench/peers/setup_peers.sh`` makes it), nodeweave in the
project's .venv, each in a worker process with the thread count pinned before any library loads.
Each row is the median of --reps steps after --warmup.

Run:  NODEWEAVE_DATA_DIR=../shared/data .venv/bin/python bench/jit/vs_torch_compile.py [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "bench" / "peers"
PEERS_PY = ROOT / "bench" / ".venv-peers" / "bin" / "python"
MODELS = ("GCN", "GAT")


def median_ms(fn, reps: int, warmup: int) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(times)


def pyg_worker(data: dict, threads: int, reps: int, warmup: int) -> dict:
    import torch
    import torch.nn.functional as F

    import models_torch

    torch.set_num_threads(threads)
    ei = torch.stack([torch.from_numpy(data["src"]), torch.from_numpy(data["dst"])])
    x, y = torch.from_numpy(data["feat"]), torch.from_numpy(data["label"])
    out = {"torch": torch.__version__}
    for name in MODELS:
        for mode in ("eager", "compile"):
            torch.manual_seed(0)
            model = models_torch.build("pyg", name, x.shape[1], int(y.max()) + 1)
            model.train()
            opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
            run = torch.compile(model) if mode == "compile" else model

            def step() -> None:
                loss = F.cross_entropy(run(ei, x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()

            t0 = time.perf_counter()
            step()  # compiles, for torch.compile
            out[f"{name}-{mode}-first_s"] = time.perf_counter() - t0
            out[f"{name}-{mode}"] = median_ms(step, reps, warmup)
    return out


def nodeweave_worker(data: dict, threads: int, reps: int, warmup: int) -> dict:
    import models_nodeweave
    import nodeweave as nw

    ns = models_nodeweave.namespace("nodeweave-native", threads)
    nc, F = ns.T, ns.F
    g = nw.graph((nc.tensor(data["src"]), nc.tensor(data["dst"])), num_nodes=data["num_nodes"])
    x, y = nc.tensor(data["feat"]), nc.tensor(data["label"])
    out = {}
    for name in MODELS:
        for mode in ("eager", "traced"):
            nc.manual_seed(0)
            model = models_nodeweave.build(ns, name, x.shape[1], int(data["label"].max()) + 1)
            model.train()
            params = list(model.parameters())
            opt = nc.optim.Adam(params, lr=0.01, weight_decay=5e-4)

            def grads(graph, feats, labels):
                loss = F.cross_entropy(model(graph, feats), labels)
                return loss, nc.autograd.grad(loss, params)

            run = nc.jit.trace(grads) if mode == "traced" else grads

            def step() -> None:
                _, gs = run(g, x, y)
                for p, gr in zip(params, gs):
                    p.grad = gr
                opt.step()

            t0 = time.perf_counter()
            step()  # traces, for nc.jit.trace
            out[f"{name}-{mode}-first_s"] = time.perf_counter() - t0
            out[f"{name}-{mode}"] = median_ms(step, reps, warmup)
            if mode == "traced":
                assert run.num_traces == 1, run.num_traces
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--worker", choices=("pyg", "nodeweave"), help=argparse.SUPPRESS)
    p.add_argument("--graph", help=argparse.SUPPRESS)
    args = p.parse_args()
    sys.path.insert(0, str(PEERS))
    import graphs

    if args.worker:
        data = graphs.load(args.graph)
        fn = pyg_worker if args.worker == "pyg" else nodeweave_worker
        print(json.dumps(fn(data, args.threads, args.reps, args.warmup)))
        return
    if not PEERS_PY.exists():
        sys.exit(f"{PEERS_PY} is missing: run `bash bench/peers/setup_peers.sh` first")
    path = graphs.ensure("cora")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads), PYTHONPATH=str(ROOT / "python"))
    res = {}
    for worker, py in (("pyg", PEERS_PY), ("nodeweave", Path(sys.executable))):
        cmd = [str(py), __file__, "--worker", worker, "--graph", str(path), "--threads", str(args.threads),
               "--reps", str(args.reps), "--warmup", str(args.warmup)]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            sys.exit(f"{worker} worker failed:\n{r.stderr[-3000:]}")
        res.update({f"{worker}:{k}": v for k, v in json.loads(r.stdout.strip().splitlines()[-1]).items()})
    print(f"Cora training step, threads {args.threads}, median of {args.reps} after {args.warmup} "
          f"(torch {res['pyg:torch']})")
    print("| model | PyG eager ms | PyG torch.compile ms | nodeweave eager ms | nodeweave traced ms | "
          "traced / PyG compiled | first step s: compile / trace |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for m in MODELS:
        pe, pc = res[f"pyg:{m}-eager"], res[f"pyg:{m}-compile"]
        ne, nt = res[f"nodeweave:{m}-eager"], res[f"nodeweave:{m}-traced"]
        print(f"| {m} | {pe:.2f} | {pc:.2f} | {ne:.2f} | {nt:.2f} | {nt / pc:.2f} | "
              f"{res[f'pyg:{m}-compile-first_s']:.1f} / {res[f'nodeweave:{m}-traced-first_s']:.2f} |")


if __name__ == "__main__":
    main()
