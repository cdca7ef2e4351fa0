"""TAGConv: topology adaptive graph convolution of Du et al., "Topology Adaptive Graph
Convolutional Networks" (2017)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from .._ns import T, nn
from .._utils import check_feat, check_homogeneous
from .edgeweightnorm import sym_norm_step

__all__ = ["TAGConv"]


class TAGConv(nn.Module):
    r"""Topology adaptive convolution: one linear layer over the concatenated powers
    :math:`[X, \hat A X, \dots, \hat A^k X]`, i.e. :math:`H = \sum_{\ell=0}^{k} \hat A^\ell X
    \Theta_\ell + b`, with :math:`\hat A = D^{-1/2} A D^{-1/2}` (:math:`D` the in-degrees,
    clamped to 1) or the :class:`EdgeWeightNorm`-normalized ``edge_weight``.

    Parameters
    ----------
    in_feats, out_feats : int
    k : int
        Largest power (``lin`` has ``in_feats * (k + 1)`` inputs).
    bias : bool
    activation : callable, optional

    ``lin`` is Xavier-normal with the ReLU gain. Homogeneous (and batched) graphs only.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import TAGConv
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3)
    >>> TAGConv(4, 2, k=2)(g, nc.ones(3, 4)).shape
    (3, 2)
    """

    def __init__(self, in_feats: int, out_feats: int, k: int = 2, bias: bool = True,
                 activation: Optional[Callable[[Any], Any]] = None) -> None:
        super().__init__()
        self._in_feats = in_feats
        self._out_feats = out_feats
        self._k = k
        self._activation = activation
        self.lin = nn.Linear(in_feats * (self._k + 1), out_feats, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-normal (ReLU gain) weight; the bias keeps Linear's initialization (as DGL)."""
        gain = nn.init.calculate_gain("relu")
        nn.init.xavier_normal_(self.lin.weight, gain=gain)

    def forward(self, graph: Any, feat: Any, edge_weight: Any = None):
        """``lin`` of the concatenated propagated features."""
        name = type(self).__name__
        with graph.local_scope():
            check_homogeneous(name, graph)
            check_feat(name, "feat", feat, graph.num_nodes(), "nodes", self._in_feats)
            step = sym_norm_step(name, graph, edge_weight, feat)
            fstack = [feat]
            for _ in range(self._k):
                fstack.append(step(fstack[-1]))
            rst = self.lin(T.cat(fstack, dim=-1))
            if self._activation is not None:
                rst = self._activation(rst)
            return rst
