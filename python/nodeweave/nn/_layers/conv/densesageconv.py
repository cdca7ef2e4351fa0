"""DenseSAGEConv: GraphSAGE's GCN aggregator on a dense adjacency matrix (DGL's ``DenseSAGEConv``)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from .._ns import nn
from .._checks import positive_int
from ._dense import dense_adj
from nodeweave import errors as nwerr

__all__ = ["DenseSAGEConv"]


class DenseSAGEConv(nn.Module):
    r"""GraphSAGE with the GCN aggregator on a dense adjacency ``adj`` (``(N_dst, N_src)``):

    .. math::
        h_i' = \mathrm{norm}\Big(\sigma\Big(W \frac{\sum_j A_{ij} x_j + x_i}{\sum_j A_{ij} + 1}
        + b\Big)\Big)

    It equals :class:`SAGEConv` with ``aggregator_type='gcn'`` on the graph of a 0/1 ``adj``.

    Parameters
    ----------
    in_feats, out_feats : int
    feat_drop : float
        Dropout on the input features.
    bias : bool
        ``fc`` has a bias.
    norm, activation : callable, optional
        Applied to the output, activation first (as DGL).

    ``forward(adj, feat)``: ``feat`` is ``(N, in_feats)`` (``adj`` square) or a pair
    ``(src_feat, dst_feat)`` of ``(N_src, in_feats)`` and ``(N_dst, in_feats)``. ``fc.weight`` is
    Xavier-uniform with the ReLU gain.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import DenseSAGEConv
    >>> adj = nc.tensor([[0.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    >>> conv = DenseSAGEConv(2, 1)
    >>> tuple(conv(adj, (nc.ones(3, 2), nc.ones(2, 2))).shape)
    (2, 1)
    """

    def __init__(self, in_feats: int, out_feats: int, feat_drop: float = 0.0, bias: bool = True,
                 norm: Optional[Callable[[Any], Any]] = None,
                 activation: Optional[Callable[[Any], Any]] = None) -> None:
        super().__init__()
        self._in_feats = positive_int(in_feats, "in_feats", "DenseSAGEConv")
        self._out_feats = positive_int(out_feats, "out_feats", "DenseSAGEConv")
        self._norm = norm
        self.feat_drop = nn.Dropout(feat_drop)
        self.activation = activation
        self.fc = nn.Linear(in_feats, out_feats, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform (ReLU gain) ``fc.weight``; the bias keeps Linear's initialization, as DGL."""
        nn.init.xavier_uniform_(self.fc.weight, gain=nn.init.calculate_gain("relu"))

    def forward(self, adj: Any, feat: Any) -> Any:
        name = "DenseSAGEConv"
        paired = isinstance(feat, (tuple, list))
        if paired:
            if len(feat) != 2:
                raise nwerr.ValueError(f"{name}: feat must be a tensor or a (src_feat, dst_feat) pair, got "
                                       f"{len(feat)} items")
            feat_src, feat_dst = feat
            adj = dense_adj(name, adj, feat_src, name="feat[0]")
            dense_adj(name, adj, feat_dst, name="feat[1]", side="destination")
        else:
            adj = dense_adj(name, adj, feat, square=True)
            feat_src = feat_dst = feat
        for part in (feat_src, feat_dst):
            if part.shape[1] != self._in_feats:
                raise nwerr.ValueError(f"{name}: feat has {part.shape[1]} features, expected in_feats={self._in_feats}")
        if paired:
            feat_src, feat_dst = self.feat_drop(feat_src), self.feat_drop(feat_dst)
        else:
            feat_src = feat_dst = self.feat_drop(feat_src)
        h = (adj @ feat_src + feat_dst) / (adj.sum(1).unsqueeze(-1) + 1)
        rst = self.fc(h)
        if self.activation is not None:
            rst = self.activation(rst)
        if self._norm is not None:
            rst = self._norm(rst)
        return rst
