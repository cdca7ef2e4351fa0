"""The PyTorch backend: the graph layer's tensor functions on ``torch.Tensor``.

It defines the same functions as :mod:`nodeweave.backend.native`, so the graph layer runs unchanged
on either. The graph kernels come from :mod:`nodeweave.backend.torch_autograd`: the same C++
kernels as the native engine, reached zero-copy through DLPack, with ``torch.autograd.Function``
gradients. The extension module never links against libtorch, so one nodeweave build serves every
PyTorch version.

>>> import numpy as np, torch
>>> from nodeweave.backend import pytorch as B
>>> t = B.int_tensor(np.array([3, 1, 2]), "cpu")
>>> B.dtype_name(t), B.shape(t), B.device_str(t)
('int64', (3,), 'cpu')
>>> B.to_numpy(B.index_select(t, np.array([2, 0]))).tolist()
[2, 3]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch

from nodeweave.backend import _shared
from nodeweave.backend.torch_autograd import (edge_softmax, gather_mm, gsddmm,  # noqa: F401
                                              gspmm, segment_mm, segment_reduce, segment_softmax)
from nodeweave import errors as nwerr

name = "pytorch"
Tensor = torch.Tensor


def is_tensor(x: Any) -> bool:
    """Whether ``x`` is a tensor of this backend."""
    return isinstance(x, torch.Tensor)


def canonical_device(device: Any) -> str:
    """Normalizes a device spec (``None``, ``'cpu'``, ``'cuda'``, ``'cuda:1'``, an int, a device
    object) to ``'cpu'`` or ``'cuda:N'``."""
    return _shared.canonical_device(device)


def _place(t: Tensor, device: Any) -> Tensor:
    dev = canonical_device(device)
    return t if dev == "cpu" else t.to(dev)


def from_numpy(arr: np.ndarray, device: Any = None) -> Tensor:
    """A tensor holding a copy of ``arr`` (on ``device`` when given)."""
    return _place(torch.from_numpy(np.array(arr, copy=True, order="C")), device)


def to_numpy(t: Tensor) -> np.ndarray:
    """A NumPy array with the values of ``t`` (copied to the host when ``t`` is on a GPU)."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.dtype == torch.bfloat16:  # NumPy has no bfloat16
        t = t.float()
    return t.numpy()


def shape(t: Tensor) -> tuple[int, ...]:
    """The shape of ``t`` as a tuple of ints."""
    return tuple(t.shape)


def dtype_name(t: Tensor) -> str:
    """The dtype of ``t`` as a plain name such as ``'float32'`` or ``'int64'``."""
    return str(t.dtype).replace("torch.", "")


def dtype_of(t: Tensor) -> Any:
    """The backend dtype object of ``t``."""
    return t.dtype


def device_str(t: Tensor) -> str:
    """The device of ``t`` as a string: ``'cpu'`` or ``'cuda:N'``."""
    return canonical_device(t.device)


def to_device(t: Tensor, device: Any) -> Tensor:
    """``t`` on ``device`` (``t`` itself when it is already there)."""
    dev = canonical_device(device)
    return t if device_str(t) == dev else t.to(dev)


def _dtype(d: Any) -> torch.dtype:
    if isinstance(d, torch.dtype):
        return d
    if isinstance(d, str):
        return getattr(torch, d)
    if isinstance(d, np.dtype) or (isinstance(d, type) and issubclass(d, np.generic)):
        return getattr(torch, np.dtype(d).name)
    name_ = getattr(d, "name", None)  # a nodeweave.core dtype
    if isinstance(name_, str) and hasattr(torch, name_):
        return getattr(torch, name_)
    raise nwerr.TypeError(f"dtype must be a torch dtype, a name or a NumPy dtype, got {d!r}")


def index_select(t: Tensor, idx: Any) -> Tensor:
    """Rows ``idx`` (NumPy array, list or int tensor) of ``t`` along dim 0."""
    if not isinstance(idx, torch.Tensor):
        idx = torch.from_numpy(np.asarray(idx, dtype=np.int64).reshape(-1))
    if idx.device != t.device:
        idx = idx.to(t.device)
    return t.index_select(0, idx)


def split_rows(t: Tensor, sizes: Sequence[int]) -> list[Tensor]:
    """``t`` cut along dim 0 into consecutive pieces of ``sizes`` rows (differentiable)."""
    return list(torch.split(t, [int(s) for s in sizes], 0))


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenation along ``dim``."""
    return torch.cat(list(tensors), dim)


def zeros(shape: Sequence[int], dtype: Any, device: Any = None) -> Tensor:
    """A zero tensor of ``shape``; ``dtype`` is a dtype object or a name such as ``'float32'``."""
    return torch.zeros(tuple(shape), dtype=_dtype(dtype), device=canonical_device(device))


def tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """A new tensor copied from Python data (Python floats become float32, as in torch)."""
    return torch.tensor(data, dtype=None if dtype is None else _dtype(dtype),
                        device=canonical_device(device))


def int_tensor(arr: np.ndarray, device: Any = None, dtype: str | None = None) -> Tensor:
    """An id tensor from an integer NumPy array: ``dtype`` ('int32'/'int64'), else the array's own
    (int32 stays int32, every other integer type becomes int64)."""
    a = np.asarray(arr)
    if dtype is None:
        dtype = "int32" if a.dtype == np.int32 else "int64"
    return _place(torch.from_numpy(np.array(a, dtype=np.dtype(dtype), copy=True, order="C")),
                  device)


def device_object(device: str) -> torch.device:
    """The backend's device object for a device string."""
    return torch.device(canonical_device(device))


def dtype_from_name(name_: str) -> torch.dtype:
    """The backend dtype object named ``name_`` (``'int64'`` -> ``torch.int64``)."""
    return getattr(torch, name_)


def index_copy(t: Tensor, idx: Tensor, rows: Tensor) -> Tensor:
    """A copy of ``t`` with rows ``idx`` replaced by ``rows`` (differentiable)."""
    return t.index_copy(0, idx.to(t.device), rows)


def cross_reduce(tensors: Sequence[Tensor], reducer: str) -> Tensor:
    """Combine per-relation results arriving at one node type (multi_update_all)."""
    return _shared.cross_reduce(torch.stack, tensors, reducer)
