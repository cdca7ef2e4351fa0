"""(a) Eager overhead per small op from Python: add of two 16-element float32 tensors, with and
without requires_grad, nodeweave next to PyTorch in the same run (same thread count).

Run: .venv/bin/python bench/engine/eager_overhead.py [--threads N]
Prints the median over repetitions of the mean time per call.
"""

from __future__ import annotations

import argparse
import statistics
import timeit


def per_call_us(fn, number: int, repeat: int) -> float:
    fn()
    times = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=None, help="thread count for both libraries")
    parser.add_argument("--number", type=int, default=100_000, help="calls per timing")
    parser.add_argument("--repeat", type=int, default=7, help="timings (the median is reported)")
    args = parser.parse_args()

    import nodeweave.core as nc

    try:
        import torch
    except ImportError:
        torch = None
        print("PyTorch is not installed: printing nodeweave figures only")
    if args.threads:
        nc.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)

    rows = []
    for requires_grad in (False, True):
        a = nc.randn(16, requires_grad=requires_grad)
        b = nc.randn(16)
        nw = per_call_us(lambda: a + b, args.number, args.repeat)
        pt = None
        if torch is not None:
            ta = torch.randn(16, requires_grad=requires_grad)
            tb = torch.randn(16)
            pt = per_call_us(lambda: ta + tb, args.number, args.repeat)
        rows.append((requires_grad, nw, pt))

    print(f"threads: nodeweave {nc.get_num_threads()}" + (f", torch {torch.get_num_threads()}" if torch else ""))
    print("| op | requires_grad | nodeweave (us) | PyTorch (us) | ratio nodeweave/PyTorch |")
    print("|---|---|---:|---:|---:|")
    for rg, nw, pt in rows:
        ratio = f"{nw / pt:.2f}" if pt else "n/a"
        pts = f"{pt:.2f}" if pt else "n/a"
        print(f"| add 16 x f32 | {rg} | {nw:.2f} | {pts} | {ratio} |")


if __name__ == "__main__":
    main()
