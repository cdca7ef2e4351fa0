"""Set Transformer (Lee et al., "Set Transformer: A Framework for Attention-based
Permutation-Invariant Neural Networks", ICML 2019) over the node sets of a batch of graphs: DGL's
``SetTransformerEncoder`` (node-wise) and ``SetTransformerDecoder`` (a readout), and their blocks
(``MultiHeadAttention``, ``SetAttentionBlock``, ``InducedSetAttentionBlock``, ``PMALayer``).

The nodes of each graph attend only to nodes (or induced / seed vectors) of the same graph: the
packed ``(num_nodes, D)`` features are padded to ``(batch_size, max_nodes, D)`` by one
``index_select``, attended with the padding masked out, and packed back.

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.nn import SetTransformerEncoder, SetTransformerDecoder
>>> bg = nw.batch([nw.graph(([0], [1])), nw.graph(([0, 1], [1, 2]))])
>>> feat = nc.randn(5, 8)
>>> tuple(SetTransformerEncoder(8, 2, 4, 16, n_layers=2, block_type="isab", m=3)(bg, feat).shape)
(5, 8)
>>> tuple(SetTransformerDecoder(8, 2, 4, 16, n_layers=1, k=2)(bg, feat).shape)
(2, 16)
"""

from __future__ import annotations

import math
from typing import Any, List, Sequence

import numpy as np

from ._ns import T, nn
from ._checks import check_feat_dim, check_rows, id_tensor, positive_int
from nodeweave import errors as nwerr

__all__ = ["MultiHeadAttention", "SetAttentionBlock", "InducedSetAttentionBlock", "PMALayer", "SetTransformerEncoder",
           "SetTransformerDecoder"]


def _pad(x: Any, lengths: Sequence[int], max_len: int) -> Any:
    """Packed rows ``(sum(lengths), *)`` -> ``(len(lengths), max_len, *)``, zero rows as padding."""
    slots = np.arange(max_len)[None, :] < np.asarray(lengths)[:, None]
    idx = np.full(slots.size, x.shape[0], np.int64)          # row x.shape[0]: the zero row
    idx[np.flatnonzero(slots)] = np.arange(x.shape[0])
    rest = tuple(x.shape[1:])
    ext = T.cat([x, T.zeros((1,) + rest, dtype=x.dtype, device=x.device)], dim=0)
    return ext.index_select(0, id_tensor(idx, x)).reshape((len(lengths), max_len) + rest)


def _unpad(x: Any, lengths: Sequence[int]) -> Any:
    """The inverse of :func:`_pad`: ``(B, max_len, *)`` -> packed ``(sum(lengths), *)``."""
    bsz, max_len = x.shape[0], x.shape[1]
    slots = np.arange(max_len)[None, :] < np.asarray(lengths)[:, None]
    flat = x.reshape((bsz * max_len,) + tuple(x.shape[2:]))
    return flat.index_select(0, id_tensor(np.flatnonzero(slots), x))


def _lengths(graph: Any) -> List[int]:
    return [int(c) for c in graph.batch_num_nodes().tolist()]


def _tiled(vectors: Any, times: int) -> Any:
    """``vectors`` ``(k, D)`` stacked ``times`` times: ``(times * k, D)``, the packed queries of one
    set of ``k`` per graph."""
    return vectors.unsqueeze(0).expand(times, vectors.shape[0], vectors.shape[1]).reshape(-1, vectors.shape[1])


class MultiHeadAttention(nn.Module):
    r"""Multi-head attention of packed queries over packed memory, set by set, then two residual
    sub-layers:

    .. math::
        h = \mathrm{LN}_{in}\big(x + W_o [\Vert_h \mathrm{softmax}(Q_h K_h^\top / \sqrt{d_{head}})
        V_h]\big),\qquad y = \mathrm{LN}_{inter}(h + \mathrm{FFN}(h))

    with :math:`Q = x W_q`, :math:`K = m W_k`, :math:`V = m W_v` (no biases) and FFN Linear(d_model,
    d_ff), ReLU, Dropout(dropouth), Linear(d_ff, d_model). Every matrix is Xavier-uniform.
    In training, ``dropouta`` drops attention weights and ``dropouth`` also drops the output of
    each sub-layer before its residual sum, as DGL documents them (DGL applies only the dropout
    inside the FFN); with the default rates of 0 the two agree.

    ``forward(x, mem, lengths_x, lengths_mem)``: ``x`` ``(sum(lengths_x), d_model)`` and ``mem``
    ``(sum(lengths_mem), d_model)`` packed sets, set ``b`` of ``x`` attending to set ``b`` of ``mem``
    (an empty memory set gives zero attention output).
    """

    def __init__(self, d_model: int, num_heads: int, d_head: int, d_ff: int, dropouth: float = 0.0,
                 dropouta: float = 0.0) -> None:
        super().__init__()
        cls = "MultiHeadAttention"
        self.d_model = positive_int(d_model, "d_model", cls)
        self.num_heads = positive_int(num_heads, "num_heads", cls)
        self.d_head = positive_int(d_head, "d_head", cls)
        self.d_ff = positive_int(d_ff, "d_ff", cls)
        self.proj_q = nn.Linear(d_model, num_heads * d_head, bias=False)
        self.proj_k = nn.Linear(d_model, num_heads * d_head, bias=False)
        self.proj_v = nn.Linear(d_model, num_heads * d_head, bias=False)
        self.proj_o = nn.Linear(num_heads * d_head, d_model, bias=False)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Dropout(dropouth), nn.Linear(d_ff, d_model))
        self.droph = nn.Dropout(dropouth)
        self.dropa = nn.Dropout(dropouta)
        self.norm_in = nn.LayerNorm(d_model)
        self.norm_inter = nn.LayerNorm(d_model)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform for every matrix (biases and LayerNorm keep their defaults)."""
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def forward(self, x: Any, mem: Any, lengths_x: Sequence[int], lengths_mem: Sequence[int]) -> Any:
        bsz, heads, dh = len(lengths_x), self.num_heads, self.d_head
        max_x, max_m = max(lengths_x, default=0), max(lengths_mem, default=0)

        def heads_of(t: Any, lengths: Sequence[int], max_len: int) -> Any:   # -> (B, H, L, d_head)
            return _pad(t, lengths, max_len).reshape(bsz, max_len, heads, dh).permute(0, 2, 1, 3)

        q = heads_of(self.proj_q(x), lengths_x, max_x)
        k = heads_of(self.proj_k(mem), lengths_mem, max_m)
        v = heads_of(self.proj_v(mem), lengths_mem, max_m)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(dh)                          # (B, H, Lx, Lm)
        valid = id_tensor(np.arange(max_m)[None, :] < np.asarray(lengths_mem)[:, None], x).to(T.bool)
        valid = valid.reshape(bsz, 1, 1, max_m)
        # An empty memory set would softmax over nothing (NaN): its scores stay finite and its
        # weights are zeroed below.
        hidden = ~valid & valid.any(dim=-1, keepdim=True)
        alpha = T.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)
        alpha = self.dropa(alpha.masked_fill(~valid, 0.0))
        out = (alpha @ v).permute(0, 2, 1, 3).reshape(bsz, max_x, heads * dh)
        out = _unpad(self.proj_o(out), lengths_x)
        h = self.norm_in(x + self.droph(out))
        return self.norm_inter(h + self.droph(self.ffn(h)))


class SetAttentionBlock(nn.Module):
    """SAB: self-attention within each set, ``mha(feat, feat, lengths, lengths)``."""

    def __init__(self, d_model: int, num_heads: int, d_head: int, d_ff: int, dropouth: float = 0.0,
                 dropouta: float = 0.0) -> None:
        super().__init__()
        self.mha = MultiHeadAttention(d_model, num_heads, d_head, d_ff, dropouth=dropouth, dropouta=dropouta)

    def forward(self, feat: Any, lengths: Sequence[int]) -> Any:
        return self.mha(feat, feat, lengths, lengths)


class InducedSetAttentionBlock(nn.Module):
    """ISAB: ``m`` learned inducing points (``inducing_points``, Xavier-uniform) attend to each set
    (``mha[0]``), then the set attends to those ``m`` summaries (``mha[1]``): O(n m) instead of
    O(n^2). With ``m = 1`` the second attention's query and key projections get no gradient (a
    softmax over one key is 1): a warning says so, as DGL's does."""

    def __init__(self, m: int, d_model: int, num_heads: int, d_head: int, d_ff: int, dropouth: float = 0.0,
                 dropouta: float = 0.0) -> None:
        super().__init__()
        self.m = positive_int(m, "m", "InducedSetAttentionBlock")
        if m == 1:
            nwerr.warn("InducedSetAttentionBlock: with m = 1 the set attends to a single vector, so the query "
                       "and key projections of mha[1] get no gradient (a softmax over one key is constant)",
                       stacklevel=2)
        self.d_model = d_model
        self.inducing_points = nn.Parameter(T.empty(m, d_model))
        self.mha = nn.ModuleList([MultiHeadAttention(d_model, num_heads, d_head, d_ff, dropouth=dropouth,
                                                     dropouta=dropouta) for _ in range(2)])
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_uniform_(self.inducing_points)

    def forward(self, feat: Any, lengths: Sequence[int]) -> Any:
        induced = [self.m] * len(lengths)
        memory = self.mha[0](_tiled(self.inducing_points, len(lengths)), feat, induced, lengths)
        return self.mha[1](feat, memory, lengths, induced)

    def extra_repr(self) -> str:
        return f"InducedVector: ({self.m}, {self.d_model})"


class PMALayer(nn.Module):
    """Pooling by multi-head attention: ``k`` learned seed vectors (``seed_vectors``,
    Xavier-uniform) attend to ``ffn(feat)`` of each set (``ffn``: Linear, ReLU, Dropout, Linear), giving
    ``k`` vectors per set."""

    def __init__(self, k: int, d_model: int, num_heads: int, d_head: int, d_ff: int, dropouth: float = 0.0,
                 dropouta: float = 0.0) -> None:
        super().__init__()
        self.k = positive_int(k, "k", "PMALayer")
        self.d_model = d_model
        self.seed_vectors = nn.Parameter(T.empty(k, d_model))
        self.mha = MultiHeadAttention(d_model, num_heads, d_head, d_ff, dropouth=dropouth, dropouta=dropouta)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Dropout(dropouth), nn.Linear(d_ff, d_model))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_uniform_(self.seed_vectors)

    def forward(self, feat: Any, lengths: Sequence[int]) -> Any:
        return self.mha(_tiled(self.seed_vectors, len(lengths)), self.ffn(feat), [self.k] * len(lengths), lengths)

    def extra_repr(self) -> str:
        return f"SeedVector: ({self.k}, {self.d_model})"


def _check_input(cls: str, graph: Any, feat: Any, d_model: int) -> None:
    check_rows(feat, graph.num_nodes(), "feat", "node")
    check_feat_dim(feat, d_model, "feat", cls)


class SetTransformerEncoder(nn.Module):
    """``n_layers`` SAB (``block_type='sab'``) or ISAB (``'isab'``, ``m`` inducing points) blocks over
    the nodes of each graph: node-wise output ``(N, d_model)``.

    Parameters (DGL's): ``d_model, n_heads, d_head, d_ff, n_layers=1, block_type='sab', m=None,
    dropouth=0.0, dropouta=0.0``. ``forward(graph, feat)`` with ``feat`` ``(N, d_model)``.
    """

    def __init__(self, d_model: int, n_heads: int, d_head: int, d_ff: int, n_layers: int = 1,
                 block_type: str = "sab", m: Any = None, dropouth: float = 0.0, dropouta: float = 0.0) -> None:
        super().__init__()
        cls = "SetTransformerEncoder"
        self.d_model = positive_int(d_model, "d_model", cls)
        self.n_layers = positive_int(n_layers, "n_layers", cls)
        if block_type not in ("sab", "isab"):
            raise nwerr.ValueError(f"{cls}: block_type must be 'sab' or 'isab', got {block_type!r}")
        if block_type == "isab" and m is None:
            raise nwerr.ValueError(f"{cls}: block_type='isab' needs m, the number of inducing points")
        self.block_type, self.m = block_type, m
        args = (d_model, n_heads, d_head, d_ff)
        self.layers = nn.ModuleList([
            SetAttentionBlock(*args, dropouth=dropouth, dropouta=dropouta) if block_type == "sab"
            else InducedSetAttentionBlock(m, *args, dropouth=dropouth, dropouta=dropouta)
            for _ in range(n_layers)])

    def forward(self, graph: Any, feat: Any) -> Any:
        _check_input("SetTransformerEncoder", graph, feat, self.d_model)
        lengths = _lengths(graph)
        for layer in self.layers:
            feat = layer(feat, lengths)
        return feat


class SetTransformerDecoder(nn.Module):
    """A readout: :class:`PMALayer` with ``k`` seed vectors, then ``n_layers`` SAB blocks over those
    ``k`` vectors of each graph; returns ``(batch_size, k * d_model)``.

    Parameters (DGL's): ``d_model, num_heads, d_head, d_ff, n_layers, k, dropouth=0.0, dropouta=0.0``.
    ``forward(graph, feat)`` with ``feat`` ``(N, d_model)``. With ``k = 1`` and SAB layers, those
    layers' query and key projections cannot learn (a softmax over one vector): a warning says so.
    """

    def __init__(self, d_model: int, num_heads: int, d_head: int, d_ff: int, n_layers: int, k: int,
                 dropouth: float = 0.0, dropouta: float = 0.0) -> None:
        super().__init__()
        cls = "SetTransformerDecoder"
        self.d_model = positive_int(d_model, "d_model", cls)
        self.n_layers = positive_int(n_layers, "n_layers", cls, allow_zero=True)
        self.k = positive_int(k, "k", cls)
        if k == 1 and n_layers > 0:
            # DGL warns in PMALayer; the pooling attention itself is over the set's nodes and learns.
            nwerr.warn(f"{cls}: with k = 1 the SAB layers after pooling attend over a single vector, so their "
                       "query and key projections get no gradient", stacklevel=2)
        self.pma = PMALayer(k, d_model, num_heads, d_head, d_ff, dropouth=dropouth, dropouta=dropouta)
        self.layers = nn.ModuleList([SetAttentionBlock(d_model, num_heads, d_head, d_ff, dropouth=dropouth,
                                                       dropouta=dropouta) for _ in range(n_layers)])

    def forward(self, graph: Any, feat: Any) -> Any:
        _check_input("SetTransformerDecoder", graph, feat, self.d_model)
        lengths = _lengths(graph)
        feat = self.pma(feat, lengths)
        for layer in self.layers:
            feat = layer(feat, [self.k] * len(lengths))
        return feat.reshape(len(lengths), self.k * self.d_model)
