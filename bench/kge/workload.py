"""The benchmark's shared workload: reading a knowledge graph from the data directory and the
settings both systems train with. Imported by both workers (NumPy only, no nodeweave, no PyKEEN)."""

from __future__ import annotations

import gzip
import os

import numpy as np

SPLITS = ("train", "valid", "test")


def read_kg(name: str) -> dict[str, np.ndarray]:
    """{split: (n, 3) array of (head, relation, tail) names} from $NODEWEAVE_DATA_DIR/kg/<name>/."""
    root = os.environ.get("NODEWEAVE_DATA_DIR")
    if not root:
        raise SystemExit("set NODEWEAVE_DATA_DIR to the dataset directory")
    folder = os.path.join(root, "kg", name) if name in ("FB15k-237", "WN18RR", "WN18") else os.path.join(root, "kg", "small", name)
    out = {}
    for split in SPLITS:
        path = os.path.join(folder, f"{split}.txt")
        opener = gzip.open if not os.path.exists(path) else open
        path = path if os.path.exists(path) else path + ".gz"
        with opener(path, "rt") as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        out[split] = np.array(rows, dtype=object)
    return out
