"""GraphSAGE convolution (Hamilton et al., 2017), DGL's ``SAGEConv``.

``mean``, ``gcn`` and ``pool`` aggregate with one fused gSpMM (no per-edge message tensor);
``lstm`` runs an LSTM over each node's in-neighbours through the degree-bucketed mailbox path.

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.nn import SAGEConv
>>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
>>> conv = SAGEConv(5, 2, "mean")
>>> tuple(conv(g, nc.ones(4, 5)).shape)
(4, 2)
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple, Union

from nodeweave import function as fn
from nodeweave import ops

from .._ns import T, nn, F
from .._utils import degrees
from .._checks import check_feat_dim, check_rows, expand_as_pair, is_block, positive_int, src_dst_feats
from nodeweave import errors as nwerr

__all__ = ["SAGEConv"]

_AGGREGATORS = ("mean", "gcn", "pool", "lstm")


def project_first(graph: Any, in_feats: int, out_feats: int) -> bool:
    """Whether ``fc_neigh`` goes before the (linear) mean or sum aggregation: the order with fewer
    multiply-adds. Projecting first costs ``src * in * out + edges * out``, aggregating first
    ``edges * in + dst * in * out``. On a graph (src = dst) that is DGL's rule, project first when
    ``in > out``; on a sampled block, whose sources outnumber its destinations many times, it
    aggregates first (R-MAT, fanout 10: about 8x fewer multiply-adds in the input layer).

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
    >>> project_first(g, 128, 64), project_first(g, 64, 128)
    (True, False)
    >>> block = nw.to_block(nw.in_subgraph(g, [0]), [0])
    >>> block.num_src_nodes(), block.num_dst_nodes(), block.num_edges()
    (2, 1, 1)
    >>> project_first(block, 128, 64)
    False
    """
    src, dst, edges = graph.num_src_nodes(), graph.num_dst_nodes(), graph.num_edges()
    return src * in_feats * out_feats + edges * out_feats < edges * in_feats + dst * in_feats * out_feats


class SAGEConv(nn.Module):
    r"""GraphSAGE layer::

        h_N(v) = aggregate_{u -> v} (w_uv * h_u)
        h'_v   = W_self h_v + W_neigh h_N(v) + b              (mean, pool, lstm)
        h'_v   = W_neigh (sum_{u -> v} w_uv h_u + h_v) / (in_degree(v) + 1) + b     (gcn)

    then ``activation`` and ``norm``. Aggregators: ``mean``; ``gcn``; ``pool`` (elementwise max
    of ``relu(fc_pool(h_u))``); ``lstm`` (the last hidden state of an LSTM run over the
    in-neighbours, in edge-id order). Nodes without in-edges aggregate to 0.

    Parameters
    ----------
    in_feats : int or (int, int)
        Input size, or (source, destination) sizes for a bipartite graph.
    out_feats : int
    aggregator_type : 'mean', 'gcn', 'pool' or 'lstm'
    feat_drop : float
        Dropout on the input features.
    bias : bool
        A learnable ``bias`` (starts at 0).
    norm, activation : callable, optional
        Applied to the output, activation first.

    ``forward(graph, feat, edge_weight=None)``: ``feat`` is ``(N, in_feats)`` or a
    ``(source, destination)`` pair; ``edge_weight`` (``(E,)`` or ``(E, 1)``) scales each message.
    Weights are Xavier-uniform with the ReLU gain, as DGL.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.heterograph({("_U", "_E", "_V"): ([0, 1, 2], [0, 0, 1])},
    ...                    num_nodes_dict={"_U": 3, "_V": 2})
    >>> conv = nw.nn.SAGEConv((4, 6), 2, "pool")
    >>> tuple(conv(g, (nc.ones(3, 4), nc.ones(2, 6))).shape)
    (2, 2)
    """

    def __init__(self, in_feats: Union[int, Tuple[int, int]], out_feats: int, aggregator_type: str,
                 feat_drop: float = 0.0, bias: bool = True, norm: Optional[Callable] = None,
                 activation: Optional[Callable] = None) -> None:
        super().__init__()
        if aggregator_type not in _AGGREGATORS:
            raise nwerr.ValueError(f"SAGEConv: aggregator_type must be one of {', '.join(_AGGREGATORS)}, got "
                                   f"{aggregator_type!r}")
        in_src, in_dst = expand_as_pair(in_feats)
        self._in_src_feats = positive_int(in_src, "in_feats", "SAGEConv")
        self._in_dst_feats = positive_int(in_dst, "in_feats", "SAGEConv")
        self._out_feats = positive_int(out_feats, "out_feats", "SAGEConv")
        self._aggre_type = aggregator_type
        self.norm = norm
        self.activation = activation
        self.feat_drop = nn.Dropout(feat_drop)
        if aggregator_type == "pool":
            self.fc_pool = nn.Linear(in_src, in_src)
        if aggregator_type == "lstm":
            self.lstm = nn.LSTM(in_src, in_src, batch_first=True)
        self.fc_neigh = nn.Linear(in_src, out_feats, bias=False)
        if aggregator_type != "gcn":
            self.fc_self = nn.Linear(in_dst, out_feats, bias=False)
        if bias:
            self.bias = nn.Parameter(T.zeros(out_feats))
        else:
            self.register_buffer("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform weights (ReLU gain), default ``fc_pool`` bias, torch's LSTM init,
        zero ``bias``."""
        gain = nn.init.calculate_gain("relu")
        if self._aggre_type == "pool":
            nn.init.xavier_uniform_(self.fc_pool.weight, gain=gain)
        if self._aggre_type == "lstm":
            self.lstm.reset_parameters()
        if self._aggre_type != "gcn":
            nn.init.xavier_uniform_(self.fc_self.weight, gain=gain)
        nn.init.xavier_uniform_(self.fc_neigh.weight, gain=gain)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def _lstm_reduce(self, nodes: Any) -> dict:
        m = nodes.mailbox["m"]  # (nodes, degree, in_src)
        _, (h, _) = self.lstm(m)
        return {"neigh": h.squeeze(0)}

    def _aggregate(self, graph: Any, h: Any, edge_weight: Optional[Any], reducer: str) -> Any:
        """``reducer`` over in-edges of ``h[u]`` (times the edge weight): one fused gSpMM."""
        if edge_weight is None:
            return ops.gspmm(graph, "copy_lhs", reducer, h, None)
        return ops.gspmm(graph, "mul", reducer, h, edge_weight)

    def forward(self, graph: Any, feat: Any, edge_weight: Optional[Any] = None) -> Any:
        feat_src, feat_dst = src_dst_feats(graph, feat)
        check_feat_dim(feat_src, self._in_src_feats, "feat" if feat_src is feat_dst else "feat[0]", "SAGEConv")
        if feat_src is not feat_dst:
            check_feat_dim(feat_dst, self._in_dst_feats, "feat[1]", "SAGEConv")
        if edge_weight is not None:
            check_rows(edge_weight, graph.num_edges(), "edge_weight", "edge")
            if edge_weight.dim() == 1:
                edge_weight = edge_weight.unsqueeze(-1)
        paired = isinstance(feat, (tuple, list))
        if paired:
            feat_src, feat_dst = self.feat_drop(feat_src), self.feat_drop(feat_dst)
        else:
            feat_src = self.feat_drop(feat_src)
            feat_dst = feat_src[:graph.num_dst_nodes()] if is_block(graph) else feat_src
        agg = self._aggre_type
        lin_before_mp = project_first(graph, self._in_src_feats, self._out_feats)
        if agg == "mean":
            h = self.fc_neigh(feat_src) if lin_before_mp else feat_src
            h_neigh = self._aggregate(graph, h, edge_weight, "mean")
            if not lin_before_mp:
                h_neigh = self.fc_neigh(h_neigh)
        elif agg == "gcn":
            if self._in_src_feats != self._in_dst_feats:
                raise nwerr.ValueError("SAGEConv: the gcn aggregator needs equal source and destination "
                                       f"feature sizes, got {self._in_src_feats} and {self._in_dst_feats}")
            h_src = self.fc_neigh(feat_src) if lin_before_mp else feat_src
            if paired:
                h_dst = self.fc_neigh(feat_dst) if lin_before_mp else feat_dst
            else:
                h_dst = h_src[:graph.num_dst_nodes()] if is_block(graph) else h_src
            total = self._aggregate(graph, h_src, edge_weight, "sum") + h_dst
            deg = degrees(graph, "in").to(total.dtype).unsqueeze(-1)
            h_neigh = total / (deg + 1)
            if not lin_before_mp:
                h_neigh = self.fc_neigh(h_neigh)
        elif agg == "pool":
            h = F.relu(self.fc_pool(feat_src))
            h_neigh = self.fc_neigh(self._aggregate(graph, h, edge_weight, "max"))
        else:  # lstm: needs every node's messages in order, so the mailbox path
            with graph.local_scope():
                graph.srcdata["h"] = feat_src
                if edge_weight is None:
                    msg = fn.copy_u("h", "m")
                else:
                    graph.edata["_edge_weight"] = edge_weight
                    msg = fn.u_mul_e("h", "_edge_weight", "m")
                graph.update_all(msg, self._lstm_reduce)
                dst = graph.dstdata
                neigh = dst["neigh"] if "neigh" in dst else T.zeros(
                    (graph.num_dst_nodes(), self._in_src_feats), dtype=feat_src.dtype, device=feat_src.device)
            h_neigh = self.fc_neigh(neigh)
        rst = h_neigh if agg == "gcn" else self.fc_self(feat_dst) + h_neigh
        if self.bias is not None:
            rst = rst + self.bias
        if self.activation is not None:
            rst = self.activation(rst)
        if self.norm is not None:
            rst = self.norm(rst)
        return rst

    def extra_repr(self) -> str:
        return (f"in_feats=({self._in_src_feats}, {self._in_dst_feats}), out_feats={self._out_feats}, "
                f"aggregator_type={self._aggre_type!r}")
