"""Checkpoints of a data-parallel job: the replicas are equal after every step, so rank 0 writes
one checkpoint for the job, atomically (a temporary file renamed over the old one), and every rank
reads it to resume. Tensors are saved with the active backend's serializer
(``nodeweave.core.save``, or ``torch.save`` with the PyTorch backend).

>>> import os, tempfile, nodeweave.core as nc, nodeweave.distributed as dist
>>> _ = dist.init()
>>> path = os.path.join(tempfile.mkdtemp(), "job.ckpt")
>>> dist.load_checkpoint(path) is None          # nothing to resume yet
True
>>> dist.save_checkpoint(path, {"w": nc.tensor([1.0, 2.0]), "epoch": 3, "batch": 7})
>>> state = dist.load_checkpoint(path)
>>> state["epoch"], state["batch"], state["w"].tolist()
(3, 7, [1.0, 2.0])
"""

from __future__ import annotations

import os
from typing import Any

from nodeweave import backend
from nodeweave.distributed import mpi

__all__ = ["save_checkpoint", "load_checkpoint"]


def _torch() -> bool:
    return backend.current().name == "pytorch"


def save_checkpoint(path: str | os.PathLike, state: dict[str, Any]) -> None:
    """Writes ``state`` to ``path`` from rank 0 (collective: every rank calls it, and returns once
    the file is complete, so that no rank runs ahead of a checkpoint it may have to resume from).
    A kill at any moment leaves ``path`` holding the previous checkpoint or this one, whole."""
    error = None
    if mpi.rank() == 0:
        try:
            if _torch():
                import torch

                from nodeweave._binfile import atomic_write

                atomic_write(path, lambda f: torch.save(state, f))
            else:
                from nodeweave.core import save

                save(state, path)
        except OSError as e:
            error = e
    mpi.raise_together(error, f"save_checkpoint({os.fspath(path)!r})")


def load_checkpoint(path: str | os.PathLike) -> dict[str, Any] | None:
    """The state :func:`save_checkpoint` wrote to ``path``, or None when there is no such file (a
    fresh start). A damaged file raises (``ValueError`` naming it, from the native reader)."""
    if not os.path.exists(path):
        return None
    if _torch():
        import torch

        return torch.load(path, map_location="cpu", weights_only=True)
    from nodeweave.core import load

    return load(path)
