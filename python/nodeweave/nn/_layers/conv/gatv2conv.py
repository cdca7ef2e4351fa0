"""GATv2Conv: the "dynamic" graph attention of Brody et al., "How Attentive are Graph Attention
Networks?" (ICLR 2022)."""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple, Union

from nodeweave import function as fn
from nodeweave.ops import edge_softmax

from .._ns import T, nn
from .._utils import check_pair_feats, check_zero_in_degree, expand_as_pair, is_block

__all__ = ["GATv2Conv"]


class GATv2Conv(nn.Module):
    r"""Multi-head GATv2 attention: the nonlinearity comes before the attention vector, so the
    ranking of neighbours can depend on the destination node.

    .. math::
        e_{ij} = a^{(k)\top} \mathrm{LeakyReLU}(W_s^{(k)} h_j + W_d^{(k)} h_i),\quad
        \alpha_{ij} = \operatorname{softmax}_{j \in N(i)} e_{ij},\quad
        h_i'^{(k)} = \sum_{j \in N(i)} \alpha_{ij} W_s^{(k)} h_j

    The sum :math:`W_s h_j + W_d h_i` is one gSDDMM (an ``(E, heads, out_feats)`` tensor, which the
    per-edge nonlinearity makes unavoidable); the weighted sum is one fused gSpMM.

    Parameters
    ----------
    in_feats : int or (int, int)
        Input size, or (source, destination) sizes.
    out_feats : int
        Output size per head.
    num_heads : int
    feat_drop, attn_drop : float
        Dropout on inputs and attention weights (off in ``eval()``).
    negative_slope : float
    residual : bool
        Adds the destination input (through ``res_fc`` when sizes differ).
    activation : callable, optional
    allow_zero_in_degree : bool
    bias : bool
        Biases of ``fc_src``, ``fc_dst`` and ``res_fc``.
    share_weights : bool
        Use one projection for sources and destinations (``fc_dst`` is ``fc_src``); ignored
        when ``in_feats`` is a pair.

    Shapes: ``feat`` ``(N, in_feats)`` or a pair; output ``(N_dst, num_heads, out_feats)``; with
    ``get_attention=True`` also ``(E, num_heads, 1)``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import GATv2Conv
    >>> g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3))
    >>> GATv2Conv(4, 2, num_heads=3, share_weights=True)(g, nc.ones(3, 4)).shape
    (3, 3, 2)
    """

    def __init__(self, in_feats: Union[int, Tuple[int, int]], out_feats: int, num_heads: int,
                 feat_drop: float = 0.0, attn_drop: float = 0.0, negative_slope: float = 0.2,
                 residual: bool = False, activation: Optional[Callable[[Any], Any]] = None,
                 allow_zero_in_degree: bool = False, bias: bool = True,
                 share_weights: bool = False) -> None:
        super().__init__()
        self._num_heads = num_heads
        self._in_src_feats, self._in_dst_feats = expand_as_pair(in_feats)
        self._out_feats = out_feats
        self._allow_zero_in_degree = allow_zero_in_degree
        width = out_feats * num_heads
        # As in DGL, a (source, destination) in_feats pair always gets two projections.
        share_weights = share_weights and not isinstance(in_feats, tuple)
        self.fc_src = nn.Linear(self._in_src_feats, width, bias=bias)
        if share_weights:
            self.fc_dst = self.fc_src
        else:
            self.fc_dst = nn.Linear(self._in_dst_feats, width, bias=bias)
        self.attn = nn.Parameter(T.empty(1, num_heads, out_feats))
        self.feat_drop = nn.Dropout(feat_drop)
        self.attn_drop = nn.Dropout(attn_drop)
        self.leaky_relu = nn.LeakyReLU(negative_slope)
        if residual:
            if self._in_dst_feats != width:
                self.res_fc = nn.Linear(self._in_dst_feats, width, bias=bias)
            else:
                self.res_fc = nn.Identity()
        else:
            self.register_buffer("res_fc", None)
        self.activation = activation
        self.share_weights = share_weights
        self.bias = bias
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-normal (ReLU gain) weights and attention vector, zero biases."""
        gain = nn.init.calculate_gain("relu")
        linears = [self.fc_src] if self.share_weights else [self.fc_src, self.fc_dst]
        if isinstance(self.res_fc, nn.Linear):
            linears.append(self.res_fc)
        for lin in linears:
            nn.init.xavier_normal_(lin.weight, gain=gain)
            if lin.bias is not None:
                nn.init.constant_(lin.bias, 0)
        nn.init.xavier_normal_(self.attn, gain=gain)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        """Turns the zero-in-degree check off (True) or on (False)."""
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Any, feat: Any, get_attention: bool = False):
        """Attention-weighted aggregation of the projected source features."""
        name = type(self).__name__
        heads, out = self._num_heads, self._out_feats
        with graph.local_scope():
            if not self._allow_zero_in_degree:
                check_zero_in_degree(graph, name)
            check_pair_feats(name, graph, feat, self._in_src_feats, self._in_dst_feats)
            if isinstance(feat, tuple):
                h_src = self.feat_drop(feat[0])
                h_dst = self.feat_drop(feat[1])
                feat_src = self.fc_src(h_src).view(-1, heads, out)
                feat_dst = self.fc_dst(h_dst).view(-1, heads, out)
            else:
                h_src = h_dst = self.feat_drop(feat)
                if is_block(graph):
                    h_dst = h_src[:graph.num_dst_nodes()]
                feat_src = self.fc_src(h_src).view(-1, heads, out)
                if self.share_weights:
                    feat_dst = feat_src if h_dst is h_src else feat_src[:h_dst.shape[0]]
                else:
                    feat_dst = self.fc_dst(h_dst).view(-1, heads, out)
            graph.srcdata.update({"el": feat_src})
            graph.dstdata.update({"er": feat_dst})
            graph.apply_edges(fn.u_add_v("el", "er", "e"))
            e = self.leaky_relu(graph.edata.pop("e"))
            e = (e * self.attn).sum(dim=-1).unsqueeze(-1)
            a = self.attn_drop(edge_softmax(graph, e))
            graph.edata["a"] = a
            graph.update_all(fn.u_mul_e("el", "a", "m"), fn.sum("m", "ft"))
            rst = graph.dstdata["ft"]
            if self.res_fc is not None:
                rst = rst + self.res_fc(h_dst).view(h_dst.shape[0], -1, out)
            if self.activation is not None:
                rst = self.activation(rst)
            if get_attention:
                return rst, a
            return rst
