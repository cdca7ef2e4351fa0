"""Elementwise fusion (jit pass ``fuse_elementwise``): the fused-op interpreter against the unfused
program, eager mode, and the other design the issue names, C++ generated for the chain and
compiled at run time; in one run, same threads.

The chain has 8 elementwise ops and no transcendental function, so that memory traffic, not
arithmetic, is what it costs (inputs x, y, m of ``--n`` float32 elements):

    t = x * y + 0.5;  out = relu(t * m - x) * 0.5 + y * t

Unfused, each op reads and writes n-element arrays; the interpreter runs them block by block
(fused_elementwise.h) with the ops' own kernels, so its result equals the unfused program's bit for
bit. The generated C++ is one loop compiled with the system compiler (``cc -O3 -march=native``,
OpenMP over ``--threads``), loaded with ctypes; its compile time is reported too: what a program
would pay for each new chain where it runs.

Run:  .venv/bin/python bench/jit/elementwise_fusion.py [--threads 1] [--n 4194304] [--reps 20]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

import nodeweave.core as nc

C_SOURCE = r"""
#include <omp.h>
void chain(const float* x, const float* y, const float* m, float* out, long n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long i = 0; i < n; ++i) {
    float t = x[i] * y[i] + 0.5f;
    float r = t * m[i] - x[i];
    out[i] = (r > 0.0f ? r : 0.0f) * 0.5f + y[i] * t;
  }
}
"""


def chain(x, y, m):
    t = x * y + 0.5
    return nc.relu(t * m - x) * 0.5 + y * t


def compile_c() -> tuple[ctypes.CDLL, float]:
    d = tempfile.mkdtemp()
    src, lib = os.path.join(d, "chain.c"), os.path.join(d, "chain.so")
    with open(src, "w") as f:
        f.write(C_SOURCE)
    t0 = time.perf_counter()
    subprocess.run(["cc", "-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", src, "-o", lib], check=True)
    compile_s = time.perf_counter() - t0
    so = ctypes.CDLL(lib)
    so.chain.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_long, ctypes.c_int]
    return so, compile_s


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--n", type=int, default=1 << 22)
    p.add_argument("--reps", type=int, default=20)
    args = p.parse_args()
    nc.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(args.n, dtype=np.float32) for _ in range(2)]
    ms = (rng.random(args.n) < 0.5).astype(np.float32) * 2
    x, y, m = (nc.tensor(a) for a in (*xs, ms))

    unfused = nc.jit.trace(chain, disable_passes=("fuse_elementwise",))
    fused = nc.jit.trace(chain)
    want = unfused(x, y, m)
    got = fused(x, y, m)
    assert bool((got == want).all()), "the fused chain differs from the unfused one"
    assert "fused_elementwise" in str(fused.program) and "fused_elementwise" not in str(unfused.program)

    so, compile_s = compile_c()
    out = np.empty(args.n, np.float32)
    ptr = [a.ctypes.data for a in (xs[0], xs[1], ms, out)]
    so.chain(*ptr, args.n, args.threads)
    generated_err = float(np.abs(out - want.numpy()).max())

    variants = {"eager": lambda: chain(x, y, m), "traced, unfused": lambda: unfused(x, y, m),
                "traced, fused (interpreter)": lambda: fused(x, y, m),
                "generated C++ (one loop)": lambda: so.chain(*ptr, args.n, args.threads)}
    times = {k: [] for k in variants}
    for _ in range(args.reps):
        for name, fn in variants.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"8-op elementwise chain over {args.n} float32 elements; threads {args.threads}; "
          f"median of {args.reps}")
    print("| variant | ms | vs traced, unfused |")
    print("|---|---:|---:|")
    for name in variants:
        print(f"| {name} | {1e3 * med[name]:.2f} | {med['traced, unfused'] / med[name]:.2f} |")
    print(f"generated C++: compiled in {1e3 * compile_s:.0f} ms (cc -O3 -march=native); its result "
          f"differs from the ops' by up to {generated_err:.1e} (fused multiply-adds); "
          f"the interpreter's equals the unfused program's bit for bit")


if __name__ == "__main__":
    main()
