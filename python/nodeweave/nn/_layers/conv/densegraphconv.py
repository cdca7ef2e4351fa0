"""DenseGraphConv: the graph convolution of Kipf & Welling on a dense adjacency matrix (DGL's
``DenseGraphConv``), for graphs that are small or produced as dense matrices (DiffPool's coarsened
graphs)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from .._ns import T, nn
from .._checks import positive_int
from ._dense import dense_adj
from nodeweave import errors as nwerr

__all__ = ["DenseGraphConv"]

_NORMS = ("none", "both", "right")


class DenseGraphConv(nn.Module):
    r"""Graph convolution on a dense adjacency ``adj`` (``(N_dst, N_src)``, row = destination):

    .. math::
        H = \sigma\big(D_{dst}^{-p} A D_{src}^{-q} X W + b\big)

    with :math:`D_{dst} = \mathrm{diag}(\sum_j A_{ij})` (weighted in-degrees) and
    :math:`D_{src} = \mathrm{diag}(\sum_i A_{ij})` (weighted out-degrees), each clamped to at least
    1. ``norm='both'``: :math:`p = q = 1/2`; ``'right'``: :math:`p = 1, q = 0` (a mean);
    ``'none'``: no scaling. With a 0/1 ``adj`` of a graph it equals :class:`GraphConv`.

    Parameters
    ----------
    in_feats, out_feats : int
    norm : str
        ``'both'`` (default), ``'right'`` or ``'none'``.
    bias : bool
        A learnable ``bias`` (starts at 0).
    activation : callable, optional

    ``forward(adj, feat)``: ``feat`` is ``(N_src, in_feats)``, the output ``(N_dst, out_feats)``.
    ``weight`` ``(in_feats, out_feats)`` is Xavier-uniform, as DGL.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import DenseGraphConv
    >>> adj = nc.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    >>> conv = DenseGraphConv(4, 2, norm="right", bias=False)
    >>> with nc.no_grad():
    ...     _ = conv.weight.fill_(1.0)
    >>> conv(adj, nc.ones(3, 4)).tolist()
    [[4.0, 4.0], [4.0, 4.0], [4.0, 4.0]]
    """

    def __init__(self, in_feats: int, out_feats: int, norm: str = "both", bias: bool = True,
                 activation: Optional[Callable[[Any], Any]] = None) -> None:
        super().__init__()
        if norm not in _NORMS:
            raise nwerr.ValueError(f"DenseGraphConv: norm must be 'both', 'right' or 'none', got {norm!r}")
        self._in_feats = positive_int(in_feats, "in_feats", "DenseGraphConv")
        self._out_feats = positive_int(out_feats, "out_feats", "DenseGraphConv")
        self._norm = norm
        self.weight = nn.Parameter(T.empty(in_feats, out_feats))
        if bias:
            self.bias = nn.Parameter(T.empty(out_feats))
        else:
            self.register_buffer("bias", None)
        self._activation = activation
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform ``weight``, zero ``bias``."""
        nn.init.xavier_uniform_(self.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def forward(self, adj: Any, feat: Any) -> Any:
        adj = dense_adj("DenseGraphConv", adj, feat)
        if feat.shape[1] != self._in_feats:
            raise nwerr.ValueError(f"DenseGraphConv: feat has {feat.shape[1]} features, expected "
                                   f"in_feats={self._in_feats}")
        h = feat
        if self._norm == "both":
            h = h * adj.sum(0).clamp(min=1).pow(-0.5).unsqueeze(-1)
        # Multiply by W on the narrow side of the aggregation.
        if self._in_feats > self._out_feats:
            rst = adj @ (h @ self.weight)
        else:
            rst = (adj @ h) @ self.weight
        if self._norm != "none":
            deg = adj.sum(1).clamp(min=1).unsqueeze(-1)
            rst = rst * (deg.pow(-0.5) if self._norm == "both" else 1.0 / deg)
        if self.bias is not None:
            rst = rst + self.bias
        if self._activation is not None:
            rst = self._activation(rst)
        return rst

    def extra_repr(self) -> str:
        return f"in={self._in_feats}, out={self._out_feats}, normalization={self._norm}"
