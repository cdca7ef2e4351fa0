"""Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay."""

from __future__ import annotations

from typing import Any, Dict, List

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core.optim.optimizer import Optimizer, ParamsT, Update, state_like, check_number
from nodeweave import errors as nwerr


class SGD(Optimizer):
    """SGD, step for step like ``torch.optim.SGD``::

        g = grad (negated if maximize) + weight_decay * p
        buf = g on the first step, else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
        p = p - lr * g

    Parameters with a row-sparse gradient (``Embedding(sparse=True)``) update only the looked-up rows
    when momentum and weight decay are zero (both touch every row otherwise).

    >>> import nodeweave.core as nc
    >>> w = nc.nn.Parameter(nc.tensor([1.0]))
    >>> opt = nc.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad(); (w * 2.0).sum().backward(); opt.step()
    >>> round(w.item(), 6)   # 1 - 0.1*2 - 0.1*(0.9*2 + 2)
    0.42
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False) -> None:
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("momentum", group["momentum"])
        check_number("weight_decay", group["weight_decay"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise nwerr.ValueError(f"Nesterov momentum requires a momentum and zero dampening, got "
                                   f"momentum={group['momentum']}, dampening={group['dampening']}")

    def _update_group(self, group: Dict[str, Any]) -> None:
        momentum, wd = group["momentum"], group["weight_decay"]
        dense, sparse = self._split_row_sparse(group, momentum == 0 and wd == 0)
        for p, (rows, values) in sparse:
            _C._sgd_sparse_step(p, rows, values, group["lr"], group["maximize"])
        if dense:
            self._apply(group, dense)

    def _gather(self, group: Dict[str, Any], params: List[Tensor]) -> Update:
        momentum = group["momentum"]
        bufs, fresh = [], []
        if momentum != 0:
            for p in params:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                fresh.append(int(buf is None))
                if buf is None:
                    buf = state["momentum_buffer"] = state_like(p)
                bufs.append(buf)
        else:
            fresh = [0] * len(params)
        flags = (momentum != 0, group["nesterov"], group["maximize"])

        def run(grads: List[Tensor], hyper: Tensor, counts: Any) -> None:
            _C._sgd_update(params, bufs, grads, hyper, counts, group["nesterov"], group["maximize"])

        return Update(run, bufs, [group["lr"], momentum, group["dampening"], group["weight_decay"]], fresh, flags)
