"""EdgeConv: the edge convolution of Wang et al., "Dynamic Graph CNN for Learning on Point
Clouds" (ACM TOG 2019)."""

from __future__ import annotations

from typing import Any

from nodeweave import function as fn

from .._ns import nn
from .._utils import check_pair_feats, check_zero_in_degree, graph_tensor

__all__ = ["EdgeConv"]


class EdgeConv(nn.Module):
    r"""Edge convolution:
    :math:`h_i' = \max_{j \in N(i)} \big(\Theta (x_j - x_i) + \Phi x_i\big)`, with
    :math:`\Theta`, :math:`\Phi` linear layers (``theta``, ``phi``, both with bias).

    Without batch norm no per-edge tensor is built: since :math:`\Theta` is linear,
    :math:`\Theta(x_j - x_i) + \Phi x_i = W_\Theta x_j + (\Phi x_i - W_\Theta x_i + b_\Theta)`,
    the second term is constant over the in-edges of :math:`i`, and the max is one fused
    ``copy_u``/``max`` gSpMM of :math:`X W_\Theta^\top`. With ``batch_norm=True`` the
    ``(E, out_feat)`` messages are built (one gSDDMM), batch-normalized over all edges, then
    max-reduced. A node without in-edges gets 0.

    (DGL's implementation computes :math:`\Theta(x_i - x_j)` despite its documented formula; this
    follows the formula, so a DGL checkpoint needs ``theta.weight`` negated.)

    Parameters
    ----------
    in_feat, out_feat : int
    batch_norm : bool
    allow_zero_in_degree : bool

    Shapes: ``feat`` ``(N, in_feat)`` or a pair ``(src_feat, dst_feat)``; output
    ``(N_dst, out_feat)``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import EdgeConv
    >>> g = nw.graph(([0, 1, 2, 0], [1, 2, 0, 2]), num_nodes=3)
    >>> EdgeConv(4, 2)(g, nc.ones(3, 4)).shape
    (3, 2)
    """

    def __init__(self, in_feat: int, out_feat: int, batch_norm: bool = False,
                 allow_zero_in_degree: bool = False) -> None:
        super().__init__()
        self._in_feat = in_feat
        self.batch_norm = batch_norm
        self._allow_zero_in_degree = allow_zero_in_degree
        self.theta = nn.Linear(in_feat, out_feat)
        self.phi = nn.Linear(in_feat, out_feat)
        if batch_norm:
            self.bn = nn.BatchNorm1d(out_feat)

    def reset_parameters(self) -> None:
        """Linear's default initialization for ``theta`` and ``phi``; a fresh batch norm."""
        self.theta.reset_parameters()
        self.phi.reset_parameters()
        if self.batch_norm:
            self.bn.reset_parameters()

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        """Turns the zero-in-degree check off (True) or on (False)."""
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Any, feat: Any):
        """Max over each node's in-edges of the edge function."""
        name = type(self).__name__
        with graph.local_scope():
            if not self._allow_zero_in_degree:
                check_zero_in_degree(graph, name)
            h_src, h_dst = check_pair_feats(name, graph, feat, self._in_feat, self._in_feat)
            # x_j W^T for the sources; Phi x_i - x_i W^T + b for the destinations.
            w_theta = self.theta.weight.t()
            src_term = h_src.matmul(w_theta)
            theta_dst = src_term if h_dst is h_src else h_dst.matmul(w_theta)
            dst_term = self.phi(h_dst) - theta_dst + self.theta.bias
            graph.srcdata["s"] = src_term
            if not self.batch_norm:
                graph.update_all(fn.copy_u("s", "m"), fn.max("m", "x"))
                rst = graph.dstdata["x"] + dst_term
                if self._allow_zero_in_degree:
                    has_in = (graph_tensor(graph.in_degrees()) > 0).to(rst).reshape(-1, 1)
                    rst = rst * has_in
                return rst
            graph.dstdata["d"] = dst_term
            graph.apply_edges(fn.u_add_v("s", "d", "e"))
            graph.edata["e"] = self.bn(graph.edata["e"])
            graph.update_all(fn.copy_e("e", "m"), fn.max("m", "x"))
            return graph.dstdata["x"]
