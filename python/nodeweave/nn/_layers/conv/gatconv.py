"""GATConv: graph attention of Veličković et al., "Graph Attention Networks" (ICLR 2018)."""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple, Union

from nodeweave import function as fn
from nodeweave.ops import edge_softmax

from .._ns import T, nn
from .._utils import (check_edge_weight, check_pair_feats, check_zero_in_degree, expand_as_pair,
                      is_block)

__all__ = ["GATConv"]


class GATConv(nn.Module):
    r"""Multi-head graph attention.

    For each head :math:`k`, with :math:`z_j = W^{(k)} h_j`:

    .. math::
        e_{ij} = \mathrm{LeakyReLU}(a_l^{(k)\top} z_j + a_r^{(k)\top} z_i),\quad
        \alpha_{ij} = \operatorname{softmax}_{j \in N(i)} e_{ij},\quad
        h_i'^{(k)} = \sum_{j \in N(i)} \alpha_{ij} z_j + b^{(k)}

    The logits are a sum of a source and a destination term, so they are computed per node and
    added per edge (one gSDDMM); the weighted sum is one fused gSpMM.

    Parameters
    ----------
    in_feats : int or (int, int)
        Input size, or (source, destination) sizes for a bipartite graph with different inputs
        (then ``fc_src``/``fc_dst`` replace ``fc``).
    out_feats : int
        Output size per head.
    num_heads : int
    feat_drop, attn_drop : float
        Dropout on the input features and on the attention weights (off in ``eval()``).
    negative_slope : float
        LeakyReLU slope.
    residual : bool
        Adds the destination input, through ``res_fc`` (a Linear, carrying the bias) when sizes
        differ.
    activation : callable, optional
    allow_zero_in_degree : bool
        Without it, a destination node with no in-edge raises ValueError.
    bias : bool

    Shapes: ``feat`` ``(N, *, in_feats)`` or a pair; output ``(N_dst, *, num_heads, out_feats)``;
    with ``get_attention=True`` also the attention ``(E, *, num_heads, 1)``. Weights are
    Xavier-normal with the ReLU gain, the bias zero.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import GATConv
    >>> g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3))
    >>> conv = GATConv(4, 2, num_heads=3)
    >>> out, attn = conv(g, nc.ones(3, 4), get_attention=True)
    >>> out.shape, attn.shape
    ((3, 3, 2), (6, 3, 1))
    """

    def __init__(self, in_feats: Union[int, Tuple[int, int]], out_feats: int, num_heads: int,
                 feat_drop: float = 0.0, attn_drop: float = 0.0, negative_slope: float = 0.2,
                 residual: bool = False, activation: Optional[Callable[[Any], Any]] = None,
                 allow_zero_in_degree: bool = False, bias: bool = True) -> None:
        super().__init__()
        self._num_heads = num_heads
        self._in_src_feats, self._in_dst_feats = expand_as_pair(in_feats)
        self._out_feats = out_feats
        self._allow_zero_in_degree = allow_zero_in_degree
        width = out_feats * num_heads
        if isinstance(in_feats, tuple):
            self.fc_src = nn.Linear(self._in_src_feats, width, bias=False)
            self.fc_dst = nn.Linear(self._in_dst_feats, width, bias=False)
        else:
            self.fc = nn.Linear(self._in_src_feats, width, bias=False)
        self.attn_l = nn.Parameter(T.empty(1, num_heads, out_feats))
        self.attn_r = nn.Parameter(T.empty(1, num_heads, out_feats))
        self.feat_drop = nn.Dropout(feat_drop)
        self.attn_drop = nn.Dropout(attn_drop)
        self.leaky_relu = nn.LeakyReLU(negative_slope)
        self.has_linear_res = False
        self.has_explicit_bias = False
        if residual:
            if self._in_dst_feats != width:
                self.res_fc = nn.Linear(self._in_dst_feats, width, bias=bias)
                self.has_linear_res = True
            else:
                self.res_fc = nn.Identity()
        else:
            self.register_buffer("res_fc", None)
        if bias and not self.has_linear_res:
            self.bias = nn.Parameter(T.empty(width))
            self.has_explicit_bias = True
        else:
            self.register_buffer("bias", None)
        self.reset_parameters()
        self.activation = activation

    def reset_parameters(self) -> None:
        """Xavier-normal (ReLU gain) projections and attention vectors, zero biases."""
        gain = nn.init.calculate_gain("relu")
        if hasattr(self, "fc"):
            nn.init.xavier_normal_(self.fc.weight, gain=gain)
        else:
            nn.init.xavier_normal_(self.fc_src.weight, gain=gain)
            nn.init.xavier_normal_(self.fc_dst.weight, gain=gain)
        nn.init.xavier_normal_(self.attn_l, gain=gain)
        nn.init.xavier_normal_(self.attn_r, gain=gain)
        if self.has_explicit_bias:
            nn.init.constant_(self.bias, 0)
        if isinstance(self.res_fc, nn.Linear):
            nn.init.xavier_normal_(self.res_fc.weight, gain=gain)
            if self.res_fc.bias is not None:
                nn.init.constant_(self.res_fc.bias, 0)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        """Turns the zero-in-degree check off (True) or on (False)."""
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Any, feat: Any, edge_weight: Any = None, get_attention: bool = False):
        """Attention-weighted aggregation. ``edge_weight`` ``(E,)`` scales the attention of each
        edge after the softmax (and the returned attention)."""
        name = type(self).__name__
        heads, out = self._num_heads, self._out_feats
        with graph.local_scope():
            if not self._allow_zero_in_degree:
                check_zero_in_degree(graph, name)
            check_pair_feats(name, graph, feat, self._in_src_feats, self._in_dst_feats)
            if edge_weight is not None:
                check_edge_weight(name, graph, edge_weight)
            if isinstance(feat, tuple):
                h_src, h_dst = self.feat_drop(feat[0]), self.feat_drop(feat[1])
            else:
                h_src = h_dst = self.feat_drop(feat)
                if is_block(graph):
                    h_dst = h_src[:graph.num_dst_nodes()]
            if hasattr(self, "fc"):
                feat_src = self.fc(h_src).view(*h_src.shape[:-1], heads, out)
                if isinstance(feat, tuple):
                    feat_dst = self.fc(h_dst).view(*h_dst.shape[:-1], heads, out)
                else:  # the destinations are the sources, or on a block their first rows
                    feat_dst = feat_src if h_dst is h_src else feat_src[:h_dst.shape[0]]
            else:
                feat_src = self.fc_src(h_src).view(*h_src.shape[:-1], heads, out)
                feat_dst = self.fc_dst(h_dst).view(*h_dst.shape[:-1], heads, out)
            el = (feat_src * self.attn_l).sum(dim=-1).unsqueeze(-1)
            er = (feat_dst * self.attn_r).sum(dim=-1).unsqueeze(-1)
            graph.srcdata.update({"ft": feat_src, "el": el})
            graph.dstdata.update({"er": er})
            graph.apply_edges(fn.u_add_v("el", "er", "e"))
            e = self.leaky_relu(graph.edata.pop("e"))
            a = self.attn_drop(edge_softmax(graph, e))
            if edge_weight is not None:
                a = a * edge_weight.reshape((a.shape[0],) + (1,) * (a.dim() - 1))
            graph.edata["a"] = a
            graph.update_all(fn.u_mul_e("ft", "a", "m"), fn.sum("m", "ft"))
            rst = graph.dstdata["ft"]
            if self.res_fc is not None:
                rst = rst + self.res_fc(h_dst).view(*h_dst.shape[:-1], heads, out)
            if self.has_explicit_bias:
                rst = rst + self.bias.view(heads, out)
            if self.activation is not None:
                rst = self.activation(rst)
            if get_attention:
                return rst, a
            return rst
