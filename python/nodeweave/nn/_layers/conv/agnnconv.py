"""AGNNConv: attention-based propagation of Thekumparampil et al., "Attention-based Graph Neural
Network for Semi-Supervised Learning" (2018)."""

from __future__ import annotations

from typing import Any

from nodeweave import function as fn
from nodeweave.ops import edge_softmax

from .._ns import F, T, nn
from .._utils import check_pair_feats, check_zero_in_degree, is_block
from nodeweave import errors as nwerr

__all__ = ["AGNNConv"]


class AGNNConv(nn.Module):
    r"""Attention by cosine similarity, no projection:

    .. math::
        P_{ij} = \operatorname{softmax}_{j \in N(i)} \big(\beta \cos(h_i, h_j)\big),\qquad
        h_i' = \sum_{j \in N(i)} P_{ij} h_j

    The cosines are one gSDDMM (``u_dot_v`` of the L2-normalized features), the weighted sum one
    gSpMM.

    Parameters
    ----------
    init_beta : float
        Initial :math:`\beta`.
    learn_beta : bool
        Make :math:`\beta` a parameter ``beta`` of shape ``(1,)`` (else a buffer).
    allow_zero_in_degree : bool
        Without it, a destination node with no in-edge raises ValueError (its output would be 0).

    Shapes: ``feat`` ``(N, *, D)`` or a pair ``(src_feat, dst_feat)`` with the same ``D`` (the
    destination features only enter the cosines); output ``(N_dst, *, D)``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import AGNNConv
    >>> g = nw.graph(([0, 1, 2, 2], [1, 2, 0, 1]), num_nodes=3)
    >>> x = nc.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=nc.float64)
    >>> AGNNConv(learn_beta=False)(g, x)[0].tolist()    # node 0's only in-neighbour is node 2
    [1.0, 1.0]
    """

    def __init__(self, init_beta: float = 1.0, learn_beta: bool = True,
                 allow_zero_in_degree: bool = False) -> None:
        super().__init__()
        self._allow_zero_in_degree = allow_zero_in_degree
        beta = T.tensor([float(init_beta)])
        if learn_beta:
            self.beta = nn.Parameter(beta)
        else:
            self.register_buffer("beta", beta)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        """Turns the zero-in-degree check off (True) or on (False)."""
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Any, feat: Any):
        """Cosine-attention-weighted sum of the source features."""
        name = type(self).__name__
        with graph.local_scope():
            if not self._allow_zero_in_degree:
                check_zero_in_degree(graph, name)
            feat_src, feat_dst = check_pair_feats(name, graph, feat)
            if feat_src.dim() < 2 or tuple(feat_src.shape[1:]) != tuple(feat_dst.shape[1:]):
                raise nwerr.ValueError(f"{name}: the source and destination features must have the same "
                                       f"shape past the node dimension (at least 2-D), got "
                                       f"{tuple(feat_src.shape)} and {tuple(feat_dst.shape)}")
            norm_src = F.normalize(feat_src, p=2.0, dim=-1)
            if isinstance(feat, tuple) or is_block(graph):
                norm_dst = F.normalize(feat_dst, p=2.0, dim=-1)
            else:
                norm_dst = norm_src
            graph.srcdata.update({"h": feat_src, "n": norm_src})
            graph.dstdata["n"] = norm_dst
            graph.apply_edges(fn.u_dot_v("n", "n", "cos"))
            graph.edata["p"] = edge_softmax(graph, self.beta * graph.edata.pop("cos"))
            graph.update_all(fn.u_mul_e("h", "p", "m"), fn.sum("m", "h"))
            return graph.dstdata["h"]
