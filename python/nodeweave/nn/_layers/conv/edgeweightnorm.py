"""EdgeWeightNorm: GCN-style normalization of positive scalar edge weights, used by the layers that
take ``edge_weight`` (SGConv, APPNPConv, TAGConv, GCN2Conv) and usable before GraphConv."""

from __future__ import annotations

from typing import Any, Callable

from nodeweave import function as fn

from .._ns import T, nn
from .._utils import check_edge_weight, degree_norm, graph_tensor
from nodeweave import errors as nwerr

__all__ = ["EdgeWeightNorm"]

_NORMS = ("both", "right", "left", "none")


class EdgeWeightNorm(nn.Module):
    r"""Normalizes scalar edge weights :math:`e_{ji}` (edge :math:`j \to i`) to
    :math:`e_{ji} / c_{ji}`.

    - ``'both'``: :math:`c_{ji} = \sqrt{\sum_k e_{jk}}\,\sqrt{\sum_k e_{ki}}` (weighted out-degree
      of the source times weighted in-degree of the destination, square-rooted);
    - ``'right'``: :math:`c_{ji} = \sum_k e_{ki}` (weights into each node sum to 1);
    - ``'left'``: :math:`c_{ji} = \sum_k e_{jk}` (weights out of each node sum to 1);
    - ``'none'``: :math:`c_{ji} = 1`.

    ``eps`` is added to each weighted degree. ``'both'`` needs positive weights.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import EdgeWeightNorm
    >>> g = nw.graph(([0, 1, 2], [2, 2, 0]), num_nodes=3)
    >>> EdgeWeightNorm("right")(g, nc.tensor([1.0, 3.0, 2.0])).tolist()
    [0.25, 0.75, 1.0]
    """

    def __init__(self, norm: str = "both", eps: float = 0.0) -> None:
        super().__init__()
        if norm not in _NORMS:
            raise nwerr.ValueError(f"EdgeWeightNorm: norm must be one of {', '.join(_NORMS)}, got "
                                   f"{norm!r}")
        self._norm = norm
        self._eps = eps

    def forward(self, graph: Any, edge_weight: Any):
        """The normalized weights, with the shape of ``edge_weight`` (``(E,)`` or ``(E, 1)``)."""
        check_edge_weight("EdgeWeightNorm", graph, edge_weight)
        if edge_weight.dim() > 2 or (edge_weight.dim() == 2 and edge_weight.shape[1] != 1):
            raise nwerr.ValueError("EdgeWeightNorm: the normalization is only defined on scalar edge "
                                   f"weights (shape (E,) or (E, 1)), got {tuple(edge_weight.shape)}")
        if self._norm == "none":
            return edge_weight
        if self._norm == "both" and bool((edge_weight <= 0).any()):
            raise nwerr.ValueError('EdgeWeightNorm: non-positive edge weight detected with norm="both". '
                                   "This leads to square root of zero or negative values.")
        w = edge_weight.reshape(-1)
        src, dst = (graph_tensor(t) for t in graph.edges())
        out = w
        if self._norm in ("both", "left"):
            deg = T.zeros(graph.num_src_nodes(), dtype=w.dtype, device=w.device)
            deg = deg.index_add(0, src, w) + self._eps
            power = -0.5 if self._norm == "both" else -1.0
            out = out * T.pow(deg, power).index_select(0, src)
        if self._norm in ("both", "right"):
            deg = T.zeros(graph.num_dst_nodes(), dtype=w.dtype, device=w.device)
            deg = deg.index_add(0, dst, w) + self._eps
            power = -0.5 if self._norm == "both" else -1.0
            out = out * T.pow(deg, power).index_select(0, dst)
        return out.reshape(edge_weight.shape)

    def extra_repr(self) -> str:
        return f"norm={self._norm!r}, eps={self._eps}"


def sym_norm_step(name: str, graph: Any, edge_weight: Any, like: Any) -> Callable[[Any], Any]:
    """One propagation step ``h -> D^-1/2 A D^-1/2 h`` on ``graph`` as a function, for the layers that
    apply it repeatedly (SGC, TAG, GCNII). With ``edge_weight``, A holds those weights normalized
    by :class:`EdgeWeightNorm` ``('both')``; without, the degree factors are applied to the node
    features around a plain copy_u sum. Call it inside ``graph.local_scope()``: it writes the
    ``'h'`` node feature and the ``'_edge_weight'`` edge feature."""
    if edge_weight is None:
        norm = degree_norm(graph, "in", -0.5, like)
        message = fn.copy_u("h", "m")
    else:
        check_edge_weight(name, graph, edge_weight)
        graph.edata["_edge_weight"] = EdgeWeightNorm("both")(graph, edge_weight)
        norm, message = None, fn.u_mul_e("h", "_edge_weight", "m")

    def step(h: Any) -> Any:
        graph.ndata["h"] = h if norm is None else h * norm
        graph.update_all(message, fn.sum("m", "h"))
        h = graph.ndata.pop("h")
        return h if norm is None else h * norm

    return step
