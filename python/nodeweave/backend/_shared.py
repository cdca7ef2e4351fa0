"""Pieces of the backend interface that do not depend on the tensor library.

>>> canonical_device("cuda"), canonical_device(None), canonical_device(1)
('cuda:0', 'cpu', 'cuda:1')
"""

from __future__ import annotations

from typing import Any, Callable, Sequence
from nodeweave import errors as nwerr


def canonical_device(device: Any) -> str:
    """Normalizes a device spec — ``None``, ``'cpu'``, ``'cuda'``, ``'cuda:1'``, an int (a CUDA
    ordinal) or a device object with ``.type``/``.index`` (``torch.device``,
    ``nodeweave.core.device``) — to ``'cpu'`` or ``'cuda:N'``."""
    if device is None:
        return "cpu"
    if isinstance(device, int) and not isinstance(device, bool):
        return f"cuda:{device}"
    if not isinstance(device, str) and hasattr(device, "type") and hasattr(device, "index"):
        return "cpu" if device.type == "cpu" else f"{device.type}:{device.index or 0}"
    s = str(device)
    if s == "cuda":
        return "cuda:0"
    if s == "cpu" or (s.startswith("cuda:") and s[5:].isdigit()):
        return s
    raise nwerr.ValueError(f"device must be 'cpu' or 'cuda[:N]', got {device!r}")


def cross_reduce(stack: Callable[[list, int], Any], tensors: Sequence[Any], reducer: str) -> Any:
    """Combines per-relation results arriving at one node type (multi_update_all) with
    ``reducer``: ``sum``, ``mean``, ``max``, ``min`` or ``stack`` (along a new dim 1)."""
    if len(tensors) == 1 and reducer != "stack":
        return tensors[0]
    stacked = stack(list(tensors), 1)
    if reducer == "stack":
        return stacked
    if reducer == "sum":
        return stacked.sum(1)
    if reducer == "mean":
        return stacked.mean(1)
    return stacked.amax(1) if reducer == "max" else stacked.amin(1)
