"""Crash-safe files for long training runs.

:func:`atomic_write` (nodeweave's one atomic writer, from :mod:`nodeweave._binfile`) writes a
temporary file beside the target, flushes it to disk, renames it over the target and syncs the
directory: after a crash or ``kill -9`` the target holds either the old or the new contents, never
a mix. A training checkpoint (``checkpoint.npz``) holds the tables, the
optimizer state, the step count and the loss history, and the configuration it was made with, so
``--resume`` can refuse a checkpoint of another model or dataset.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any

import numpy as np

from nodeweave import errors as nwerr
from nodeweave._binfile import atomic_write

__all__ = ["atomic_write", "save_checkpoint", "load_checkpoint", "CHECKPOINT"]

CHECKPOINT = "checkpoint.npz"


def save_checkpoint(save_path: str | os.PathLike, config: dict[str, Any], arrays: dict[str, np.ndarray],
                    step: int, losses: np.ndarray) -> None:
    buf = io.BytesIO()
    np.savez(buf, step=np.int64(step), losses=np.asarray(losses, np.float64),
             config=np.frombuffer(json.dumps(config, sort_keys=True).encode(), np.uint8), **arrays)
    os.makedirs(save_path, exist_ok=True)
    atomic_write(os.path.join(save_path, CHECKPOINT), buf.getvalue())


def load_checkpoint(save_path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, np.ndarray], int, np.ndarray]:
    """(config, arrays, step, losses) of the checkpoint in ``save_path``."""
    path = os.path.join(os.fspath(save_path), CHECKPOINT)
    if not os.path.isfile(path):
        raise nwerr.FileNotFoundError(f"--resume: {save_path} holds no checkpoint ({CHECKPOINT})")
    try:
        with np.load(path, allow_pickle=False) as z:
            config = json.loads(bytes(z["config"]).decode())
            arrays = {k: z[k] for k in z.files if k not in ("config", "step", "losses")}
            return config, arrays, int(z["step"]), z["losses"]
    except (ValueError, OSError, KeyError, json.JSONDecodeError) as e:
        raise nwerr.ValueError(f"--resume: {path} is not a readable checkpoint: {e}") from None
