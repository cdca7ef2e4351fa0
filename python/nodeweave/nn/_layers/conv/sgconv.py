"""SGConv: simplified graph convolution of Wu et al., "Simplifying Graph Convolutional Networks"
(ICML 2019)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from .._ns import nn
from .._utils import check_feat, check_homogeneous, check_zero_in_degree
from .edgeweightnorm import sym_norm_step

__all__ = ["SGConv"]


class SGConv(nn.Module):
    r"""Simplified graph convolution: :math:`H = \mathrm{norm}(\hat A^k X)\, W^\top + b` with
    :math:`\hat A = D^{-1/2} A D^{-1/2}` (:math:`D` the in-degrees, clamped to 1), or with
    ``edge_weight`` normalized by :class:`EdgeWeightNorm` (``'both'``) as :math:`\hat A`.

    The propagation :math:`\hat A^k X` has no parameters: with ``cached=True`` it is computed on
    the first call and reused by later calls (for transductive training on one fixed graph);
    later calls ignore their ``graph``, ``feat`` and ``edge_weight``.

    Parameters
    ----------
    in_feats, out_feats : int
    k : int
        Number of propagation steps.
    cached : bool
    bias : bool
    norm : callable, optional
        Applied to :math:`\hat A^k X` before the linear layer (e.g. a normalization layer).
    allow_zero_in_degree : bool

    The linear layer ``fc`` is Xavier-uniform with a zero bias. Homogeneous (and batched)
    graphs only.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import SGConv
    >>> g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3))
    >>> conv = SGConv(4, 2, k=2, cached=True)
    >>> conv(g, nc.ones(3, 4)).shape
    (3, 2)
    """

    def __init__(self, in_feats: int, out_feats: int, k: int = 1, cached: bool = False,
                 bias: bool = True, norm: Optional[Callable[[Any], Any]] = None,
                 allow_zero_in_degree: bool = False) -> None:
        super().__init__()
        self._in_feats = in_feats
        self.fc = nn.Linear(in_feats, out_feats, bias=bias)
        self._cached = cached
        self._cached_h = None
        self._k = k
        self.norm = norm
        self._allow_zero_in_degree = allow_zero_in_degree
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform ``fc`` weight, zero bias."""
        nn.init.xavier_uniform_(self.fc.weight)
        if self.fc.bias is not None:
            nn.init.zeros_(self.fc.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        """Turns the zero-in-degree check off (True) or on (False)."""
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Any, feat: Any, edge_weight: Any = None):
        """:math:`\\hat A^k X` (cached when asked) through ``norm`` and the linear layer."""
        if self._cached_h is not None:
            return self.fc(self._cached_h)
        name = type(self).__name__
        with graph.local_scope():
            check_homogeneous(name, graph)
            if not self._allow_zero_in_degree:
                check_zero_in_degree(graph, name)
            check_feat(name, "feat", feat, graph.num_nodes(), "nodes", self._in_feats)
            step = sym_norm_step(name, graph, edge_weight, feat)
            for _ in range(self._k):
                feat = step(feat)
            if self.norm is not None:
                feat = self.norm(feat)
            if self._cached:
                # Later calls reuse the values only; keeping the autograd history would make a
                # second backward through it fail.
                self._cached_h = feat.detach()
            return self.fc(feat)
