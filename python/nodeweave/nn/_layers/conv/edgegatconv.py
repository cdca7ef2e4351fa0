"""EdgeGATConv: graph attention with edge features in the scores and in the messages, from Chen et
al., "SCENE: Reasoning about Traffic Scenes using Heterogeneous Graph Neural Networks" (2023)."""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple, Union

from nodeweave import function as fn
from nodeweave import ops
from nodeweave.ops import edge_softmax

from .._ns import T, nn
from .._checks import positive_int
from .._utils import check_feat, check_pair_feats, check_zero_in_degree, expand_as_pair, is_block

__all__ = ["EdgeGATConv"]


class EdgeGATConv(nn.Module):
    r"""Multi-head attention with edge features.

    For each head, with :math:`z_j = W h_j` (:math:`W_s`, :math:`W_d` for a pair of input sizes)
    and :math:`\epsilon_{ji} = W_e e_{ji}`:

    .. math::
        \alpha_{ji} = \operatorname{softmax}_{j \in N(i)} \mathrm{LeakyReLU}\big(a_l^\top z_j
        + a_r^\top z_i + a_e^\top \epsilon_{ji}\big),\qquad
        h_i' = \sigma\Big(\sum_{j \in N(i)} \alpha_{ji} (z_j + \epsilon_{ji}) + W_{res} h_i + b\Big)

    The scores are per-node and per-edge terms added by one gSDDMM; the sum is one fused gSpMM
    over the sources plus one over the edges (so :math:`z_j + \epsilon_{ji}` is never built).

    Parameters
    ----------
    in_feats : int or (int, int)
        Node input size, or (source, destination) sizes (``fc_src``/``fc_dst`` then replace
        ``fc``).
    edge_feats : int
        Edge input size.
    out_feats : int
        Output size per head.
    num_heads : int
    feat_drop, attn_drop : float
        Dropout on the node features and on the attention (off in ``eval()``).
    negative_slope : float
        LeakyReLU slope.
    residual : bool
        Adds ``res_fc(h_dst)``, a bias-free Linear (always a Linear, as in DGL). On by default.
    activation : callable, optional
    allow_zero_in_degree : bool
        Without it, a destination node with no in-edge raises ValueError.
    bias : bool

    Shapes: ``feat`` ``(N, *, in_feats)`` or a pair; ``edge_feat`` ``(E, *, edge_feats)``; output
    ``(N_dst, *, num_heads, out_feats)``; with ``get_attention=True`` also the attention
    ``(E, *, num_heads, 1)``. Weights are Xavier-normal (ReLU gain), the bias zero.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import EdgeGATConv
    >>> g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3))
    >>> conv = EdgeGATConv(4, 3, 2, num_heads=2)
    >>> conv(g, nc.ones(3, 4), nc.ones(g.num_edges(), 3)).shape
    (3, 2, 2)
    """

    def __init__(self, in_feats: Union[int, Tuple[int, int]], edge_feats: int, out_feats: int, num_heads: int,
                 feat_drop: float = 0.0, attn_drop: float = 0.0, negative_slope: float = 0.2,
                 residual: bool = True, activation: Optional[Callable[[Any], Any]] = None,
                 allow_zero_in_degree: bool = False, bias: bool = True) -> None:
        super().__init__()
        name = type(self).__name__
        in_src, in_dst = expand_as_pair(in_feats)
        self._in_src_feats = positive_int(in_src, "in_feats", name)
        self._in_dst_feats = positive_int(in_dst, "in_feats", name)
        self._edge_feats = positive_int(edge_feats, "edge_feats", name)
        self._out_feats = positive_int(out_feats, "out_feats", name)
        self._num_heads = positive_int(num_heads, "num_heads", name)
        self._allow_zero_in_degree = allow_zero_in_degree
        width = out_feats * num_heads
        if isinstance(in_feats, tuple):
            self.fc_src = nn.Linear(in_src, width, bias=False)
            self.fc_dst = nn.Linear(in_dst, width, bias=False)
        else:
            self.fc = nn.Linear(in_src, width, bias=False)
        self.attn_l = nn.Parameter(T.empty(1, num_heads, out_feats))
        self.attn_r = nn.Parameter(T.empty(1, num_heads, out_feats))
        self.feat_drop = nn.Dropout(feat_drop)
        self.attn_drop = nn.Dropout(attn_drop)
        self.leaky_relu = nn.LeakyReLU(negative_slope)
        if bias:
            self.bias = nn.Parameter(T.empty(width))
        else:
            self.register_buffer("bias", None)
        if residual:
            self.res_fc = nn.Linear(in_dst, width, bias=False)
        else:
            self.register_buffer("res_fc", None)
        self.fc_edge = nn.Linear(edge_feats, width, bias=False)
        self.attn_edge = nn.Parameter(T.empty(1, num_heads, out_feats))
        self.reset_parameters()
        self.activation = activation

    def reset_parameters(self) -> None:
        """Xavier-normal (ReLU gain) weights and attention vectors, zero bias."""
        gain = nn.init.calculate_gain("relu")
        linears = [self.fc] if hasattr(self, "fc") else [self.fc_src, self.fc_dst]
        linears.append(self.fc_edge)
        if self.res_fc is not None:
            linears.append(self.res_fc)
        for lin in linears:
            nn.init.xavier_normal_(lin.weight, gain=gain)
        for attn in (self.attn_l, self.attn_r, self.attn_edge):
            nn.init.xavier_normal_(attn, gain=gain)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        """Turns the zero-in-degree check off (True) or on (False)."""
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Any, feat: Any, edge_feat: Any, get_attention: bool = False):
        """Attention-weighted sum of source plus edge messages."""
        name = type(self).__name__
        heads, out = self._num_heads, self._out_feats
        with graph.local_scope():
            if not self._allow_zero_in_degree:
                check_zero_in_degree(graph, name)
            check_pair_feats(name, graph, feat, self._in_src_feats, self._in_dst_feats)
            check_feat(name, "edge_feat", edge_feat, graph.num_edges(), "edges", self._edge_feats,
                       "edge_feats")
            if isinstance(feat, tuple):
                h_src, h_dst = self.feat_drop(feat[0]), self.feat_drop(feat[1])
            else:
                h_src = h_dst = self.feat_drop(feat)
                if is_block(graph):
                    h_dst = h_src[:graph.num_dst_nodes()]
            fc_src, fc_dst = (self.fc, self.fc) if hasattr(self, "fc") else (self.fc_src, self.fc_dst)
            feat_src = fc_src(h_src).view(*h_src.shape[:-1], heads, out)
            if isinstance(feat, tuple) or fc_dst is not fc_src:
                feat_dst = fc_dst(h_dst).view(*h_dst.shape[:-1], heads, out)
            else:  # the destinations are the sources, or on a block their first rows
                feat_dst = feat_src if h_dst is h_src else feat_src[:h_dst.shape[0]]
            feat_edge = self.fc_edge(edge_feat).view(*edge_feat.shape[:-1], heads, out)
            el = (feat_src * self.attn_l).sum(-1, keepdim=True)
            er = (feat_dst * self.attn_r).sum(-1, keepdim=True)
            ee = (feat_edge * self.attn_edge).sum(-1, keepdim=True)
            graph.srcdata.update({"ft": feat_src, "el": el})
            graph.dstdata["er"] = er
            graph.apply_edges(fn.u_add_v("el", "er", "e"))
            e = self.leaky_relu(graph.edata.pop("e") + ee)
            a = self.attn_drop(edge_softmax(graph, e))
            rst = (ops.gspmm(graph, "mul", "sum", feat_src, a)
                   + ops.gspmm(graph, "copy_rhs", "sum", None, feat_edge * a))
            if self.res_fc is not None:
                rst = rst + self.res_fc(h_dst).view(*h_dst.shape[:-1], heads, out)
            if self.bias is not None:
                rst = rst + self.bias.view(heads, out)
            if self.activation is not None:
                rst = self.activation(rst)
            if get_attention:
                return rst, a
            return rst
