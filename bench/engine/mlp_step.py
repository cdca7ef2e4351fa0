"""(d) One training step of a 2-layer MLP (batch 4096, 512-256-10: forward, cross-entropy, backward,
SGD step), nodeweave's native engine against PyTorch on the CPU with the same thread count.

Run: .venv/bin/python bench/engine/mlp_step.py [--threads N] [--steps 20]
Prints the median step time of each and the ratio nodeweave/PyTorch (below 1 means nodeweave is faster).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def time_steps(step, steps: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def nodeweave_step(x: np.ndarray, y: np.ndarray, hidden: int, classes: int):
    import nodeweave.core as nc
    from nodeweave.core import nn, optim

    model = nn.Sequential(nn.Linear(x.shape[1], hidden), nn.ReLU(), nn.Linear(hidden, classes))
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xt, yt = nc.tensor(x), nc.tensor(y)

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()

    return step


def torch_step(x: np.ndarray, y: np.ndarray, hidden: int, classes: int):
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(x.shape[1], hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, classes))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=4096)
    args = parser.parse_args()

    import nodeweave.core as nc
    import torch

    if args.threads:
        nc.set_num_threads(args.threads)
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.batch, 512)).astype(np.float32)
    y = rng.integers(0, 10, args.batch).astype(np.int64)
    t_nw = time_steps(nodeweave_step(x, y, 256, 10), args.steps)
    t_pt = time_steps(torch_step(x, y, 256, 10), args.steps)
    print(f"threads: nodeweave {nc.get_num_threads()}, torch {torch.get_num_threads()}")
    print("| MLP 512-256-10, batch %d | nodeweave (ms) | PyTorch (ms) | ratio nodeweave/PyTorch |" % args.batch)
    print("|---|---:|---:|---:|")
    print(f"| training step (fwd + bwd + SGD) | {t_nw * 1e3:.2f} | {t_pt * 1e3:.2f} | {t_nw / t_pt:.2f} |")


if __name__ == "__main__":
    main()
