"""Relational graph convolution (Schlichtkrull et al., 2018, R-GCN), DGL's ``RelGraphConv``.

Messages ``W_{r(e)} h_src`` come from one typed matmul over all edges (:class:`TypedLinear`:
``gather_mm`` reading source rows in place, or ``segment_mm`` when the edges are presorted by
type), then one fused sum over in-edges.

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.nn import RelGraphConv
>>> g = nw.graph(([0, 1, 2, 3, 2, 5], [1, 2, 3, 4, 0, 3]))
>>> conv = RelGraphConv(10, 2, num_rels=3, regularizer="basis", num_bases=2)
>>> tuple(conv(g, nc.ones(6, 10), nc.tensor([0, 1, 2, 0, 1, 2])).shape)
(6, 2)
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from nodeweave import ops

from .._ns import T, nn
from .._utils import graph_tensor
from .._checks import check_feat_dim, check_rows, positive_int, src_dst_feats
from ..linear import TypedLinear
from nodeweave import errors as nwerr

__all__ = ["RelGraphConv"]


class RelGraphConv(nn.Module):
    r"""R-GCN layer::

        h'_v = act( sum_r sum_{e=(u,v), r(e)=r} norm_e W_r h_u  (+ layer_norm) + h_bias + W_0 h_v )

    then dropout. ``W_r`` is a :class:`TypedLinear` (``linear_r``) with ``regularizer`` None,
    ``'basis'`` or ``'bdd'`` and ``num_bases`` (default ``num_rels`` when a regularizer is set);
    ``loop_weight`` (``W_0``, ``(in_feat, out_feat)``, Xavier-uniform with ReLU gain) is present
    when ``self_loop``; ``h_bias`` (zeros) when ``bias``; ``layer_norm_weight`` (a LayerNorm on
    the aggregate) when ``layer_norm``.

    ``forward(g, feat, etypes, norm=None, *, presorted=False)``:

    - ``feat``: ``(N, in_feat)``; on a block the destination nodes are its first rows; a
      ``(source, destination)`` pair is accepted too. A 1-D integer tensor of node ids in
      ``[0, in_feat)`` is read as one-hot rows (featureless input, as in the paper's entity
      classification): messages are rows ``W_r[id_u]`` and the self-loop adds ``W_0[id_v]``,
      without building the one-hot matrix; not with ``regularizer='bdd'``;
    - ``etypes``: ``(E,)`` integer relation ids in ``[0, num_rels)`` (tensor or list);
    - ``norm``: ``(E,)`` or ``(E, 1)`` per-edge factor (e.g. ``1 / in-degree per relation``);
    - ``presorted=True``: the edge ids are already grouped by ascending relation (as made by
      ``to_homogeneous``); checked, and computed with ``segment_mm``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
    >>> conv = nw.nn.RelGraphConv(4, 4, num_rels=2, regularizer="bdd", num_bases=2, self_loop=False)
    >>> tuple(conv(g, nc.ones(3, 4), nc.tensor([0, 0, 1]), presorted=True).shape)
    (3, 4)
    """

    def __init__(self, in_feat: int, out_feat: int, num_rels: int, regularizer: Optional[str] = None,
                 num_bases: Optional[int] = None, bias: bool = True, activation: Optional[Callable] = None,
                 self_loop: bool = True, dropout: float = 0.0, layer_norm: bool = False) -> None:
        super().__init__()
        positive_int(num_rels, "num_rels", "RelGraphConv")
        if regularizer is not None and num_bases is None:
            num_bases = num_rels
        self.in_feat = positive_int(in_feat, "in_feat", "RelGraphConv")
        self.out_feat = positive_int(out_feat, "out_feat", "RelGraphConv")
        self.num_rels = num_rels
        self.linear_r = TypedLinear(in_feat, out_feat, num_rels, regularizer, num_bases)
        self.bias = bool(bias)
        self.activation = activation
        self.self_loop = bool(self_loop)
        self.layer_norm = bool(layer_norm)
        if self.bias:
            self.h_bias = nn.Parameter(T.zeros(out_feat))
        if self.layer_norm:
            self.layer_norm_weight = nn.LayerNorm(out_feat, elementwise_affine=True)
        if self.self_loop:
            self.loop_weight = nn.Parameter(T.zeros((in_feat, out_feat)))
        self.dropout = nn.Dropout(dropout)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``linear_r`` as :class:`TypedLinear`; zero ``h_bias``; Xavier-uniform (ReLU gain)
        ``loop_weight``; LayerNorm to (1, 0)."""
        self.linear_r.reset_parameters()
        if self.bias:
            nn.init.zeros_(self.h_bias)
        if self.layer_norm:
            self.layer_norm_weight.reset_parameters()
        if self.self_loop:
            nn.init.xavier_uniform_(self.loop_weight, gain=nn.init.calculate_gain("relu"))

    def forward(self, g: Any, feat: Any, etypes: Any, norm: Optional[Any] = None, *,
                presorted: bool = False) -> Any:
        feat_src, feat_dst = src_dst_feats(g, feat)
        paired = isinstance(feat, (tuple, list))
        one_hot = _is_node_ids(feat_src)
        for t, name in zip((feat_src, feat_dst), ("feat[0]", "feat[1]") if paired else ("feat",)):
            if one_hot:
                self._check_node_ids(t, name)
            else:
                check_feat_dim(t, self.in_feat, name, "RelGraphConv")
        n_edges = g.num_edges()
        try:
            types = self.linear_r.check_types(etypes, n_edges, "etypes", "edge")
        except ValueError as e:
            raise nwerr.ValueError(f"RelGraphConv (num_rels={self.num_rels}): {e}") from None
        if norm is not None:
            check_rows(norm, n_edges, "norm", "edge")
            if norm.dim() == 1:
                norm = norm.unsqueeze(-1)
        src = graph_tensor(g.edges()[0])
        src = src.to(feat_src.device).long()
        if presorted:
            TypedLinear.check_sorted(types, "etypes", "presorted")
        if one_hot:
            try:
                msg = self.linear_r.typed_weight_rows(feat_src.long().index_select(0, src), types)
            except ValueError as e:
                raise nwerr.ValueError(f"RelGraphConv: {e}") from None
        else:
            msg = self.linear_r.typed_rows(feat_src, types, src, sorted_by_type=presorted)
        if norm is not None:
            msg = msg * norm
        h = ops.copy_e_sum(g, msg)
        if self.layer_norm:
            h = self.layer_norm_weight(h)
        if self.bias:
            h = h + self.h_bias
        if self.self_loop:
            h = h + (self.loop_weight.index_select(0, feat_dst.long()) if one_hot else feat_dst @ self.loop_weight)
        if self.activation is not None:
            h = self.activation(h)
        return self.dropout(h)

    def _check_node_ids(self, ids: Any, name: str) -> None:
        """Node-id input must index the ``in_feat`` one-hot categories."""
        if not ids.numel():
            return
        lo, hi = int(ids.min().item()), int(ids.max().item())
        if lo < 0 or hi >= self.in_feat:
            raise nwerr.ValueError(f"RelGraphConv: {name} holds node ids (one-hot input), which must be in "
                                   f"[0, {self.in_feat}) (in_feat), got values {lo}..{hi}")


def _is_node_ids(t: Any) -> bool:
    """A 1-D integer tensor: node ids standing for one-hot rows."""
    return t.dim() == 1 and not t.is_floating_point() and t.dtype != T.bool
