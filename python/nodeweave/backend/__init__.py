"""Tensor backends of the graph layer.

The graph layer (:mod:`nodeweave.graph`, :mod:`nodeweave.ops`, message passing) touches tensors only
through the small set of functions every backend module defines — creation, dtype/device queries,
gather/scatter, NumPy exchange and the graph kernels with their gradients. Two backends implement
them with the same names:

- :mod:`nodeweave.backend.native` — :mod:`nodeweave.core` tensors; the kernels are engine ops.
- :mod:`nodeweave.backend.pytorch` — ``torch.Tensor``; the same C++ kernels receive the tensors
  zero-copy through DLPack and are wrapped in ``torch.autograd.Function``\\ s.

Two rules decide which backend runs:

1. An operation on tensors uses the backend that owns them (:func:`of`), whichever is active, so a
   graph may carry native or torch features.
2. Anything that *creates* tensors from nothing — ids returned by ``g.edges()``, degrees, loaded
   datasets — uses the active backend (:func:`current`), chosen by ``NODEWEAVE_BACKEND``
   (``native`` by default) or by :func:`set_backend`.

>>> import nodeweave.backend as B
>>> B.current().name, B.backend_name
('native', 'native')
>>> B.set_backend("tensorflow")
Traceback (most recent call last):
...
nodeweave.errors.ValueError: unknown backend 'tensorflow' (choose from: native, pytorch)
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import Any

from nodeweave.backend import native
from nodeweave import errors as nwerr

__all__ = ["current", "set_backend", "of", "for_tensors", "get", "BACKENDS", "backend_name"]

BACKENDS = ("native", "pytorch")
_active: ModuleType | None = None
_pytorch: ModuleType | None = None


def _canonical(name: Any) -> str:
    if not isinstance(name, str):
        raise nwerr.TypeError(f"backend name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key == "torch":
        key = "pytorch"
    if key not in BACKENDS:
        raise nwerr.ValueError(f"unknown backend {name!r} (choose from: {', '.join(BACKENDS)})")
    return key


def get(name: str) -> ModuleType:
    """The backend module called ``name`` (``'native'``, ``'pytorch'`` or ``'torch'``), loaded on
    first use. Raises ImportError with the reason when PyTorch cannot be imported."""
    global _pytorch
    key = _canonical(name)
    if key == "native":
        return native
    if _pytorch is None:  # of() asks on every kernel call with torch tensors: import once
        try:
            _pytorch = importlib.import_module("nodeweave.backend.pytorch")
        except ImportError as e:
            raise nwerr.ImportError(f"the pytorch backend needs PyTorch (pip install torch): {e}") from e
    return _pytorch


def current() -> ModuleType:
    """The active backend module (``nodeweave.backend.native`` unless chosen otherwise)."""
    global _active
    if _active is None:
        _active = get(os.environ.get("NODEWEAVE_BACKEND", "native") or "native")
    return _active


def set_backend(name: str) -> ModuleType:
    """Selects the active backend by name: ``'native'`` or ``'pytorch'``.

    Graph queries (``g.edges()``, ``g.in_degrees()`` ...) return this backend's tensors from then
    on, and ``nodeweave.nn`` resolves to its layers. Operations on existing tensors always follow
    the tensors' own backend.

    Raises
    ------
    ValueError
        For an unknown name.
    ImportError
        For ``'pytorch'`` when PyTorch is not installed.
    """
    global _active
    _active = get(name)
    return _active


def of(*xs: Any) -> ModuleType | None:
    """The backend owning the first tensor among ``xs`` (None when none of them is a tensor).

    >>> import nodeweave.core as nc
    >>> of(None, nc.ones(2)).name
    'native'
    >>> of([1, 2]) is None
    True
    """
    torch = sys.modules.get("torch")  # a torch tensor can only exist once torch is imported
    for x in xs:
        if isinstance(x, native.Tensor):
            return native
        if torch is not None and isinstance(x, torch.Tensor):
            return get("pytorch")
    return None


def for_tensors(*xs: Any) -> ModuleType:
    """:func:`of` the tensors, else the active backend."""
    return of(*xs) or current()


def __getattr__(name: str) -> Any:
    """``backend_name``: the active backend's name, read anew on each access so that it follows
    :func:`set_backend` (DGL scripts test ``dgl.backend.backend_name == "pytorch"``)."""
    if name == "backend_name":
        return current().name
    raise nwerr.AttributeError(f"module {__name__!r} has no attribute {name!r}")
