"""The examples run end to end in a short mode and learn far better than chance."""

import os
import re
import subprocess
import sys

import pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_example(name: str, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    out = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args], env=env, check=True,
                         capture_output=True, text=True, timeout=600)
    return out.stdout


def test_mlp_demo_learns_the_spirals():
    out = run_example("mlp_synthetic.py", "--epochs", "150", "--points", "300")
    last = out.strip().splitlines()[-1]
    m = re.fullmatch(r"Test accuracy: (\d\.\d{4})", last)
    assert m, f"last line was {last!r}"
    assert float(m.group(1)) > 0.8  # three classes: chance is 0.33


def last_accuracy(out: str) -> float:
    last = out.strip().splitlines()[-1]
    m = re.fullmatch(r"Test accuracy: (\d\.\d{4})( ± \d\.\d{4})?", last)
    assert m, f"last line was {last!r}"
    return float(m.group(1))


@pytest.mark.parametrize("script,args,floor", [
    ("gcn.py", ["--dataset", "cora", "--epochs", "60"], 0.70),
    ("gcn.py", ["--dataset", "citeseer", "--epochs", "60"], 0.55),
    ("gat.py", ["--dataset", "cora", "--epochs", "40"], 0.65),
    ("sage.py", ["--dataset", "cora", "--epochs", "60"], 0.65),
    ("appnp.py", ["--dataset", "cora", "--epochs", "60"], 0.70),
    ("sgc.py", ["--dataset", "cora", "--epochs", "40"], 0.70),
    # AIFB: 4 classes, the largest holds 42% of the 36 test people.
    ("rgcn.py", ["--epochs", "30"], 0.75),
    # MUTAG: 2 classes, 66% of graphs in the larger one; two folds keep it short.
    ("gin.py", ["--dataset", "MUTAG", "--epochs", "40", "--run-folds", "2"], 0.75),
])
def test_examples_learn_in_short_mode(script, args, floor):
    # Chance on Cora (7 classes) is about 0.3 for the majority class; Citeseer (6 classes) about 0.2.
    out = run_example(script, *args, "--quiet")
    assert last_accuracy(out) > floor


def test_example_runs_several_seeds_and_plots(tmp_path):
    png = tmp_path / "curves.png"
    out = run_example("gcn.py", "--epochs", "20", "--runs", "2", "--quiet", "--plot", str(png))
    assert "seed 0: test accuracy" in out and "seed 1: test accuracy" in out
    assert "±" in out.strip().splitlines()[-1]
    assert png.stat().st_size > 1000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
