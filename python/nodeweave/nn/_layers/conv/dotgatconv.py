"""DotGatConv: graph attention with scaled dot-product scores, as in the Transformer (Vaswani et
al., "Attention Is All You Need", 2017) and DGL's ``DotGatConv``."""

from __future__ import annotations

import math
from typing import Any, Tuple, Union

from nodeweave import function as fn
from nodeweave.ops import edge_softmax

from .._ns import nn
from .._utils import check_pair_feats, check_zero_in_degree, expand_as_pair, is_block
from .._checks import positive_int

__all__ = ["DotGatConv"]


class DotGatConv(nn.Module):
    r"""Multi-head dot-product attention over the in-edges.

    For each head :math:`k`, with :math:`z_j = W_s^{(k)} h_j` and :math:`q_i = W_d^{(k)} h_i`
    (one projection :math:`W` for both unless ``in_feats`` is a pair):

    .. math::
        \alpha_{ij} = \operatorname{softmax}_{j \in N(i)} \frac{q_i^\top z_j}{\sqrt{d}},\qquad
        h_i'^{(k)} = \sum_{j \in N(i)} \alpha_{ij} z_j

    with :math:`d` = ``out_feats``. The scores are one gSDDMM (``u_dot_v``), the weighted sum one
    gSpMM.

    Parameters
    ----------
    in_feats : int or (int, int)
        Input size, or (source, destination) sizes; a pair gives two projections ``fc_src`` and
        ``fc_dst`` instead of ``fc``.
    out_feats : int
        Output size per head.
    num_heads : int
    allow_zero_in_degree : bool
        Without it, a destination node with no in-edge raises ValueError (its output would be 0).

    Shapes: ``feat`` ``(N, in_feats)`` or a pair; output ``(N_dst, num_heads, out_feats)``; with
    ``get_attention=True`` also the attention ``(E, num_heads, 1)``. The projections are bias-free
    ``Linear`` layers with their default initialization, as in DGL.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import DotGatConv
    >>> g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3))
    >>> out, attn = DotGatConv(4, 2, num_heads=3)(g, nc.ones(3, 4), get_attention=True)
    >>> out.shape, attn.shape
    ((3, 3, 2), (6, 3, 1))
    """

    def __init__(self, in_feats: Union[int, Tuple[int, int]], out_feats: int, num_heads: int,
                 allow_zero_in_degree: bool = False) -> None:
        super().__init__()
        name = type(self).__name__
        in_src, in_dst = expand_as_pair(in_feats)
        self._in_src_feats = positive_int(in_src, "in_feats", name)
        self._in_dst_feats = positive_int(in_dst, "in_feats", name)
        self._out_feats = positive_int(out_feats, "out_feats", name)
        self._num_heads = positive_int(num_heads, "num_heads", name)
        self._allow_zero_in_degree = allow_zero_in_degree
        width = out_feats * num_heads
        if isinstance(in_feats, tuple):
            self.fc_src = nn.Linear(self._in_src_feats, width, bias=False)
            self.fc_dst = nn.Linear(self._in_dst_feats, width, bias=False)
        else:
            self.fc = nn.Linear(self._in_src_feats, width, bias=False)

    def reset_parameters(self) -> None:
        """The projections' default ``Linear`` initialization."""
        for lin in (self.fc,) if hasattr(self, "fc") else (self.fc_src, self.fc_dst):
            lin.reset_parameters()

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        """Turns the zero-in-degree check off (True) or on (False)."""
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Any, feat: Any, get_attention: bool = False):
        """Dot-product-attention-weighted sum of the projected source features."""
        name = type(self).__name__
        heads, out = self._num_heads, self._out_feats
        with graph.local_scope():
            if not self._allow_zero_in_degree:
                check_zero_in_degree(graph, name)
            h_src, h_dst = check_pair_feats(name, graph, feat, self._in_src_feats, self._in_dst_feats)
            if hasattr(self, "fc"):
                feat_src = self.fc(h_src).view(-1, heads, out)
                if isinstance(feat, tuple):
                    feat_dst = self.fc(h_dst).view(-1, heads, out)
                else:  # the destinations are the sources, or on a block their first rows
                    feat_dst = feat_src if not is_block(graph) else feat_src[:graph.num_dst_nodes()]
            else:
                feat_src = self.fc_src(h_src).view(-1, heads, out)
                feat_dst = self.fc_dst(h_dst).view(-1, heads, out)
            graph.srcdata["ft"] = feat_src
            graph.dstdata["q"] = feat_dst
            graph.apply_edges(fn.u_dot_v("ft", "q", "a"))
            a = edge_softmax(graph, graph.edata.pop("a") / math.sqrt(out))
            graph.edata["sa"] = a
            graph.update_all(fn.u_mul_e("ft", "sa", "m"), fn.sum("m", "agg"))
            rst = graph.dstdata["agg"]
            if get_attention:
                return rst, a
            return rst
