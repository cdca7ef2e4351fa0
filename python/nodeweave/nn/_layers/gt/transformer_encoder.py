"""A post-norm transformer encoder (Vaswani et al., 2017) written once for both backends: the
sequence model inside :class:`LapPosEncoder`. ``nodeweave.core`` has no ``TransformerEncoder``, so
this is ours; its sub-modules and parameters carry PyTorch's names (``layers.0.self_attn.
in_proj_weight``, ``linear1``, ``norm2`` ...) so that a ``state_dict`` saved from DGL's
``LapPosEncoder`` (which uses ``torch.nn.TransformerEncoder``) loads unchanged.

>>> import nodeweave.core as nc
>>> from nodeweave.nn.native.gt.transformer_encoder import TransformerEncoder, TransformerEncoderLayer
>>> enc = TransformerEncoder(TransformerEncoderLayer(d_model=4, nhead=2, dim_feedforward=8), num_layers=2)
>>> tuple(enc(nc.randn(3, 5, 4)).shape)
(3, 5, 4)
"""

from __future__ import annotations

import copy
import math
from typing import Any, Optional

from .._ns import T, nn, F
from .._checks import positive_int
from nodeweave import errors as nwerr

__all__ = ["MultiheadSelfAttention", "TransformerEncoderLayer", "TransformerEncoder"]


class MultiheadSelfAttention(nn.Module):
    r"""Batch-first multi-head self-attention with a key padding mask:
    :math:`\mathrm{softmax}(Q_h K_h^\top / \sqrt{d_h}) V_h` per head, heads concatenated, then
    ``out_proj``. :math:`Q, K, V` are the three row blocks of ``in_proj_weight`` ``(3 E, E)`` (and
    ``in_proj_bias``), initialised as PyTorch's ``MultiheadAttention``: Xavier-uniform over the
    whole ``(3 E, E)`` matrix, zero biases.

    ``forward(x, key_padding_mask=None)``: ``x`` ``(B, S, E)``; ``key_padding_mask`` ``(B, S)``
    boolean, True for positions no query may attend to. A sequence whose every position is masked
    attends to all of them instead of producing NaN (its outputs are padding either way).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        cls = "MultiheadSelfAttention"
        self.embed_dim = positive_int(embed_dim, "embed_dim", cls)
        self.num_heads = positive_int(num_heads, "num_heads", cls)
        if embed_dim % num_heads:
            raise nwerr.ValueError(f"{cls}: embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = nn.Parameter(T.empty(3 * embed_dim, embed_dim))
        self.in_proj_bias = nn.Parameter(T.empty(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.dropout = nn.Dropout(p=dropout)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_uniform_(self.in_proj_weight)
        nn.init.zeros_(self.in_proj_bias)
        nn.init.zeros_(self.out_proj.bias)

    def forward(self, x: Any, key_padding_mask: Optional[Any] = None) -> Any:
        bsz, seq, dim = x.shape
        heads, hd = self.num_heads, self.head_dim
        qkv = F.linear(x, self.in_proj_weight, self.in_proj_bias)             # (B, S, 3E)
        qkv = qkv.reshape(bsz, seq, 3, heads, hd).permute(2, 0, 3, 1, 4)      # (3, B, H, S, hd)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd)                     # (B, H, S, S)
        if key_padding_mask is not None:
            masked = key_padding_mask.to(T.bool)
            # A fully masked sequence would softmax over nothing (NaN, also in the backward pass):
            # it attends to everything instead; its positions are padding the caller discards.
            masked = masked & ~masked.all(dim=-1, keepdim=True)
            scores = scores.masked_fill(masked.reshape(bsz, 1, 1, seq), float("-inf"))
        attn = self.dropout(T.softmax(scores, dim=-1))
        out = (attn @ v).permute(0, 2, 1, 3).reshape(bsz, seq, dim)
        return self.out_proj(out)


class TransformerEncoderLayer(nn.Module):
    r"""One post-norm encoder block with ReLU, as PyTorch's ``TransformerEncoderLayer`` with
    ``batch_first=True, norm_first=False``:

    .. math::
        h = \mathrm{LN}_1(x + \mathrm{Drop}(\mathrm{SA}(x))),\qquad
        y = \mathrm{LN}_2(h + \mathrm{Drop}(W_2\, \mathrm{Drop}(\mathrm{ReLU}(W_1 h + b_1)) + b_2))

    ``dropout`` applies to the attention weights and at the three places shown.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 layer_norm_eps: float = 1e-5) -> None:
        super().__init__()
        positive_int(dim_feedforward, "dim_feedforward", "TransformerEncoderLayer")
        self.self_attn = MultiheadSelfAttention(d_model, nhead, dropout=dropout)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(p=dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(p=dropout)
        self.dropout2 = nn.Dropout(p=dropout)

    def forward(self, src: Any, src_key_padding_mask: Optional[Any] = None) -> Any:
        h = self.norm1(src + self.dropout1(self.self_attn(src, src_key_padding_mask)))
        ff = self.linear2(self.dropout(F.relu(self.linear1(h))))
        return self.norm2(h + self.dropout2(ff))


class TransformerEncoder(nn.Module):
    """``num_layers`` copies of ``encoder_layer`` applied in turn (``layers``, a ``ModuleList``).
    The copies start from the same parameters, as PyTorch's ``TransformerEncoder`` (it deep-copies
    the layer it is given)."""

    def __init__(self, encoder_layer: Any, num_layers: int) -> None:
        super().__init__()
        self.num_layers = positive_int(num_layers, "num_layers", "TransformerEncoder")
        self.layers = nn.ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])

    def forward(self, src: Any, src_key_padding_mask: Optional[Any] = None) -> Any:
        for layer in self.layers:
            src = layer(src, src_key_padding_mask)
        return src
