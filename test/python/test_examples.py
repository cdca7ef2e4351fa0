"""The examples run end to end in a short mode and learn far better than chance."""

import os
import re
import subprocess
import sys
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
