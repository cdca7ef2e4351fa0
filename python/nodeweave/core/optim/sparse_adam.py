"""SparseAdam: the "lazy" Adam variant for row-sparse embedding gradients."""

from __future__ import annotations

from typing import Any, Dict, Tuple

from nodeweave import _C
from nodeweave.core.nn import _row_sparse
from nodeweave.core.optim.optimizer import Optimizer, ParamsT, check_betas, check_number, step_count
from nodeweave import errors as nwerr


class SparseAdam(Optimizer):
    """Adam restricted to the rows a sparse gradient touches, like ``torch.optim.SparseAdam``: the
    moments and the parameter of rows that were not looked up stay as they are (unlike Adam, whose
    moments decay everywhere). Every parameter with a gradient must come from
    ``Embedding(sparse=True)``.

    >>> import nodeweave.core as nc
    >>> emb = nc.nn.Embedding(4, 2, sparse=True)
    >>> before = emb.weight.detach().clone().tolist()
    >>> opt = nc.optim.SparseAdam(emb.parameters(), lr=0.1)
    >>> emb(nc.tensor([1])).sum().backward(); opt.step()
    >>> after = emb.weight.tolist()
    >>> [after[i] == before[i] for i in range(4)]   # only row 1 moved
    [True, False, True, True]
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    def _check_group(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("epsilon", group["eps"])
        check_betas(group["betas"])

    def _update_group(self, group: Dict[str, Any]) -> None:
        if _C._jit.tracing():
            raise nwerr.TracingError("jit: SparseAdam's row-sparse update cannot be traced yet; step the "
                                     "optimizer outside the traced function")
        beta1, beta2 = group["betas"]
        for i, p in enumerate(group["params"]):
            if p.grad is None:
                continue
            sparse = _row_sparse.rows(p)
            if sparse is None:
                raise nwerr.ValueError(f"SparseAdam: parameter {i} of shape {tuple(p.shape)} has a dense gradient; "
                                       f"SparseAdam needs Embedding(sparse=True) gradients (use Adam otherwise)")
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = _C.zeros_like(p)
                state["exp_avg_sq"] = _C.zeros_like(p)
            state["step"] = step_count(state) + 1
            if sparse[0].numel() == 0:  # torch skips the update of an empty gradient
                continue
            _C._sparse_adam_step(p, state["exp_avg"], state["exp_avg_sq"], sparse[0], sparse[1], state["step"],
                                 group["lr"], beta1, beta2, group["eps"], group["maximize"])
