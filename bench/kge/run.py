"""KGE benchmark: nodeweave's C++ trainer and ranker against PyKEEN (from PyPI, in its own venv
bench/.venv-pykeen), same model, dimension, batch, negatives, learning rate, optimizer (Adagrad),
self-adversarial loss and threads, on FB15k-237 from the data directory.

Per model and thread count it prints training triples per second, the filtered validation MRR after
the same number of epochs, and test triples ranked per second in filtered evaluation (heads and
tails against every entity), with nodeweave / PyKEEN ratios. Each system runs in its own process.

    python3 bench/kge/run.py --models TransE,DistMult,ComplEx,RotatE --threads 1,2 --epochs 1

Setup of the PyKEEN venv (once): python3 -m venv bench/.venv-pykeen &&
bench/.venv-pykeen/bin/pip install torch==2.2.1 pykeen
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PYTHON = {"nodeweave": ROOT / ".venv" / "bin" / "python", "pykeen": ROOT / "bench" / ".venv-pykeen" / "bin" / "python"}


def run(system: str, args: list[str]) -> dict:
    py = PYTHON[system]
    if not py.exists():
        raise SystemExit(f"{py} is missing: see this script's docstring for the setup")
    worker = HERE / f"{system}_worker.py"
    env = dict(os.environ, OMP_NUM_THREADS=args[args.index("--threads") + 1])
    out = subprocess.run([str(py), str(worker), *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{system} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="FB15k-237")
    p.add_argument("--models", default="TransE,DistMult,ComplEx,RotatE")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--dim", type=int, default=200)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--neg", type=int, default=64)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--valid", type=int, default=2000)
    p.add_argument("--test", type=int, default=1000)
    a = p.parse_args()
    print(f"{a.dataset}, dim {a.dim}, batch {a.batch}, {a.neg} negatives, {a.epochs} epoch(s), Adagrad lr {a.lr}; "
          f"valid MRR over the first {a.valid} validation triples, ranking speed over {a.test} test triples\n")
    print("| model | threads | train triples/s nodeweave | PyKEEN | ratio | valid MRR nodeweave | PyKEEN "
          "| ranked triples/s nodeweave | PyKEEN | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    records = []
    for threads in a.threads.split(","):
        for model in a.models.split(","):
            args = ["--dataset", a.dataset, "--model", model, "--dim", str(a.dim), "--batch", str(a.batch),
                    "--neg", str(a.neg), "--epochs", str(a.epochs), "--lr", str(a.lr), "--threads", threads,
                    "--valid", str(a.valid), "--test", str(a.test)]
            nw, pk = run("nodeweave", args), run("pykeen", args)
            records += [nw, pk]
            print(f"| {model} | {threads} | {nw['train_triples_per_s']:,.0f} | {pk['train_triples_per_s']:,.0f} | "
                  f"{nw['train_triples_per_s'] / pk['train_triples_per_s']:.1f} | {nw['valid_mrr']:.4f} | "
                  f"{pk['valid_mrr']:.4f} | {nw['eval_triples_per_s']:,.0f} | {pk['eval_triples_per_s']:,.0f} | "
                  f"{nw['eval_triples_per_s'] / pk['eval_triples_per_s']:.1f} |", flush=True)
    out = HERE / "results" / "latest.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(records, indent=1) + "\n")
    print(f"\nrecords written to {out}")


if __name__ == "__main__":
    sys.exit(main())
