"""Element-wise functions and comparisons: DGL's ``exp``, ``sqrt``, ``floor_div``, ``clamp``,
``softmax``, ``replace_inf_with_zero``, ``equal``, ``allclose``, ``logical_not``, ``logical_and``,
``clone`` and ``inverse`` (of a matrix).

>>> import torch
>>> from nodeweave.compat import dgl_backend as F
>>> F.replace_inf_with_zero(torch.tensor([1.0, float("inf"), -float("inf")])).tolist()
[1.0, 0.0, 0.0]
>>> F.floor_div(torch.tensor([7, -7]), 2).tolist()     # rounds down, as Python's //
[3, -4]
>>> F.allclose(torch.tensor([1.0]), torch.tensor([1.00001]))
True
"""

from __future__ import annotations

from typing import Any

import nodeweave.core as nc
from nodeweave.compat.dgl_backend import _library

__all__ = ["exp", "sqrt", "floor_div", "clamp", "softmax", "replace_inf_with_zero", "equal", "allclose",
           "logical_not", "logical_and", "clone", "inverse"]


def exp(input: Any) -> Any:  # noqa: A002
    """``e ** input``."""
    return _library.of(input).exp(input)


def sqrt(input: Any) -> Any:  # noqa: A002
    """Square root."""
    return _library.of(input).sqrt(input)


def floor_div(in1: Any, in2: Any) -> Any:
    """``in1 // in2``, rounding down as Python's ``//`` and DGL's PyTorch backend do (DGL's docstring
    says "towards zero"; the two differ for negative quotients). PyTorch only."""
    lib = _library.of(in1, in2)
    _library.torch_only("floor_div", lib)
    return lib.div(in1, in2, rounding_mode="floor")


def clamp(data: Any, min_val: Any, max_val: Any) -> Any:
    """``data`` with every element moved into ``[min_val, max_val]``."""
    return _library.of(data).clamp(data, min_val, max_val)


def softmax(input: Any, dim: int = -1) -> Any:  # noqa: A002
    """Softmax along ``dim``."""
    return _library.of(input).softmax(input, dim=dim)


def replace_inf_with_zero(x: Any) -> Any:
    """A copy of ``x`` with ``inf`` and ``-inf`` replaced by 0 (differentiable: their gradient is 0)."""
    return _library.of(x).masked_fill(x, x.abs() == float("inf"), 0)


def equal(x: Any, y: Any) -> Any:
    """Element-wise ``x == y`` (a bool tensor)."""
    return x == y


def allclose(x: Any, y: Any, rtol: float = 1e-4, atol: float = 1e-4) -> bool:
    """Whether ``|x - y| <= atol + rtol * |y|`` everywhere (equal infinities are close, NaN never)."""
    lib = _library.of(x, y)
    if lib is not nc:
        return bool(lib.allclose(x, y, rtol=rtol, atol=atol))
    return bool((((x - y).abs() <= atol + rtol * y.abs()) | (x == y)).all().item())


def logical_not(input: Any) -> Any:  # noqa: A002
    """Element-wise logical not, as ``np.logical_not`` (a bool tensor; nonzero counts as true)."""
    return _library.of(input).logical_not(input)


def logical_and(input1: Any, input2: Any) -> Any:
    """Element-wise logical and (a bool tensor)."""
    return _library.of(input1, input2).logical_and(input1, input2)


def clone(input: Any) -> Any:  # noqa: A002
    """A copy of ``input`` that autograd differentiates through."""
    return input.clone()


def inverse(input: Any) -> Any:  # noqa: A002
    """The inverse of a square matrix (PyTorch only: nodeweave.core has no matrix inverse)."""
    lib = _library.of(input)
    _library.torch_only("inverse", lib)
    return lib.linalg.inv(input)
