"""GatedGCNConv: the gated graph convolution with edge features of Bresson & Laurent, "Residual
Gated Graph ConvNets" (2017), as used in Dwivedi et al., "Benchmarking Graph Neural Networks"
(2020)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from nodeweave import function as fn

from .._ns import F, T, nn
from .._checks import positive_int
from .._utils import check_feat, check_pair_feats
from nodeweave import errors as nwerr

__all__ = ["GatedGCNConv"]


class GatedGCNConv(nn.Module):
    r"""Edge-gated convolution that also updates the edge features.

    For an edge :math:`j \to i` with features :math:`e_{ji}`:

    .. math::
        \hat e_{ji} = D h_j + E h_i + C e_{ji},\qquad
        \eta_{ji} = \frac{\sigma(\hat e_{ji})}{\sum_{k \in N(i)} \sigma(\hat e_{ki}) + 10^{-6}},
        \qquad \hat h_i = A h_i + \sum_{j \in N(i)} \eta_{ji} \odot B h_j

    (:math:`D` reads the source, :math:`E` the destination, as DGL's code does.) Then, on both
    :math:`\hat h` and :math:`\hat e`: batch norm (``batch_norm=True``), ``activation``, the
    residual (``residual=True`` and all three sizes equal) and dropout. Returns
    ``(h', e')``. A node without in-edges gets :math:`A h_i` before the norm.

    The gate sums are two fused gSpMMs (``u_mul_e`` and ``copy_e``); the ``(E, out)`` edge
    tensor :math:`\hat e` is an output, so it is built once.

    Parameters
    ----------
    input_feats, edge_feats, output_feats : int
    dropout : float
    batch_norm : bool
        ``bn_node`` and ``bn_edge`` (``BatchNorm1d``; statistics over the destination nodes and
        over the edges).
    residual : bool
        Ignored (off) unless ``input_feats == edge_feats == output_feats``, as in DGL.
    activation : callable, optional
        Default ReLU.

    ``forward(graph, feat, edge_feat)``: ``feat`` ``(N, input_feats)`` (or a ``(src, dst)`` pair
    on a bipartite graph; on a block the first rows are the destinations), ``edge_feat``
    ``(E, edge_feats)``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import GatedGCNConv
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3)
    >>> h, e = GatedGCNConv(4, 4, 4)(g, nc.ones(3, 4), nc.ones(3, 4))
    >>> h.shape, e.shape
    ((3, 4), (3, 4))
    """

    def __init__(self, input_feats: int, edge_feats: int, output_feats: int, dropout: float = 0,
                 batch_norm: bool = True, residual: bool = True,
                 activation: Optional[Callable[[Any], Any]] = F.relu) -> None:
        super().__init__()
        name = type(self).__name__
        self._in_feats = positive_int(input_feats, "input_feats", name)
        self._edge_feats = positive_int(edge_feats, "edge_feats", name)
        positive_int(output_feats, "output_feats", name)
        self.dropout = nn.Dropout(dropout)
        self.batch_norm = batch_norm
        self.residual = residual and input_feats == output_feats and edge_feats == output_feats
        self.A = nn.Linear(input_feats, output_feats, bias=True)
        self.B = nn.Linear(input_feats, output_feats, bias=True)
        self.D = nn.Linear(input_feats, output_feats, bias=True)
        self.E = nn.Linear(input_feats, output_feats, bias=True)
        self.C = nn.Linear(edge_feats, output_feats, bias=True)
        self.bn_node = nn.BatchNorm1d(output_feats)
        self.bn_edge = nn.BatchNorm1d(output_feats)
        self.activation = activation

    def reset_parameters(self) -> None:
        """``Linear``'s default initialization; fresh batch norms."""
        for mod in (self.A, self.B, self.C, self.D, self.E, self.bn_node, self.bn_edge):
            mod.reset_parameters()

    def forward(self, graph: Any, feat: Any, edge_feat: Any):
        """New node and edge features."""
        name = type(self).__name__
        with graph.local_scope():
            h_src, h_dst = check_pair_feats(name, graph, feat, self._in_feats, self._in_feats)
            check_feat(name, "edge_feat", edge_feat, graph.num_edges(), "edges", self._edge_feats,
                       "edge_feats")
            if h_src.dim() != 2 or h_dst.dim() != 2 or edge_feat.dim() != 2:
                raise nwerr.ValueError(f"{name}: feat and edge_feat must be 2-D (rows, features)")
            graph.srcdata.update({"Bh": self.B(h_src), "Dh": self.D(h_src)})
            graph.dstdata["Eh"] = self.E(h_dst)
            graph.apply_edges(fn.u_add_v("Dh", "Eh", "DEh"))
            e = graph.edata.pop("DEh") + self.C(edge_feat)
            graph.edata["sigma"] = T.sigmoid(e)
            graph.update_all(fn.u_mul_e("Bh", "sigma", "m"), fn.sum("m", "sum_sigma_h"))
            graph.update_all(fn.copy_e("sigma", "m"), fn.sum("m", "sum_sigma"))
            h = self.A(h_dst) + graph.dstdata["sum_sigma_h"] / (graph.dstdata["sum_sigma"] + 1e-6)
            if self.batch_norm:
                h = self.bn_node(h)
                e = self.bn_edge(e)
            if self.activation is not None:
                h = self.activation(h)
                e = self.activation(e)
            if self.residual:
                h = h_dst + h
                e = edge_feat + e
            return self.dropout(h), self.dropout(e)
