"""APPNPConv: approximate personalized propagation of neural predictions, from Klicpera et al.,
"Predict then Propagate: Graph Neural Networks meet Personalized PageRank" (ICLR 2019)."""

from __future__ import annotations

from typing import Any

from nodeweave import function as fn

from .._ns import T, nn
from .._utils import check_edge_weight, check_feat, check_homogeneous, degree_norm
from .edgeweightnorm import EdgeWeightNorm

__all__ = ["APPNPConv"]


class APPNPConv(nn.Module):
    r"""Personalized-PageRank propagation, ``k`` power-iteration steps:

    .. math::
        H^{0} = X,\qquad H^{t+1} = (1 - \alpha)\, \hat A H^{t} + \alpha X

    with :math:`\hat A = D_{in}^{-1/2} A D_{out}^{-1/2}` (degrees clamped to 1), or the
    :class:`EdgeWeightNorm`-normalized ``edge_weight``. No parameters.

    Parameters
    ----------
    k : int
        Number of iterations.
    alpha : float
        Teleport probability.
    edge_drop : float
        Dropout on the edges at every iteration (off in ``eval()``).

    Homogeneous (and batched) graphs only; ``feat`` is ``(N, *)``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import APPNPConv
    >>> g = nw.graph(([0, 1], [1, 0]), num_nodes=2)
    >>> APPNPConv(k=3, alpha=0.5)(g, nc.tensor([[1.0], [0.0]])).tolist()
    [[0.625], [0.375]]
    """

    def __init__(self, k: int, alpha: float, edge_drop: float = 0.0) -> None:
        super().__init__()
        self._k = k
        self._alpha = alpha
        self.edge_drop = nn.Dropout(edge_drop)

    def forward(self, graph: Any, feat: Any, edge_weight: Any = None):
        """``k`` steps of propagation with restarts to ``feat``."""
        name = type(self).__name__
        with graph.local_scope():
            check_homogeneous(name, graph)
            check_feat(name, "feat", feat, graph.num_nodes(), "nodes")
            if edge_weight is None:
                src_norm = degree_norm(graph, "out", -0.5, feat)
                dst_norm = degree_norm(graph, "in", -0.5, feat)
                weight = None
            else:
                check_edge_weight(name, graph, edge_weight)
                weight = EdgeWeightNorm("both")(graph, edge_weight)
            # Dropped edges need per-edge weights; without dropout the plain copy_u sum does.
            drop = self.training and self.edge_drop.p > 0
            if drop and weight is None:
                weight = T.ones(graph.num_edges(), 1, dtype=feat.dtype, device=feat.device)
            feat_0 = feat
            for _ in range(self._k):
                if edge_weight is None:
                    feat = feat * src_norm
                graph.ndata["h"] = feat
                if weight is None:
                    graph.update_all(fn.copy_u("h", "m"), fn.sum("m", "h"))
                else:
                    graph.edata["w"] = self.edge_drop(weight)
                    graph.update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "h"))
                feat = graph.ndata.pop("h")
                if edge_weight is None:
                    feat = feat * dst_norm
                feat = (1 - self._alpha) * feat + self._alpha * feat_0
            return feat

    def extra_repr(self) -> str:
        return f"k={self._k}, alpha={self._alpha}"
