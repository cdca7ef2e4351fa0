"""Tensor backends of the graph layer.

The graph layer (:mod:`nodeweave.graph`) keeps node/edge features and returns ids as tensors of the
*active backend*. It only touches tensors through the small set of functions every backend module
defines (see :mod:`nodeweave.backend.native`), so that a PyTorch backend (issue #5) can be added with
the same function names.

The backend is chosen by the environment variable ``NODEWEAVE_BACKEND`` (``native`` by default) or by
:func:`set_backend`.

>>> import nodeweave.backend as B
>>> B.current().name
'native'
>>> B.set_backend("tensorflow")
Traceback (most recent call last):
...
ValueError: unknown backend 'tensorflow' (choose from: native, pytorch)
"""

from __future__ import annotations

import os
from types import ModuleType

from nodeweave.backend import native

__all__ = ["current", "set_backend", "BACKENDS"]

BACKENDS = ("native", "pytorch")
_active: ModuleType | None = None


def _load(name: str) -> ModuleType:
    if not isinstance(name, str):
        raise TypeError(f"backend name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key == "native":
        return native
    if key in ("pytorch", "torch"):
        raise NotImplementedError("the pytorch backend arrives in issue #5")
    raise ValueError(f"unknown backend {name!r} (choose from: {', '.join(BACKENDS)})")


def current() -> ModuleType:
    """The active backend module (``nodeweave.backend.native`` unless chosen otherwise)."""
    global _active
    if _active is None:
        _active = _load(os.environ.get("NODEWEAVE_BACKEND", "native") or "native")
    return _active


def set_backend(name: str) -> ModuleType:
    """Selects the tensor backend by name (``'native'``; ``'pytorch'`` is not available yet).

    Raises
    ------
    ValueError
        For an unknown name.
    NotImplementedError
        For ``'pytorch'`` until issue #5 lands.
    """
    global _active
    _active = _load(name)
    return _active
