"""Side-by-side benchmark of nodeweave (native and PyTorch backends) against DGL and PyTorch
Geometric on CPU: training epochs of GCN / GAT / GraphSAGE, three message-passing kernels and
user-defined message passing (forward + backward).

Steps: (1) bench/peers/setup_peers.sh makes sure bench/.venv-peers holds torch, DGL and PyG and
writes versions.json; (2) nodeweave builds each graph once into an .npz cache (graphs.py), so every
system sees identical edges, features and labels; (3) worker.py times one system on one graph in
a subprocess with a fixed thread count, one at a time; (4) report.py writes results.md and
results.png. All four systems run in bench/.venv-peers (nodeweave through PYTHONPATH=python, its
extension does not link libtorch), so they share one torch build; if nodeweave does not import
there, the nodeweave workers fall back to the project's .venv and the report says so.

Run:  python bench/peers/run.py [--threads 2] [--reps 3] [--warmup 1]
          [--graphs cora,citeseer,dblp,rmat18] [--systems dgl,pyg,nodeweave-native,nodeweave-pytorch]
          [--out bench/peers/results]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import graphs  # noqa: E402
import report  # noqa: E402

PEERS_PY = ROOT / "bench" / ".venv-peers" / "bin" / "python"
PROJECT_PY = ROOT / ".venv" / "bin" / "python"
SYSTEMS = ("dgl", "pyg", "nodeweave-native", "nodeweave-pytorch")
NODEWEAVE = ("nodeweave-native", "nodeweave-pytorch")


def say(msg: str) -> None:
    print(msg, flush=True)


# --torch-huge-pages sets this for every worker: torch's CPU allocator then places blocks of 2 MiB
# and more on 2 MiB-aligned, huge-page-advised memory (torch's own switch; nodeweave's native
# allocator does this by default). It spares every system a page fault per 4 KiB of each fresh
# large output and a TLB miss per random feature row.
TORCH_THP = "THP_MEM_ALLOC_ENABLE"


def base_env(threads: int) -> dict[str, str]:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    if not env.get("NODEWEAVE_DATA_DIR") and graphs.DEFAULT_DATA_DIR.is_dir():
        env["NODEWEAVE_DATA_DIR"] = str(graphs.DEFAULT_DATA_DIR)
    env.pop("NODEWEAVE_BACKEND", None)
    return env


def nodeweave_env(threads: int, backend: str = "native") -> dict[str, str]:
    env = base_env(threads)
    extra = os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    env["PYTHONPATH"] = str(ROOT / "python") + extra
    env["NODEWEAVE_BACKEND"] = backend
    return env


def last_error(text: str) -> str:
    """The most telling line of a failed child's stderr: its exception line, else its last line."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        head = ln.split(":", 1)[0]
        if head.endswith(("Error", "Exception", "Interrupt")) or head.startswith("PEER NOT"):
            return ln
    return lines[-1] if lines else "no output"


def run_child(cmd: list[str], env: dict[str, str], timeout: float) -> tuple[int, str, str]:
    """Runs ``cmd``, echoing its progress lines (stderr) live; returns (status, stdout, stderr tail).
    A child still running after ``timeout`` seconds is killed (status 124)."""
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)
    tail: deque[str] = deque(maxlen=200)
    out_chunks: list[str] = []

    def pump_stderr() -> None:
        for line in proc.stderr:
            tail.append(line)
            if line.startswith("  "):  # the worker's progress lines (and tracebacks)
                print(line, end="", flush=True)

    readers = [threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()), daemon=True),
               threading.Thread(target=pump_stderr, daemon=True)]
    for t in readers:
        t.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        for t in readers:
            t.join(5)
        tail.append(f"TimeoutError: worker ran past {timeout:.0f} s\n")
        return 124, "", "".join(tail)
    for t in readers:
        t.join()
    return proc.returncode, "".join(out_chunks), "".join(tail)


def setup(args: argparse.Namespace) -> dict[str, Any]:
    """Runs setup_peers.sh (idempotent, seconds when all is installed) and returns versions.json."""
    if args.no_setup:
        if not PEERS_PY.exists():
            say("bench/.venv-peers is missing: run  bash bench/peers/setup_peers.sh  first")
            sys.exit(1)
        subprocess.run([str(PEERS_PY), str(HERE / "check_peers.py")], cwd=ROOT, check=False)
    else:
        say("== setup: bash bench/peers/setup_peers.sh")
        r = subprocess.run(["bash", str(HERE / "setup_peers.sh")], cwd=ROOT)
        if r.returncode != 0 or not PEERS_PY.exists():
            say("setup_peers.sh failed: DGL and PyG cannot run (see above); "
                "nodeweave runs alone in the project .venv if it can")
    path = HERE / "versions.json"
    return json.loads(path.read_text()) if path.exists() else {}


def nodeweave_python(threads: int) -> tuple[str | None, str]:
    """The interpreter that imports nodeweave: the peers venv if possible, else the project .venv."""
    probe = "import nodeweave.core, nodeweave.ops; print(nodeweave.__version__)"
    reasons = []
    for py, label in ((PEERS_PY, "bench/.venv-peers (same torch as DGL and PyG)"),
                      (PROJECT_PY, "the project .venv (FALLBACK: nodeweave did not import in "
                                   "bench/.venv-peers)")):
        if not py.exists():
            reasons.append(f"{py} missing")
            continue
        r = subprocess.run([str(py), "-c", probe], env=nodeweave_env(threads), cwd=ROOT,
                           capture_output=True, text=True)
        if r.returncode == 0:
            return str(py), f"{label}: {py.relative_to(ROOT)}"
        reasons.append(f"{py.relative_to(ROOT)}: {last_error(r.stderr)}")
    return None, "; ".join(reasons)


def build_cache(py: str, keys: list[str], threads: int) -> dict[str, Path]:
    """Builds each graph's cache with nodeweave (skipped when cached); returns those that exist."""
    out = {}
    for key in keys:
        path = graphs.cache_path(key)
        if not path.exists():
            say(f"== building {graphs.display_name(key)} with nodeweave -> {path.relative_to(ROOT)}")
            r = subprocess.run([py, str(HERE / "graphs.py"), "--graphs", key], env=nodeweave_env(threads),
                               cwd=ROOT, capture_output=True, text=True)
            if r.returncode != 0:
                say(f"   could not build {key}, skipping it: {last_error(r.stderr)}")
                continue
            say("   " + r.stdout.strip())
        out[key] = path
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--graphs", default="cora,citeseer,dblp,rmat18")
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--tasks", default="train,kernels", help="train, kernels or both")
    p.add_argument("--models", default="GCN,GAT,GraphSAGE")
    p.add_argument("--dims", default="64", help="kernel feature widths, e.g. 16,64,256")
    p.add_argument("--udf-graphs", default="cora,citeseer,dblp",
                   help="graphs that get the UDF rows (DGL's UDF path gathers per degree bucket and "
                        "needs minutes per call on R-MAT 2^18, whose in-degrees take 511 values)")
    p.add_argument("--out", type=Path, default=HERE / "results")
    p.add_argument("--timeout", type=float, default=3600, help="seconds per worker (one system, one graph)")
    p.add_argument("--no-setup", action="store_true", help="do not run setup_peers.sh")
    p.add_argument("--torch-huge-pages", action="store_true",
                   help=f"set {TORCH_THP}=1 for every system (torch allocates large blocks on huge pages)")
    args = p.parse_args()
    # Every worker's environment starts from this process's: set it (or clear it, so that the
    # default run is torch's default whatever this shell has set) once here.
    if args.torch_huge_pages:
        os.environ[TORCH_THP] = "1"
    else:
        os.environ.pop(TORCH_THP, None)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in systems:
        if s not in SYSTEMS:
            p.error(f"unknown system {s!r} (choose from {', '.join(SYSTEMS)})")
    keys = [g.strip() for g in args.graphs.split(",") if g.strip()]

    load = os.getloadavg()[0]  # before anything of ours runs: others' work skews every timing
    if load > 0.5:
        say(f"WARNING: the machine is busy (1-minute load average {load:.2f}); timings will be noisy")
    versions = setup(args)
    nw_py, nw_where = nodeweave_python(args.threads)
    say(f"== nodeweave runs with {nw_where}" if nw_py else f"== nodeweave does not import: {nw_where}")
    if nw_py is None:
        say("The graph cache is built by nodeweave: build its extension first (python/nodeweave/_C*.so), "
            "or reuse an existing cache in bench/peers/.cache/.")
    cache = build_cache(nw_py, keys, args.threads) if nw_py else \
        {k: graphs.cache_path(k) for k in keys if graphs.cache_path(k).exists()}
    if not cache:
        say("no graph available: nothing to run")
        sys.exit(1)

    unavailable: dict[str, str] = {}
    for s, key in (("dgl", "dgl"), ("pyg", "pyg")):
        info = versions.get(key, {})
        if s in systems and not info.get("ok"):
            unavailable[s] = f"not available: {info.get('error', 'bench/.venv-peers missing')}"
    if nw_py is None:
        for s in NODEWEAVE:
            unavailable[s] = f"not available: nodeweave does not import ({nw_where})"

    runs: list[dict[str, Any]] = []
    names = []
    for key, path in cache.items():
        name = graphs.display_name(key)
        names.append(name)
        for s in systems:
            if s in unavailable:
                runs.append({"system": s, "graph": name, "error": unavailable[s]})
                continue
            py = nw_py if s in NODEWEAVE else str(PEERS_PY)
            env = nodeweave_env(args.threads, "pytorch" if s == "nodeweave-pytorch" else "native") \
                if s in NODEWEAVE else base_env(args.threads)
            cmd = [py, str(HERE / "worker.py"), "--system", s, "--graph", str(path), "--threads",
                   str(args.threads), "--reps", str(args.reps), "--warmup", str(args.warmup), "--tasks",
                   args.tasks, "--models", args.models, "--dims", args.dims]
            if key not in args.udf_graphs.split(","):
                cmd += ["--kernels", "copy_u_sum,u_mul_e_sum,u_dot_v"]
            say(f"== {s} on {name}")
            t0 = time.monotonic()
            code, out, err = run_child(cmd, env, args.timeout)
            result = next((json.loads(ln) for ln in reversed(out.splitlines()) if ln.startswith("{")), None)
            if code == 0 and result is not None:
                runs.append(result)
                say(f"   done in {time.monotonic() - t0:.0f} s")
            else:
                reason = f"not available: {last_error(err)}"
                say(f"   {s} FAILED on {name}: {reason}")
                runs.append({"system": s, "graph": name, "error": reason})
                # A worker that died before timing anything fails the same way on every graph.
                if "records" not in (result or {}) and ("Import" in reason or "NotImplemented" in reason):
                    unavailable[s] = reason

    merged = {"python": versions.get("python"), "torch": versions.get("torch"),
              "dgl": (versions.get("dgl") or {}).get("version"),
              "torch_geometric": (versions.get("pyg") or {}).get("version"),
              "nodeweave": next((r["versions"]["nodeweave"] for r in runs
                                 if "nodeweave" in r.get("versions", {})), None)}
    notes = ["GCN: DGL GraphConv(norm='both') and PyG GCNConv(add_self_loops=False, normalize=True, "
             "cached=False) on graphs that already hold their self-loops; both recompute the degree "
             "normalization on every call, as nodeweave does.",
             "PyG layers run on a plain edge_index (gather + scatter message passing), its default.",
             "PyG sparse.mm: torch.sparse.mm with an int32 CSR adjacency built once; for u_mul_e-sum "
             "the edge weights are permuted into CSR order inside the timed call.",
             "DBLP has no node features: it gets 128-dimensional standard normal ones (seed 0), as "
             "the R-MAT graph does. All graphs hold one self-loop per node."]
    if nw_py and PROJECT_PY.exists() and Path(nw_py) == PROJECT_PY:
        notes.append("nodeweave ran in the project .venv (a different torch than DGL/PyG for the "
                     "pytorch backend), because it did not import in bench/.venv-peers.")
    results = {"threads": args.threads, "reps": args.reps, "warmup": args.warmup, "systems": systems,
               "graphs": names, "cpu": report.cpu_model(), "cores": os.cpu_count(),
               "load_at_start": load, "versions": merged, "torch_huge_pages": args.torch_huge_pages,
               "nodeweave_python": nw_where if nw_py else f"did not import: {nw_where}",
               "notes": notes, "runs": runs}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    # The chart needs matplotlib, which the peers venv has (the driver itself needs only the
    # standard library).
    rep_py = str(PEERS_PY) if PEERS_PY.exists() else sys.executable
    r = subprocess.run([rep_py, str(HERE / "report.py"), str(args.out / "results.json"), "--quiet"],
                       cwd=ROOT)
    if r.returncode != 0:
        say("report.py failed in the peers venv; writing the table without the chart")
        report.write(results, args.out)
    md = args.out / "results.md"
    say("")
    say(md.read_text())
    png = args.out / "results.png"
    say(f"wrote {args.out / 'results.json'}, {md}" + (f", {png}" if png.exists() else " (no chart)"))


if __name__ == "__main__":
    main()
