"""Adam and AdamW (decoupled weight decay), with optional AMSGrad."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core.optim.optimizer import Optimizer, ParamsT, Update, state_like, check_betas, check_number, step_count


class Adam(Optimizer):
    """Adam, step for step like ``torch.optim.Adam``::

        g = grad (negated if maximize) + weight_decay * p        # L2 penalty (Adam)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        v_hat = max(v_hat, v) if amsgrad else v
        p = p - lr / (1 - beta1^t) * m / (sqrt(v_hat) / sqrt(1 - beta2^t) + eps)

    >>> import nodeweave.core as nc
    >>> w = nc.nn.Parameter(nc.tensor([1.0, -1.0]))
    >>> opt = nc.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> [round(v, 4) for v in w.tolist()]      # the first Adam step moves each weight by ~lr
    [0.9, -0.9]
    """

    _decoupled = False

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("epsilon", group["eps"])
        check_number("weight_decay", group["weight_decay"])
        check_betas(group["betas"])

    def _gather(self, group: Dict[str, Any], params: List[Tensor]) -> Update:
        amsgrad = group["amsgrad"]
        m, v, vmax, steps = [], [], [], []
        for p in params:
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = state_like(p)
                state["exp_avg_sq"] = state_like(p)
            if amsgrad and "max_exp_avg_sq" not in state:
                state["max_exp_avg_sq"] = state_like(p)
            m.append(state["exp_avg"])
            v.append(state["exp_avg_sq"])
            if amsgrad:
                vmax.append(state["max_exp_avg_sq"])
            steps.append(step_count(state) + 1)
        beta1, beta2 = group["betas"]
        flags = (amsgrad, group["maximize"], self._decoupled)

        def run(grads: List[Tensor], hyper: Tensor, counts: Any) -> None:
            _C._adam_update(params, m, v, vmax, grads, hyper, counts, *flags)

        def commit() -> None:
            for p, n in zip(params, steps):
                self.state[p]["step"] = n

        return Update(run, m + v + vmax, [group["lr"], beta1, beta2, group["eps"], group["weight_decay"]],
                      steps, flags, commit)


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the Adam update), like
    ``torch.optim.AdamW``; the default weight decay is 0.01.

    >>> import nodeweave.core as nc
    >>> w = nc.nn.Parameter(nc.tensor([2.0]))
    >>> opt = nc.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = nc.tensor([0.0]); opt.step()
    >>> w.tolist()   # decay only: 2 * (1 - 0.1 * 0.5); a zero gradient moves nothing
    [1.899999976158142]
    """

    _decoupled = True

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
