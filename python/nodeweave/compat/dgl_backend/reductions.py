"""Reductions: DGL's ``sum``, ``mean``, ``max``, ``min`` along a dimension, their ``reduce_*``
counterparts over every element, ``cumsum`` and ``count_nonzero``.

``max`` / ``min`` return the values only; ``reduce_*`` return a 0-dim tensor, as DGL's PyTorch
backend does.

>>> import torch
>>> from nodeweave.compat import dgl_backend as F
>>> x = torch.tensor([[1.0, 5.0], [3.0, 2.0]])
>>> F.sum(x, 0).tolist(), F.max(x, 1).tolist(), F.reduce_min(x).item(), F.count_nonzero(x)
([4.0, 7.0], [5.0, 3.0], 1.0, 4)
"""

from __future__ import annotations

from typing import Any

from nodeweave.compat.dgl_backend import _library

__all__ = ["sum", "reduce_sum", "cumsum", "mean", "reduce_mean", "max", "reduce_max", "min", "reduce_min",
           "count_nonzero"]


def sum(input: Any, dim: int, keepdims: bool = False) -> Any:  # noqa: A001,A002
    """Sum along ``dim`` (kept with size 1 when ``keepdims``)."""
    return _library.of(input).sum(input, dim, keepdim=keepdims)


def reduce_sum(input: Any) -> Any:  # noqa: A002
    """Sum of every element (0-dim)."""
    return input.sum()


def cumsum(input: Any, dim: int) -> Any:  # noqa: A002
    """Cumulative sum along ``dim`` (PyTorch only: nodeweave.core has no cumulative sum)."""
    lib = _library.of(input)
    _library.torch_only("cumsum", lib)
    return lib.cumsum(input, dim=dim)


def mean(input: Any, dim: int) -> Any:  # noqa: A002
    """Mean along ``dim``."""
    return _library.of(input).mean(input, dim=dim)


def reduce_mean(input: Any) -> Any:  # noqa: A002
    """Mean of every element (0-dim)."""
    return input.mean()


def max(input: Any, dim: int) -> Any:  # noqa: A001,A002
    """Largest value along ``dim`` (the values; not where they are)."""
    return _library.of(input).max(input, dim)[0]


def reduce_max(input: Any) -> Any:  # noqa: A002
    """Largest element (0-dim)."""
    return input.max()


def min(input: Any, dim: int) -> Any:  # noqa: A001,A002
    """Smallest value along ``dim`` (the values; not where they are)."""
    return _library.of(input).min(input, dim)[0]


def reduce_min(input: Any) -> Any:  # noqa: A002
    """Smallest element (0-dim)."""
    return input.min()


def count_nonzero(input: Any) -> int:  # noqa: A002
    """How many elements are not zero, as a Python int."""
    return int((input != 0).sum().item())
