"""Gradients: DGL's ``attach_grad``, ``backward``, ``grad``, ``is_no_grad``, ``is_recording``, the
``record_grad`` and ``no_grad`` blocks, and ``sync``.

``no_grad`` and ``record_grad`` set the mode of both libraries (nodeweave.core's, and torch's once
torch is imported), so a block means the same whatever the tensors in it.

>>> import torch
>>> from nodeweave.compat import dgl_backend as F
>>> x = F.attach_grad(torch.tensor([1.0, 2.0]))
>>> F.backward((x * x).sum())
>>> F.grad(x).tolist(), F.is_no_grad(x)
([2.0, 4.0], False)
>>> with F.no_grad():
...     (x * 2).requires_grad
False
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import nodeweave.core as nc
from nodeweave.compat.dgl_backend import _library

__all__ = ["attach_grad", "backward", "grad", "is_no_grad", "is_recording", "record_grad", "no_grad", "sync"]


def attach_grad(x: Any) -> Any:
    """``x``, made to collect its gradient (a gradient it already holds is zeroed)."""
    if x.grad is not None:
        x.grad.zero_()
        return x
    return x.requires_grad_()


def backward(x: Any, head_gradient: Any = None) -> None:
    """Back-propagate from ``x`` (a scalar, or with ``head_gradient`` of its shape; a one-element
    ``head_gradient`` is reshaped to a one-element ``x``)."""
    if head_gradient is not None and head_gradient.numel() == 1 and x.numel() == 1:
        head_gradient = head_gradient.reshape(tuple(x.shape))
    x.backward(head_gradient)


def grad(x: Any) -> Any:
    """The gradient ``x`` holds after :func:`backward` (None when none reached it). A non-leaf
    ``x`` is made to keep its gradient from the next backward pass on."""
    if x.requires_grad and not x.is_leaf:
        x.retain_grad()
    return x.grad


def is_no_grad(x: Any) -> bool:
    """Whether ``x`` holds no gradient, or an all-zero one."""
    return x.grad is None or bool((x.grad == 0).all().item())


def is_recording() -> bool:
    """Whether the active backend's library records operations for autograd here."""
    return bool(_library.active().is_grad_enabled())


def _modes(enabled: bool) -> list[Any]:
    modes = [nc.enable_grad() if enabled else nc.no_grad()]
    torch = sys.modules.get("torch")  # torch tensors can only exist once torch is imported
    if torch is not None:
        modes.append(torch.enable_grad() if enabled else torch.no_grad())
    return modes


class _GradBlock(contextlib.ContextDecorator):
    _enabled = True

    def __init__(self) -> None:
        self._open: list[contextlib.ExitStack] = []  # one per nested entry of the same object

    def __enter__(self) -> None:
        stack = contextlib.ExitStack()
        for mode in _modes(self._enabled):
            stack.enter_context(mode)
        self._open.append(stack)

    def __exit__(self, *exc: Any) -> None:
        self._open.pop().close()


class record_grad(_GradBlock):  # noqa: N801 (DGL's name)
    """A block in which operations are recorded for autograd (even inside :class:`no_grad`)."""

    _enabled = True


class no_grad(_GradBlock):  # noqa: N801 (DGL's name)
    """A block in which no operation is recorded for autograd (also a decorator)."""

    _enabled = False


def sync() -> None:
    """Wait until queued GPU work has finished (a no-op without a GPU)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.synchronize()
    if nc.cuda.is_available():
        for i in range(nc.cuda.device_count()):
            nc.cuda.synchronize(f"cuda:{i}")
