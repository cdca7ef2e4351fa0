"""Adagrad, with a row-sparse path for sparse embedding gradients."""

from __future__ import annotations

from typing import Any, Dict, List

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core.optim.optimizer import Optimizer, ParamsT, Update, state_like, check_number, step_count


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
            state["sum"] = state_like(p, group["initial_accumulator_value"])

    def _update_group(self, group: Dict[str, Any]) -> None:
        dense, sparse = self._split_row_sparse(group, group["weight_decay"] == 0)
        for p, (rows, values) in sparse:
            self._init_state(p, group)
            state = self.state[p]
            state["step"] = step_count(state) + 1
            clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
            _C._adagrad_sparse_step(p, state["sum"], rows, values, clr, group["eps"], group["maximize"])
        if dense:
            self._apply(group, dense)

    def _gather(self, group: Dict[str, Any], params: List[Tensor]) -> Update:
        sums, steps = [], []
        for p in params:
            self._init_state(p, group)
            sums.append(self.state[p]["sum"])
            steps.append(step_count(self.state[p]) + 1)
        maximize = group["maximize"]

        def run(grads: List[Tensor], hyper: Tensor, counts: Any) -> None:
            _C._adagrad_update(params, sums, grads, hyper, counts, maximize)

        def commit() -> None:
            for p, n in zip(params, steps):
                self.state[p]["step"] = n

        return Update(run, sums, [group["lr"], group["lr_decay"], group["weight_decay"], group["eps"]], steps,
                      (maximize,), commit)
