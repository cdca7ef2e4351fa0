"""Global pooling layers: one vector per graph of a batch (DGL's ``dgl.nn.*Pooling``, ``Set2Set``).

Each layer is ``forward(graph, feat)`` with ``feat`` of shape ``(num_nodes, D)`` and returns
``(batch_size, ...)``. They are built on the readouts of :mod:`nodeweave.nn.native.readout`, which reduce
graph by graph with segment kernels, never a Python loop over graphs.

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.nn import SumPooling, AvgPooling, MaxPooling
>>> bg = nw.batch([nw.graph(([0], [1])), nw.graph(([], []), num_nodes=1)])
>>> feat = nc.tensor([[1.0, 4.0], [3.0, 0.0], [5.0, 6.0]])
>>> SumPooling()(bg, feat).tolist(), AvgPooling()(bg, feat).tolist(), MaxPooling()(bg, feat).tolist()
([[4.0, 4.0], [5.0, 6.0]], [[2.0, 2.0], [5.0, 6.0]], [[3.0, 4.0], [5.0, 6.0]])
"""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

from ._ns import T, nn
from ._checks import check_rows, positive_int
from .readout import broadcast_nodes, max_nodes, mean_nodes, softmax_nodes, sum_nodes, topk_nodes
from nodeweave import errors as nwerr

__all__ = ["SumPooling", "AvgPooling", "MaxPooling", "SortPooling", "GlobalAttentionPooling", "Set2Set"]


def _check_feat(graph: Any, feat: Any) -> None:
    check_rows(feat, graph.num_nodes(), "feat", "node")


class SumPooling(nn.Module):
    """Sum of the node features of each graph: ``r_b = sum_{i in graph b} x_i``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> nw.nn.SumPooling()(nw.graph(([0], [1])), nc.tensor([[1.0], [2.0]])).tolist()
    [[3.0]]
    """

    def forward(self, graph: Any, feat: Any) -> Any:
        _check_feat(graph, feat)
        return sum_nodes(graph, feat)


class AvgPooling(nn.Module):
    """Mean of the node features of each graph.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> nw.nn.AvgPooling()(nw.graph(([0], [1])), nc.tensor([[1.0], [2.0]])).tolist()
    [[1.5]]
    """

    def forward(self, graph: Any, feat: Any) -> Any:
        _check_feat(graph, feat)
        return mean_nodes(graph, feat)


class MaxPooling(nn.Module):
    """Elementwise maximum of the node features of each graph (zeros for a graph without nodes).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> nw.nn.MaxPooling()(nw.graph(([0], [1])), nc.tensor([[1.0], [2.0]])).tolist()
    [[2.0]]
    """

    def forward(self, graph: Any, feat: Any) -> Any:
        _check_feat(graph, feat)
        return max_nodes(graph, feat)


class SortPooling(nn.Module):
    """SortPool from DGCNN (Zhang et al., 2018): sort each node's features, rank the nodes of each
    graph by their largest feature, keep the top ``k`` nodes and flatten: ``(batch_size, k * D)``.
    Graphs with fewer than ``k`` nodes are padded with zeros.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> pool = nw.nn.SortPooling(k=2)
    >>> pool(nw.graph(([0], [1]), num_nodes=3), nc.tensor([[3.0, 1.0], [0.0, 2.0], [5.0, 4.0]])).tolist()
    [[4.0, 5.0, 1.0, 3.0]]
    """

    def __init__(self, k: int) -> None:
        super().__init__()
        self.k = positive_int(k, "k", "SortPooling")

    def forward(self, graph: Any, feat: Any) -> Any:
        _check_feat(graph, feat)
        feat = T.sort(feat, dim=-1)[0]
        vals, _ = topk_nodes(graph, feat, self.k, sortby=-1)
        return vals.reshape(vals.shape[0], self.k * feat.shape[-1])

    def extra_repr(self) -> str:
        return f"k={self.k}"


class GlobalAttentionPooling(nn.Module):
    """Gated attention pooling (Li et al., 2016): ``r_b = sum_{i in b} softmax_b(gate_nn(x_i)) *
    feat_nn(x_i)``, the softmax taken over the nodes of each graph. ``gate_nn`` maps features to
    one score per node (``(N, 1)``); ``feat_nn`` defaults to the identity.
    ``forward(graph, feat, get_attention=False)`` also returns the ``(N, 1)`` weights when asked.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> pool = nw.nn.GlobalAttentionPooling(nc.nn.Linear(2, 1))
    >>> out, att = pool(nw.graph(([0], [1])), nc.ones(2, 2), get_attention=True)
    >>> tuple(out.shape), att.tolist()
    ((1, 2), [[0.5], [0.5]])
    """

    def __init__(self, gate_nn: Any, feat_nn: Optional[Any] = None) -> None:
        super().__init__()
        self.gate_nn = gate_nn
        self.feat_nn = feat_nn

    def forward(self, graph: Any, feat: Any, get_attention: bool = False) -> Union[Any, Tuple[Any, Any]]:
        _check_feat(graph, feat)
        gate = self.gate_nn(feat)
        if gate.dim() != 2 or gate.shape[1] != 1:
            raise nwerr.ValueError(f"GlobalAttentionPooling: gate_nn must output shape (num_nodes, 1), got "
                                   f"{tuple(gate.shape)}")
        value = self.feat_nn(feat) if self.feat_nn is not None else feat
        gate = softmax_nodes(graph, gate)
        readout = sum_nodes(graph, value * gate)
        return (readout, gate) if get_attention else readout


class Set2Set(nn.Module):
    """Set2Set readout (Vinyals et al., 2015): ``n_iters`` rounds of LSTM-driven attention over
    the nodes of each graph. Each round, with ``q`` the LSTM output for the graph::

        a_i = softmax_b(x_i . q_b);  r_b = sum_i a_i x_i;  q*_b = [q_b, r_b]

    and ``q*`` (``(batch_size, 2 * input_dim)``) is fed back to an ``n_layers`` LSTM. Returns the
    last ``q*``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> s2s = nw.nn.Set2Set(3, n_iters=2, n_layers=1)
    >>> bg = nw.batch([nw.graph(([0], [1])), nw.graph(([0], [0]))])
    >>> tuple(s2s(bg, nc.randn(3, 3)).shape)
    (2, 6)
    """

    def __init__(self, input_dim: int, n_iters: int, n_layers: int) -> None:
        super().__init__()
        self.input_dim = positive_int(input_dim, "input_dim", "Set2Set")
        self.output_dim = 2 * input_dim
        self.n_iters = positive_int(n_iters, "n_iters", "Set2Set", allow_zero=True)
        self.n_layers = positive_int(n_layers, "n_layers", "Set2Set")
        self.lstm = nn.LSTM(self.output_dim, self.input_dim, self.n_layers)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draws the LSTM's weights (torch's LSTM init)."""
        self.lstm.reset_parameters()

    def forward(self, graph: Any, feat: Any) -> Any:
        _check_feat(graph, feat)
        if feat.dim() != 2 or feat.shape[1] != self.input_dim:
            raise nwerr.ValueError(f"Set2Set: feat must have shape (num_nodes, {self.input_dim}), got "
                                   f"{tuple(feat.shape)}")
        batch = graph.batch_size
        h = T.zeros((self.n_layers, batch, self.input_dim), dtype=feat.dtype, device=feat.device)
        state = (h, h)
        q_star = T.zeros((batch, self.output_dim), dtype=feat.dtype, device=feat.device)
        for _ in range(self.n_iters):
            q, state = self.lstm(q_star.unsqueeze(0), state)
            q = q.reshape(batch, self.input_dim)
            score = (feat * broadcast_nodes(graph, q)).sum(-1, keepdim=True)
            alpha = softmax_nodes(graph, score)
            q_star = T.cat([q, sum_nodes(graph, feat * alpha)], -1)
        return q_star

    def extra_repr(self) -> str:
        return f"n_iters={self.n_iters}, input_dim={self.input_dim}, n_layers={self.n_layers}"
