"""New tensors: DGL's ``tensor``, ``empty``, ``zeros``, ``zeros_like``, ``ones``, ``full_1d``,
``arange``, ``uniform``, ``randint`` and ``rand_shuffle``.

Each creates with the library of the dtype or device object it is given, else with the active
backend's (see :mod:`nodeweave.compat.dgl_backend._library`); a dtype may also be a name or a NumPy
dtype, a device a string.

>>> import torch
>>> from nodeweave.compat import dgl_backend as F
>>> F.zeros((2, 2), torch.int32, "cpu").dtype, F.arange(2, 5, torch.int64, "cpu").tolist()
(torch.int32, [2, 3, 4])
>>> F.tensor(3, torch.float64)          # a number becomes a one-element tensor
tensor([3.], dtype=torch.float64)
"""

from __future__ import annotations

import numbers
from typing import Any

from nodeweave import backend
from nodeweave import errors as nwerr
from nodeweave.compat.dgl_backend import _library

__all__ = ["tensor", "empty", "zeros", "zeros_like", "ones", "full_1d", "arange", "uniform", "randint",
           "rand_shuffle"]


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise nwerr.TypeError(f"shape must be an int or a sequence of ints, got {shape!r}") from None


def tensor(data: Any, dtype: Any = None) -> Any:
    """A tensor of ``data`` (of ``dtype`` when given, else inferred as the library infers it).

    A tensor comes back as it is when it already has ``dtype`` (else converted, on its device); a
    number becomes a one-element 1-D tensor; a list of tensors is stacked; anything else (lists,
    NumPy arrays) is copied into a new CPU tensor.
    """
    if isinstance(data, numbers.Number):
        data = [data]
    if backend.of(data) is not None:
        lib = _library.of(data)
        want = _library.dtype(lib, dtype)
        return data if want is None or data.dtype == want else data.to(want)
    if isinstance(data, (list, tuple)) and data and backend.of(data[0]) is not None:
        lib = _library.of(data[0])
        return tensor(lib.stack(list(data)), dtype)
    lib = _library.for_creation(dtype)
    return lib.tensor(data, dtype=_library.dtype(lib, dtype))


def _create(make: str, shape: Any, dtype: Any, ctx: Any, *args: Any) -> Any:
    lib = _library.for_creation(dtype, ctx)
    return getattr(lib, make)(_shape(shape), *args, dtype=_library.dtype(lib, dtype),
                              device=_library.device(lib, ctx))


def empty(shape: Any, dtype: Any, ctx: Any) -> Any:
    """An uninitialized tensor."""
    return _create("empty", shape, dtype, ctx)


def zeros(shape: Any, dtype: Any, ctx: Any) -> Any:
    """A tensor of zeros."""
    return _create("zeros", shape, dtype, ctx)


def ones(shape: Any, dtype: Any, ctx: Any) -> Any:
    """A tensor of ones."""
    return _create("ones", shape, dtype, ctx)


def full_1d(length: int, fill_value: Any, dtype: Any, ctx: Any) -> Any:
    """A 1-D tensor of ``length`` copies of ``fill_value``."""
    return _create("full", length, dtype, ctx, fill_value)


def zeros_like(input: Any) -> Any:  # noqa: A002
    """Zeros of ``input``'s shape, dtype and device."""
    return _library.of(input).zeros_like(input)


def arange(start: int, stop: int, dtype: Any = None, ctx: Any = None) -> Any:
    """``start, start + 1, ..., stop - 1`` as a 1-D tensor (int64 unless ``dtype`` says otherwise)."""
    dtype = "int64" if dtype is None else dtype
    lib = _library.for_creation(dtype, ctx)
    return lib.arange(int(start), int(stop), dtype=_library.dtype(lib, dtype),
                      device=_library.device(lib, ctx))


def uniform(shape: Any, dtype: Any, ctx: Any, low: float, high: float) -> Any:
    """Random values drawn uniformly from ``[low, high)``."""
    return _create("rand", shape, dtype, ctx) * (high - low) + low


def randint(shape: Any, dtype: Any, ctx: Any, low: int, high: int) -> Any:
    """Random integers drawn uniformly from ``[low, high)``."""
    lib = _library.for_creation(dtype, ctx)
    return lib.randint(int(low), int(high), _shape(shape), dtype=_library.dtype(lib, dtype),
                       device=_library.device(lib, ctx))


def rand_shuffle(arr: Any) -> Any:
    """A new tensor holding the rows of ``arr`` in a random order, drawn from the generator of
    ``arr``'s library (``nodeweave.seed`` for nodeweave.core, ``torch.manual_seed`` for torch)."""
    perm = _library.of(arr).randperm(int(arr.shape[0]))
    return arr.index_select(0, perm.to(arr.device))
