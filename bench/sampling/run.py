"""Sampling benchmark driver: nodeweave against DGL on the same graphs, thread counts and seeds,
each system in a child process of ``bench/.venv-peers/bin/python`` (bench/sampling/worker.py).

Prints a Markdown table per task:
- ``sample``: sampled edges per second (median of ``--reps``) of nodeweave's ``NeighborSampler.sample``
  and ``DataLoader`` against DGL's ``sample_neighbors`` + ``to_block`` loop and DGL's ``DataLoader``,
  for fanouts [15, 10, 5] and [25, 10], batch 1024, uniform and weighted; the ratio nodeweave / DGL
  (above 1: nodeweave samples faster), and nodeweave's weighted / uniform time;
- ``epoch``: one mini-batch GraphSAGE epoch (worker.py's docstring), nodeweave on both backends / DGL
  (below 1: nodeweave faster);
plus each run's peak resident memory.

Graphs: ``bench/peers/graphs.py`` caches (``rmat20``: R-MAT 2^20 nodes, 16 * 2^20 edges plus self-loops,
a/b/c/d = .57/.19/.19/.05, seed 0; ``dblp``: DBLP co-authorship, 51,264 nodes).
PyG's ``NeighborLoader`` is not timed: its sampling backends (``pyg-lib``, ``torch-sparse``) are not on
PyPI as wheels for this torch (pyg-lib is published only on PyG's own index, torch-sparse only as
a source package), and this project installs from PyPI only.

Run:  python3 bench/sampling/run.py --graphs rmat20,dblp --threads 1,2 [--tasks sample,epoch] [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PEERS_PY = ROOT / "bench" / ".venv-peers" / "bin" / "python"
sys.path.insert(0, str(ROOT / "bench" / "peers"))

import graphs as peer_graphs  # noqa: E402


def run_worker(system: str, graph: Path, task: str, threads: int, extra: list[str]) -> dict | None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    cmd = [str(PEERS_PY), str(HERE / "worker.py"), "--system", system, "--graph", str(graph), "--task", task,
           "--threads", str(threads), *extra]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"  {system} failed:\n{p.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


EPOCH_ROWS = [("nodeweave-native", "nodeweave-native", []),
              ("nodeweave-native, num_workers=0", "nodeweave-native", ["--workers", "0"]),
              ("nodeweave-pytorch", "nodeweave-pytorch", []),
              ("nodeweave-pytorch, num_workers=0", "nodeweave-pytorch", ["--workers", "0"]),
              ("dgl", "dgl", [])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="rmat20,dblp")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--tasks", default="sample,epoch")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--batches", type=int, default=50,
                    help="batches per timed run (20 made runs of 30 ms, within the machine's noise)")
    ap.add_argument("--out", default=str(HERE / "results"), help="where the JSON records go")
    args = ap.parse_args()
    if not PEERS_PY.exists():
        sys.exit(f"{PEERS_PY} is missing: run bash bench/peers/setup_peers.sh first")
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    records = []
    for key in args.graphs.split(","):
        path = peer_graphs.cache_path(key)
        if not path.exists():  # built once by nodeweave in the project's venv (needs NumPy)
            subprocess.run([str(ROOT / ".venv" / "bin" / "python"), str(ROOT / "bench" / "peers" / "graphs.py"),
                            "--graphs", key], env=dict(os.environ, PYTHONPATH=str(ROOT / "python")), check=True)
        for threads in [int(t) for t in args.threads.split(",")]:
            if "sample" in args.tasks:
                res = {s: run_worker(s, path, "sample", threads, ["--reps", str(args.reps), "--batches", str(args.batches)])
                       for s in ("nodeweave", "nodeweave-loader", "dgl", "dgl-loader")}
                records.append({"task": "sample", "graph": key, "threads": threads, "results": res})
                print(f"\n### sampled edges per second, {peer_graphs.display_name(key)}, {threads} thread(s)\n")
                print("| fanouts | weighted | nodeweave | DGL sample_neighbors+to_block | ratio | nodeweave DataLoader "
                      "| DGL DataLoader | ratio | nodeweave weighted/uniform time |")
                print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
                if all(res.values()):
                    rows = zip(*(res[s]["results"] for s in ("nodeweave", "dgl", "nodeweave-loader", "dgl-loader")))
                    uniform_time = {}
                    for nw_r, dgl_r, nwl_r, dgll_r in rows:
                        f = tuple(nw_r["fanouts"])
                        if not nw_r["weighted"]:
                            uniform_time[f] = nw_r["median_s"]
                        wu = f"{nw_r['median_s'] / uniform_time[f]:.2f}" if nw_r["weighted"] else ""
                        print(f"| {list(f)} | {'yes' if nw_r['weighted'] else 'no'} | {nw_r['edges_per_s'] / 1e6:.2f} M "
                              f"| {dgl_r['edges_per_s'] / 1e6:.2f} M | {nw_r['edges_per_s'] / dgl_r['edges_per_s']:.2f} "
                              f"| {nwl_r['edges_per_s'] / 1e6:.2f} M | {dgll_r['edges_per_s'] / 1e6:.2f} M "
                              f"| {nwl_r['edges_per_s'] / dgll_r['edges_per_s']:.2f} | {wu} |")
                mem = {s: r["peak_rss_mb"] for s, r in res.items() if r}
                print("\npeak RSS (MB: after loading the graph -> end): " +
                      ", ".join(f"{s} {m['graph_loaded']:.0f} -> {m['end']:.0f}" for s, m in mem.items()))
            if "epoch" in args.tasks:
                # The DataLoader's default samples on one background thread when a core is spare
                # (at 1 thread here); the num_workers=0 row samples in the training thread, as DGL's
                # num_workers=0 does: the same cores as DGL.
                res = {label: run_worker(system, path, "epoch", threads, ["--reps", str(args.reps), *extra])
                       for label, system, extra in EPOCH_ROWS}
                records.append({"task": "epoch", "graph": key, "threads": threads, "results": res})
                print(f"\n### mini-batch GraphSAGE epoch, {peer_graphs.display_name(key)}, {threads} thread(s)\n")
                print("| system | epoch (s) | / DGL | peak RSS (MB) |")
                print("|---|---:|---:|---:|")
                dgl_t = res["dgl"]["epoch"]["median_s"] if res.get("dgl") else None
                for s, r in res.items():
                    if r:
                        t = r["epoch"]["median_s"]
                        ratio = f"{t / dgl_t:.2f}" if dgl_t else "n/a"
                        print(f"| {s} | {t:.2f} | {ratio} | {r['peak_rss_mb']['end']:.0f} |")
            sys.stdout.flush()
    (out_dir / "latest.json").write_text(json.dumps(records, indent=1))
    print(f"\nrecords written to {out_dir / 'latest.json'}")


if __name__ == "__main__":
    main()
