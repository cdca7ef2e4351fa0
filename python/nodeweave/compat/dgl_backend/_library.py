"""Which tensor library a function of DGL's backend API computes with, and the spellings of dtypes
and devices it accepts.

The library is ``torch`` or :mod:`nodeweave.core`, chosen as everywhere in nodeweave:

1. a function given tensors computes with the library that owns them (:func:`of`);
2. a function that creates tensors uses the library of the dtype or device object it is given
   (``torch.float32``, ``nodeweave.core.device('cpu')``), and otherwise — no dtype, or one spelled as
   a string or a NumPy dtype — the active backend's (:func:`for_creation`);
3. :func:`active` is the active backend's library, unless :func:`using` pins one for a block
   (``dgl.backend.pytorch`` runs every call with torch pinned).

>>> import numpy as np
>>> import nodeweave.core as nc
>>> from nodeweave.compat.dgl_backend import _library as L
>>> L.of(nc.ones(2)) is nc, L.dtype(nc, np.float64), L.dtype(nc, "int32")
(True, nodeweave.core.float64, nodeweave.core.int32)
>>> L.dtype(nc, "complex64")
Traceback (most recent call last):
...
nodeweave.errors.TypeError: dtype: nodeweave.core has no dtype 'complex64' (the dtypes: bfloat16, float16, float32, float64, uint8, int8, int32, int64, bool)
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import sys
from types import ModuleType
from typing import Any, Iterator

import numpy as np

import nodeweave.core as nc
from nodeweave import backend
from nodeweave import errors as nwerr
from nodeweave.backend import _shared
from nodeweave.graph.idtypes import _dtype_name

# DGL's data_type_dict: these names, in this order (the first name of a dtype is its reverse name)
DTYPE_NAMES = ("bfloat16", "float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64",
               "bool")

# Functions that need an operation nodeweave.core does not have, with what it lacks. On native
# tensors they raise (see torch_only); is_enabled() reports them as off on the native backend.
TORCH_ONLY = {
    "cumsum": "cumulative sum",
    "inverse": "matrix inverse",
    "floor_div": "floor division",
    "get_preferred_sparse_format": "sparse tensors",
    "sparse_matrix": "sparse tensors",
    "sparse_matrix_indices": "sparse tensors",
}

_pinned: contextvars.ContextVar[ModuleType | None] = contextvars.ContextVar("dgl_backend_library",
                                                                           default=None)


def _torch() -> ModuleType:
    return importlib.import_module("torch")


def of_backend(B: ModuleType) -> ModuleType:
    """The tensor library of a nodeweave backend module."""
    return _torch() if B.name == "pytorch" else nc


def active() -> ModuleType:
    """The library pinned by :func:`using`, else the active backend's."""
    return _pinned.get() or of_backend(backend.current())


@contextlib.contextmanager
def using(lib: ModuleType) -> Iterator[None]:
    """Within the block, :func:`active` is ``lib`` (this thread / task only)."""
    token = _pinned.set(lib)
    try:
        yield
    finally:
        _pinned.reset(token)


def of(*xs: Any) -> ModuleType:
    """The library owning the first tensor among ``xs`` (lists of tensors are looked into), else
    :func:`active`."""
    for x in xs:
        if isinstance(x, (list, tuple)) and x:
            x = x[0]
        B = backend.of(x)
        if B is not None:
            return of_backend(B)
    return active()


def is_library_dtype(d: Any) -> ModuleType | None:
    """The library whose dtype object ``d`` is (None for strings, NumPy dtypes, anything else)."""
    if isinstance(d, nc.dtype):
        return nc
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(d, torch.dtype):
        return torch
    return None


def for_creation(dtype: Any = None, ctx: Any = None) -> ModuleType:
    """The library that creates a tensor of ``dtype`` on ``ctx``: that of a library dtype or device
    object among them, else :func:`active`."""
    lib = is_library_dtype(dtype)
    if lib is not None:
        return lib
    if isinstance(ctx, nc.device):
        return nc
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(ctx, torch.device):
        return torch
    return active()


def data_type_dict(lib: ModuleType) -> dict[str, Any]:
    """DGL's dtype names -> ``lib``'s dtype objects, for the names ``lib`` has."""
    out = {}
    for name in DTYPE_NAMES:
        d = getattr(lib, name, None)
        if is_library_dtype(d) is lib:
            out[name] = d
    return out


def dtype(lib: ModuleType, d: Any) -> Any:
    """``d`` — a dtype object of either library, a NumPy dtype or a name — as ``lib``'s dtype object
    (None stays None). TypeError naming the dtypes ``lib`` has otherwise."""
    if d is None:
        return None
    name = _dtype_name(d)
    known = data_type_dict(lib)
    if name in known:
        return known[name]
    what = f"has no dtype {name!r}" if name is not None else f"cannot read {d!r} as a dtype"
    raise nwerr.TypeError(f"dtype: {lib.__name__} {what} (the dtypes: {', '.join(known)})")


def device(lib: ModuleType, ctx: Any) -> Any:
    """``ctx`` (None = cpu, a string, a CUDA ordinal, a device object of either library) as ``lib``'s
    device object."""
    return lib.device(_shared.canonical_device(ctx))


def index_tensor(like: Any, idx: Any, name: str = "index") -> Any:
    """``idx`` — an integer tensor of either backend, a list or a NumPy array — as an int64 tensor of
    ``like``'s backend on ``like``'s device (itself when it already is one)."""
    B = backend.of(like)
    src = backend.of(idx)
    if src is B:
        if B.dtype_name(idx) not in ("int64", "int32", "int16", "int8", "uint8"):
            raise nwerr.TypeError(f"{name} must hold integers, got dtype {B.dtype_name(idx)}")
        if B.dtype_name(idx) != "int64":
            idx = idx.to(B.dtype_from_name("int64"))
        return B.to_device(idx, B.device_str(like))
    arr = np.asarray(src.to_numpy(idx) if src is not None else idx)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise nwerr.TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    return B.int_tensor(arr.astype(np.int64), B.device_str(like), "int64")


def torch_only(name: str, lib: ModuleType) -> None:
    """Raise for a :data:`TORCH_ONLY` function asked to run on nodeweave.core."""
    if lib is nc:
        raise nwerr.NotImplementedError(
            f"dgl.backend.{name}: the native backend cannot run it (nodeweave.core has no "
            f"{TORCH_ONLY[name]}); use the pytorch backend, nodeweave.set_backend('pytorch'), and "
            f"torch tensors")


def name_of(lib: ModuleType) -> str:
    """The nodeweave backend name of a library."""
    return "native" if lib is nc else "pytorch"
