"""``Parameter``: a tensor that a :class:`~nodeweave.core.nn.Module` registers as a learnable weight."""

from __future__ import annotations

from typing import Any, Dict, Optional

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave import errors as nwerr


class Parameter(Tensor):
    """A leaf tensor that requires grad (by default) and that modules collect in ``parameters()``.

    It shares ``data``'s memory, but not its autograd identity: ``data`` itself is left as it was.

    >>> import nodeweave.core as nc
    >>> w = nc.nn.Parameter(nc.zeros(2, 3))
    >>> w.requires_grad, w.is_leaf, tuple(w.shape)
    (True, True, (2, 3))
    """

    def __init__(self, data: Optional[Tensor] = None, requires_grad: bool = True) -> None:
        if data is None:
            data = _C.empty(0)
        if not isinstance(data, Tensor):
            raise nwerr.TypeError(f"Parameter: data must be a Tensor, got {type(data).__name__}")
        # detach(): a new handle on the same storage, so the caller's tensor keeps its own
        # requires_grad and history (torch's Parameter does the same).
        Tensor.__init__(self, data.detach())
        if requires_grad:
            if not data.is_floating_point():
                raise nwerr.TypeError(f"Parameter: only floating point tensors can require gradients, got "
                                      f"dtype {data.dtype.name}")
            self.requires_grad_(True)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Tensor.__repr__(self)

    def __reduce_ex__(self, protocol: Any) -> tuple:
        """Pickles as a Parameter around its data (the data tensor pickles through
        :mod:`nodeweave.core.pickling`), so a pickled module keeps its parameters.

        >>> import pickle, nodeweave.core as nc
        >>> w = pickle.loads(pickle.dumps(nc.nn.Parameter(nc.ones(2))))
        >>> type(w).__name__, w.requires_grad, w.tolist()
        ('Parameter', True, [1.0, 1.0])
        """
        return Parameter, (self.detach(), self.requires_grad)

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Parameter":
        if id(self) in memo:
            return memo[id(self)]
        out = Parameter(self.detach().clone(), self.requires_grad)
        if self.grad is not None:
            out.grad = self.grad.detach().clone()
        memo[id(self)] = out
        return out
