"""LapPosEncoder: a learned positional encoding from the Laplacian eigenpairs of a graph
(Kreuzer et al., "Rethinking Graph Transformers with Spectral Attention", 2021; GraphGPS, Rampášek
et al., 2022), DGL's ``LapPosEncoder``."""

from __future__ import annotations

from typing import Any, List

from .._ns import T, nn
from .._checks import positive_int
from .transformer_encoder import TransformerEncoder, TransformerEncoderLayer
from nodeweave import errors as nwerr

__all__ = ["LapPosEncoder"]

_MODELS = ("Transformer", "DeepSet")


def _mlp(widths: List[int]) -> List[Any]:
    """Linear + ReLU for each consecutive pair of ``widths``."""
    layers: List[Any] = []
    for a, b in zip(widths[:-1], widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return layers


class LapPosEncoder(nn.Module):
    r"""Encodes each node's ``k`` (eigenvector entry, eigenvalue) pairs into one ``dim``-vector.

    Node :math:`i` is the set :math:`\{(\phi_j(i), \lambda_j)\}_{j=1}^{k}`: each pair is mapped by
    ``linear`` (``Linear(2, dim)``), the set is encoded by ``pe_encoder``, padded entries are zeroed
    and the set is summed:

    - ``'Transformer'``: ``num_layer`` post-norm transformer blocks (``n_head`` heads, feed-forward
      width 2048, dropout 0.1 in training, PyTorch's defaults that DGL keeps) over the ``k`` pairs,
      padded pairs masked out as keys;
    - ``'DeepSet'``: an MLP applied to each pair: ReLU for ``num_layer=1``; otherwise ``linear`` is
      ``Linear(2, 2 dim)`` and ``pe_encoder`` is ReLU, ``num_layer - 2`` times (Linear(2 dim,
      2 dim), ReLU), Linear(2 dim, dim), ReLU.

    Parameters
    ----------
    model_type : str
        ``'Transformer'`` or ``'DeepSet'``.
    num_layer : int
        Transformer blocks or DeepSet layers.
    k : int
        Eigenpairs per node.
    dim : int
        Output size (divisible by ``n_head`` for ``'Transformer'``).
    n_head : int
        Attention heads (``'Transformer'`` only).
    batch_norm : bool
        Normalise the raw pairs with ``raw_norm`` (``BatchNorm1d(k)`` over the nodes and both
        entries of each pair) before ``linear``.
    num_post_layer : int
        ``post_mlp`` after the sum: none for 0; Linear(dim, dim), ReLU for 1; otherwise Linear(dim,
        2 dim), ReLU, ``num_post_layer - 2`` times (Linear(2 dim, 2 dim), ReLU), Linear(2 dim, dim),
        ReLU.

    ``forward(eigvals, eigvecs)``: both ``(N, k)``, as :class:`nodeweave.transforms.LapPE` stores
    them (``eigval_name``); NaN entries, the padding ``LapPE(padding=True)`` writes when a graph
    has fewer than ``k + 1`` nodes, count as absent (a NaN eigenvalue masks its pair). Returns
    ``(N, dim)``. The inputs are cast to the parameters' dtype (DGL casts to float32; a
    ``.double()`` module here computes in float64).

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import LapPosEncoder
    >>> enc = LapPosEncoder("DeepSet", num_layer=2, k=3, dim=4, num_post_layer=1)
    >>> tuple(enc(nc.randn(5, 3), nc.randn(5, 3)).shape)
    (5, 4)
    >>> enc = LapPosEncoder("Transformer", num_layer=1, k=3, dim=4, n_head=2).eval()
    >>> vals = nc.tensor([[0.5, 1.5, float("nan")]] * 2)      # a 2-node graph: one pair of padding
    >>> tuple(enc(vals, nc.randn(2, 3)).shape)
    (2, 4)
    """

    def __init__(self, model_type: str, num_layer: int, k: int, dim: int, n_head: int = 1,
                 batch_norm: bool = False, num_post_layer: int = 0) -> None:
        super().__init__()
        cls = "LapPosEncoder"
        if model_type not in _MODELS:
            raise nwerr.ValueError(f"{cls}: model_type must be 'Transformer' or 'DeepSet', got {model_type!r}")
        self.model_type = model_type
        self.num_layer = positive_int(num_layer, "num_layer", cls)
        self.k = positive_int(k, "k", cls)
        self.dim = positive_int(dim, "dim", cls)
        positive_int(n_head, "n_head", cls)
        positive_int(num_post_layer, "num_post_layer", cls, allow_zero=True)
        if model_type == "Transformer":
            if dim % n_head:
                raise nwerr.ValueError(f"{cls}: dim ({dim}) must be divisible by n_head ({n_head})")
            self.linear = nn.Linear(2, dim)
            self.pe_encoder = TransformerEncoder(TransformerEncoderLayer(d_model=dim, nhead=n_head), num_layer)
        elif num_layer == 1:
            self.linear = nn.Linear(2, dim)
            self.pe_encoder = nn.Sequential(nn.ReLU())
        else:
            self.linear = nn.Linear(2, 2 * dim)
            self.pe_encoder = nn.Sequential(nn.ReLU(), *_mlp([2 * dim] * (num_layer - 1) + [dim]))
        self.raw_norm = nn.BatchNorm1d(k) if batch_norm else None
        if num_post_layer == 0:
            self.post_mlp = None
        elif num_post_layer == 1:
            self.post_mlp = nn.Sequential(*_mlp([dim, dim]))
        else:
            self.post_mlp = nn.Sequential(*_mlp([dim] + [2 * dim] * (num_post_layer - 1) + [dim]))

    def forward(self, eigvals: Any, eigvecs: Any) -> Any:
        cls = "LapPosEncoder"
        for name, t in (("eigvals", eigvals), ("eigvecs", eigvecs)):
            if not isinstance(t, T.Tensor):
                raise nwerr.TypeError(f"{cls}: {name} must be a tensor, got {type(t).__name__}")
            if t.dim() != 2:
                raise nwerr.ValueError(f"{cls}: {name} must have shape (num_nodes, k), got {tuple(t.shape)}")
        if tuple(eigvals.shape) != tuple(eigvecs.shape):
            raise nwerr.ValueError(f"{cls}: eigvals {tuple(eigvals.shape)} and eigvecs {tuple(eigvecs.shape)} "
                                   "must have the same shape (num_nodes, k)")
        if self.raw_norm is not None and eigvals.shape[1] != self.k:
            raise nwerr.ValueError(f"{cls}: eigvals and eigvecs must have k={self.k} columns (batch_norm "
                                   f"normalises k channels), got {eigvals.shape[1]}")
        pairs = T.stack([eigvecs, eigvals], dim=2).to(self.linear.weight.dtype)   # (N, k, 2)
        empty = pairs != pairs                                                       # NaN: absent
        pairs = pairs.masked_fill(empty, 0.0)
        absent = empty[:, :, 1]                                                      # (N, k)
        if self.raw_norm is not None:
            pairs = self.raw_norm(pairs)
        h = self.linear(pairs)
        if self.model_type == "Transformer":
            h = self.pe_encoder(h, src_key_padding_mask=absent)
        else:
            h = self.pe_encoder(h)
        h = h.masked_fill(absent.unsqueeze(-1), 0.0).sum(dim=1)
        return h if self.post_mlp is None else self.post_mlp(h)

    def extra_repr(self) -> str:
        return f"model_type={self.model_type!r}, num_layer={self.num_layer}, k={self.k}, dim={self.dim}"
