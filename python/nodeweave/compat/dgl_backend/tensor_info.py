"""What a tensor is: DGL's ``is_tensor``, ``shape``, ``dtype``, ``ndim``, ``context``, ``as_scalar``
and ``is_pinned``, on either backend's tensors.

>>> import torch
>>> from nodeweave.compat import dgl_backend as F
>>> x = torch.zeros(2, 3, dtype=torch.int32)
>>> F.is_tensor(x), F.shape(x), F.dtype(x), F.ndim(x), F.context(x)
(True, (2, 3), torch.int32, 2, device(type='cpu'))
>>> F.as_scalar(torch.tensor([7])), F.is_tensor([1, 2])
(7, False)
"""

from __future__ import annotations

from typing import Any

import nodeweave.core as nc
from nodeweave import backend
from nodeweave.compat.dgl_backend import _library

__all__ = ["is_tensor", "shape", "dtype", "ndim", "context", "as_scalar", "is_pinned"]


def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a tensor of a nodeweave backend (``torch.Tensor`` or
    ``nodeweave.core.Tensor``, whichever backend is active: nodeweave takes both everywhere)."""
    return backend.of(obj) is not None


def shape(input: Any) -> tuple[int, ...]:  # noqa: A002 (DGL's argument names, for keyword calls)
    """The shape of ``input`` as a tuple of ints."""
    return tuple(int(s) for s in input.shape)


def dtype(input: Any) -> Any:  # noqa: A002
    """The dtype object of ``input`` (one of :data:`data_type_dict`'s values for its library)."""
    return input.dtype


def ndim(input: Any) -> int:  # noqa: A002
    """The number of dimensions of ``input``."""
    return input.dim()


def context(input: Any) -> Any:  # noqa: A002
    """The device object of ``input`` (``torch.device`` or ``nodeweave.core.device``)."""
    return input.device


def as_scalar(data: Any) -> Any:
    """The Python number held by a one-element tensor."""
    return data.item()


def is_pinned(input: Any) -> bool:  # noqa: A002
    """Whether ``input`` lives in page-locked host memory. Always False for nodeweave.core tensors:
    the native engine does not allocate page-locked memory."""
    if _library.of(input) is nc:
        return False
    return bool(input.is_pinned())
