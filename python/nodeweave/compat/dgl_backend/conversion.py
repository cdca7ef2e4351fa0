"""Changing a tensor's dtype and exchanging it with NumPy and DLPack: DGL's ``astype``, ``asnumpy``
and the ``zerocopy_*`` functions.

The ``zerocopy_*`` functions share memory wherever the two sides can: a CPU tensor and its NumPy
array, a DLPack capsule and the tensor made from it. ``zerocopy_to_numpy`` of a GPU tensor, or of a
bfloat16 one (NumPy has no bfloat16; it becomes float32), is a copy.

>>> import numpy as np, torch
>>> from nodeweave.compat import dgl_backend as F
>>> a = np.zeros(3, dtype=np.float32)
>>> t = F.zerocopy_from_numpy(a)
>>> a[0] = 5.0
>>> type(t).__module__, t[0].item()       # the active backend's tensor, sharing a's memory
('nodeweave._C', 5.0)
>>> F.asnumpy(F.astype(torch.tensor([1.5, 2.5]), torch.int64)).tolist()
[1, 2]
"""

from __future__ import annotations

from typing import Any

import numpy as np

import nodeweave.core as nc
from nodeweave import backend
from nodeweave import errors as nwerr
from nodeweave.compat.dgl_backend import _library

__all__ = ["astype", "asnumpy", "zerocopy_to_numpy", "zerocopy_from_numpy", "zerocopy_to_dlpack",
           "zerocopy_from_dlpack"]


def astype(input: Any, ty: Any) -> Any:  # noqa: A002
    """``input`` converted to dtype ``ty`` (``input`` itself when it already has it)."""
    return input.to(_library.dtype(_library.of(input), ty))


def _dense(input: Any) -> Any:  # noqa: A002
    layout = getattr(input, "layout", None)  # torch's sparse layouts; nodeweave.core has none
    return input.to_dense() if layout is not None and str(layout) != "torch.strided" else input


def zerocopy_to_numpy(input: Any) -> np.ndarray:  # noqa: A002
    """A NumPy array sharing ``input``'s memory when ``input`` is a CPU tensor NumPy can describe
    (a copy otherwise); gradients are not tracked through it."""
    B = backend.of(input)
    if B is None:
        raise nwerr.TypeError(f"input must be a tensor, got {type(input).__name__}")
    return B.to_numpy(_dense(input))


def asnumpy(input: Any) -> np.ndarray:  # noqa: A002
    """A NumPy array holding a copy of ``input``'s values (a sparse torch tensor is made dense)."""
    return np.array(zerocopy_to_numpy(input), copy=True)


def zerocopy_from_numpy(np_array: np.ndarray) -> Any:
    """A tensor of the active backend sharing ``np_array``'s memory (a copy when the array's layout
    cannot be shared, e.g. a read-only or byte-swapped array for torch)."""
    if not isinstance(np_array, np.ndarray):
        raise nwerr.TypeError(f"np_array must be a numpy.ndarray, got {type(np_array).__name__}")
    lib = _library.active()
    if lib is nc:
        return nc.from_numpy(np_array)
    return lib.as_tensor(np_array)


def zerocopy_to_dlpack(input: Any) -> Any:  # noqa: A002
    """A DLPack capsule sharing ``input``'s memory (of a contiguous copy when ``input`` is not
    contiguous)."""
    return input.contiguous().__dlpack__()


def zerocopy_from_dlpack(dlpack_tensor: Any) -> Any:
    """A tensor of the active backend sharing the memory of a DLPack capsule (or of any object with
    ``__dlpack__``, such as another library's tensor)."""
    return _library.active().from_dlpack(dlpack_tensor)
