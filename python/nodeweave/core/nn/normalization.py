"""``LayerNorm`` and ``BatchNorm1d``."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core.nn import functional as F
from nodeweave.core.nn import init
from nodeweave.core.nn.linear import _dtype_arg, _positive_int
from nodeweave.core.nn.module import Module
from nodeweave.core.nn.parameter import Parameter
from nodeweave import errors as nwerr


class LayerNorm(Module):
    """Normalizes over the trailing ``normalized_shape`` dims, then applies an elementwise affine map
    (weight starts at 1, bias at 0).

    >>> import nodeweave.core as nc
    >>> ln = nc.nn.LayerNorm(4)
    >>> ln
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> y = ln(nc.tensor([[1.0, 2.0, 3.0, 4.0]]))
    >>> round(y.sum().item(), 5)
    0.0
    """

    def __init__(self, normalized_shape: Union[int, Sequence[int]], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        for s in shape:
            _positive_int("normalized_shape entries", s, "LayerNorm", allow_zero=False)
        if not shape:
            raise nwerr.ValueError("LayerNorm: normalized_shape must not be empty")
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_C.ones(list(shape), dtype=_dtype_arg(dtype), device=device))
            if bias:
                self.bias = Parameter(_C.zeros(list(shape), dtype=_dtype_arg(dtype), device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class BatchNorm1d(Module):
    """Batch normalization over the channel dim of ``(N, C)`` or ``(N, C, L)`` input.

    Training normalizes with the batch statistics and updates ``running_mean``/``running_var``
    (``momentum=None`` gives a cumulative average); eval mode uses the running statistics.
    ``bias=False`` (keyword-only, as in torch) keeps the scale but drops the shift.
    ``num_batches_tracked`` counts training batches.

    >>> import nodeweave.core as nc
    >>> bn = nc.nn.BatchNorm1d(2)
    >>> _ = bn(nc.tensor([[0.0, 1.0], [2.0, 3.0]]))
    >>> bn.running_mean.tolist(), int(bn.num_batches_tracked.item())
    ([0.10000000149011612, 0.20000000298023224], 1)
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features = _positive_int("num_features", num_features, "BatchNorm1d", allow_zero=False)
        self.eps = eps
        if momentum is not None and not 0.0 <= momentum <= 1.0:
            raise nwerr.ValueError(f"BatchNorm1d: momentum must be in [0, 1] or None, got {momentum}")
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        dt = _dtype_arg(dtype)
        if affine:
            self.weight = Parameter(_C.ones(num_features, dtype=dt, device=device))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(_C.zeros(num_features, dtype=dt, device=device))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _C.zeros(num_features, dtype=dt, device=device))
            self.register_buffer("running_var", _C.ones(num_features, dtype=dt, device=device))
            self.register_buffer("num_batches_tracked", _C.zeros(1, dtype=_C.dtype.int64, device=device).reshape([]))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1.0)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        if not isinstance(input, Tensor):
            raise nwerr.TypeError(f"BatchNorm1d: input must be a Tensor, got {type(input).__name__}")
        if input.dim() not in (2, 3) or input.shape[1] != self.num_features:
            raise nwerr.ValueError(f"BatchNorm1d: expected input of shape (N, {self.num_features}) or "
                                   f"(N, {self.num_features}, L), got {tuple(input.shape)}")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or not self.track_running_stats
        # Running statistics are updated only while training; eval with tracking reads them.
        update = self.training and self.track_running_stats
        return F.batch_norm(input, self.running_mean if (update or not use_batch_stats) else None,
                            self.running_var if (update or not use_batch_stats) else None,
                            self.weight, self.bias, use_batch_stats, momentum, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")
