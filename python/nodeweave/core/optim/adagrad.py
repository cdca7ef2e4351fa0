"""Adagrad, with a row-sparse path for sparse embedding gradients."""

from __future__ import annotations

from typing import Any, Dict

from nodeweave import _C
from nodeweave.core.nn import _row_sparse
from nodeweave.core.optim.optimizer import Optimizer, ParamsT, check_number, step_count


class Adagrad(Optimizer):
    """Adagrad, step for step like ``torch.optim.Adagrad``::

        g = grad (negated if maximize) + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        sum = sum + g * g                     # starts at initial_accumulator_value
        p = p - clr * g / (sqrt(sum) + eps)

    A row-sparse gradient (``Embedding(sparse=True)``) updates only the looked-up rows of ``p`` and
    ``sum``; that equals the dense update, since a zero gradient row changes neither. With weight decay
    every row changes, so the dense gradient is used.

    >>> import nodeweave.core as nc
    >>> w = nc.nn.Parameter(nc.tensor([1.0]))
    >>> opt = nc.optim.Adagrad([w], lr=0.5)
    >>> (w * 3.0).sum().backward(); opt.step()
    >>> round(w.item(), 6)   # 1 - 0.5 * 3 / sqrt(9)
    0.5
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0, eps: float = 1e-10, *, maximize: bool = False) -> None:
        defaults = dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, eps=eps, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("lr_decay", group["lr_decay"])
        check_number("weight_decay", group["weight_decay"])
        check_number("initial_accumulator_value", group["initial_accumulator_value"])
        check_number("epsilon", group["eps"])

    def add_param_group(self, param_group: Dict[str, Any]) -> None:
        super().add_param_group(param_group)
        # torch creates the accumulators eagerly, so a state_dict taken before the first step has them.
        for p in self.param_groups[-1]["params"]:
            self._init_state(p, self.param_groups[-1])

    def _init_state(self, p, group: Dict[str, Any]) -> None:
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["sum"] = _C.full_like(p, float(group["initial_accumulator_value"]))

    def _update_group(self, group: Dict[str, Any]) -> None:
        params, grads, sums, steps = [], [], [], []
        for p in self._with_grad(group):
            self._init_state(p, group)
            state = self.state[p]
            state["step"] = step_count(state) + 1
            if group["weight_decay"] == 0:
                sparse = _row_sparse.rows(p)
                if sparse is not None:
                    clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
                    _C._adagrad_sparse_step(p, state["sum"], sparse[0], sparse[1], clr, group["eps"],
                                            group["maximize"])
                    continue
            params.append(p)
            grads.append(p.grad)
            sums.append(state["sum"])
            steps.append(state["step"])
        if params:
            _C._adagrad_step(params, grads, sums, steps, group["lr"], group["lr_decay"], group["weight_decay"],
                             group["eps"], group["maximize"])
