"""Weight initialization (``nodeweave.core.nn.init``), with torch.nn.init's names, gains and fan
computations. Every function fills its tensor in place without recording autograd and returns it.

>>> import nodeweave.core as nc
>>> w = nc.nn.Parameter(nc.empty(64, 32))
>>> _ = nc.nn.init.kaiming_uniform_(w, nonlinearity="relu")
>>> bound = (2.0 ** 0.5) * (3.0 / 32) ** 0.5
>>> bool(abs(w).amax().item() <= bound)
True
"""

from __future__ import annotations

import math
from typing import Optional, Tuple

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core.autograd import no_grad
from nodeweave import errors as nwerr

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "xavier_uniform_",
           "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]

_LINEAR_LIKE = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param: Optional[float] = None) -> float:
    """The recommended gain for a nonlinearity (torch's table)::

        linear, conv*, sigmoid: 1    tanh: 5/3    relu: sqrt(2)
        leaky_relu: sqrt(2 / (1 + negative_slope^2))    selu: 3/4

    >>> import nodeweave.core as nc
    >>> nc.nn.init.calculate_gain("tanh")
    1.6666666666666667
    """
    if nonlinearity in _LINEAR_LIKE:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, bool) or not isinstance(param, (int, float)):
            raise nwerr.ValueError(f"negative_slope {param!r} is not a valid number")
        else:
            slope = float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise nwerr.ValueError(f"Unsupported nonlinearity {nonlinearity!r}")


def _fans(tensor: Tensor) -> Tuple[int, int]:
    if tensor.dim() < 2:
        raise nwerr.ValueError(f"Fan in and fan out can not be computed for a tensor with fewer than 2 dimensions "
                               f"(got shape {tuple(tensor.shape)})")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise nwerr.ValueError(f"Mode {mode!r} not supported, please use one of 'fan_in', 'fan_out'")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _check(tensor: Tensor, fn: str) -> None:
    if not isinstance(tensor, Tensor):
        raise nwerr.TypeError(f"{fn}: expected a Tensor, got {type(tensor).__name__}")
    if not tensor.is_floating_point():
        raise nwerr.TypeError(f"{fn}: expected a floating point tensor, got dtype {tensor.dtype.name}")


def _fill_from(tensor: Tensor, values: Tensor) -> Tensor:
    with no_grad():
        tensor.copy_(values)
    return tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fills with values drawn from U(a, b)."""
    _check(tensor, "uniform_")
    if not a <= b:
        raise nwerr.ValueError(f"uniform_: expected a <= b, got a={a}, b={b}")
    u = _C.rand(list(tensor.shape), dtype=tensor.dtype)
    return _fill_from(tensor, u * (b - a) + a)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fills with values drawn from N(mean, std^2)."""
    _check(tensor, "normal_")
    if not std >= 0:
        raise nwerr.ValueError(f"normal_: std must be non-negative, got {std}")
    z = _C.randn(list(tensor.shape), dtype=tensor.dtype)
    return _fill_from(tensor, z * std + mean)


def constant_(tensor: Tensor, val: float) -> Tensor:
    _check(tensor, "constant_")
    with no_grad():
        tensor.fill_(float(val))
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    _check(tensor, "xavier_uniform_")
    fan_in, fan_out = _fans(tensor)
    a = gain * math.sqrt(2.0 / float(fan_in + fan_out)) * math.sqrt(3.0)
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot normal: N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    _check(tensor, "xavier_normal_")
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:
    """He uniform: U(-b, b) with ``b = gain * sqrt(3 / fan)``, gain from :func:`calculate_gain`."""
    _check(tensor, "kaiming_uniform_")
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor  # nothing to fill; torch warns and returns
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:
    """He normal: N(0, std^2) with ``std = gain / sqrt(fan)``."""
    _check(tensor, "kaiming_normal_")
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan))
