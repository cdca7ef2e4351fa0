"""EGATConv: graph attention with edge features that are updated too, from Rossmann-Toolbox
(Ludwiczak et al., Bioinformatics 2022, supplementary data)."""

from __future__ import annotations

from typing import Any, Tuple, Union

from nodeweave import function as fn
from nodeweave.ops import edge_softmax

from .._ns import F, T, nn
from .._checks import positive_int
from .._utils import check_edge_weight, check_feat, check_pair_feats, check_zero_in_degree, expand_as_pair
from nodeweave import errors as nwerr

__all__ = ["EGATConv"]


class EGATConv(nn.Module):
    r"""Multi-head attention whose scores come from new edge features.

    For each head :math:`k`, edge :math:`j \to i`:

    .. math::
        f_{ji}' = \mathrm{LeakyReLU}_{0.01}\big(W_{ni}^{(k)} h_j + W_{nj}^{(k)} h_i
                  + W_{f}^{(k)} f_{ji} + b^{(k)}\big),\qquad
        \alpha_{ji} = \operatorname{softmax}_{j \in N(i)} a^{(k)\top} f_{ji}',\qquad
        h_i'^{(k)} = \sum_{j \in N(i)} \alpha_{ji}\, w_{ji}\, W_{node}^{(k)} h_j

    (:math:`W_{ni}` reads the source, :math:`W_{nj}` the destination, as DGL's ``fc_ni`` and
    ``fc_nj``; :math:`w_{ji}` is the optional ``edge_weight``, 1 otherwise.) The layer returns
    both the node features :math:`h'` and the edge features :math:`f'`.

    Parameters
    ----------
    in_node_feats : int or (int, int)
        Node input size, or (source, destination) sizes.
    in_edge_feats : int
    out_node_feats, out_edge_feats : int
        Output sizes per head.
    num_heads : int
    bias : bool
        The edge bias :math:`b` (``num_heads * out_edge_feats``).

    As in DGL, a destination node with no in-edge always raises ValueError (there is no
    ``allow_zero_in_degree``). Projections and ``attn`` are Xavier-normal (ReLU gain), the bias
    zero.

    ``forward(graph, nfeats, efeats, edge_weight=None, get_attention=False)``: ``nfeats``
    ``(N, in_node_feats)`` or a pair, ``efeats`` ``(E, in_edge_feats)``, ``edge_weight`` ``(E,)``
    or ``(E, 1)``. Returns ``(N_dst, num_heads, out_node_feats)`` node features and
    ``(E, num_heads, out_edge_feats)`` edge features, and with ``get_attention=True`` the
    attention ``(E, num_heads, 1)`` (times ``edge_weight``).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import EGATConv
    >>> g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3))
    >>> conv = EGATConv(4, 3, out_node_feats=2, out_edge_feats=5, num_heads=2)
    >>> h, f = conv(g, nc.ones(3, 4), nc.ones(g.num_edges(), 3))
    >>> h.shape, f.shape
    ((3, 2, 2), (6, 2, 5))
    """

    def __init__(self, in_node_feats: Union[int, Tuple[int, int]], in_edge_feats: int, out_node_feats: int,
                 out_edge_feats: int, num_heads: int, bias: bool = True) -> None:
        super().__init__()
        name = type(self).__name__
        in_src, in_dst = expand_as_pair(in_node_feats)
        self._in_src_node_feats = positive_int(in_src, "in_node_feats", name)
        self._in_dst_node_feats = positive_int(in_dst, "in_node_feats", name)
        self._in_edge_feats = positive_int(in_edge_feats, "in_edge_feats", name)
        self._out_node_feats = positive_int(out_node_feats, "out_node_feats", name)
        self._out_edge_feats = positive_int(out_edge_feats, "out_edge_feats", name)
        self._num_heads = positive_int(num_heads, "num_heads", name)
        self.fc_node_src = nn.Linear(in_src, out_node_feats * num_heads, bias=False)
        self.fc_ni = nn.Linear(in_src, out_edge_feats * num_heads, bias=False)
        self.fc_nj = nn.Linear(in_dst, out_edge_feats * num_heads, bias=False)
        self.fc_fij = nn.Linear(in_edge_feats, out_edge_feats * num_heads, bias=False)
        self.attn = nn.Parameter(T.empty(1, num_heads, out_edge_feats))
        if bias:
            self.bias = nn.Parameter(T.empty(num_heads * out_edge_feats))
        else:
            self.register_buffer("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-normal (ReLU gain) projections and ``attn``, zero bias."""
        gain = nn.init.calculate_gain("relu")
        for lin in (self.fc_node_src, self.fc_ni, self.fc_fij, self.fc_nj):
            nn.init.xavier_normal_(lin.weight, gain=gain)
        nn.init.xavier_normal_(self.attn, gain=gain)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def forward(self, graph: Any, nfeats: Any, efeats: Any, edge_weight: Any = None,
                get_attention: bool = False):
        """New node and edge features (and the attention)."""
        name = type(self).__name__
        heads = self._num_heads
        with graph.local_scope():
            check_zero_in_degree(graph, name)
            feat_src, feat_dst = check_pair_feats(name, graph, nfeats, self._in_src_node_feats,
                                                  self._in_dst_node_feats, arg="nfeats")
            check_feat(name, "efeats", efeats, graph.num_edges(), "edges", self._in_edge_feats,
                       "in_edge_feats")
            if edge_weight is not None:
                check_edge_weight(name, graph, edge_weight)
                if edge_weight.numel() != graph.num_edges():
                    raise nwerr.ValueError(f"{name}: edge_weight must hold one value per edge, shape "
                                           f"({graph.num_edges()},) or ({graph.num_edges()}, 1), got "
                                           f"{tuple(edge_weight.shape)}")
            graph.srcdata["f_ni"] = self.fc_ni(feat_src)
            graph.dstdata["f_nj"] = self.fc_nj(feat_dst)
            graph.apply_edges(fn.u_add_v("f_ni", "f_nj", "f"))
            f_out = graph.edata.pop("f") + self.fc_fij(efeats)
            if self.bias is not None:
                f_out = f_out + self.bias
            f_out = F.leaky_relu(f_out).view(-1, heads, self._out_edge_feats)
            a = edge_softmax(graph, (f_out * self.attn).sum(-1, keepdim=True))
            if edge_weight is not None:
                a = a * edge_weight.reshape(-1, 1, 1)
            graph.edata["a"] = a
            graph.srcdata["h"] = self.fc_node_src(feat_src).view(-1, heads, self._out_node_feats)
            graph.update_all(fn.u_mul_e("h", "a", "m"), fn.sum("m", "h"))
            h_out = graph.dstdata["h"]
            if get_attention:
                return h_out, f_out, a
            return h_out, f_out
