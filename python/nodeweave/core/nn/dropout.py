"""``Dropout``."""

from __future__ import annotations

from nodeweave._C import Tensor
from nodeweave.core.nn import functional as F
from nodeweave.core.nn.module import Module
from nodeweave import errors as nwerr


class Dropout(Module):
    """During training, zeroes each element with probability ``p`` and scales the others by
    ``1/(1-p)``; in eval mode it is the identity.

    >>> import nodeweave.core as nc
    >>> d = nc.nn.Dropout(0.5).eval()
    >>> d(nc.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise nwerr.ValueError(f"dropout probability has to be between 0 and 1, but got {p!r}")
        self.p = float(p)
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
