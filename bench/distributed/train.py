"""Distributed training benchmark: ``examples/dist/train_sage.py`` under ``mpirun`` with 1, 2 and 4
ranks on one machine. For each rank count it partitions the graph (``examples/dist/partition.py``,
METIS, training nodes balanced), trains ``--runs`` times (seeds 0, 1, ...) and reports

- the test accuracy (median over runs, and min..max) against the 1-rank run's,
- the training time per epoch (median over epochs after the first, and over runs),
- what crossed between ranks per epoch, summed over ranks: the sampling exchange (seeds out,
  sampled edges back), the feature fetch (ids out, rows back), and the all-reduced gradient bytes
  (one copy per rank; a ring all-reduce sends about twice that),
- the HALO of the partition: HALO nodes per part as a share of the nodes the part owns.

Every rank runs one OpenMP thread (``OMP_NUM_THREADS=1``); with more ranks than cores the ranks
share cores (``--oversubscribe``), so epoch times then show the cost of the exchanges, not a speed-up.

Datasets: ``cora`` (data directory; 200 epochs, global batch 32, fanouts 10 10) and ``sbm`` (the
stochastic-block-model graph of examples/sage_minibatch.py, 2^20 nodes unless ``--sbm-nodes``; 5
epochs, batch 1024, fanouts 10 5).

Run:  python bench/distributed/train.py --datasets cora --ranks 1,2,4 --runs 3 [--backend pytorch] [--json out.json]
      python bench/distributed/train.py --datasets sbm --ranks 1,2,4 --runs 1 --sbm-nodes 1048576
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EPOCH = re.compile(r"epoch\s+(\d+)\s+loss \S+\s+val acc \S+\s+train (\d+) ms\s+sent: sampling ([\d.]+) MB, "
                   r"features ([\d.]+) MB, gradients ([\d.]+) MB")


def mpi_env() -> dict:
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1",
                OMPI_MCA_btl="self,vader,tcp", OMPI_MCA_btl_vader_single_copy_mechanism="none")


def halo_share(manifest: Path, k: int) -> float:
    """HALO nodes over owned nodes, summed over the parts."""
    m = json.loads(manifest.read_text())
    owned = sum(m["num_nodes"].values()) if isinstance(m["num_nodes"], dict) else m["num_nodes"]
    local = sum(part["num_nodes"] if isinstance(part["num_nodes"], int) else sum(part["num_nodes"].values())
                for part in m["parts"])
    return (local - owned) / owned


def run(args: argparse.Namespace, dataset: str, k: int, workdir: Path) -> dict:
    parts = workdir / f"{dataset}{k}"
    part_cmd = [sys.executable, str(ROOT / "examples" / "dist" / "partition.py"), "--dataset", dataset,
                "--num-parts", str(k), "--out-dir", str(parts), "--sbm-nodes", str(args.sbm_nodes)]
    if args.data_dir:
        part_cmd += ["--data-dir", args.data_dir]
    subprocess.run(part_cmd, check=True, capture_output=True, text=True)
    manifest = parts / f"{dataset}.json"
    accs, epoch_ms, mb = [], [], []
    for seed in range(args.runs):
        cmd = [shutil.which("mpirun"), "--oversubscribe", "-np", str(k), sys.executable,
               str(ROOT / "examples" / "dist" / "train_sage.py"), "--part-config", str(manifest), "--seed", str(seed),
               "--backend", args.backend]
        if args.epochs:
            cmd += ["--epochs", str(args.epochs)]
        out = subprocess.run(cmd, capture_output=True, text=True, env=mpi_env())
        if out.returncode != 0:
            raise SystemExit(f"train_sage.py failed ({dataset}, {k} ranks, seed {seed}):\n{out.stderr[-3000:]}")
        epochs = [tuple(float(x) for x in m.groups()) for m in EPOCH.finditer(out.stdout)]
        accs.append(float(out.stdout.strip().splitlines()[-1].split()[-1]))
        epoch_ms += [e[1] for e in epochs[1:]] or [e[1] for e in epochs]
        mb += [e[2:] for e in epochs]
        print(f"  {dataset} {k} ranks seed {seed}: test acc {accs[-1]:.4f}", flush=True)
    return {"dataset": dataset, "ranks": k, "runs": args.runs, "acc_median": statistics.median(accs),
            "acc_min": min(accs), "acc_max": max(accs), "epoch_ms": statistics.median(epoch_ms),
            "mb_sampling": statistics.median(m[0] for m in mb), "mb_features": statistics.median(m[1] for m in mb),
            "mb_gradients": statistics.median(m[2] for m in mb), "halo_share": halo_share(manifest, k)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default="cora")
    p.add_argument("--ranks", default="1,2,4")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--epochs", type=int, default=0, help="default: the example's (200 cora, 5 sbm)")
    p.add_argument("--sbm-nodes", type=int, default=1 << 20)
    p.add_argument("--data-dir", default=os.environ.get("NODEWEAVE_DATA_DIR"))
    p.add_argument("--backend", choices=["native", "pytorch"], default="native")
    p.add_argument("--json", default=None)
    args = p.parse_args()
    if shutil.which("mpirun") is None:
        raise SystemExit("mpirun not found: run scripts/setup.sh (it installs Open MPI)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for dataset in args.datasets.split(","):
            for k in (int(x) for x in args.ranks.split(",")):
                rows.append(run(args, dataset, k, Path(tmp)))
    print(f"\n{args.backend} backend; {os.cpu_count()} cores; 1 OpenMP thread per rank; medians over "
          f"{args.runs} run(s)\n")
    print("| graph | ranks | test acc (min..max) | vs 1 rank | epoch (ms) | MB/epoch sampling | features | "
          "gradients | HALO / owned |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        base = next((b for b in rows if b["dataset"] == r["dataset"] and b["ranks"] == 1), None)
        delta = f"{(r['acc_median'] - base['acc_median']) * 100:+.1f} pt" if base else "-"
        print(f"| {r['dataset']} | {r['ranks']} | {r['acc_median']:.4f} ({r['acc_min']:.4f}..{r['acc_max']:.4f}) | "
              f"{delta} | {r['epoch_ms']:.0f} | {r['mb_sampling']:.2f} | {r['mb_features']:.2f} | "
              f"{r['mb_gradients']:.2f} | {r['halo_share']:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
