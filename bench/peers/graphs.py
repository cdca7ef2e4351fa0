"""The benchmark graphs, built once by nodeweave and cached as ``.npz`` files so that every system
(DGL, PyG, both nodeweave backends) loads exactly the same edges, features and labels.

Graphs (as bench/models/epoch_time.py builds them):

- ``cora``, ``citeseer``: nodeweave's Planetoid loaders, ``add_self_loop(remove_self_loop(g))``,
  their own bag-of-words features and labels.
- ``dblp``: nodeweave's DBLPDataset (ProNE's co-authorship graph, 60 classes). It has no node
  features, so it gets 128-dimensional standard normal features (seed 0), like the R-MAT graph; self-
  loops added the same way as for Planetoid.
- ``rmat<S>`` (e.g. ``rmat18``): ``nw.rmat_graph`` with 2^S nodes, 16 * 2^S directed edges,
  (a, b, c, d) = (0.57, 0.19, 0.19, 0.05), seed 0, then self-loops; 128-dimensional standard normal
  features and 16 random classes (numpy ``default_rng(0)``: features first, then labels).

Each cache file holds ``src``, ``dst`` (int64, nodeweave's edge order), ``feat`` (float32),
``label`` (int64), ``num_nodes`` and ``name``. Building needs nodeweave (its extension built);
loading needs only NumPy.

Run:  PYTHONPATH=python python bench/peers/graphs.py --graphs cora,rmat18 [--cache-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

CACHE_DIR = Path(__file__).resolve().parent / ".cache"
# Bump when the way a graph is built changes, so that stale caches are rebuilt.
CACHE_VERSION = 1
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[3] / "shared" / "data"


def display_name(key: str) -> str:
    """Human name of a graph key: ``rmat18`` -> ``R-MAT 2^18``."""
    m = re.fullmatch(r"rmat(\d+)", key)
    if m:
        return f"R-MAT 2^{m.group(1)}"
    return {"cora": "Cora", "citeseer": "Citeseer", "dblp": "DBLP"}.get(key, key)


def cache_path(key: str, cache_dir: Path = CACHE_DIR) -> Path:
    return cache_dir / f"{key}.v{CACHE_VERSION}.npz"


# NumPy is imported inside the functions: run.py imports this module for its names and paths, and
# runs under any python3 (the standard library is enough for the driver).


def _to_numpy(t: Any) -> np.ndarray:
    import numpy as np

    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


def _random_features(n: int, n_classes: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 128), dtype=np.float32)
    y = rng.integers(0, n_classes, n) if n_classes else None
    return x, y


def build(key: str) -> dict[str, Any]:
    """Builds graph ``key`` with nodeweave and returns its arrays (see the module docstring)."""
    import numpy as np

    import nodeweave as nw
    from nodeweave import data

    if key in ("cora", "citeseer"):
        cls = data.CoraGraphDataset if key == "cora" else data.CiteseerGraphDataset
        g = cls()[0]
        g = nw.add_self_loop(nw.remove_self_loop(g))
        feat, label = _to_numpy(g.ndata["feat"]), _to_numpy(g.ndata["label"])
    elif key == "dblp":
        g = data.DBLPDataset()[0]
        g = nw.add_self_loop(nw.remove_self_loop(g))
        label = _to_numpy(g.ndata["label"])
        feat, _ = _random_features(g.num_nodes())
    elif m := re.fullmatch(r"rmat(\d+)", key):
        scale = int(m.group(1))
        n = 1 << scale
        g = nw.rmat_graph(num_edges=16 * n, scale=scale, a=0.57, b=0.19, c=0.19, d=0.05, seed=0)
        g = nw.add_self_loop(g)
        feat, label = _random_features(n, 16)
    else:
        raise ValueError(f"unknown graph {key!r} (choose from cora, citeseer, dblp, rmat<scale>)")
    src, dst = (_to_numpy(t).astype(np.int64) for t in g.edges())
    return {"src": src, "dst": dst, "feat": np.ascontiguousarray(feat, dtype=np.float32),
            "label": np.asarray(label, dtype=np.int64), "num_nodes": np.int64(g.num_nodes()),
            "name": np.str_(display_name(key))}


def ensure(key: str, cache_dir: Path = CACHE_DIR) -> Path:
    """Path of graph ``key``'s cache file, building it first if it is missing."""
    import numpy as np

    path = cache_path(key, cache_dir)
    if path.exists():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    arrays = build(key)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)  # never leave a half-written cache behind
    return path


def load(path: Path | str) -> dict[str, Any]:
    """The arrays of a cache file; ``num_nodes`` as int, ``name`` as str."""
    import numpy as np

    with np.load(path) as z:
        out = {k: z[k] for k in z.files}
    out["num_nodes"] = int(out["num_nodes"])
    out["name"] = str(out["name"])
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graphs", default="cora,citeseer,dblp,rmat18")
    p.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    args = p.parse_args()
    if not os.environ.get("NODEWEAVE_DATA_DIR") and DEFAULT_DATA_DIR.is_dir():
        os.environ["NODEWEAVE_DATA_DIR"] = str(DEFAULT_DATA_DIR)
    for key in args.graphs.split(","):
        path = ensure(key.strip(), args.cache_dir)
        z = load(path)
        print(f"{z['name']}: {z['num_nodes']} nodes, {z['src'].size} edges, "
              f"{z['feat'].shape[1]} features, {int(z['label'].max()) + 1} classes -> {path}", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    main()
