"""GINConv: the graph isomorphism network layer of Xu et al., "How Powerful are Graph Neural
Networks?" (ICLR 2019)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from nodeweave import function as fn

from .._ns import T, nn
from .._utils import check_edge_weight, check_pair_feats
from nodeweave import errors as nwerr

__all__ = ["GINConv"]

_AGGREGATORS = ("sum", "max", "mean")


class EpsUpdate:
    """What GIN and GINE share: the update ``apply_func((1 + eps) * h_dst + neigh)`` with ``eps`` a
    parameter or a buffer, under DGL's attribute names (``apply_func``, ``eps``). A mixin, not a
    submodule, so that ``state_dict`` keys stay DGL's."""

    def _init_eps_update(self, apply_func: Optional[Callable[[Any], Any]], init_eps: float,
                         learn_eps: bool) -> None:
        self.apply_func = apply_func
        self._init_eps = float(init_eps)
        if learn_eps:
            self.eps = nn.Parameter(T.tensor([self._init_eps]))
        else:
            self.register_buffer("eps", T.tensor([self._init_eps]))

    def reset_parameters(self) -> None:
        """Puts :math:`\\epsilon` back to ``init_eps`` and resets ``apply_func`` if it can be."""
        with T.no_grad():
            self.eps.fill_(self._init_eps)
        if hasattr(self.apply_func, "reset_parameters"):
            self.apply_func.reset_parameters()

    def _eps_update(self, feat_dst: Any, neigh: Any) -> Any:
        rst = (1 + self.eps) * feat_dst + neigh
        return rst if self.apply_func is None else self.apply_func(rst)


class GINConv(EpsUpdate, nn.Module):
    r"""Graph isomorphism convolution:
    :math:`h_i' = f_\Theta\big((1 + \epsilon) h_i + \mathrm{aggregate}_{j \in N(i)} e_{ji} h_j\big)`.

    The aggregation is one fused gSpMM (``copy_u`` or ``u_mul_e`` with ``sum``/``max``/``mean``);
    a node without in-edges aggregates to 0.

    Parameters
    ----------
    apply_func : callable, optional
        :math:`f_\Theta`, e.g. an MLP; None leaves the sum as it is.
    aggregator_type : str
        ``'sum'`` (default), ``'max'`` or ``'mean'``.
    init_eps : float
        Initial :math:`\epsilon`.
    learn_eps : bool
        Make :math:`\epsilon` a parameter (else a buffer).
    activation : callable, optional
        Applied after ``apply_func``.

    Shapes: ``feat`` ``(N, *)`` or a pair ``(src_feat, dst_feat)``; ``edge_weight`` ``(E,)`` or
    ``(E, 1)``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import GINConv
    >>> g = nw.graph(([0, 1, 2], [1, 2, 2]), num_nodes=3)
    >>> conv = GINConv(nc.nn.Linear(2, 3), aggregator_type="max")
    >>> conv(g, nc.ones(3, 2)).shape
    (3, 3)
    >>> GINConv(None, init_eps=1.0)(g, nc.tensor([[1.0], [2.0], [4.0]])).tolist()
    [[2.0], [5.0], [14.0]]
    """

    def __init__(self, apply_func: Optional[Callable[[Any], Any]] = None,
                 aggregator_type: str = "sum", init_eps: float = 0.0, learn_eps: bool = False,
                 activation: Optional[Callable[[Any], Any]] = None) -> None:
        super().__init__()
        if aggregator_type not in _AGGREGATORS:
            raise nwerr.KeyError(f"Aggregator type {aggregator_type} not recognized; expected one of "
                                 f"{', '.join(_AGGREGATORS)}.")
        self._aggregator_type = aggregator_type
        self.activation = activation
        self._init_eps_update(apply_func, init_eps, learn_eps)

    def forward(self, graph: Any, feat: Any, edge_weight: Any = None):
        """One GIN update of the destination nodes."""
        name = type(self).__name__
        reducer = getattr(fn, self._aggregator_type)
        with graph.local_scope():
            feat_src, feat_dst = check_pair_feats(name, graph, feat)
            message = fn.copy_u("h", "m")
            if edge_weight is not None:
                check_edge_weight(name, graph, edge_weight)
                graph.edata["_edge_weight"] = edge_weight
                message = fn.u_mul_e("h", "_edge_weight", "m")
            graph.srcdata["h"] = feat_src
            graph.update_all(message, reducer("m", "neigh"))
            rst = self._eps_update(feat_dst, graph.dstdata["neigh"])
            if self.activation is not None:
                rst = self.activation(rst)
            return rst
