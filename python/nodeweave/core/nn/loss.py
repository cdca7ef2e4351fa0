"""Loss modules: thin wrappers over :mod:`nodeweave.core.nn.functional` holding the options.

>>> import nodeweave.core as nc
>>> nc.nn.MSELoss()(nc.tensor([1.0, 3.0]), nc.tensor([0.0, 0.0])).item()
5.0
"""

from __future__ import annotations

from typing import Optional

from nodeweave._C import Tensor
from nodeweave.core.nn import functional as F
from nodeweave.core.nn.module import Module
from nodeweave import errors as nwerr

_REDUCTIONS = ("none", "mean", "sum")


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in _REDUCTIONS:
            raise nwerr.ValueError(f"{type(self).__name__}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: Optional[Tensor] = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        if weight is not None and not isinstance(weight, Tensor):
            raise nwerr.TypeError(f"{type(self).__name__}: weight must be a Tensor or None, got {type(weight).__name__}")
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits ``(N, C, ...)`` against class ids or class probabilities."""

    def __init__(self, weight: Optional[Tensor] = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise nwerr.ValueError(f"CrossEntropyLoss: label_smoothing must be in [0, 1], got {label_smoothing}")
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of log-probabilities ``(N, C, ...)`` at class ids ``(N, ...)``."""

    def __init__(self, weight: Optional[Tensor] = None, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class MSELoss(_Loss):
    """Mean (or summed) squared error."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """Mean (or summed) absolute error."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy, with per-element ``weight`` and per-class ``pos_weight``."""

    def __init__(self, weight: Optional[Tensor] = None, reduction: str = "mean",
                 pos_weight: Optional[Tensor] = None) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, self.reduction, self.pos_weight)


class MarginRankingLoss(_Loss):
    """``max(0, -y * (x1 - x2) + margin)`` for ``y`` in {1, -1}; e.g. positive vs corrupted triple scores."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, self.margin, self.reduction)
