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

``--sweep`` times the unfused program and the interpreter over sizes from 2^15 to 2^23 elements.
It is where the pass's default threshold comes from (``kFuseMinElements`` in
core_framework/jit/passes/passes.h): a program only fuses chains over at least 2^22 elements, so
the sweep fuses its programs itself, with the threshold lowered (``Program.fuse_elementwise``).

Run:  .venv/bin/python bench/jit/elementwise_fusion.py [--threads 1] [--n 4194304] [--reps 20] [--sweep]
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
from nodeweave import _C

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


def sweep(threads: int) -> None:
    rng = np.random.default_rng(0)
    print(f"8-op elementwise chain; threads {threads}; median of runs totalling about 2^28 elements")
    print("| elements | traced, unfused ms | fused (interpreter) ms | unfused / fused |")
    print("|---:|---:|---:|---:|")
    for log_n in range(15, 24):
        n = 1 << log_n
        x, y = (nc.tensor(rng.standard_normal(n, dtype=np.float32)) for _ in range(2))
        m = nc.tensor((rng.random(n) < 0.5).astype(np.float32) * 2)
        unfused = nc.jit.trace(chain, disable_passes=("fuse_elementwise",))
        want = unfused(x, y, m)
        program = unfused.program.copy()
        program.fuse_elementwise(1024)  # below the default threshold too
        assert "fused_elementwise" in str(program)
        fused = _C._jit.Executor(program)
        (got,) = fused.run([x, y, m], [])
        assert np.array_equal(got.numpy(), want.numpy()), "the fused chain differs from the unfused one"
        plain = _C._jit.Executor(unfused.program.copy())  # both without the Python call around them
        runs = {"unfused": lambda: plain.run([x, y, m], []), "fused": lambda: fused.run([x, y, m], [])}
        times = {k: [] for k in runs}
        for _ in range(max(20, min(2000, (1 << 28) // n))):
            for k, fn in runs.items():
                t0 = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t0)
        u, f = (statistics.median(times[k]) for k in ("unfused", "fused"))
        print(f"| 2^{log_n} | {1e3 * u:.3f} | {1e3 * f:.3f} | {u / f:.2f} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--n", type=int, default=1 << 22)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--sweep", action="store_true", help="unfused against fused over sizes 2^15..2^23")
    args = p.parse_args()
    nc.set_num_threads(args.threads)
    if args.sweep:
        sweep(args.threads)
        return
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
