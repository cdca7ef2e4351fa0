"""GMMConv: the Gaussian mixture model convolution (MoNet) of Monti et al., "Geometric Deep
Learning on Graphs and Manifolds using Mixture Model CNNs" (CVPR 2017)."""

from __future__ import annotations

from typing import Any, Tuple, Union

from nodeweave import ops

from .._ns import T, nn
from .._checks import positive_int
from .._utils import check_feat, check_pair_feats, check_zero_in_degree, expand_as_pair
from nodeweave import errors as nwerr

__all__ = ["GMMConv"]

_AGGREGATORS = ("sum", "mean", "max")


class GMMConv(nn.Module):
    r"""Mixture-model convolution over pseudo-coordinates :math:`u_{ij}` of the edges:

    .. math::
        w_k(u) = \exp\Big(-\tfrac12 \sum_{d} \big((u_d - \mu_{k,d})\, \sigma^{-1}_{k,d}\big)^2\Big),
        \qquad
        h_i' = b + \mathrm{res}(h_i) + \sum_{k=1}^{K} \operatorname{aggregate}_{j \in N(i)}
        w_k(u_{ji})\, (h_j W)_k

    with :math:`(h_j W)_k` the :math:`k`-th ``out_feats``-wide block of the projection (one per
    kernel). With ``max`` the maximum is taken per kernel before summing over the kernels, as DGL
    does. The aggregation is one fused ``u_mul_e`` gSpMM of the ``(N, K, out)`` projections with the
    ``(E, K, 1)`` kernel weights.

    Parameters
    ----------
    in_feats : int or (int, int)
        Input size, or (source, destination) sizes (the destination size matters for the
        residual only).
    out_feats : int
    dim : int
        Size of the pseudo-coordinates.
    n_kernels : int
        Number of Gaussian kernels :math:`K`.
    aggregator_type : str
        ``'sum'`` (default), ``'mean'`` or ``'max'``.
    residual : bool
        Adds ``res_fc(h_dst)``: a bias-free Linear when sizes differ, the identity otherwise.
    bias : bool
    allow_zero_in_degree : bool
        Without it, a destination node with no in-edge raises ValueError.

    Parameters: ``fc.weight`` ``(K * out, in_src)`` and ``res_fc.weight`` Xavier-normal (ReLU
    gain), ``mu`` ``(K, dim)`` normal with std 0.1, ``inv_sigma`` ``(K, dim)`` ones, ``bias`` zero.

    Shapes: ``feat`` ``(N, in_feats)`` or a pair; ``pseudo`` ``(E, dim)``; output
    ``(N_dst, out_feats)``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import GMMConv
    >>> g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3))
    >>> conv = GMMConv(4, 2, dim=3, n_kernels=5)
    >>> conv(g, nc.ones(3, 4), nc.ones(g.num_edges(), 3)).shape
    (3, 2)
    """

    def __init__(self, in_feats: Union[int, Tuple[int, int]], out_feats: int, dim: int,
                 n_kernels: int, aggregator_type: str = "sum", residual: bool = False,
                 bias: bool = True, allow_zero_in_degree: bool = False) -> None:
        super().__init__()
        name = type(self).__name__
        in_src, in_dst = expand_as_pair(in_feats)
        self._in_src_feats = positive_int(in_src, "in_feats", name)
        self._in_dst_feats = positive_int(in_dst, "in_feats", name)
        self._out_feats = positive_int(out_feats, "out_feats", name)
        self._dim = positive_int(dim, "dim", name)
        self._n_kernels = positive_int(n_kernels, "n_kernels", name)
        if aggregator_type not in _AGGREGATORS:
            raise nwerr.ValueError(f"{name}: aggregator_type must be one of {', '.join(_AGGREGATORS)}, "
                                   f"got {aggregator_type!r}")
        self._aggregator_type = aggregator_type
        self._allow_zero_in_degree = allow_zero_in_degree
        self.mu = nn.Parameter(T.empty(n_kernels, dim))
        self.inv_sigma = nn.Parameter(T.empty(n_kernels, dim))
        self.fc = nn.Linear(in_src, n_kernels * out_feats, bias=False)
        if residual:
            self.res_fc = nn.Linear(in_dst, out_feats, bias=False) if in_dst != out_feats else nn.Identity()
        else:
            self.register_buffer("res_fc", None)
        if bias:
            self.bias = nn.Parameter(T.empty(out_feats))
        else:
            self.register_buffer("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """DGL's initialization (see the class docstring)."""
        gain = nn.init.calculate_gain("relu")
        nn.init.xavier_normal_(self.fc.weight, gain=gain)
        if isinstance(self.res_fc, nn.Linear):
            nn.init.xavier_normal_(self.res_fc.weight, gain=gain)
        nn.init.normal_(self.mu, 0.0, 0.1)
        nn.init.constant_(self.inv_sigma, 1.0)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        """Turns the zero-in-degree check off (True) or on (False)."""
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Any, feat: Any, pseudo: Any):
        """Kernel-weighted aggregation of the projected source features."""
        name = type(self).__name__
        k, out = self._n_kernels, self._out_feats
        if not self._allow_zero_in_degree:
            check_zero_in_degree(graph, name)
        feat_src, feat_dst = check_pair_feats(name, graph, feat, self._in_src_feats,
                                              self._in_dst_feats if self.res_fc is not None else None,
                                              need_dst=self.res_fc is not None)
        check_feat(name, "pseudo", pseudo, graph.num_edges(), "edges", self._dim, "dim")
        if pseudo.dim() != 2:
            raise nwerr.ValueError(f"{name}: pseudo must have shape (num_edges, {self._dim}), got "
                                   f"{tuple(pseudo.shape)}")
        h = self.fc(feat_src).view(-1, k, out)
        # (E, K, dim) scaled offsets from every kernel's mean, then one weight per edge and kernel.
        z = (pseudo.unsqueeze(1) - self.mu.unsqueeze(0)) * self.inv_sigma.unsqueeze(0)
        w = T.exp(-0.5 * (z * z).sum(-1, keepdim=True))
        rst = ops.gspmm(graph, "mul", self._aggregator_type, h, w).sum(1)
        if self.res_fc is not None:
            rst = rst + self.res_fc(feat_dst)
        if self.bias is not None:
            rst = rst + self.bias
        return rst

    def extra_repr(self) -> str:
        return (f"in_feats=({self._in_src_feats}, {self._in_dst_feats}), out_feats={self._out_feats}, "
                f"dim={self._dim}, n_kernels={self._n_kernels}, aggregator_type={self._aggregator_type!r}")
