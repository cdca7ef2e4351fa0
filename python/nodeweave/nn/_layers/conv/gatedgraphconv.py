"""Gated graph convolution (Li et al., 2016, "Gated Graph Sequence Neural Networks"), DGL's
``GatedGraphConv``.

With one edge type the per-step aggregation is one fused gSpMM of ``linear(h)``; with several,
each edge's message ``W_{type(e)} h_src + b_{type(e)}`` comes from one ``gather_mm`` (no Python
loop over types), then a sum over in-edges.

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.nn import GatedGraphConv
>>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
>>> conv = GatedGraphConv(2, 4, n_steps=3, n_etypes=2)
>>> tuple(conv(g, nc.ones(3, 2), nc.tensor([0, 1, 1])).shape)
(3, 4)
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from nodeweave import ops

from .._ns import T, nn
from .._utils import graph_tensor
from .._checks import check_rows, id_tensor, positive_int, to_numpy_ids
from nodeweave import errors as nwerr

__all__ = ["GatedGraphConv"]


def _whole_floats_as_ints(etypes: Any) -> Any:
    """Float edge types holding whole numbers as int64 (DGL accepts ``torch.zeros(E)``); other
    input unchanged, for :func:`to_numpy_ids` to check."""
    if isinstance(etypes, T.Tensor) and etypes.dtype.is_floating_point:
        arr = etypes.detach().cpu().numpy().astype(np.float64)
    elif isinstance(etypes, np.ndarray) and etypes.dtype.kind == "f":
        arr = etypes.astype(np.float64)
    else:
        return etypes
    if not np.isfinite(arr).all() or (arr != np.round(arr)).any():
        raise nwerr.TypeError("GatedGraphConv: etypes must hold whole-number edge type indices, got floats "
                              "with a fractional part (or inf/nan)")
    return arr.astype(np.int64)


class GatedGraphConv(nn.Module):
    r"""Gated graph convolution::

        h^0_v = [x_v, 0]                                   (zero-padded to out_feats)
        a^t_v = sum_{e=(u,v)} (W_{type(e)} h^{t-1}_u + b_{type(e)})
        h^t_v = GRUCell(a^t_v, h^{t-1}_v)                  for t = 1 .. n_steps

    Parameters: ``in_feats <= out_feats``, ``n_steps`` rounds, ``n_etypes`` edge types (one
    ``nn.Linear(out_feats, out_feats)`` each, in ``linears``), ``bias`` for the GRU cell. Linear
    weights are Xavier-normal (ReLU gain) with zero bias; the GRU uses torch's init.

    ``forward(graph, feat, etypes=None)``: ``etypes`` is an ``(E,)`` tensor of edge types in
    ``[0, n_etypes)``, integers or floats holding whole numbers (DGL compares them with ``==``, so
    ``torch.zeros(E)`` works there; a fractional type raises here); it may be left out only when ``n_etypes == 1``. The graph's source and
    destination nodes must be the same (homogeneous or batched graphs).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> conv = nw.nn.GatedGraphConv(3, 3, n_steps=2, n_etypes=1)
    >>> tuple(conv(nw.graph(([0, 1], [1, 2])), nc.ones(3, 3)).shape)
    (3, 3)
    """

    def __init__(self, in_feats: int, out_feats: int, n_steps: int, n_etypes: int, bias: bool = True) -> None:
        super().__init__()
        self._in_feats = positive_int(in_feats, "in_feats", "GatedGraphConv")
        self._out_feats = positive_int(out_feats, "out_feats", "GatedGraphConv")
        if in_feats > out_feats:
            raise nwerr.ValueError(f"GatedGraphConv: in_feats ({in_feats}) must not exceed out_feats ({out_feats}); "
                                   "the input is zero-padded to out_feats")
        self._n_steps = positive_int(n_steps, "n_steps", "GatedGraphConv", allow_zero=True)
        self._n_etypes = positive_int(n_etypes, "n_etypes", "GatedGraphConv")
        self.linears = nn.ModuleList([nn.Linear(out_feats, out_feats) for _ in range(n_etypes)])
        self.gru = nn.GRUCell(out_feats, out_feats, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-normal (ReLU gain) linear weights, zero linear biases, torch's GRU init."""
        gain = nn.init.calculate_gain("relu")
        self.gru.reset_parameters()
        for linear in self.linears:
            nn.init.xavier_normal_(linear.weight, gain=gain)
            nn.init.zeros_(linear.bias)

    def _check_etypes(self, graph: Any, etypes: Optional[Any]) -> Optional[np.ndarray]:
        if etypes is None:
            if self._n_etypes != 1:
                raise nwerr.ValueError(f"GatedGraphConv: etypes is required when n_etypes > 1 (n_etypes="
                                       f"{self._n_etypes})")
            return None
        et = to_numpy_ids(_whole_floats_as_ints(etypes), "etypes")
        if len(et) != graph.num_edges():
            raise nwerr.ValueError(f"GatedGraphConv: etypes must have one entry per edge ({graph.num_edges()}), "
                                   f"got {len(et)}")
        if et.size and (et.min() < 0 or et.max() >= self._n_etypes):
            raise nwerr.ValueError(f"GatedGraphConv: etypes must be in [0, n_etypes={self._n_etypes}), got values "
                                   f"{int(et.min())}..{int(et.max())}")
        return et

    def forward(self, graph: Any, feat: Any, etypes: Optional[Any] = None) -> Any:
        if graph.srctypes != graph.dsttypes or graph.num_src_nodes() != graph.num_dst_nodes():
            raise nwerr.ValueError("GatedGraphConv: the graph's source and destination nodes must be the same")
        check_rows(feat, graph.num_nodes(), "feat", "node")
        if feat.dim() != 2 or feat.shape[1] != self._in_feats:
            raise nwerr.ValueError(f"GatedGraphConv: feat must have shape (num_nodes, {self._in_feats}), got "
                                   f"{tuple(feat.shape)}")
        et = self._check_etypes(graph, etypes)
        pad = self._out_feats - self._in_feats
        if pad:
            feat = T.cat([feat, T.zeros((feat.shape[0], pad), dtype=feat.dtype, device=feat.device)], -1)
        if et is None:
            for _ in range(self._n_steps):
                a = ops.copy_u_sum(graph, self.linears[0](feat))
                feat = self.gru(a, feat)
            return feat
        src = graph_tensor(graph.edges()[0])
        src = src.to(feat.device).long()
        etype_t = id_tensor(et, feat)
        # Stacked per call (stacking is differentiable), shared by all steps.
        weight = T.stack([lin.weight.t() for lin in self.linears])  # (n_etypes, out, out)
        edge_bias = T.stack([lin.bias for lin in self.linears]).index_select(0, etype_t)
        for _ in range(self._n_steps):
            msg = ops.gather_mm(feat, weight, idx_a=src, idx_b=etype_t) + edge_bias
            feat = self.gru(ops.copy_e_sum(graph, msg), feat)
        return feat

    def extra_repr(self) -> str:
        return (f"in_feats={self._in_feats}, out_feats={self._out_feats}, n_steps={self._n_steps}, "
                f"n_etypes={self._n_etypes}")
