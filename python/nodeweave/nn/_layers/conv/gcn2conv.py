"""GCN2Conv: graph convolution with initial residual and identity mapping, from Chen et al.,
"Simple and Deep Graph Convolutional Networks" (GCNII, ICML 2020)."""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

from .._ns import T, nn
from .._utils import check_feat, check_homogeneous, check_zero_in_degree
from .edgeweightnorm import sym_norm_step
from nodeweave import errors as nwerr

__all__ = ["GCN2Conv"]


class GCN2Conv(nn.Module):
    r"""GCNII layer ``layer`` of a deep stack:

    .. math::
        \tilde H = (1 - \alpha) \hat A H + \alpha H^{(0)},\qquad
        H' = (1 - \beta) \tilde H + \beta\, \tilde H W_1 + b,\qquad
        \beta = \log(\lambda / \ell + 1)

    with :math:`\hat A = D^{-1/2} A D^{-1/2}` (in-degrees clamped to 1) or the
    :class:`EdgeWeightNorm`-normalized ``edge_weight``. With
    ``project_initial_features=False`` the two terms get separate weights:
    :math:`H' = (1-\beta)(1-\alpha)\hat A H + \beta (1-\alpha) \hat A H W_1
    + (1-\beta)\alpha H^{(0)} + \beta \alpha H^{(0)} W_2 + b`.

    Parameters
    ----------
    in_feats : int
        Input and output size.
    layer : int
        Index :math:`\ell \ge 1` of this layer in the stack.
    alpha : float
        Weight of the initial residual.
    lambda_ : float
        :math:`\lambda` of the identity-mapping strength.
    project_initial_features : bool
    allow_zero_in_degree : bool
    bias : bool
    activation : callable, optional

    Weights are standard-normal, the bias zero (DGL's initialization). Homogeneous (and batched)
    graphs; ``feat_0`` may have more rows than ``feat`` (only the first are used).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import GCN2Conv
    >>> g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3))
    >>> x = nc.ones(3, 4)
    >>> GCN2Conv(4, layer=1, alpha=0.5, lambda_=1.0)(g, x, x).shape
    (3, 4)
    """

    def __init__(self, in_feats: int, layer: int, alpha: float = 0.1, lambda_: float = 1,
                 project_initial_features: bool = True, allow_zero_in_degree: bool = False,
                 bias: bool = True, activation: Optional[Callable[[Any], Any]] = None) -> None:
        super().__init__()
        if isinstance(layer, bool) or not isinstance(layer, int) or layer < 1:
            raise nwerr.ValueError(f"GCN2Conv: layer must be an int >= 1, got {layer!r}")
        self._in_feats = in_feats
        self._project_initial_features = project_initial_features
        self.alpha = alpha
        self.beta = math.log(lambda_ / layer + 1)
        self._bias = bias
        self._activation = activation
        self._allow_zero_in_degree = allow_zero_in_degree
        self.weight1 = nn.Parameter(T.empty(in_feats, in_feats))
        if project_initial_features:
            self.register_parameter("weight2", None)
        else:
            self.weight2 = nn.Parameter(T.empty(in_feats, in_feats))
        if bias:
            self.bias = nn.Parameter(T.empty(in_feats))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Standard-normal weights, zero bias."""
        nn.init.normal_(self.weight1)
        if self.weight2 is not None:
            nn.init.normal_(self.weight2)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        """Turns the zero-in-degree check off (True) or on (False)."""
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Any, feat: Any, feat_0: Any, edge_weight: Any = None):
        """One GCNII step from ``feat`` (the previous layer) and ``feat_0`` (the first layer)."""
        name = type(self).__name__
        with graph.local_scope():
            check_homogeneous(name, graph)
            if not self._allow_zero_in_degree:
                check_zero_in_degree(graph, name)
            n = graph.num_nodes()
            check_feat(name, "feat", feat, n, "nodes", self._in_feats)
            check_feat(name, "feat_0", feat_0, None, "nodes", self._in_feats)
            if feat_0.shape[0] < n:
                raise nwerr.ValueError(f"{name}: feat_0 has {feat_0.shape[0]} rows but the graph has "
                                       f"{n} nodes")
            feat = sym_norm_step(name, graph, edge_weight, feat)(feat) * (1 - self.alpha)
            feat_0 = feat_0[:n] * self.alpha
            beta = self.beta
            if self._project_initial_features:
                h = feat + feat_0
                rst = T.addmm(h, h, self.weight1, beta=1 - beta, alpha=beta)
            else:
                rst = (T.addmm(feat, feat, self.weight1, beta=1 - beta, alpha=beta)
                       + T.addmm(feat_0, feat_0, self.weight2, beta=1 - beta, alpha=beta))
            if self.bias is not None:
                rst = rst + self.bias
            if self._activation is not None:
                rst = self._activation(rst)
            return rst
