"""HGTConv: the heterogeneous graph transformer layer of Hu et al., "Heterogeneous Graph
Transformer" (WWW 2020), DGL's ``HGTConv``: a homogeneous graph (e.g. from
:func:`nodeweave.to_homogeneous`) with a type id per node and per edge.

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.nn import HGTConv
>>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
>>> conv = HGTConv(4, 2, num_heads=2, num_ntypes=2, num_etypes=3)
>>> tuple(conv(g, nc.ones(4, 4), nc.tensor([0, 1, 0, 1]), nc.tensor([0, 2, 1, 0])).shape)
(4, 4)
"""

from __future__ import annotations

import math
from typing import Any

from nodeweave import ops

from .._ns import T, nn
from .._utils import check_feat, graph_tensor, is_block
from .._checks import id_tensor, positive_int
from ..linear import TypedLinear
from nodeweave import errors as nwerr

__all__ = ["HGTConv"]


class HGTConv(nn.Module):
    r"""Heterogeneous graph transformer convolution.

    For an edge :math:`e = (s, t)` of type :math:`\phi(e)` between nodes of types
    :math:`\tau(s)`, :math:`\tau(t)`, and each head :math:`i` (head size :math:`d`):

    .. math::
        K^i(s) = \text{K-Linear}^i_{\tau(s)}(x_s),\quad Q^i(t) = \text{Q-Linear}^i_{\tau(t)}(x_t),
        \quad V^i(s) = \text{V-Linear}^i_{\tau(s)}(x_s)

        a^i_e = \frac{\mu^i_{\phi(e)}}{\sqrt d}\, \big(K^i(s) W^{ATT,i}_{\phi(e)}\big) \cdot Q^i(t),
        \qquad \alpha^i_e = \operatorname{softmax}_{e \in \mathrm{in}(t)} a^i_e

        \tilde h_t = \big\Vert_i \sum_{e = (s, t)} \alpha^i_e\, V^i(s) W^{MSG,i}_{\phi(e)},\qquad
        h_t' = \sigma(\beta_{\tau(t)})\, \text{A-Linear}_{\tau(t)}(\tilde h_t)
              + (1 - \sigma(\beta_{\tau(t)}))\, x_t R

    with :math:`R` the identity when ``in_size == head_size * num_heads``, else the learnable
    ``residual_w``; then an optional LayerNorm. As in DGL's code no nonlinearity is applied to
    :math:`\tilde h_t` (the paper's formula has one), and dropout follows A-Linear.

    Parameters (their names follow DGL's, so DGL state dicts load)
    ----------
    in_size, head_size, num_heads, num_ntypes, num_etypes : int
    dropout : float
        Default 0.2, as DGL.
    use_norm : bool
        LayerNorm on the output.

    ``forward(g, x, ntype, etype, *, presorted=False)``: ``x`` ``(N_src, in_size)``; ``ntype``
    ``(N_src,)`` node type ids; ``etype`` ``(E,)`` edge type ids; on a block the destination nodes
    are the first ``num_dst_nodes`` of ``x`` and ``ntype``. ``presorted=True`` says that nodes
    *and* edges are sorted by type (as :func:`~nodeweave.to_homogeneous` makes them): checked, and
    the typed products then run as ``segment_mm``. Returns ``(N_dst, head_size * num_heads)``.
    Each head's typed edge products are one ``gather_mm`` reading the source rows in place; the
    attention is one gSDDMM and the aggregation one gSpMM.
    """

    def __init__(self, in_size: int, head_size: int, num_heads: int, num_ntypes: int, num_etypes: int,
                 dropout: float = 0.2, use_norm: bool = False) -> None:
        super().__init__()
        name = "HGTConv"
        self.in_size = positive_int(in_size, "in_size", name)
        self.head_size = positive_int(head_size, "head_size", name)
        self.num_heads = positive_int(num_heads, "num_heads", name)
        positive_int(num_ntypes, "num_ntypes", name)
        positive_int(num_etypes, "num_etypes", name)
        self.sqrt_d = math.sqrt(head_size)
        self.use_norm = bool(use_norm)
        width = head_size * num_heads
        self.linear_k = TypedLinear(in_size, width, num_ntypes)
        self.linear_q = TypedLinear(in_size, width, num_ntypes)
        self.linear_v = TypedLinear(in_size, width, num_ntypes)
        self.linear_a = TypedLinear(width, width, num_ntypes)
        self.relation_pri = nn.ParameterList([nn.Parameter(T.ones(num_etypes)) for _ in range(num_heads)])
        self.relation_att = nn.ModuleList([TypedLinear(head_size, head_size, num_etypes) for _ in range(num_heads)])
        self.relation_msg = nn.ModuleList([TypedLinear(head_size, head_size, num_etypes) for _ in range(num_heads)])
        self.skip = nn.Parameter(T.ones(num_ntypes))
        self.drop = nn.Dropout(dropout)
        if use_norm:
            self.norm = nn.LayerNorm(width)
        if in_size != width:
            self.residual_w = nn.Parameter(T.empty(in_size, width))
            nn.init.xavier_uniform_(self.residual_w)

    def forward(self, g: Any, x: Any, ntype: Any, etype: Any, *, presorted: bool = False) -> Any:
        name = "HGTConv"
        n_src, n_dst, n_edges = g.num_src_nodes(), g.num_dst_nodes(), g.num_edges()
        if len(g.canonical_etypes) != 1 or (not is_block(g) and n_src != n_dst):
            raise nwerr.ValueError(f"{name} takes a homogeneous graph or a block with node and edge type ids "
                                   f"(nodeweave.to_homogeneous(g) makes one from a heterograph), got node types "
                                   f"{g.ntypes} and edge types {g.canonical_etypes}")
        check_feat(name, "x", x, n_src, "source nodes", self.in_size, "in_size")
        if x.dim() != 2:
            raise nwerr.ValueError(f"{name}: x must be 2-D (N, in_size), got shape {tuple(x.shape)}")
        ntypes = self._types(self.linear_k, ntype, n_src, "ntype", "source node")
        etypes = self._types(self.relation_att[0], etype, n_edges, "etype", "edge")
        if presorted:
            TypedLinear.check_sorted(ntypes, "ntype", "presorted")
            TypedLinear.check_sorted(etypes, "etype", "presorted")
        dst_types = ntypes[:n_dst]
        x_dst = x[:n_dst]
        heads, d = self.num_heads, self.head_size

        def per_head(t: Any, rows: int) -> Any:  # (rows, H * d) -> (H, rows, d), each head contiguous
            return t.reshape(rows, heads, d).permute(1, 0, 2).contiguous()

        k = per_head(self.linear_k.typed_rows(x, ntypes, None, presorted), n_src)
        q = per_head(self.linear_q.typed_rows(x_dst, dst_types, None, presorted), n_dst)
        v = per_head(self.linear_v.typed_rows(x, ntypes, None, presorted), n_src)
        src = graph_tensor(g.edges()[0]).to(x.device).long()
        etype_t = id_tensor(etypes, x)
        scores, msgs = [], []
        for i in range(heads):
            kw = self.relation_att[i].typed_rows(k[i], etypes, src, presorted)            # (E, d)
            prior = self.relation_pri[i].index_select(0, etype_t) / self.sqrt_d
            scores.append(ops.e_dot_v(g, kw, q[i]).reshape(n_edges) * prior)
            msgs.append(self.relation_msg[i].typed_rows(v[i], etypes, src, presorted))
        attn = ops.edge_softmax(g, T.stack(scores, 1))                                     # (E, H)
        h = ops.copy_e_sum(g, T.stack(msgs, 1) * attn.unsqueeze(-1)).reshape(n_dst, heads * d)
        h = self.drop(self.linear_a.typed_rows(h, dst_types, None, presorted))
        alpha = T.sigmoid(self.skip.index_select(0, id_tensor(dst_types, x))).unsqueeze(-1)
        res = x_dst @ self.residual_w if self.in_size != heads * d else x_dst
        h = h * alpha + res * (1 - alpha)
        if self.use_norm:
            h = self.norm(h)
        return h

    @staticmethod
    def _types(lin: TypedLinear, ids: Any, rows: int, name: str, what: str) -> Any:
        try:
            return lin.check_types(ids, rows, name, what)
        except (ValueError, TypeError) as e:
            raise type(e)(f"HGTConv: {e}") from None

    def extra_repr(self) -> str:
        return (f"in_size={self.in_size}, head_size={self.head_size}, num_heads={self.num_heads}, "
                f"use_norm={self.use_norm}")
