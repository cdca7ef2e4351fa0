"""Edge-conditioned convolution (Gilmer et al., 2017, "Neural Message Passing for Quantum
Chemistry"), DGL's ``NNConv``: a network maps each edge's features to a weight matrix.

The aggregation is one fused gSpMM ``u_mul_e`` of the ``(N, in, 1)`` source features with the
``(E, in, out)`` edge weights, then a sum over ``in``.

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.nn import NNConv
>>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
>>> conv = NNConv(2, 3, nc.nn.Linear(4, 2 * 3), "sum")
>>> tuple(conv(g, nc.ones(3, 2), nc.ones(3, 4)).shape)
(3, 3)
"""

from __future__ import annotations

from typing import Any, Callable, Tuple, Union

from nodeweave import ops

from .._ns import T, nn
from .._checks import check_feat_dim, check_rows, expand_as_pair, positive_int, src_dst_feats
from nodeweave import errors as nwerr

__all__ = ["NNConv"]

_AGGREGATORS = ("sum", "mean", "max")


class NNConv(nn.Module):
    r"""Edge-conditioned convolution::

        h'_v = b + res(x_v) + sum_k aggregate_{e=(u,v)} (x_u[k] * W_e[k, :]),   W_e = edge_func(e_uv)

    With ``sum`` or ``mean`` this is ``aggregate_e (x_u @ W_e)``; with ``max`` the maximum is
    taken per (input, output) pair before summing over the input dimension, as DGL does.

    Parameters
    ----------
    in_feats : int or (int, int)
        Input size, or (source, destination) sizes.
    out_feats : int
    edge_func : callable
        Maps edge features ``(E, *)`` to ``(E, in_src * out_feats)`` values.
    aggregator_type : 'sum', 'mean' or 'max'
    residual : bool
        Adds ``res_fc(x_dst)``: a bias-free Linear (Xavier-normal, ReLU gain) when sizes differ,
        the identity otherwise.
    bias : bool
        A learnable ``bias`` (starts at 0).

    ``forward(graph, feat, efeat)``: ``feat`` is ``(N, in)`` or a (source, destination) pair.
    Nodes without in-edges aggregate to 0.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.heterograph({("_U", "_E", "_V"): ([0, 1], [0, 0])}, num_nodes_dict={"_U": 2, "_V": 2})
    >>> conv = nw.nn.NNConv((2, 5), 3, nc.nn.Linear(1, 6), "mean", residual=True)
    >>> tuple(conv(g, (nc.ones(2, 2), nc.ones(2, 5)), nc.ones(2, 1)).shape)
    (2, 3)
    """

    def __init__(self, in_feats: Union[int, Tuple[int, int]], out_feats: int, edge_func: Callable,
                 aggregator_type: str = "mean", residual: bool = False, bias: bool = True) -> None:
        super().__init__()
        in_src, in_dst = expand_as_pair(in_feats)
        self._in_src_feats = positive_int(in_src, "in_feats", "NNConv")
        self._in_dst_feats = positive_int(in_dst, "in_feats", "NNConv")
        self._out_feats = positive_int(out_feats, "out_feats", "NNConv")
        if aggregator_type not in _AGGREGATORS:
            raise nwerr.ValueError(f"NNConv: aggregator_type must be one of {', '.join(_AGGREGATORS)}, got "
                                   f"{aggregator_type!r}")
        self._aggre_type = aggregator_type
        self.edge_func = edge_func
        if residual:
            self.res_fc = nn.Linear(in_dst, out_feats, bias=False) if in_dst != out_feats else nn.Identity()
        else:
            self.register_buffer("res_fc", None)
        if bias:
            self.bias = nn.Parameter(T.zeros(out_feats))
        else:
            self.register_buffer("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Zero ``bias``; Xavier-normal (ReLU gain) ``res_fc`` weight. ``edge_func`` keeps its own."""
        gain = nn.init.calculate_gain("relu")
        if self.bias is not None:
            nn.init.zeros_(self.bias)
        if isinstance(self.res_fc, nn.Linear):
            nn.init.xavier_normal_(self.res_fc.weight, gain=gain)

    def forward(self, graph: Any, feat: Any, efeat: Any) -> Any:
        feat_src, feat_dst = src_dst_feats(graph, feat)
        paired = isinstance(feat, (tuple, list))
        check_feat_dim(feat_src, self._in_src_feats, "feat[0]" if paired else "feat", "NNConv")
        if paired:
            check_feat_dim(feat_dst, self._in_dst_feats, "feat[1]", "NNConv")
        n_edges = graph.num_edges()
        check_rows(efeat, n_edges, "efeat", "edge")
        w = self.edge_func(efeat)
        want = n_edges * self._in_src_feats * self._out_feats
        if w.numel() != want:
            raise nwerr.ValueError(f"NNConv: edge_func must return {self._in_src_feats * self._out_feats} values per "
                                   f"edge (in_src * out_feats), got shape {tuple(w.shape)}")
        w = w.reshape(n_edges, self._in_src_feats, self._out_feats)
        # (N_dst, in, out): each input channel's contribution, aggregated over in-edges.
        agg = ops.gspmm(graph, "mul", self._aggre_type, feat_src.unsqueeze(-1), w)
        rst = agg.sum(1)
        if self.res_fc is not None:
            rst = rst + self.res_fc(feat_dst)
        if self.bias is not None:
            rst = rst + self.bias
        return rst

    def extra_repr(self) -> str:
        return (f"in_feats=({self._in_src_feats}, {self._in_dst_feats}), out_feats={self._out_feats}, "
                f"aggregator_type={self._aggre_type!r}")
