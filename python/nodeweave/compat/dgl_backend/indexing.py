"""Reading and writing rows by index: DGL's ``gather_row``, ``take``, ``boolean_mask``,
``scatter_row`` (out of place, differentiable), ``scatter_row_inplace``, ``index_add_inplace`` and
``scatter_add``.

An index is an integer tensor of either backend (any integer dtype), a list or a NumPy array.

>>> import torch
>>> from nodeweave.compat import dgl_backend as F
>>> x = torch.zeros(3, 2)
>>> F.scatter_row(x, torch.tensor([2]), torch.ones(1, 2)).tolist()
[[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
>>> F.index_add_inplace(x, torch.tensor([0, 0]), torch.ones(2, 2))
>>> x[0].tolist()                         # repeated rows add up
[2.0, 2.0]
>>> F.scatter_add(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1, 1, 0]), 3).tolist()
[3.0, 3.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave import errors as nwerr
from nodeweave.compat.dgl_backend import _library

__all__ = ["gather_row", "take", "boolean_mask", "scatter_row", "scatter_row_inplace", "index_add_inplace",
           "scatter_add"]


def gather_row(data: Any, row_index: Any) -> Any:
    """The rows ``row_index`` of ``data`` (differentiable)."""
    return data.index_select(0, _library.index_tensor(data, row_index, "row_index").reshape(-1))


def take(data: Any, indices: Any, dim: int) -> Any:
    """The entries ``indices`` of ``data`` along ``dim``; the result's shape has ``indices``' shape in
    place of dimension ``dim``."""
    idx = _library.index_tensor(data, indices, "indices")
    dim = dim % data.dim() if data.dim() else dim
    shape = tuple(data.shape[:dim]) + tuple(idx.shape) + tuple(data.shape[dim + 1:])
    return data.index_select(dim, idx.reshape(-1)).reshape(shape)


def boolean_mask(input: Any, mask: Any) -> Any:  # noqa: A002
    """The rows of ``input`` where ``mask`` (one entry per row; nonzero means keep) is true."""
    B = backend.of(input)
    src = backend.of(mask)
    if src is B:
        mask = B.to_device(mask, B.device_str(input))
    else:  # a list, a NumPy array or the other backend's tensor
        mask = B.from_numpy(np.asarray(src.to_numpy(mask) if src else mask), B.device_str(input))
    if mask.dim() != 1 or int(mask.shape[0]) != int(input.shape[0]):
        raise nwerr.ValueError(f"mask must be 1-D with one entry per row of input ({input.shape[0]}), "
                               f"got shape {tuple(mask.shape)}")
    return input[mask.to(_library.dtype(_library.of(input), "bool"))]


def scatter_row(data: Any, row_index: Any, value: Any) -> Any:
    """A copy of ``data`` whose rows ``row_index`` are ``value`` (differentiable in both)."""
    return data.index_copy(0, _library.index_tensor(data, row_index, "row_index").reshape(-1), value)


def scatter_row_inplace(data: Any, row_index: Any, value: Any) -> None:
    """Write ``value`` into the rows ``row_index`` of ``data`` in place (``value`` broadcasts to the
    rows' shape; autograd does not see the write)."""
    data[_library.index_tensor(data, row_index, "row_index").reshape(-1)] = value


def index_add_inplace(data: Any, row_idx: Any, value: Any) -> None:
    """Add the rows of ``value`` to the rows ``row_idx`` of ``data`` in place (a row named twice
    receives both)."""
    data.index_add_(0, _library.index_tensor(data, row_idx, "row_idx").reshape(-1), value)


def scatter_add(x: Any, idx: Any, m: int) -> Any:
    """``out`` with ``m`` rows, ``out[idx[i]] += x[i]`` from zeros (differentiable in ``x``)."""
    lib = _library.of(x)
    out = lib.zeros((int(m),) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
    return out.index_add(0, _library.index_tensor(x, idx, "idx").reshape(-1), x)
