"""Graphormer's structural encodings (Ying et al., NeurIPS 2021; 3-D: Luo et al., "One Transformer
Can Understand Both 2D & 3D Molecular Data", 2022): learnable embeddings of node degrees, of
shortest-path distances and of the edges along shortest paths, and a Gaussian-kernel encoding of
3-D distances. DGL's ``DegreeEncoder``, ``SpatialEncoder``, ``PathEncoder``, ``SpatialEncoder3d``.
All take dense, zero- or -1-padded batch tensors, as DGL 2's do.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from .._ns import T, nn, F
from .._checks import positive_int
from nodeweave import errors as nwerr

__all__ = ["DegreeEncoder", "SpatialEncoder", "PathEncoder", "SpatialEncoder3d"]


def _int_tensor(layer: str, name: str, t: Any, dims: int, shape_doc: str) -> None:
    if not isinstance(t, T.Tensor):
        raise nwerr.TypeError(f"{layer}: {name} must be a tensor, got {type(t).__name__}")
    if t.is_floating_point() or t.dtype == T.bool:
        raise nwerr.TypeError(f"{layer}: {name} must hold integers, got dtype {t.dtype}")
    if t.dim() != dims:
        raise nwerr.ValueError(f"{layer}: {name} must have shape {shape_doc}, got {tuple(t.shape)}")


class DegreeEncoder(nn.Module):
    r"""A learnable embedding of node degrees (Graphormer's centrality encoding), added to the node
    features: degrees are clamped to ``[0, max_degree]`` and looked up in ``Embedding(max_degree + 1,
    embedding_dim, padding_idx=0)`` (degree 0, also the padding, embeds to 0).

    ``direction``: ``'in'`` or ``'out'`` (one table, ``encoder``; ``forward`` takes ``(B, N)``
    padded degrees) or ``'both'`` (``encoder1`` for in-, ``encoder2`` for out-degrees, summed;
    ``forward`` takes ``(2, B, N)``: in- and out-degrees stacked). Returns ``(B, N, embedding_dim)``.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import DegreeEncoder
    >>> enc = DegreeEncoder(max_degree=3, embedding_dim=4, direction="in")
    >>> out = enc(nc.tensor([[1, 5, 0]]))
    >>> tuple(out.shape), out[0, 2].abs().sum().item()
    ((1, 3, 4), 0.0)
    """

    def __init__(self, max_degree: int, embedding_dim: int, direction: str = "both") -> None:
        super().__init__()
        self.max_degree = positive_int(max_degree, "max_degree", "DegreeEncoder", allow_zero=True)
        positive_int(embedding_dim, "embedding_dim", "DegreeEncoder")
        if direction not in ("in", "out", "both"):
            raise nwerr.ValueError(f"DegreeEncoder: direction must be 'in', 'out' or 'both', got {direction!r}")
        self.direction = direction
        if direction == "both":
            self.encoder1 = nn.Embedding(max_degree + 1, embedding_dim, padding_idx=0)
            self.encoder2 = nn.Embedding(max_degree + 1, embedding_dim, padding_idx=0)
        else:
            self.encoder = nn.Embedding(max_degree + 1, embedding_dim, padding_idx=0)

    def forward(self, degrees: Any) -> Any:
        both = self.direction == "both"
        _int_tensor("DegreeEncoder", "degrees", degrees, 3 if both else 2,
                    "(2, batch_size, N) with direction='both'" if both else "(batch_size, N)")
        if both and degrees.shape[0] != 2:
            raise nwerr.ValueError("DegreeEncoder: with direction='both', degrees must stack in- and out-degrees: "
                                   f"shape (2, batch_size, N), got {tuple(degrees.shape)}")
        degrees = degrees.clamp(min=0, max=self.max_degree)
        if both:
            return self.encoder1(degrees[0]) + self.encoder2(degrees[1])
        return self.encoder(degrees)


class SpatialEncoder(nn.Module):
    r"""A learnable attention bias per shortest-path distance and head (Graphormer's spatial
    encoding): distances clamped to ``[-1, max_dist]``, shifted by one and looked up in
    ``embedding_table`` (``Embedding(max_dist + 2, num_heads, padding_idx=0)``), so -1
    (unreachable pairs, or padding) gives 0.

    ``forward(dist)``: ``dist`` ``(B, N, N)`` integer distances padded with -1; returns
    ``(B, N, N, num_heads)``, the ``attn_bias`` of :class:`GraphormerLayer`.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import SpatialEncoder
    >>> tuple(SpatialEncoder(max_dist=2, num_heads=4)(nc.tensor([[[0, 1], [-1, 0]]])).shape)
    (1, 2, 2, 4)
    """

    def __init__(self, max_dist: int, num_heads: int = 1) -> None:
        super().__init__()
        self.max_dist = positive_int(max_dist, "max_dist", "SpatialEncoder", allow_zero=True)
        self.num_heads = positive_int(num_heads, "num_heads", "SpatialEncoder")
        self.embedding_table = nn.Embedding(max_dist + 2, num_heads, padding_idx=0)

    def forward(self, dist: Any) -> Any:
        _int_tensor("SpatialEncoder", "dist", dist, 3, "(batch_size, N, N)")
        return self.embedding_table(dist.clamp(min=-1, max=self.max_dist) + 1)


class PathEncoder(nn.Module):
    r"""An attention bias from the edges along each shortest path (Graphormer's edge encoding):

    .. math::
        b_{xy,h} = \frac{1}{\mathrm{clamp}(d_{xy}, 1, L)} \sum_{l=1}^{L} e^{(xy)}_l \cdot w_{l,h}

    with :math:`e^{(xy)}_l` the features of the :math:`l`-th edge on the path from :math:`x` to
    :math:`y` and :math:`w_{l,h}` rows of ``embedding_table`` (``Embedding(max_len * num_heads,
    feat_dim)``, read as ``(max_len, num_heads, feat_dim)``).

    ``forward(dist, path_data)``: ``dist`` ``(B, N, N)`` integer distances (zero-padded),
    ``path_data`` ``(B, N, N, max_len, feat_dim)`` zero-padded edge features; returns
    ``(B, N, N, num_heads)``.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import PathEncoder
    >>> enc = PathEncoder(max_len=2, feat_dim=3, num_heads=4)
    >>> tuple(enc(nc.ones(1, 2, 2, dtype=nc.int64), nc.ones(1, 2, 2, 2, 3)).shape)
    (1, 2, 2, 4)
    """

    def __init__(self, max_len: int, feat_dim: int, num_heads: int = 1) -> None:
        super().__init__()
        self.max_len = positive_int(max_len, "max_len", "PathEncoder")
        self.feat_dim = positive_int(feat_dim, "feat_dim", "PathEncoder")
        self.num_heads = positive_int(num_heads, "num_heads", "PathEncoder")
        self.embedding_table = nn.Embedding(max_len * num_heads, feat_dim)

    def forward(self, dist: Any, path_data: Any) -> Any:
        name = "PathEncoder"
        _int_tensor(name, "dist", dist, 3, "(batch_size, N, N)")
        bsz, n = dist.shape[0], dist.shape[1]
        want = (bsz, n, n, self.max_len, self.feat_dim)
        if not isinstance(path_data, T.Tensor) or tuple(path_data.shape) != want:
            got = tuple(path_data.shape) if isinstance(path_data, T.Tensor) else type(path_data).__name__
            raise nwerr.ValueError(f"{name}: path_data must have shape (batch_size, N, N, max_len, feat_dim) = {want}, "
                                   f"got {got}")
        # sum over l and d of path_data[b, x, y, l, d] * w[l, h, d]: one matmul.
        w = self.embedding_table.weight.reshape(self.max_len, self.num_heads, self.feat_dim)
        w = w.permute(0, 2, 1).reshape(self.max_len * self.feat_dim, self.num_heads)
        enc = path_data.reshape(bsz * n * n, self.max_len * self.feat_dim) @ w
        enc = enc.reshape(bsz, n, n, self.num_heads)
        return enc / dist.clamp(min=1, max=self.max_len).to(enc).unsqueeze(-1)


class SpatialEncoder3d(nn.Module):
    r"""An attention bias from 3-D distances through Gaussian basis kernels:

    .. math::
        \psi^k_{ij} = \frac{1}{\sqrt{2\pi}\,|\sigma^k|'} \exp\Big(-\frac12
        \Big(\frac{\gamma_{ij} \|r_i - r_j\| + \beta_{ij} - \mu^k}{|\sigma^k|'}\Big)^2\Big),\qquad
        b_{ij} = W_2\, \mathrm{GELU}(W_1 \psi_{ij} + c_1) + c_2

    with :math:`|\sigma|' = |\sigma| + 0.01`, :math:`\pi` taken as 3.14159 (as DGL) and
    :math:`\gamma_{ij}, \beta_{ij}` sums of per-type embeddings of the two node types (``gamma``,
    ``beta``; row 2 + type for the source, ``max_node_type`` + 3 + type for the target, row 0 twice
    when no types are given). Type -1 marks padding nodes. Learnable: ``means``, ``stds`` (U(0, 3)), ``gamma`` (ones), ``beta`` (zeros),
    ``linear_layer_1``, ``linear_layer_2``.

    ``forward(coord, node_type=None)``: ``coord`` ``(B, N, 3)``, ``node_type`` ``(B, N)`` integer;
    returns ``(B, N, N, num_heads)``. The distance's gradient at coincident points is 0 (as
    ``torch.cdist``'s).

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import SpatialEncoder3d
    >>> enc = SpatialEncoder3d(num_kernels=4, num_heads=8, max_node_type=3)
    >>> tuple(enc(nc.rand(1, 4, 3), node_type=nc.tensor([[1, 0, 2, 1]])).shape)
    (1, 4, 4, 8)
    """

    def __init__(self, num_kernels: int, num_heads: int = 1, max_node_type: int = 100) -> None:
        super().__init__()
        self.num_kernels = positive_int(num_kernels, "num_kernels", "SpatialEncoder3d")
        self.num_heads = positive_int(num_heads, "num_heads", "SpatialEncoder3d")
        self.max_node_type = positive_int(max_node_type, "max_node_type", "SpatialEncoder3d")
        self.means = nn.Parameter(T.empty(num_kernels))
        self.stds = nn.Parameter(T.empty(num_kernels))
        self.linear_layer_1 = nn.Linear(num_kernels, num_kernels)
        self.linear_layer_2 = nn.Linear(num_kernels, num_heads)
        # Row 0: no types given; 2 + t: source type t; max_node_type + 3 + t: target type t (t = -1: padding).
        self.gamma = nn.Embedding(2 * max_node_type + 3, 1, padding_idx=0)
        self.beta = nn.Embedding(2 * max_node_type + 3, 1, padding_idx=0)
        nn.init.uniform_(self.means, 0, 3)
        nn.init.uniform_(self.stds, 0, 3)
        nn.init.constant_(self.gamma.weight, 1)
        nn.init.constant_(self.beta.weight, 0)

    def forward(self, coord: Any, node_type: Optional[Any] = None) -> Any:
        name = "SpatialEncoder3d"
        if not isinstance(coord, T.Tensor) or coord.dim() != 3 or not coord.is_floating_point():
            got = tuple(coord.shape) if isinstance(coord, T.Tensor) else type(coord).__name__
            raise nwerr.ValueError(f"{name}: coord must be a floating point (batch_size, N, 3) tensor, got {got}")
        bsz, n = coord.shape[0], coord.shape[1]
        diff = coord.unsqueeze(2) - coord.unsqueeze(1)
        sq = (diff * diff).sum(-1)
        pos = sq > 0
        # sqrt has an infinite derivative at 0: take it only where the distance is positive.
        dist = T.where(pos, T.where(pos, sq, T.ones_like(sq)).sqrt(), T.zeros_like(sq))   # (B, N, N)
        if node_type is None:
            types = T.zeros((bsz, n, n, 2), dtype=T.int64, device=coord.device)
        else:
            _int_tensor(name, "node_type", node_type, 2, "(batch_size, N)")
            if tuple(node_type.shape) != (bsz, n):
                raise nwerr.ValueError(f"{name}: node_type must have shape {(bsz, n)}, got {tuple(node_type.shape)}")
            lo, hi = int(node_type.min().item()), int(node_type.max().item())
            if lo < -1 or hi >= self.max_node_type:
                raise nwerr.ValueError(f"{name}: node_type must be in [-1, {self.max_node_type}) (-1: padding; "
                                       f"max_node_type={self.max_node_type}), got values {lo}..{hi}")
            nt = node_type.long()
            src = nt.unsqueeze(-1).expand(bsz, n, n) + 2
            tgt = nt.unsqueeze(1).expand(bsz, n, n) + (self.max_node_type + 3)
            types = T.stack([src, tgt], -1)
        gamma = self.gamma(types).sum(-2)                                        # (B, N, N, 1)
        beta = self.beta(types).sum(-2)
        x = (gamma * dist.unsqueeze(-1) + beta).to(coord)                       # (B, N, N, 1)
        std = self.stds.abs() + 1e-2
        kernel = T.exp(-0.5 * ((x - self.means) / std) ** 2) / (math.sqrt(2 * 3.14159) * std)
        return self.linear_layer_2(F.gelu(self.linear_layer_1(kernel)))
