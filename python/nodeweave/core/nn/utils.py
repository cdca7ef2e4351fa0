"""Gradient clipping (``nodeweave.core.nn.utils``).

>>> import nodeweave.core as nc
>>> w = nc.nn.Parameter(nc.zeros(2))
>>> w.grad = nc.tensor([3.0, 4.0])
>>> nc.nn.utils.clip_grad_norm_([w], max_norm=1.0).item()
5.0
>>> [round(v, 4) for v in w.grad.tolist()]
[0.6, 0.8]
"""

from __future__ import annotations

import math
from typing import Iterable, List, Union

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core.autograd import no_grad
from nodeweave.core.nn import _row_sparse
from nodeweave import errors as nwerr

__all__ = ["clip_grad_norm_", "clip_grad_value_"]

_Params = Union[Tensor, Iterable[Tensor]]


def _with_grad(parameters: _Params) -> List[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    out = []
    for i, p in enumerate(parameters):
        if not isinstance(p, Tensor):
            raise nwerr.TypeError(f"parameters[{i}] must be a Tensor, got {type(p).__name__}")
        if p.grad is not None:
            out.append(p)
    return out


def _norm_type(value: Union[float, int, str]) -> float:
    if isinstance(value, str):
        if value.lower() != "inf":
            raise nwerr.ValueError(f"norm_type must be a positive number or 'inf', got {value!r}")
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise nwerr.ValueError(f"norm_type must be a positive number or inf, got {value!r}")
    return float(value)


def clip_grad_norm_(parameters: _Params, max_norm: float, norm_type: Union[float, str] = 2.0,
                    error_if_nonfinite: bool = False) -> Tensor:
    """Scales all gradients together so that their joint ``norm_type``-norm is at most ``max_norm``.

    Returns the norm before clipping as a 0-d tensor (float32, or float64 if any gradient is).
    Gradients are replaced by scaled copies (the engine may share one gradient tensor between two
    leaves, which an in-place scale would scale twice).
    """
    p_type = _norm_type(norm_type)
    if isinstance(max_norm, bool) or not isinstance(max_norm, (int, float)) or math.isnan(max_norm) or max_norm < 0:
        raise nwerr.ValueError(f"max_norm must be a non-negative number, got {max_norm!r}")
    params = _with_grad(parameters)
    grads = [p.grad for p in params]
    dtype = _C.dtype.float64 if any(g.dtype == _C.dtype.float64 for g in grads) else _C.dtype.float32
    total = _C._total_norm(grads, p_type) if grads else 0.0
    if error_if_nonfinite and not math.isfinite(total):
        raise nwerr.RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite "
                                 f"({total}), so it cannot be clipped; pass error_if_nonfinite=False to clip anyway")
    coef = max_norm / (total + 1e-6)
    if coef < 1.0 or math.isnan(coef):
        with no_grad():
            for p, g in zip(params, grads):
                p.grad = g * coef
                _row_sparse.transform(p, lambda rows: rows * coef)
    return _C.scalar_tensor(total, dtype)


def clip_grad_value_(parameters: _Params, clip_value: float) -> None:
    """Clamps every gradient element into ``[-clip_value, clip_value]``."""
    if isinstance(clip_value, bool) or not isinstance(clip_value, (int, float)) or not clip_value >= 0:
        raise nwerr.ValueError(f"clip_value must be a non-negative number, got {clip_value!r}")
    lo, hi = -float(clip_value), float(clip_value)
    with no_grad():
        for p in _with_grad(parameters):
            p.grad = p.grad.clamp(lo, hi)
            _row_sparse.transform(p, lambda rows: rows.clamp(lo, hi))
