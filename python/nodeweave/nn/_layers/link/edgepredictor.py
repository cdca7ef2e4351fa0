"""EdgePredictor: one score (or vector) per node pair from the two nodes' representations, DGL's
``EdgePredictor``."""

from __future__ import annotations

from typing import Any, Optional

from .._ns import T, nn
from .._checks import positive_int
from nodeweave import errors as nwerr

__all__ = ["EdgePredictor"]

_OPS = ("dot", "cos", "ele", "cat")
_EPS = 1e-8  # the norm floor of the cosine (torch.nn.functional.cosine_similarity's default)


class EdgePredictor(nn.Module):
    r"""Combines source and destination representations :math:`h_u, h_v` of each pair:

    - ``'dot'``: :math:`h_u^\top h_v`, shape ``(E, 1)``;
    - ``'cos'``: :math:`h_u^\top h_v / (\max(\lVert h_u\rVert, \epsilon)\max(\lVert h_v\rVert,
      \epsilon))`, :math:`\epsilon = 10^{-8}`, shape ``(E, 1)``;
    - ``'ele'``: :math:`h_u \odot h_v`, shape ``(E, D)``;
    - ``'cat'``: :math:`[h_u \Vert h_v]`, shape ``(E, 2D)``;

    then, when both ``in_feats`` and ``out_feats`` are given, ``linear``
    (``Linear(1, out_feats)`` for 'dot' and 'cos', ``Linear(2 * in_feats, out_feats)`` for 'cat',
    ``Linear(in_feats, out_feats)`` for 'ele'; with a bias when ``bias=True``).

    ``forward(h_src, h_dst)``: two ``(E, D)`` tensors, row ``e`` of each the two ends of pair
    ``e`` (e.g. ``h[src]`` and ``h[dst]`` of a graph's edges).

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import EdgePredictor
    >>> hu, hv = nc.tensor([[1.0, 2.0], [0.0, 1.0]]), nc.tensor([[3.0, 1.0], [0.0, 2.0]])
    >>> EdgePredictor("dot")(hu, hv).tolist(), EdgePredictor("ele")(hu, hv).tolist()
    ([[5.0], [2.0]], [[3.0, 2.0], [0.0, 2.0]])
    >>> tuple(EdgePredictor("cat", in_feats=2, out_feats=3, bias=True)(hu, hv).shape)
    (2, 3)
    """

    def __init__(self, op: str, in_feats: Optional[int] = None, out_feats: Optional[int] = None,
                 bias: bool = False) -> None:
        super().__init__()
        cls = "EdgePredictor"
        if op not in _OPS:
            raise nwerr.ValueError(f"{cls}: op must be 'dot', 'cos', 'ele' or 'cat', got {op!r}")
        self.op = op
        self.in_feats = None if in_feats is None else positive_int(in_feats, "in_feats", cls)
        self.out_feats = None if out_feats is None else positive_int(out_feats, "out_feats", cls)
        self.linear = None
        if in_feats is not None and out_feats is not None:
            width = {"dot": 1, "cos": 1, "ele": in_feats, "cat": 2 * in_feats}[op]
            self.linear = nn.Linear(width, out_feats, bias=bias)

    def reset_parameters(self) -> None:
        """Reinitialises ``linear`` (if any)."""
        if self.linear is not None:
            self.linear.reset_parameters()

    def forward(self, h_src: Any, h_dst: Any) -> Any:
        cls = "EdgePredictor"
        for name, t in (("h_src", h_src), ("h_dst", h_dst)):
            if not isinstance(t, T.Tensor):
                raise nwerr.TypeError(f"{cls}: {name} must be a tensor, got {type(t).__name__}")
            if t.dim() != 2:
                raise nwerr.ValueError(f"{cls}: {name} must have shape (num_pairs, D), got {tuple(t.shape)}")
        if tuple(h_src.shape) != tuple(h_dst.shape):
            raise nwerr.ValueError(f"{cls}: h_src {tuple(h_src.shape)} and h_dst {tuple(h_dst.shape)} must have "
                                   "the same shape (one row per pair)")
        if self.linear is not None and self.op in ("ele", "cat") and h_src.shape[1] != self.in_feats:
            raise nwerr.ValueError(f"{cls}: h_src and h_dst must have in_feats={self.in_feats} columns, got "
                                   f"{h_src.shape[1]}")
        if self.op == "dot":
            h = (h_src * h_dst).sum(dim=1, keepdim=True)
        elif self.op == "cos":
            # max(|h|, eps) as sqrt(max(|h|^2, eps^2)): finite gradients for a zero row too.
            nu = (h_src * h_src).sum(dim=1, keepdim=True).clamp(min=_EPS ** 2).sqrt()
            nv = (h_dst * h_dst).sum(dim=1, keepdim=True).clamp(min=_EPS ** 2).sqrt()
            h = (h_src * h_dst).sum(dim=1, keepdim=True) / (nu * nv)
        elif self.op == "ele":
            h = h_src * h_dst
        else:
            h = T.cat([h_src, h_dst], dim=1)
        return h if self.linear is None else self.linear(h)

    def extra_repr(self) -> str:
        return f"op={self.op!r}"
