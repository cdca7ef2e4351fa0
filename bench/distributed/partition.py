"""Partitioning benchmark: nodeweave's ``partition_graph`` (METIS, then the HALO parts with their
features written to disk) against Debian's ``gpmetis`` (METIS alone, as a subprocess) on the same
graphs, the same number of parts and the same METIS options (k-way, edge cut, seed 0).

Graphs: ``bench/peers/graphs.py`` caches, as the sampling benchmarks use them:
- ``rmat20``: R-MAT with 2^20 nodes and 16 * 2^20 edges, (a, b, c, d) = (0.57, 0.19, 0.19, 0.05),
  seed 0, plus one self-loop per node; 128 float32 standard-normal features and a label per node;
- ``dblp``: DBLP co-authorship from the data directory (51,264 nodes, both directions of each
  edge), self-loops added, 128 random float32 features and the labels;
- ``rmat<S>`` for any S, the same recipe at 2^S nodes (smaller ones for a quick check).

For each graph the METIS input file (the symmetrized graph, SciPy) is written once beside the cache
(not timed). ``gpmetis`` is timed from start to exit (reading the file, partitioning, writing the
part file), its peak resident memory from ``wait4``. nodeweave runs in a fresh child process that
loads the cached arrays and builds the graph (not timed), then times ``partition_graph`` and
measures the memory it adds at its peak (``PeakMemory``: VmHWM reset at the start). The table
gives both (wall and CPU time: CPU time is what a loaded machine changes least), the wall-time
ratio (target: nodeweave <= 1.2x gpmetis) and both edge cuts (equal: the same METIS call on the
same adjacency).

Run:  python bench/distributed/partition.py --graphs rmat20,dblp --parts 4 [--reps 1] [--cache-dir DIR] [--json out.json]
(rmat20 needs about 6 GiB of memory and a few minutes; DBLP seconds.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bench" / "peers"))

import graphs as peer_graphs  # noqa: E402


def metis_file(cache: Path) -> Path:
    """The METIS graph file of a cached graph (symmetric, no self-loops, 1-based), written once."""
    import numpy as np
    import scipy.sparse as sp

    path = cache.with_suffix(".metis")
    if path.exists():
        return path
    z = peer_graphs.load(cache)
    n = z["num_nodes"]
    a = sp.csr_matrix((np.ones(len(z["src"]), np.float32), (z["src"], z["dst"])), shape=(n, n))
    a = (a + a.T).tocoo()
    keep = a.row != a.col
    a = sp.csr_matrix((np.ones(int(keep.sum()), np.float32), (a.row[keep], a.col[keep])), shape=(n, n))
    a.sum_duplicates()
    a.sort_indices()
    tmp = path.with_suffix(".metis.tmp")
    with open(tmp, "w") as f:
        f.write(f"{n} {a.nnz // 2}\n")
        ind = (a.indices + 1).astype(str)
        ptr = a.indptr
        for v in range(n):
            f.write(" ".join(ind[ptr[v]:ptr[v + 1]]))
            f.write("\n")
    os.replace(tmp, path)
    return path


def _vm_hwm_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_gpmetis(path: Path, k: int, seed: int) -> dict:
    """gpmetis' wall and CPU time, and its peak resident memory. The peak is polled from /proc
    (VmHWM, every 5 ms): rusage's ru_maxrss of a child counts the memory of this process at the
    fork, before gpmetis replaced it."""
    gp = shutil.which("gpmetis")
    if gp is None:
        raise SystemExit("gpmetis not found: install Debian's 'metis' package (scripts/setup.sh does)")
    with tempfile.TemporaryFile("w+") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen([gp, "-ptype=kway", "-objtype=cut", f"-seed={seed}", str(path), str(k)],
                                stdout=log, stderr=subprocess.STDOUT)
        peak = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _vm_hwm_kib(proc.pid))
            time.sleep(0.005)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        out = log.read()
    if proc.returncode != 0:
        raise SystemExit(f"gpmetis failed:\n{out}")
    cut = int(re.search(r"Edgecut: (\d+)", out).group(1))
    io_s = float(re.search(r"I/O:\s+([\d.]+)", out).group(1))
    part_s = float(re.search(r"Partitioning:\s+([\d.]+)", out).group(1))
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mib": peak / 1024,
            "edge_cut": cut, "io_s": io_s, "metis_s": part_s}


def run_nodeweave(cache: Path, k: int, seed: int) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python")] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    site = ["-S"] if sys.flags.no_site else []
    p = subprocess.run([sys.executable, *site, __file__, "--child", str(cache), "--parts", str(k), "--seed", str(seed)],
                       env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"nodeweave child failed:\n{p.stderr[-3000:]}")
    lines = p.stdout.strip().splitlines()
    print("   ", lines[0], flush=True)   # partition_graph's own report (phases, memory)
    res = json.loads(lines[-1])
    phases = re.search(r"assign ([\d.]+), relabel\+halo ([\d.]+), write ([\d.]+)", lines[0])
    res["assign_s"], res["halo_s"], res["write_s"] = map(float, phases.groups())
    return res


def child(cache: Path, k: int, seed: int) -> None:
    """Builds the graph, then times partition_graph alone; prints its report and a JSON line."""
    import numpy as np

    import nodeweave as nw
    from nodeweave.distributed import partition_graph
    from nodeweave.distributed.partition import graph_nbytes
    from nodeweave.distributed.peak_memory import PeakMemory

    z = peer_graphs.load(cache)
    g = nw.graph((z["src"], z["dst"]), num_nodes=z["num_nodes"])
    B = nw.backend.current()
    g.ndata["feat"] = B.from_numpy(z["feat"])
    g.ndata["label"] = B.from_numpy(z["label"])
    del z
    out = tempfile.mkdtemp(prefix="nw-partition-bench-")
    try:
        with PeakMemory() as mem:
            t0, c0 = time.perf_counter(), time.process_time()
            partition_graph(g, k, out, graph_name="bench", seed=seed, verbose=True)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        m = json.loads(Path(out, "bench.json").read_text())
        disk = sum(f["size"] for part in m["parts"] for f in part["files"].values())
    finally:
        shutil.rmtree(out, ignore_errors=True)
    import resource

    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "growth_mib": mem.growth / 2**20, "graph_mib": graph_nbytes(g) / 2**20,
                      "process_peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "edge_cut": m["metis_objective_value"], "written_mib": disk / 2**20,
                      "nodes": g.num_nodes(), "edges": g.num_edges()}))


def median_run(runs: list[dict]) -> dict:
    """The run of median wall time (its other figures with it)."""
    return sorted(runs, key=lambda r: r["wall_s"])[len(runs) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="rmat20,dblp")
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reps", type=int, default=1,
                    help="runs of each, alternating; the medians are reported (keep 1 for rmat20)")
    ap.add_argument("--cache-dir", type=Path, default=peer_graphs.CACHE_DIR)
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.parts, args.seed)
        return
    if not os.environ.get("NODEWEAVE_DATA_DIR") and peer_graphs.DEFAULT_DATA_DIR.is_dir():
        os.environ["NODEWEAVE_DATA_DIR"] = str(peer_graphs.DEFAULT_DATA_DIR)
    rows = []
    for key in args.graphs.split(","):
        cache = peer_graphs.ensure(key.strip(), args.cache_dir)
        print(f"{peer_graphs.display_name(key)}: METIS file ...", flush=True)
        mf = metis_file(cache)
        gps, nws = [], []
        for _ in range(args.reps):  # alternating, so that a change of the machine's load hits both
            print(f"  gpmetis ({args.parts} parts) ...", flush=True)
            gps.append(run_gpmetis(mf, args.parts, args.seed))
            print(f"  nodeweave partition_graph ({args.parts} parts) ...", flush=True)
            nws.append(run_nodeweave(cache, args.parts, args.seed))
        gp, nwr = median_run(gps), median_run(nws)
        rows.append({"graph": peer_graphs.display_name(key), "parts": args.parts, "gpmetis": gp, "nodeweave": nwr})
    print()
    print("| graph | nodes | edges | gpmetis s (I/O + METIS) | gpmetis CPU s | gpmetis peak MiB "
          "| nodeweave s (METIS + halo + write) | nodeweave CPU s | time ratio | nodeweave added MiB (x graph) "
          "| graph MiB | written MiB | edge cut gpmetis / nodeweave |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        gp, nwr = r["gpmetis"], r["nodeweave"]
        print(f"| {r['graph']} | {nwr['nodes']:,} | {nwr['edges']:,} | {gp['wall_s']:.2f} ({gp['io_s']:.2f} + "
              f"{gp['metis_s']:.2f}) | {gp['cpu_s']:.2f} | {gp['peak_mib']:.0f} | {nwr['wall_s']:.2f} ({nwr['assign_s']:.2f} + "
              f"{nwr['halo_s']:.2f} + {nwr['write_s']:.2f}) | {nwr['cpu_s']:.2f} | {nwr['wall_s'] / gp['wall_s']:.2f} | "
              f"{nwr['growth_mib']:.0f} ({nwr['growth_mib'] / nwr['graph_mib']:.2f}x) | {nwr['graph_mib']:.0f} | "
              f"{nwr['written_mib']:.0f} | {gp['edge_cut']:,} / {nwr['edge_cut']:,} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
