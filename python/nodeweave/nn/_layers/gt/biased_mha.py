"""BiasedMHA: dense multi-head self-attention over the (padded) nodes of each graph of a batch,
with an additive or multiplicative bias per node pair and head (Ying et al., "Do Transformers
Really Perform Bad for Graph Representation?", NeurIPS 2021), DGL's ``BiasedMHA``."""

from __future__ import annotations

from typing import Any, Optional

from .._ns import T, nn
from .._checks import positive_int
from nodeweave import errors as nwerr

__all__ = ["BiasedMHA"]


class BiasedMHA(nn.Module):
    r"""Multi-head attention with a graph bias :math:`b`:

    .. math::
        \mathrm{Attn}_h = \operatorname{softmax}_j\Big(\frac{Q_h K_h^\top}{\sqrt{d}} \circ b_{:,:,h}\Big),
        \qquad \mathrm{out} = \big(\Vert_h \mathrm{Attn}_h V_h\big) W_o + b_o

    with :math:`\circ` ``+`` (``attn_bias_type='add'``) or ``*`` (``'mul'``), :math:`d` the head size
    ``feat_size / num_heads`` and :math:`Q, K, V` linear projections (``q_proj``, ``k_proj``,
    ``v_proj``, ``out_proj``, Xavier-uniform with gain :math:`2^{-1/2}` for the first three, as the
    paper's code and DGL).

    ``forward(ndata, attn_bias=None, attn_mask=None)``: ``ndata`` ``(B, N, feat_size)``;
    ``attn_bias`` ``(B, N, N, num_heads)``; ``attn_mask`` ``(B, N, N)`` boolean, True where node
    ``i`` must not attend to ``j`` (every row needs one False, else the softmax is NaN, as in
    DGL). Returns ``(B, N, feat_size)``. Attention dropout ``attn_drop`` applies in training.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import BiasedMHA
    >>> mha = BiasedMHA(feat_size=8, num_heads=2)
    >>> tuple(mha(nc.randn(3, 5, 8), nc.randn(3, 5, 5, 2)).shape)
    (3, 5, 8)
    """

    def __init__(self, feat_size: int, num_heads: int, bias: bool = True, attn_bias_type: str = "add",
                 attn_drop: float = 0.1) -> None:
        super().__init__()
        self.feat_size = positive_int(feat_size, "feat_size", "BiasedMHA")
        self.num_heads = positive_int(num_heads, "num_heads", "BiasedMHA")
        if feat_size % num_heads:
            raise nwerr.ValueError(f"BiasedMHA: feat_size ({feat_size}) must be divisible by num_heads ({num_heads})")
        if attn_bias_type not in ("add", "mul"):
            raise nwerr.ValueError(f"BiasedMHA: attn_bias_type must be 'add' or 'mul', got {attn_bias_type!r}")
        self.head_dim = feat_size // num_heads
        self.scaling = self.head_dim ** -0.5
        self.attn_bias_type = attn_bias_type
        self.q_proj = nn.Linear(feat_size, feat_size, bias=bias)
        self.k_proj = nn.Linear(feat_size, feat_size, bias=bias)
        self.v_proj = nn.Linear(feat_size, feat_size, bias=bias)
        self.out_proj = nn.Linear(feat_size, feat_size, bias=bias)
        self.dropout = nn.Dropout(p=attn_drop)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform projections (gain ``2 ** -0.5`` for q, k, v; 1 for out), zero ``out_proj.bias``."""
        for proj in (self.q_proj, self.k_proj, self.v_proj):
            nn.init.xavier_uniform_(proj.weight, gain=2 ** -0.5)
        nn.init.xavier_uniform_(self.out_proj.weight)
        if self.out_proj.bias is not None:
            nn.init.zeros_(self.out_proj.bias)

    def forward(self, ndata: Any, attn_bias: Optional[Any] = None, attn_mask: Optional[Any] = None) -> Any:
        name = "BiasedMHA"
        if not isinstance(ndata, T.Tensor) or ndata.dim() != 3 or ndata.shape[-1] != self.feat_size:
            got = tuple(ndata.shape) if isinstance(ndata, T.Tensor) else type(ndata).__name__
            raise nwerr.ValueError(f"{name}: ndata must be (batch_size, N, feat_size={self.feat_size}), got {got}")
        bsz, n, _ = ndata.shape
        heads, hd = self.num_heads, self.head_dim

        def split(t: Any) -> Any:  # (B, N, H * hd) -> (B, H, N, hd)
            return t.reshape(bsz, n, heads, hd).permute(0, 2, 1, 3)

        q = split(self.q_proj(ndata)) * self.scaling
        k = split(self.k_proj(ndata))
        v = split(self.v_proj(ndata))
        scores = q @ k.transpose(-1, -2)                                    # (B, H, N, N)
        if attn_bias is not None:
            _check_shape(name, "attn_bias", attn_bias, (bsz, n, n, heads))
            bias = attn_bias.permute(0, 3, 1, 2)
            scores = scores + bias if self.attn_bias_type == "add" else scores * bias
        if attn_mask is not None:
            _check_shape(name, "attn_mask", attn_mask, (bsz, n, n))
            scores = scores.masked_fill(attn_mask.to(T.bool).unsqueeze(1), float("-inf"))
        attn = self.dropout(T.softmax(scores, dim=-1))
        out = (attn @ v).permute(0, 2, 1, 3).reshape(bsz, n, self.feat_size)
        return self.out_proj(out)


def _check_shape(layer: str, name: str, t: Any, shape: tuple) -> None:
    if not isinstance(t, T.Tensor):
        raise nwerr.TypeError(f"{layer}: {name} must be a tensor, got {type(t).__name__}")
    if tuple(t.shape) != shape:
        raise nwerr.ValueError(f"{layer}: {name} must have shape {shape}, got {tuple(t.shape)}")
