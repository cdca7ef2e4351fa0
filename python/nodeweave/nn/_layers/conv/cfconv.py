"""CFConv: the continuous-filter convolution of Schütt et al., "SchNet: A continuous-filter
convolutional neural network for modeling quantum interactions" (NeurIPS 2017)."""

from __future__ import annotations

import math
from typing import Any

from nodeweave import function as fn

from .._ns import nn
from .._checks import positive_int
from .._utils import check_feat, check_pair_feats

__all__ = ["CFConv", "ShiftedSoftplus"]


class ShiftedSoftplus(nn.Module):
    r"""``softplus(x) - log(shift)``: :math:`\frac{1}{\beta}\log(1 + e^{\beta x}) - \log(\text{shift})`
    (linear above ``threshold``, as torch's ``Softplus``). With the default ``shift=2`` it maps 0
    to 0.

    >>> import nodeweave.core as nc
    >>> ShiftedSoftplus()(nc.zeros(2)).tolist()
    [0.0, 0.0]
    """

    def __init__(self, beta: float = 1, shift: float = 2, threshold: float = 20) -> None:
        super().__init__()
        self.shift = shift
        self.softplus = nn.Softplus(beta=beta, threshold=threshold)

    def forward(self, inputs: Any):
        return self.softplus(inputs) - math.log(float(self.shift))


class CFConv(nn.Module):
    r"""Continuous-filter convolution: each edge's features make an elementwise filter for the
    message of its source.

    .. math::
        h_i' = \mathrm{SSP}\Big(W_o \sum_{j \in N(i)} (W_n h_j + b_n) \odot
        \mathrm{SSP}\big(W_2\, \mathrm{SSP}(W_1 e_{ji} + b_1) + b_2\big) + b_o\Big)

    with SSP the :class:`ShiftedSoftplus` :math:`\log(1 + e^x) - \log 2`. The filtered sum is one
    fused ``u_mul_e`` gSpMM. A destination node without in-edges gets :math:`\mathrm{SSP}(b_o)`.

    Parameters
    ----------
    node_in_feats : int
    edge_in_feats : int
    hidden_feats : int
        Width of the filter and of the projected node features.
    out_feats : int

    Sub-modules (DGL's names, so DGL ``state_dict``\\ s load): ``project_edge`` (``Sequential`` of
    Linear, SSP, Linear, SSP), ``project_node`` (Linear), ``project_out`` (``Sequential`` of
    Linear, SSP), with ``Linear``'s default initialization.

    Shapes: ``node_feats`` ``(N, node_in_feats)`` or a pair ``(src_feats, dst_feats)`` (only the
    source part is used); ``edge_feats`` ``(E, edge_in_feats)``; output ``(N_dst, out_feats)``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import CFConv
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3)
    >>> CFConv(4, 2, 8, 3)(g, nc.ones(3, 4), nc.ones(3, 2)).shape
    (3, 3)
    """

    def __init__(self, node_in_feats: int, edge_in_feats: int, hidden_feats: int, out_feats: int) -> None:
        super().__init__()
        name = type(self).__name__
        self._node_in_feats = positive_int(node_in_feats, "node_in_feats", name)
        self._edge_in_feats = positive_int(edge_in_feats, "edge_in_feats", name)
        positive_int(hidden_feats, "hidden_feats", name)
        positive_int(out_feats, "out_feats", name)
        self.project_edge = nn.Sequential(nn.Linear(edge_in_feats, hidden_feats), ShiftedSoftplus(),
                                          nn.Linear(hidden_feats, hidden_feats), ShiftedSoftplus())
        self.project_node = nn.Linear(node_in_feats, hidden_feats)
        self.project_out = nn.Sequential(nn.Linear(hidden_feats, out_feats), ShiftedSoftplus())

    def reset_parameters(self) -> None:
        """``Linear``'s default initialization for every projection."""
        for lin in (self.project_edge[0], self.project_edge[2], self.project_node, self.project_out[0]):
            lin.reset_parameters()

    def forward(self, g: Any, node_feats: Any, edge_feats: Any):
        """Filtered sum of the projected source features, then the output projection."""
        name = type(self).__name__
        with g.local_scope():
            feat_src, _ = check_pair_feats(name, g, node_feats, self._node_in_feats, need_dst=False,
                                           arg="node_feats")
            check_feat(name, "edge_feats", edge_feats, g.num_edges(), "edges", self._edge_in_feats,
                       "edge_in_feats")
            g.srcdata["hv"] = self.project_node(feat_src)
            g.edata["he"] = self.project_edge(edge_feats)
            g.update_all(fn.u_mul_e("hv", "he", "m"), fn.sum("m", "h"))
            return self.project_out(g.dstdata["h"])

