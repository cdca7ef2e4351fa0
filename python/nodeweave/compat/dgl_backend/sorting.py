"""Sorting and searching: DGL's ``argsort``, ``topk``, ``argtopk``, ``sort_1d``, ``unique`` and
``nonzero_1d``.

>>> import torch
>>> from nodeweave.compat import dgl_backend as F
>>> x = torch.tensor([3, 1, 3, 2])
>>> F.topk(x, 2, 0).tolist(), F.argtopk(x, 2, 0, descending=False).tolist()
([3, 3], [1, 3])
>>> [t.tolist() for t in F.unique(x, return_inverse=True, return_counts=True)]
[[1, 2, 3], [2, 0, 2, 1], [1, 1, 2]]
>>> F.nonzero_1d(torch.tensor([0, 4, 0, 1])).tolist()
[1, 3]
"""

from __future__ import annotations

from typing import Any

import numpy as np

import nodeweave.core as nc
from nodeweave import backend
from nodeweave import errors as nwerr
from nodeweave.compat.dgl_backend import _library

__all__ = ["argsort", "topk", "argtopk", "sort_1d", "unique", "nonzero_1d"]


def argsort(input: Any, dim: int, descending: bool) -> Any:  # noqa: A002
    """Indices that sort ``input`` along ``dim`` (stable)."""
    return _library.of(input).argsort(input, dim=dim, descending=descending)


def topk(input: Any, k: int, dim: int, descending: bool = True) -> Any:  # noqa: A002
    """The ``k`` largest values along ``dim`` (the smallest when not ``descending``), in order."""
    return _library.of(input).topk(input, k, dim, largest=descending)[0]


def argtopk(input: Any, k: int, dim: int, descending: bool = True) -> Any:  # noqa: A002
    """Where the values :func:`topk` returns are."""
    return _library.of(input).topk(input, k, dim, largest=descending)[1]


def _check_1d(input: Any, name: str) -> None:  # noqa: A002
    if input.dim() != 1:
        raise nwerr.ValueError(f"{name}: input must be 1-D, got shape {tuple(input.shape)}")


def sort_1d(input: Any) -> tuple[Any, Any]:  # noqa: A002
    """``(values, indices)``: ``input`` sorted ascending, and where each value was."""
    _check_1d(input, "sort_1d")
    values, indices = _library.of(input).sort(input)
    return values, indices


def unique(input: Any, return_inverse: bool = False, return_counts: bool = False) -> Any:  # noqa: A002
    """The distinct values of a 1-D tensor, ascending (a bool tensor's as int8, as in DGL); with
    ``return_inverse`` also each element's position among them, with ``return_counts`` how often
    each occurs (both int64).

    nodeweave.core has no unique: on native tensors it runs in NumPy, as DGL allows for id tensors
    (no gradient flows through it on either backend).
    """
    _check_1d(input, "unique")
    lib = _library.of(input)
    if input.dtype == _library.dtype(lib, "bool"):
        input = input.to(_library.dtype(lib, "int8"))
    if lib is not nc:
        return lib.unique(input, sorted=True, return_inverse=return_inverse, return_counts=return_counts)
    B = backend.of(input)
    dev = B.device_str(input)
    values, inverse, counts = np.unique(B.to_numpy(input), return_inverse=True, return_counts=True)
    out = [B.from_numpy(values, dev)]
    if return_inverse:
        out.append(B.int_tensor(inverse.reshape(-1), dev, "int64"))
    if return_counts:
        out.append(B.int_tensor(counts, dev, "int64"))
    return out[0] if len(out) == 1 else tuple(out)


def nonzero_1d(input: Any) -> Any:  # noqa: A002
    """Positions (int64) of the nonzero elements of a 1-D tensor."""
    _check_1d(input, "nonzero_1d")
    return _library.of(input).nonzero(input).reshape(-1)
