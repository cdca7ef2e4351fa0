"""RMSprop, plain or centered, with optional momentum."""

from __future__ import annotations

from typing import Any, Dict, List

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core.optim.optimizer import Optimizer, ParamsT, Update, state_like, check_number, step_count


class RMSprop(Optimizer):
    """RMSprop, step for step like ``torch.optim.RMSprop``::

        g = grad (negated if maximize) + weight_decay * p
        sq = alpha * sq + (1 - alpha) * g * g
        avg = sqrt(sq - ga * ga) + eps  with ga = lerp(ga, g, 1 - alpha)   if centered
              sqrt(sq) + eps                                              otherwise
        buf = momentum * buf + g / avg;  p = p - lr * buf                  if momentum > 0
        p = p - lr * g / avg                                               otherwise

    >>> import nodeweave.core as nc
    >>> w = nc.nn.Parameter(nc.tensor([1.0]))
    >>> opt = nc.optim.RMSprop([w], lr=0.01, alpha=0.0)
    >>> (w * 4.0).sum().backward(); opt.step()
    >>> round(w.item(), 6)   # alpha = 0: sq = g*g, so the step is lr * sign(g)
    0.99
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, *,
                 maximize: bool = False) -> None:
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                        centered=centered, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("epsilon", group["eps"])
        check_number("momentum", group["momentum"])
        check_number("weight_decay", group["weight_decay"])
        check_number("alpha", group["alpha"])

    def _gather(self, group: Dict[str, Any], params: List[Tensor]) -> Update:
        centered, use_buf = group["centered"], group["momentum"] > 0
        sq, ga, bufs, steps = [], [], [], []
        for p in params:
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["square_avg"] = state_like(p)
            if use_buf and "momentum_buffer" not in state:
                state["momentum_buffer"] = state_like(p)
            if centered and "grad_avg" not in state:
                state["grad_avg"] = state_like(p)
            steps.append(step_count(state) + 1)
            sq.append(state["square_avg"])
            if centered:
                ga.append(state["grad_avg"])
            if use_buf:
                bufs.append(state["momentum_buffer"])
        maximize = group["maximize"]

        def run(grads: List[Tensor], hyper: Tensor, counts: Any) -> None:
            _C._rmsprop_update(params, sq, ga, bufs, grads, hyper, maximize)

        def commit() -> None:
            for p, n in zip(params, steps):
                self.state[p]["step"] = n

        return Update(run, sq + ga + bufs, [group["lr"], group["alpha"], group["eps"], group["weight_decay"],
                                            group["momentum"]], None, (centered, use_buf, maximize), commit)
