"""Python-level parts of :class:`nodeweave.core.Tensor`: construction from Python data, NumPy
conversion, ``to()``, ``repr`` and other conveniences that are not on the hot path."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave import errors as nwerr

_NP_FROM = {
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int32": np.int32, "int64": np.int64,
    "float16": np.float16, "float32": np.float32, "float64": np.float64,
}


def _default_dtype_for(arr: np.ndarray, data: Any) -> str:
    kind = arr.dtype.kind
    if kind == "b":
        return "bool"
    if kind in "iu":
        return arr.dtype.name if isinstance(data, (np.ndarray, np.generic)) and arr.dtype.name in _NP_FROM else "int64"
    if kind == "f":
        # Python floats become float32 (PyTorch's default); NumPy arrays keep their precision.
        return arr.dtype.name if isinstance(data, (np.ndarray, np.generic)) else "float32"
    raise nwerr.TypeError(f"tensor(): can't convert data of NumPy dtype {arr.dtype} to a tensor")


def tensor(data: Any, dtype=None, device=None, requires_grad: builtins.bool = False) -> Tensor:
    """Copies ``data`` (nested lists, scalars, NumPy arrays, tensors) into a new tensor.

    >>> import nodeweave.core as nc
    >>> nc.tensor([1, 2, 3]).dtype
    nodeweave.core.int64
    >>> nc.tensor([[1.5]], dtype=nc.float64).shape
    (1, 1)
    """
    if isinstance(data, Tensor):
        t = data.detach().clone()
        if dtype is not None:
            t = t._cast(dtype)
    else:
        if hasattr(data, "__dlpack__") and not isinstance(data, np.ndarray):
            data = np.asarray(data.detach().cpu() if hasattr(data, "detach") else data)
        try:
            arr = np.asarray(data)
        except ValueError as e:
            raise nwerr.ValueError(f"tensor(): data is not a rectangular nested sequence: {e}") from None
        if arr.dtype == object:
            raise nwerr.TypeError("tensor(): data must be numbers or nested sequences of numbers")
        target = _C._parse_dtype(dtype).name if dtype is not None else _default_dtype_for(arr, data)
        if target == "bfloat16":
            t = _C.from_numpy(np.ascontiguousarray(arr, dtype=np.float32))._cast("bfloat16")
        else:
            t = _C.from_numpy(np.array(arr, dtype=_NP_FROM[target], copy=True, order="C"))
    if device is not None:
        t = t._to_device(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def as_tensor(data: Any, dtype=None, device=None) -> Tensor:
    """Like :func:`tensor` but shares memory with a matching NumPy array or tensor."""
    if isinstance(data, Tensor):
        t = data if dtype is None else data._cast(dtype)
        return t if device is None else t._to_device(device)
    if isinstance(data, np.ndarray) and dtype is None and device is None and data.dtype.name in _NP_FROM:
        return _C.from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(arr: np.ndarray) -> Tensor:
    """Wraps a NumPy array without copying; the array stays alive while the tensor does.

    >>> import numpy as np, nodeweave.core as nc
    >>> a = np.arange(3.0)
    >>> t = nc.from_numpy(a); a[0] = 7.0
    >>> t.tolist()
    [7.0, 1.0, 2.0]
    """
    if not isinstance(arr, np.ndarray):
        raise nwerr.TypeError(f"from_numpy: expected a numpy.ndarray, got {type(arr).__name__}")
    return _C.from_numpy(arr)


def arange(start, end=None, step=1, *, dtype=None, device=None) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive); integer arguments give int64 like PyTorch."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, builtins.int) for v in (start, end, step))
        dtype = "int64" if is_int else "float32"
    return _C._arange(builtins.float(start), builtins.float(end), builtins.float(step), dtype, device)


def _is_foreign_dtype(a: Any) -> bool:
    """A NumPy dtype (``np.dtype('float32')`` or the scalar type ``np.float32``) or a torch dtype:
    spellings ``to()`` takes positionally besides the engine's own dtypes (so that code written for
    PyTorch or NumPy converts unchanged); ``_C._parse_dtype`` reads them."""
    if isinstance(a, np.dtype) or isinstance(a, type) and issubclass(a, np.generic):
        return True
    return type(a).__name__ == "dtype" and type(a).__module__ == "torch"


def parse_to_args(args: tuple, kwargs: dict) -> tuple:
    """Parses ``to(...)`` arguments (a device, a dtype, a tensor to match, or keywords) into
    ``(device or None, dtype or None)``; shared by ``Tensor.to`` and ``Module.to``."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise nwerr.TypeError(f"to(): unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _C.dtype) or _is_foreign_dtype(a):
            dtype = a
        elif isinstance(a, _C.device):
            device = a
        elif isinstance(a, str):
            if a in ("cpu", "cuda") or a.startswith("cuda:"):
                device = a
            else:
                dtype = a
        else:
            raise nwerr.TypeError(f"to(): expected a device, dtype or tensor, got {type(a).__name__} {a!r}")
    if device is not None:
        device = _C.device(device)
    if dtype is not None and not isinstance(dtype, _C.dtype):
        try:
            dtype = _C._parse_dtype(dtype)
        except (TypeError, ValueError):
            raise nwerr.TypeError(f"to(): unknown dtype {dtype!r}") from None
    return device, dtype


def _to(self: Tensor, *args, **kwargs) -> Tensor:
    """``t.to(dtype)``, ``t.to(device)``, ``t.to(device, dtype)``, ``t.to(other)``, ``copy=True``."""
    copy = kwargs.pop("copy", False)
    device, dtype = parse_to_args(args, kwargs)
    t = self
    if device is not None and device != t.device:
        t = t._to_device(device)
    if dtype is not None and dtype != t.dtype:
        t = t._cast(dtype)
    if copy and t is self:
        t = t.clone()
    return t


def _numpy(self: Tensor, *, force: builtins.bool = False) -> np.ndarray:
    if self.requires_grad and not force:
        raise nwerr.RuntimeError("can't call numpy() on a tensor that requires grad; use tensor.detach().numpy()")
    t = self if self.device.type == "cpu" else self._to_device("cpu")
    if t.dtype.name == "bfloat16":
        return np.asarray(_C._to_numpy(t._cast("float32")))
    return _C._to_numpy(t)


def _repr(self: Tensor) -> str:
    arr = _numpy(self.detach(), force=True)
    body = np.array2string(arr, separator=", ", prefix="tensor(", threshold=1000, edgeitems=3)
    extras = []
    if self.dtype.name not in ("float32", "int64", "bool"):
        extras.append(f"dtype=nodeweave.core.{self.dtype.name}")
    if self.device.type != "cpu":
        extras.append(f"device='{self.device}'")
    if self.grad_fn is not None:
        extras.append(f"grad_fn=<{self.grad_fn.name()}>")
    elif self.requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"


def _register_hook(self: Tensor, fn):
    """Registers ``fn(grad) -> grad or None``; returns a handle with ``remove()``."""
    hid = self._register_hook(fn)

    class _Handle:
        def remove(_h) -> None:  # noqa: N805
            self._remove_hook(hid)

    return _Handle()


def _backward_method(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    if inputs is not None:
        raise nwerr.NotImplementedError("backward(inputs=...) is not supported; use nodeweave.core.autograd.grad")
    _C_backward(self, gradient, retain_graph, create_graph)


_C_backward = Tensor.backward


def _deepcopy(self, memo):
    """A leaf copy with its own storage, ``requires_grad`` and ``.grad`` (what ``copy.deepcopy`` of a
    model or a ``state_dict`` needs). Like PyTorch, only leaves can be deep-copied: copying the
    autograd history is not meaningful."""
    if id(self) in memo:
        return memo[id(self)]
    if not self.is_leaf:
        raise nwerr.RuntimeError("only leaf tensors (created by the user, not by an operation on tensors that "
                                 "require grad) support copy.deepcopy; call .detach() first")
    out = self.detach().clone()
    if self.requires_grad:
        out.requires_grad_(True)
    if self.grad is not None:
        out.grad = self.grad.detach().clone()
    memo[id(self)] = out
    return out

Tensor.to = _to
Tensor.__deepcopy__ = _deepcopy
Tensor.numpy = _numpy
Tensor.__array__ = lambda self, dtype=None, copy=None: (
    _numpy(self) if dtype is None else _numpy(self).astype(dtype))
Tensor.tolist = lambda self: _numpy(self.detach(), force=True).tolist()
Tensor.__repr__ = _repr
Tensor.__str__ = _repr
Tensor.register_hook = _register_hook
Tensor.float = lambda self: self.to("float32")
Tensor.double = lambda self: self.to("float64")
Tensor.half = lambda self: self.to("float16")
Tensor.bfloat16 = lambda self: self.to("bfloat16")
Tensor.long = lambda self: self.to("int64")
Tensor.int = lambda self: self.to("int32")
Tensor.bool = lambda self: self.to("bool")
Tensor.cpu = lambda self: self.to("cpu")
Tensor.cuda = lambda self, device=None: self.to("cuda" if device is None else _C.device(device))
Tensor.type_as = lambda self, other: self.to(other.dtype)
