"""KGE accuracy runs: filtered test MRR and Hits@10 of TransE, DistMult, ComplEx and RotatE on
FB15k-237 and WN18RR, trained by the ``nodeweave-kge`` command line, against LibKGE's published MRR
(Ruffinelli et al., ICLR 2020, "You CAN teach an old dog new tricks!").

Each row is one ``nodeweave-kge train ... --valid --test`` command, printed before it runs, at one
thread (so the run is bit-reproducible) with a step budget sized for this 2-core machine. The
validation MRR every ``--eval-interval`` steps is kept as the trend. Results go to
``results/accuracy.{json,md}``.

    python3 bench/kge/accuracy.py                    # every row, two at a time (one thread each)
    python3 bench/kge/accuracy.py --only FB15k-237:TransE --jobs 1

The settings follow the published negative-sampling recipes (DGL-KE's and RotatE's: shared
negatives, self-adversarial weighting, N3 regularization for the bilinear models), with Adagrad.
LibKGE's best DistMult and ComplEx figures come from 1vsAll / KvsAll training with dropout, which
the negative-sampling engine does not do; the table says what these rows reach in their budget.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CLI = ROOT / ".venv" / "bin" / "nodeweave-kge"

# LibKGE's published filtered test MRR (the targets).
LIBKGE = {
    ("FB15k-237", "TransE"): 0.313, ("FB15k-237", "DistMult"): 0.343,
    ("FB15k-237", "ComplEx"): 0.348, ("FB15k-237", "RotatE"): 0.333,
    ("WN18RR", "TransE"): 0.228, ("WN18RR", "DistMult"): 0.452,
    ("WN18RR", "ComplEx"): 0.475, ("WN18RR", "RotatE"): 0.478,
}

# (dataset, model) -> nodeweave-kge train options.
ROWS: dict[tuple[str, str], list[str]] = {
    ("FB15k-237", "TransE"): "--model TransE_l2 --hidden-dim 400 --gamma 9 --lr 0.1 --batch-size 1024 "
                             "--neg-sample-size 256 --max-step 20000 --eval-interval 5000".split(),
    ("FB15k-237", "DistMult"): "--model DistMult --hidden-dim 400 --lr 0.1 --regularization-coef 1e-5 "
                               "--batch-size 1024 --neg-sample-size 1024 --max-step 12000 "
                               "--eval-interval 3000".split(),
    ("FB15k-237", "ComplEx"): "--model ComplEx --hidden-dim 200 --lr 0.1 --regularization-coef 1e-5 "
                              "--batch-size 1024 --neg-sample-size 1024 --max-step 12000 "
                              "--eval-interval 3000".split(),
    ("FB15k-237", "RotatE"): "--model RotatE --hidden-dim 400 --gamma 9 --lr 0.05 --batch-size 1024 "
                             "--neg-sample-size 256 --max-step 7000 --eval-interval 3500".split(),
    ("WN18RR", "TransE"): "--model TransE_l1 --hidden-dim 500 --gamma 6 --adversarial-temperature 0.5 "
                          "--lr 0.05 --batch-size 512 --neg-sample-size 1024 --max-step 8000 "
                          "--eval-interval 2000".split(),
    ("WN18RR", "DistMult"): "--model DistMult --hidden-dim 500 --lr 0.1 --regularization-coef 5e-6 "
                            "--batch-size 512 --neg-sample-size 1024 --max-step 8000 "
                            "--eval-interval 2000".split(),
    ("WN18RR", "ComplEx"): "--model ComplEx --hidden-dim 500 --lr 0.1 --regularization-coef 5e-6 "
                           "--batch-size 512 --neg-sample-size 1024 --max-step 8000 "
                           "--eval-interval 2000".split(),
    ("WN18RR", "RotatE"): "--model RotatE --hidden-dim 250 --gamma 6 --adversarial-temperature 0.5 "
                          "--lr 0.05 --batch-size 512 --neg-sample-size 256 --max-step 10000 "
                          "--eval-interval 2500".split(),
}

_VALID = re.compile(r"step (\d+): valid MRR ([0-9.]+)")


def command(dataset: str, options: list[str], save_path: Path, threads: int) -> list[str]:
    return [str(CLI), "train", "--dataset", dataset, *options, "--num-threads", str(threads), "--valid",
            "--test", "--save-path", str(save_path), "--no-progress"]


def run_row(key: tuple[str, str], out_dir: Path, threads: int) -> dict:
    dataset, model = key
    save = out_dir / f"{dataset}_{model}"
    cmd = command(dataset, ROWS[key], save, threads)
    shown = " ".join(shlex.quote(c) for c in ["nodeweave-kge", *cmd[1:]])
    print(f"[{dataset} {model}] {shown}", flush=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{dataset} {model} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    metrics = json.loads((save / "metrics.json").read_text())
    trend = [(int(s), float(m)) for s, m in _VALID.findall(proc.stderr)]
    steps = metrics["step"]
    batch = int(ROWS[key][ROWS[key].index("--batch-size") + 1])
    rec = {"dataset": dataset, "model": model, "command": shown, "threads": threads, "steps": steps,
           "batch_size": batch, "wall_s": round(wall, 1), "test": metrics["test"], "valid_trend": trend,
           "libkge_mrr": LIBKGE[key]}
    print(f"[{dataset} {model}] test MRR {metrics['test']['MRR']:.4f} Hits@10 {metrics['test']['Hits@10']:.4f} "
          f"(LibKGE {LIBKGE[key]:.3f}) in {wall / 60:.1f} min; valid trend {trend}", flush=True)
    return rec


def table(records: list[dict], train_sizes: dict[str, int]) -> str:
    lines = ["| dataset | model | steps (epochs) | wall, 1 thread | test MRR | Hits@10 | LibKGE MRR | gap "
             "| valid MRR by step |", "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in records:
        epochs = r["steps"] * r["batch_size"] / train_sizes[r["dataset"]]
        trend = ", ".join(f"{s / 1000:g}k: {m:.3f}" for s, m in r["valid_trend"])
        gap = r["test"]["MRR"] - r["libkge_mrr"]
        lines.append(f"| {r['dataset']} | {r['model']} | {r['steps']:,} ({epochs:.0f}) | {r['wall_s'] / 60:.1f} min "
                     f"| {r['test']['MRR']:.3f} | {r['test']['Hits@10']:.3f} | {r['libkge_mrr']:.3f} "
                     f"| {gap:+.3f} | {trend} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default="", help="comma-separated DATASET:MODEL rows (default: all)")
    p.add_argument("--jobs", type=int, default=2, help="rows run at once, one thread each")
    p.add_argument("--report", action="store_true", help="only rewrite results/accuracy.md from accuracy.json")
    p.add_argument("--out", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "nodeweave-kge-accuracy"),
                   help="where the trained models go")
    a = p.parse_args()
    res = HERE / "results"
    sizes = {"FB15k-237": 272_115, "WN18RR": 86_835}
    if a.report:
        (res / "accuracy.md").write_text(table(json.loads((res / "accuracy.json").read_text()), sizes))
        sys.stdout.write((res / "accuracy.md").read_text())
        return
    if not CLI.exists():
        raise SystemExit(f"{CLI} is missing: run `bash scripts/setup.sh` first")
    keys = list(ROWS)
    if a.only:
        wanted = [tuple(s.split(":")) for s in a.only.split(",")]
        unknown = [w for w in wanted if w not in ROWS]
        if unknown:
            raise SystemExit(f"--only: unknown rows {unknown}; known: {[':'.join(k) for k in ROWS]}")
        keys = wanted
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        records = list(pool.map(lambda k: run_row(k, out, 1), keys))
    old = json.loads((res / "accuracy.json").read_text()) if (res / "accuracy.json").exists() else []
    merged = {(r["dataset"], r["model"]): r for r in old}
    merged.update({(r["dataset"], r["model"]): r for r in records})
    ordered = [merged[k] for k in ROWS if k in merged]
    (res / "accuracy.json").write_text(json.dumps(ordered, indent=1) + "\n")
    (res / "accuracy.md").write_text(table(ordered, sizes))
    sys.stdout.write("\n" + table(ordered, sizes))


if __name__ == "__main__":
    main()
