"""Learning-rate schedules that rewrite ``group["lr"]`` of an optimizer, with torch.optim.lr_scheduler's
semantics: the constructor performs step 0, and each ``step()`` (called after ``optimizer.step()``)
advances ``last_epoch`` by one. The recursive ("chainable") formulas are the same as torch's, so the
learning-rate sequences agree to the last bit.

>>> import nodeweave.core as nc
>>> opt = nc.optim.SGD([nc.nn.Parameter(nc.zeros(1))], lr=1.0)
>>> sched = nc.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for _ in range(5):
...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
>>> lrs
[1.0, 0.5, 0.5, 0.25, 0.25]
"""

from __future__ import annotations

import math
import types
from typing import Any, Callable, Dict, List, Sequence, Union

from nodeweave.core.optim.optimizer import Optimizer
from nodeweave import errors as nwerr


class LRScheduler:
    """Base class: subclasses implement :meth:`get_lr` from the groups' current ``lr``."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise nwerr.TypeError(f"optimizer must be a nodeweave.core.optim.Optimizer, got {type(optimizer).__name__}")
        if not isinstance(last_epoch, int) or last_epoch < -1:
            raise nwerr.ValueError(f"last_epoch must be an int >= -1, got {last_epoch!r}")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise nwerr.ValueError(f"param 'initial_lr' is not specified in param_groups[{i}] when "
                                           f"resuming a schedule (last_epoch={last_epoch})")
        self.base_lrs: List[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> List[float]:
        raise nwerr.NotImplementedError(f"{type(self).__name__} must implement get_lr")

    def step(self) -> None:
        """Advances the schedule by one epoch and writes the new rates into the optimizer."""
        self._step_count += 1
        self.last_epoch += 1
        values = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> List[float]:
        """The rates the last :meth:`step` set, one per parameter group."""
        return list(self._last_lr)

    def state_dict(self) -> Dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        if not isinstance(state_dict, dict):
            raise nwerr.TypeError(f"state_dict must be a dict, got {type(state_dict).__name__}")
        self.__dict__.update(state_dict)

    def _group_lrs(self) -> List[float]:
        return [group["lr"] for group in self.optimizer.param_groups]


def _check_positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise nwerr.ValueError(f"{name} must be a positive int, got {value!r}")


class StepLR(LRScheduler):
    """Multiplies the rate by ``gamma`` every ``step_size`` epochs.

    >>> import nodeweave.core as nc
    >>> opt = nc.optim.SGD([nc.nn.Parameter(nc.zeros(1))], lr=0.1)
    >>> nc.optim.lr_scheduler.StepLR(opt, step_size=30).get_last_lr()
    [0.1]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        _check_positive_int("step_size", step_size)
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]


class MultiStepLR(LRScheduler):
    """Multiplies the rate by ``gamma`` at each epoch listed in ``milestones``.

    >>> import nodeweave.core as nc
    >>> opt = nc.optim.SGD([nc.nn.Parameter(nc.zeros(1))], lr=1.0)
    >>> s = nc.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> [(opt.step(), s.step(), s.get_last_lr()[0])[2] for _ in range(4)]
    [0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = {}
        for m in milestones:
            _check_positive_int("each milestone", m)
            self.milestones[m] = self.milestones.get(m, 0) + 1
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [lr * factor for lr in self._group_lrs()]


class ExponentialLR(LRScheduler):
    """Multiplies the rate by ``gamma`` every epoch.

    >>> import nodeweave.core as nc
    >>> opt = nc.optim.SGD([nc.nn.Parameter(nc.zeros(1))], lr=1.0)
    >>> s = nc.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> opt.step(); s.step(); s.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        if self._is_initial:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]


class LambdaLR(LRScheduler):
    """Sets the rate to ``base_lr * lr_lambda(epoch)`` (one function, or one per group).

    >>> import nodeweave.core as nc
    >>> opt = nc.optim.SGD([nc.nn.Parameter(nc.zeros(1))], lr=2.0)
    >>> s = nc.optim.lr_scheduler.LambdaLR(opt, lambda e: 1 / (e + 1))
    >>> opt.step(); s.step(); s.get_last_lr()
    [1.0]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Union[Callable[[int], float], Sequence[Callable]],
                 last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups)
        if callable(lr_lambda):
            self.lr_lambdas = [lr_lambda] * n
        else:
            lambdas = list(lr_lambda)
            if len(lambdas) != n:
                raise nwerr.ValueError(f"expected {n} lr_lambdas (one per parameter group), got {len(lambdas)}")
            self.lr_lambdas = lambdas
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        return [base * fn(self.last_epoch) for base, fn in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self) -> Dict[str, Any]:
        # Functions are not data: like torch, keep only callable objects' own state.
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(getattr(fn, "__dict__", {}))
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas", None) or []
        super().load_state_dict(state)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the base rate to ``eta_min`` over ``T_max`` epochs (then back up, like
    torch's recursive form, which this follows step for step).

    >>> import nodeweave.core as nc
    >>> opt = nc.optim.SGD([nc.nn.Parameter(nc.zeros(1))], lr=1.0)
    >>> s = nc.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> [round((opt.step(), s.step(), s.get_last_lr()[0])[2], 6) for _ in range(2)]
    [0.5, 0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        _check_positive_int("T_max", T_max)
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._group_lrs()
        if self._step_count == 1 and e > 0:  # resumed: closed form
            return [lo + (base - lo) * (1 + math.cos(e * math.pi / T)) / 2 for base in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [lr + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base, lr in zip(self.base_lrs, self._group_lrs())]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) * (lr - lo) + lo
                for lr in self._group_lrs()]
