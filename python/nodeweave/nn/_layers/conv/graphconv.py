"""GraphConv: the graph convolution of Kipf & Welling, "Semi-Supervised Classification with Graph
Convolutional Networks" (ICLR 2017), with DGL's normalization choices."""

from __future__ import annotations

from typing import Any, Callable, Optional

from nodeweave import function as fn

from .._ns import T, nn
from .._utils import (check_edge_weight, check_pair_feats, check_zero_in_degree, degree_norm,
                      expand_as_pair)
from nodeweave import errors as nwerr

__all__ = ["GraphConv"]

_NORMS = ("none", "both", "right", "left")


class GraphConv(nn.Module):
    r"""Graph convolution: :math:`h_i' = \sigma\big(b + \sum_{j \in N(i)} \frac{e_{ji}}{c_{ji}}
    h_j W\big)`.

    With ``norm='both'`` :math:`c_{ji} = \sqrt{d^{out}_j d^{in}_i}` (so a graph with self-loops gives
    :math:`\hat D^{-1/2} \hat A \hat D^{-1/2} X W`); ``'right'`` divides the aggregate by the
    in-degree (a mean), ``'left'`` divides each message by its source's out-degree, ``'none'``
    sums. Degrees count edges (edge weights do not change them) and are clamped to at least 1.

    Parameters
    ----------
    in_feats, out_feats : int
        Input and output feature sizes.
    norm : str
        ``'both'`` (default), ``'right'``, ``'left'`` or ``'none'``.
    weight : bool
        Learn a weight ``(in_feats, out_feats)``; with ``False`` pass ``weight=`` to
        :meth:`forward` or use no projection.
    bias : bool
        Learn a bias ``(out_feats,)``.
    activation : callable, optional
        Applied to the output.
    allow_zero_in_degree : bool
        Without it, a destination node with no in-edge raises ValueError (its output would be
        only the bias). Add self-loops with :func:`nodeweave.add_self_loop` or set it to True.

    Shapes: ``feat`` is ``(N_src, *, in_feats)`` or a pair ``(src_feat, dst_feat)`` on a
    bipartite graph; the output is ``(N_dst, *, out_feats)``. ``weight`` is initialized by Xavier
    uniform and ``bias`` to zero.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import GraphConv
    >>> g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3))
    >>> conv = GraphConv(4, 2)
    >>> conv(g, nc.ones(3, 4)).shape
    (3, 2)
    >>> bi = nw.heterograph({("_U", "_E", "_V"): ([0, 1, 2], [0, 0, 1])},
    ...                     num_nodes_dict={"_U": 3, "_V": 2})
    >>> GraphConv(4, 2, norm="right")(bi, (nc.ones(3, 4), nc.ones(2, 4))).shape
    (2, 2)
    """

    def __init__(self, in_feats: int, out_feats: int, norm: str = "both", weight: bool = True,
                 bias: bool = True, activation: Optional[Callable[[Any], Any]] = None,
                 allow_zero_in_degree: bool = False) -> None:
        super().__init__()
        if norm not in _NORMS:
            raise nwerr.ValueError('Invalid norm value. Must be either "none", "both", "right" or "left".'
                                   f' But got "{norm}".')
        self._in_feats = in_feats
        self._out_feats = out_feats
        self._norm = norm
        self._allow_zero_in_degree = allow_zero_in_degree
        if weight:
            self.weight = nn.Parameter(T.empty(in_feats, out_feats))
        else:
            self.register_parameter("weight", None)
        if bias:
            self.bias = nn.Parameter(T.empty(out_feats))
        else:
            self.register_parameter("bias", None)
        self._activation = activation
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform weight, zero bias (DGL's initialization)."""
        if self.weight is not None:
            nn.init.xavier_uniform_(self.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        """Turns the zero-in-degree check off (True) or on (False)."""
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Any, feat: Any, weight: Any = None, edge_weight: Any = None):
        """Convolves ``feat`` over ``graph``; ``weight`` replaces the module's (which must then
        be created with ``weight=False``); ``edge_weight`` ``(E,)`` or ``(E, 1)`` scales each
        message."""
        name = type(self).__name__
        with graph.local_scope():
            if not self._allow_zero_in_degree:
                check_zero_in_degree(graph, name)
            check_pair_feats(name, graph, feat, self._in_feats, need_dst=False)
            # DGL reads only the source features; the destination part only sets the dtype.
            feat_src, _ = expand_as_pair(feat, graph)
            message = fn.copy_u("h", "m")
            if edge_weight is not None:
                check_edge_weight(name, graph, edge_weight)
                graph.edata["_edge_weight"] = edge_weight
                message = fn.u_mul_e("h", "_edge_weight", "m")

            if weight is not None:
                if self.weight is not None:
                    raise nwerr.ValueError(f"{name}: External weight is provided while at the same time "
                                           "the module has defined its own weight parameter. Please "
                                           "create the module with flag weight=False.")
                if weight.dim() != 2 or weight.shape[0] != feat_src.shape[-1]:
                    raise nwerr.ValueError(f"{name}: weight must have shape ({feat_src.shape[-1]}, "
                                           f"out_feats), got {tuple(weight.shape)}")
            else:
                weight = self.weight

            # Project before aggregating when that shrinks what the sparse kernel moves.
            if weight is not None and self._in_feats > self._out_feats:
                feat_src = T.matmul(feat_src, weight)
                weight = None
            # Scaling rows commutes with the projection, (D X) W = D (X W), so the source norm is
            # applied after it: on the narrow side (an elementwise pass over Citeseer's 3,703-wide
            # input costs as much as the projection itself).
            if self._norm in ("left", "both"):
                power = -0.5 if self._norm == "both" else -1.0
                feat_src = feat_src * degree_norm(graph, "out", power, feat_src)
            graph.srcdata["h"] = feat_src
            graph.update_all(message, fn.sum("m", "h"))
            rst = graph.dstdata["h"]
            if weight is not None:
                rst = T.matmul(rst, weight)

            if self._norm in ("right", "both"):
                power = -0.5 if self._norm == "both" else -1.0
                rst = rst * degree_norm(graph, "in", power, rst)
            if self.bias is not None:
                rst = rst + self.bias
            if self._activation is not None:
                rst = self._activation(rst)
            return rst

    def extra_repr(self) -> str:
        text = f"in={self._in_feats}, out={self._out_feats}, normalization={self._norm}"
        if self._activation is not None:
            text += f", activation={self._activation}"
        return text
