"""``dgl.backend.pytorch``: DGL's tensor API with PyTorch as the library, whatever backend is active.

Scripts written for DGL import it directly (``from dgl.backend.pytorch import gather_row``, ``from
dgl.backend import pytorch as dgl_F``). Every function is :mod:`nodeweave.compat.dgl_backend`'s,
run with torch pinned as the library: ``cpu()`` is ``torch.device('cpu')``, ``tensor([1, 2])`` and
``zerocopy_from_numpy`` make torch tensors, ``is_tensor`` means ``torch.Tensor``. As in DGL's module
of that name, ``data_type_dict`` is a function returning the dtype dictionary.

>>> import numpy as np
>>> import nodeweave as nw
>>> from nodeweave.compat.dgl_backend import pytorch as TF
>>> nw.backend.current().name                                 # the native backend is active...
'native'
>>> type(TF.tensor([1, 2])).__module__, TF.cpu(), TF.is_tensor(TF.zerocopy_from_numpy(np.ones(2)))
('torch', device(type='cpu'), True)
>>> TF.data_type_dict()["int64"]
torch.int64

The functions of DGL's PyTorch backend that take DGL's graph index (``dgl.backend.pytorch.sparse``)
are not here, as in :mod:`nodeweave.compat.dgl_backend`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import torch

from nodeweave import errors as nwerr
from nodeweave.compat import dgl_backend as _api
from nodeweave.compat.dgl_backend import _library

__all__ = [*_api.FUNCTIONS, "data_type_dict"]


def _pinned(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        with _library.using(torch):
            return fn(*args, **kwargs)

    call.__doc__ = f"nodeweave.compat.dgl_backend.{fn.__name__} with torch as the library."
    return call


for _name in _api.FUNCTIONS:
    _fn = getattr(_api, _name)
    globals()[_name] = _fn if isinstance(_fn, type) else _pinned(_fn)  # the grad blocks set both modes
del _name, _fn


def is_tensor(obj: Any) -> bool:  # noqa: F811 (replaces the pinned copy: here a tensor is torch's)
    """Whether ``obj`` is a ``torch.Tensor``."""
    return isinstance(obj, torch.Tensor)


def data_type_dict() -> dict[str, Any]:
    """DGL's dtype names -> torch dtypes."""
    return _library.data_type_dict(torch)


def __getattr__(name: str) -> Any:
    """Names DGL's PyTorch backend has and nodeweave does not: the reason, as in the parent module."""
    if name in _api._NOT_HERE:
        return _api.__getattr__(name)  # raises, naming what to use instead
    raise nwerr.AttributeError(f"module {__name__!r} (dgl.backend.pytorch) has no attribute {name!r}")
