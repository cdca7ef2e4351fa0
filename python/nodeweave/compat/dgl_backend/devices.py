"""Device contexts: DGL's ``cpu``, ``device_type``, ``device_id``, ``to_backend_ctx`` and ``copy_to``.

A context is the library's device object (``torch.device``, ``nodeweave.core.device``); every
function here also takes a device string (``'cpu'``, ``'cuda:1'``) or a CUDA ordinal.

>>> import torch
>>> from nodeweave.compat import dgl_backend as F
>>> F.device_type("cuda:1"), F.device_id("cuda:1"), F.device_id(torch.device("cpu"))
('cuda', 1, 0)
>>> F.copy_to(torch.ones(2), "cpu").device
device(type='cpu')
"""

from __future__ import annotations

from typing import Any

from nodeweave import errors as nwerr
from nodeweave.backend import _shared
from nodeweave.compat.dgl_backend import _library

__all__ = ["cpu", "device_type", "device_id", "to_backend_ctx", "copy_to"]


def cpu() -> Any:
    """The CPU device object of the active backend."""
    return _library.device(_library.active(), "cpu")


def device_type(ctx: Any) -> str:
    """``'cpu'`` or ``'cuda'``."""
    return _shared.canonical_device(ctx).split(":")[0]


def device_id(ctx: Any) -> int:
    """The device ordinal: 0 for the CPU, N for ``cuda:N`` (plain ``'cuda'`` is device 0)."""
    dev = _shared.canonical_device(ctx)
    return int(dev.split(":")[1]) if ":" in dev else 0


def to_backend_ctx(dglctx: Any) -> Any:
    """The active backend's device object for a context: a device spelling, or an object with DGL's
    integer ``device_type`` (1: CPU, 2: CUDA) and ``device_id`` fields."""
    kind = getattr(dglctx, "device_type", None)
    if isinstance(kind, int) and not isinstance(kind, bool):
        if kind == 1:
            dglctx = "cpu"
        elif kind == 2:
            dglctx = f"cuda:{int(getattr(dglctx, 'device_id', 0))}"
        else:
            raise nwerr.ValueError(f"dglctx: device_type must be 1 (CPU) or 2 (CUDA), got {kind}")
    return _library.device(_library.active(), dglctx)


def copy_to(input: Any, ctx: Any, **kwargs: Any) -> Any:  # noqa: A002
    """``input`` on device ``ctx`` (``input`` itself when already there); ``kwargs`` such as
    ``non_blocking=True`` go to the library's ``Tensor.to``."""
    lib = _library.of(input)
    return input.to(_library.device(lib, ctx), **kwargs)
