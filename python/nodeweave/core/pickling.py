"""Pickle support for engine objects: tensors, parameters and devices.

``pickle``, ``copy``, ``multiprocessing`` (spawned workers receive their arguments pickled) and
``torch.save`` all go through :mod:`copyreg`, so registering a reducer here makes
``nodeweave.core.Tensor`` (a C++ class, which pickle cannot take apart) work with every one of them.

A tensor is pickled as the bytes :func:`nodeweave.core.save` writes for it -- one file format for
tensors, with its dtype/shape/CRC checks on the way back -- plus the device it lived on. As with
``torch.Tensor``, the value and ``requires_grad`` survive (a tensor that required grad comes back as
a leaf that requires grad); autograd history and ``.grad`` do not.

>>> import pickle, nodeweave.core as nc
>>> t = pickle.loads(pickle.dumps(nc.tensor([[1.5, 2.0]], dtype=nc.float64, requires_grad=True)))
>>> t.tolist(), t.dtype, t.requires_grad, t.is_leaf
([[1.5, 2.0]], nodeweave.core.float64, True, True)
>>> pickle.loads(pickle.dumps(nc.device("cpu")))
device(type='cpu')
"""

from __future__ import annotations

import copyreg
import io
from typing import Any, Callable

from nodeweave import _C
from nodeweave.core.serialization import load, save

__all__: list[str] = []


def _rebuild_tensor(payload: bytes, device: str) -> _C.Tensor:
    """The inverse of :func:`_reduce_tensor` (module level so that pickle can name it)."""
    t = load(io.BytesIO(payload))
    return t if device == "cpu" else t._to_device(device)


def _reduce_tensor(t: _C.Tensor) -> tuple[Callable[..., Any], tuple]:
    buf = io.BytesIO()
    save(t, buf)  # copies a device tensor to the host and a strided view into C order
    return _rebuild_tensor, (buf.getvalue(), str(t.device))


def _reduce_device(d: _C.device) -> tuple[Callable[..., Any], tuple]:
    return _C.device, (str(d),)


copyreg.pickle(_C.Tensor, _reduce_tensor)
copyreg.pickle(_C.device, _reduce_device)
