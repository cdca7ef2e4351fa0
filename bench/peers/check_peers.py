"""Checks which systems import and run in the current interpreter (meant for bench/.venv-peers) and
writes their versions to a JSON file.

Each peer gets a real smoke test, not only an import: DGL runs ``dgl.ops.copy_u_sum`` on a 3-node
graph, PyG runs a ``GCNConv`` forward. A peer that fails is reported plainly on stdout with the
error, and recorded as unavailable; the exit status is 0 unless torch itself is missing.

Run:  bench/.venv-peers/bin/python bench/peers/check_peers.py [--out bench/peers/versions.json]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_torch() -> str | None:
    """None if torch imports and exchanges arrays with NumPy (the workers need both), else why not."""
    try:
        import numpy as np
        import torch

        assert torch.from_numpy(np.arange(3.0)).numpy().tolist() == [0.0, 1.0, 2.0]
        return None
    except BaseException as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"


def check_dgl() -> dict[str, Any]:
    """Imports DGL and sums three messages with dgl.ops.copy_u_sum."""
    try:
        import dgl
        import numpy as np
        import torch

        g = dgl.graph((torch.from_numpy(np.array([0, 1, 2])), torch.tensor([1, 2, 1])), num_nodes=3)
        x = torch.tensor([[1.0], [2.0], [4.0]])
        out = dgl.ops.copy_u_sum(g, x)
        assert out.flatten().tolist() == [0.0, 5.0, 2.0], out
        return {"ok": True, "version": dgl.__version__}
    except BaseException as e:  # noqa: BLE001 - any failure means "not available"
        return {"ok": False, "version": _version("dgl"), "error": f"{type(e).__name__}: {e}"}


def check_pyg() -> dict[str, Any]:
    """Imports PyTorch Geometric and runs a GCNConv forward."""
    try:
        import torch
        import torch_geometric
        from torch_geometric.nn import GCNConv

        edge_index = torch.tensor([[0, 1, 2], [1, 2, 1]])
        out = GCNConv(4, 2)(torch.randn(3, 4), edge_index)
        assert tuple(out.shape) == (3, 2), out.shape
        return {"ok": True, "version": torch_geometric.__version__}
    except BaseException as e:  # noqa: BLE001
        return {"ok": False, "version": _version("torch_geometric"), "error": f"{type(e).__name__}: {e}"}


def check_nodeweave(root: Path) -> dict[str, Any]:
    """Imports nodeweave from <root>/python in a child interpreter (its extension may be missing)."""
    code = ("import nodeweave as nw, nodeweave.core as nc, nodeweave.ops as ops;"
            "g = nw.graph(([0, 1, 2], [1, 2, 1]), num_nodes=3);"
            "print(ops.copy_u_sum(g, nc.ones(3, 2)).numpy().sum())")
    env = dict(os.environ, PYTHONPATH=str(root / "python"))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if r.returncode == 0:
        return {"ok": True}
    err = (r.stderr.strip().splitlines() or ["exit status %d" % r.returncode])[-1]
    return {"ok": False, "error": err}


def main() -> None:
    os.environ.setdefault("DGLBACKEND", "pytorch")  # else DGL prints a notice on first import
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "versions.json")
    args = p.parse_args()

    info: dict[str, Any] = {"python": platform.python_version(), "executable": sys.executable}
    for dist in ("torch", "numpy", "scipy", "matplotlib", "torchdata"):
        info[dist] = _version(dist)
    torch_error = check_torch()
    if torch_error:
        print(f"ERROR: torch does not work in this interpreter, no peer can run: {torch_error}")
        sys.exit(1)
    info["dgl"] = check_dgl()
    info["pyg"] = check_pyg()
    info["nodeweave"] = check_nodeweave(args.root)

    print(f"python {info['python']}, torch {info['torch']}, numpy {info['numpy']}")
    for key, name in (("dgl", "DGL"), ("pyg", "PyG")):
        if info[key]["ok"]:
            print(f"{name} {info[key]['version']}: imports and runs")
        else:
            print(f"PEER NOT AVAILABLE: {name} ({info[key]['version'] or 'not installed'}) "
                  f"cannot be imported or run: {info[key]['error']}")
    if info["nodeweave"]["ok"]:
        print("nodeweave: imports in this venv with PYTHONPATH=python")
    else:
        print(f"nodeweave does not import in this venv (yet): {info['nodeweave']['error']}  "
              "(run.py then falls back to the project .venv)")
    args.out.write_text(json.dumps(info, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
