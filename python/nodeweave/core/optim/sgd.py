"""Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay."""

from __future__ import annotations

from typing import Any, Dict

from nodeweave import _C
from nodeweave.core.nn import _row_sparse
from nodeweave.core.optim.optimizer import Optimizer, ParamsT, check_number
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
        params, grads, bufs, fresh = [], [], [], []
        for p in self._with_grad(group):
            if momentum == 0 and wd == 0:
                sparse = _row_sparse.rows(p)
                if sparse is not None:
                    _C._sgd_sparse_step(p, sparse[0], sparse[1], group["lr"], group["maximize"])
                    continue
            params.append(p)
            grads.append(p.grad)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                fresh.append(buf is None)
                if buf is None:
                    buf = state["momentum_buffer"] = _C.zeros_like(p)
                bufs.append(buf)
        if params:
            _C._sgd_step(params, grads, bufs, fresh, group["lr"], momentum, group["dampening"], wd,
                         group["nesterov"], group["maximize"])
