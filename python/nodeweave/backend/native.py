"""The native backend: graph-layer tensor utilities on :mod:`nodeweave.core` tensors.

Every backend module defines these same functions; the graph layer calls nothing else on tensors.
Ids are passed in and out as NumPy arrays where the graph layer computes with NumPy, and converted at
the boundary with :func:`int_tensor` / :func:`to_numpy`.

>>> import numpy as np
>>> from nodeweave.backend import native as B
>>> t = B.int_tensor(np.array([3, 1, 2]), "cpu")
>>> B.dtype_name(t), B.shape(t), B.device_str(t)
('int64', (3,), 'cpu')
>>> B.to_numpy(B.index_select(t, np.array([2, 0]))).tolist()
[2, 3]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import nodeweave.core as nc
from nodeweave.backend import _shared
from nodeweave.core import Tensor

name = "native"

_INT_DTYPES = {"int32": nc.int32, "int64": nc.int64}


def is_tensor(x: Any) -> bool:
    """Whether ``x`` is a tensor of this backend."""
    return isinstance(x, Tensor)


def _device_arg(device: Any) -> str | None:
    if device is None:
        return None
    return str(device)


def from_numpy(arr: np.ndarray, device: Any = None) -> Tensor:
    """A tensor holding a copy of ``arr`` (on ``device`` when given)."""
    # np.ascontiguousarray makes a 0-d array 1-d; a scalar must stay a 0-d tensor
    t = nc.tensor(np.ascontiguousarray(arr) if np.ndim(arr) else np.array(arr))
    dev = _device_arg(device)
    if dev is not None and dev != "cpu":
        t = t.to(dev)
    return t


def to_numpy(t: Tensor) -> np.ndarray:
    """A NumPy array with the values of ``t`` (copied to the host when ``t`` is on a GPU)."""
    if not t.device.type == "cpu":
        t = t.cpu()
    return t.detach().numpy()


def shape(t: Tensor) -> tuple[int, ...]:
    """The shape of ``t`` as a tuple of ints."""
    return tuple(t.shape)


def dtype_name(t: Tensor) -> str:
    """The dtype of ``t`` as a plain name such as ``'float32'`` or ``'int64'``."""
    return t.dtype.name


def dtype_of(t: Tensor) -> Any:
    """The backend dtype object of ``t`` (printed in feature schemes)."""
    return t.dtype


def device_str(t: Tensor) -> str:
    """The device of ``t`` as a string: ``'cpu'`` or ``'cuda:N'``."""
    d = t.device
    if d.type == "cpu":
        return "cpu"
    s = str(d)
    return s if ":" in s else f"{s}:0"


def to_device(t: Tensor, device: Any) -> Tensor:
    """``t`` on ``device`` (``t`` itself when it is already there)."""
    dev = canonical_device(device)
    return t if device_str(t) == dev else t.to(dev)


def canonical_device(device: Any) -> str:
    """Normalizes a device spec (``None``, ``'cpu'``, ``'cuda'``, ``'cuda:1'``, an int, a device
    object) to ``'cpu'`` or ``'cuda:N'``."""
    return _shared.canonical_device(device)


def index_select(t: Tensor, idx: Any) -> Tensor:
    """Rows ``idx`` (NumPy array, list or int tensor) of ``t`` along dim 0."""
    if not isinstance(idx, Tensor):
        idx = nc.tensor(np.asarray(idx, dtype=np.int64).reshape(-1))
    if device_str(idx) != device_str(t):
        idx = idx.to(device_str(t))
    return t.index_select(0, idx)


def split_rows(t: Tensor, sizes: Sequence[int]) -> list[Tensor]:
    """``t`` cut along dim 0 into consecutive views of ``sizes`` rows, with one gradient node for
    all of them (nodeweave.core.split's gradient writes a full-size zero tensor per piece)."""
    from nodeweave._C import split_rows as _split_rows

    return list(_split_rows(t, [int(s) for s in sizes]))


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenation along ``dim``."""
    return nc.cat(list(tensors), dim)


def zeros(shape: Sequence[int], dtype: Any, device: Any = None) -> Tensor:
    """A zero tensor of ``shape``; ``dtype`` is a dtype object or a name such as ``'float32'``."""
    t = nc.zeros(tuple(shape), dtype=_dtype(dtype))
    dev = canonical_device(device)
    return t if dev == "cpu" else t.to(dev)


def tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """A new tensor copied from Python data."""
    t = nc.tensor(data, dtype=None if dtype is None else _dtype(dtype))
    dev = canonical_device(device)
    return t if dev == "cpu" else t.to(dev)


def int_tensor(arr: np.ndarray, device: Any = None, dtype: str | None = None) -> Tensor:
    """An id tensor from an integer NumPy array: ``dtype`` ('int32'/'int64'), else the array's own
    (int32 stays int32, every other integer type becomes int64)."""
    a = np.asarray(arr)
    if dtype is None:
        dtype = "int32" if a.dtype == np.int32 else "int64"
    t = nc.tensor(np.ascontiguousarray(a, dtype=np.dtype(dtype)))
    dev = canonical_device(device)
    return t if dev == "cpu" else t.to(dev)


def _dtype(d: Any) -> Any:
    if isinstance(d, str):
        return getattr(nc, d)
    if isinstance(d, np.dtype) or (isinstance(d, type) and issubclass(d, np.generic)):
        return getattr(nc, np.dtype(d).name)
    return d


def device_object(device: str) -> Any:
    """The backend's device object for a device string (compares equal to the string)."""
    return nc.device(canonical_device(device))


def dtype_from_name(name: str) -> Any:
    """The backend dtype object named ``name`` (``'int64'`` -> ``nodeweave.core.int64``)."""
    return getattr(nc, name)


# ---- graph kernels (differentiable native engine ops, see backend/native/ in C++) ----
from nodeweave._C import (edge_softmax, gather_mm, gsddmm, gspmm,  # noqa: E402,F401
                          segment_mm, segment_offsets, segment_reduce, segment_softmax)


def index_copy(t: Tensor, idx: Tensor, rows: Tensor) -> Tensor:
    """A copy of ``t`` with rows ``idx`` replaced by ``rows`` (differentiable)."""
    return t.index_copy(0, idx, rows)


def cross_reduce(tensors: Sequence[Tensor], reducer: str) -> Tensor:
    """Combine per-relation results arriving at one node type (multi_update_all)."""
    return _shared.cross_reduce(nc.stack, tensors, reducer)
