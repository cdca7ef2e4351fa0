"""``Linear`` and ``Identity``."""

from __future__ import annotations

import math
from typing import Any

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core.nn import functional as F
from nodeweave.core.nn import init
from nodeweave.core.nn.module import Module
from nodeweave.core.nn.parameter import Parameter
from nodeweave import errors as nwerr


def _positive_int(name: str, value: Any, cls: str, allow_zero: bool = True) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
        raise nwerr.ValueError(f"{cls}: {name} must be a {'non-negative' if allow_zero else 'positive'} int, "
                               f"got {value!r}")
    return value


def _dtype_arg(dtype: Any) -> Any:
    return _C.dtype.float32 if dtype is None else dtype


class Identity(Module):
    """Returns its input unchanged (any constructor arguments are ignored, as in torch).

    >>> import nodeweave.core as nc
    >>> nc.nn.Identity()(nc.tensor([1.0])).tolist()
    [1.0]
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out_features, in_features)``.

    Initialized like torch: ``weight`` by ``kaiming_uniform_(a=sqrt(5))``, i.e. U(-1/sqrt(in), 1/sqrt(in)),
    and ``bias`` from the same interval.

    >>> import nodeweave.core as nc
    >>> fc = nc.nn.Linear(3, 2)
    >>> fc
    Linear(in_features=3, out_features=2, bias=True)
    >>> tuple(fc(nc.ones(5, 3)).shape)
    (5, 2)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_features = _positive_int("in_features", in_features, "Linear")
        self.out_features = _positive_int("out_features", out_features, "Linear")
        self.weight = Parameter(_C.empty(out_features, in_features, dtype=_dtype_arg(dtype), device=device))
        if bias:
            self.bias = Parameter(_C.empty(out_features, dtype=_dtype_arg(dtype), device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        if not isinstance(input, Tensor):
            raise nwerr.TypeError(f"Linear: input must be a Tensor, got {type(input).__name__}")
        if input.dim() == 0 or input.shape[-1] != self.in_features:
            raise nwerr.ValueError(f"Linear: input of shape {tuple(input.shape)} must have in_features="
                                   f"{self.in_features} elements in its last dimension")
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
