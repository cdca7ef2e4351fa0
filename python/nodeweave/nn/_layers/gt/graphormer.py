"""GraphormerLayer: one Graphormer transformer block (Ying et al., "Do Transformers Really
Perform Bad for Graph Representation?", NeurIPS 2021), DGL's ``GraphormerLayer``."""

from __future__ import annotations

from typing import Any, Optional

from .._ns import nn
from .._checks import positive_int
from .biased_mha import BiasedMHA

__all__ = ["GraphormerLayer"]


class GraphormerLayer(nn.Module):
    r"""A transformer block whose attention takes a graph bias (:class:`BiasedMHA`):

    .. math::
        h' = \mathrm{LN}_1\big(h + \mathrm{Dropout}(\mathrm{MHA}(h, b))\big),\qquad
        h'' = \mathrm{LN}_2\big(h' + \mathrm{FFN}(h')\big)

    and with ``norm_first=True`` the pre-norm form
    :math:`h' = h + \mathrm{Dropout}(\mathrm{MHA}(\mathrm{LN}_1 h, b))`,
    :math:`h'' = h' + \mathrm{FFN}(\mathrm{LN}_2 h')`. ``ffn`` is Linear(feat_size, hidden_size),
    ``activation``, Dropout, Linear(hidden_size, feat_size), Dropout.

    Parameters (DGL's)
    ----------
    feat_size, hidden_size, num_heads : int
    attn_bias_type : str
        ``'add'`` or ``'mul'``.
    norm_first : bool
    dropout, attn_dropout : float
    activation : module, optional
        Default ReLU.

    ``forward(nfeat, attn_bias=None, attn_mask=None)`` as :class:`BiasedMHA`: ``nfeat``
    ``(B, N, feat_size)``, ``attn_bias`` ``(B, N, N, num_heads)``, ``attn_mask`` ``(B, N, N)``. The
    bias usually comes from :class:`SpatialEncoder` (shortest-path distances) and the input from
    node features plus :class:`DegreeEncoder`.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import GraphormerLayer
    >>> layer = GraphormerLayer(feat_size=8, hidden_size=16, num_heads=2)
    >>> tuple(layer(nc.randn(2, 4, 8), nc.randn(2, 4, 4, 2)).shape)
    (2, 4, 8)
    """

    def __init__(self, feat_size: int, hidden_size: int, num_heads: int, attn_bias_type: str = "add",
                 norm_first: bool = False, dropout: float = 0.1, attn_dropout: float = 0.1,
                 activation: Optional[Any] = None) -> None:
        super().__init__()
        positive_int(hidden_size, "hidden_size", "GraphormerLayer")
        self.norm_first = norm_first
        self.attn = BiasedMHA(feat_size=feat_size, num_heads=num_heads, attn_bias_type=attn_bias_type,
                              attn_drop=attn_dropout)
        self.ffn = nn.Sequential(nn.Linear(feat_size, hidden_size), nn.ReLU() if activation is None else activation,
                                 nn.Dropout(p=dropout), nn.Linear(hidden_size, feat_size), nn.Dropout(p=dropout))
        self.dropout = nn.Dropout(p=dropout)
        self.attn_layer_norm = nn.LayerNorm(feat_size)
        self.ffn_layer_norm = nn.LayerNorm(feat_size)

    def forward(self, nfeat: Any, attn_bias: Optional[Any] = None, attn_mask: Optional[Any] = None) -> Any:
        h = self.attn_layer_norm(nfeat) if self.norm_first else nfeat
        h = nfeat + self.dropout(self.attn(h, attn_bias, attn_mask))
        if not self.norm_first:
            h = self.attn_layer_norm(h)
        out = h + self.ffn(self.ffn_layer_norm(h) if self.norm_first else h)
        return out if self.norm_first else self.ffn_layer_norm(out)
