"""GINEConv: GIN with edge features, from Hu et al., "Strategies for Pre-training Graph Neural
Networks" (ICLR 2020)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from nodeweave import function as fn

from .._ns import nn, F
from .._utils import check_feat, check_pair_feats
from .ginconv import EpsUpdate

__all__ = ["GINEConv"]


class GINEConv(EpsUpdate, nn.Module):
    r"""GIN with edge features:
    :math:`h_i' = f_\Theta\big((1 + \epsilon) h_i + \sum_{j \in N(i)} \mathrm{ReLU}(h_j + e_{ji})\big)`.

    The ReLU acts per edge, so the messages ``h_j + e_ji`` form one ``(E, D)`` tensor (a gSDDMM);
    their sum is a gSpMM.

    Parameters
    ----------
    apply_func : callable, optional
        :math:`f_\Theta`.
    init_eps : float
    learn_eps : bool
        Make :math:`\epsilon` a parameter (else a buffer).

    Shapes: ``node_feat`` ``(N, D)`` or a pair; ``edge_feat`` ``(E, D)`` with the same ``D``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import GINEConv
    >>> g = nw.graph(([0, 1, 2], [1, 2, 2]), num_nodes=3)
    >>> conv = GINEConv(nc.nn.Linear(2, 3), learn_eps=True)
    >>> conv(g, nc.ones(3, 2), nc.ones(3, 2)).shape
    (3, 3)
    """

    def __init__(self, apply_func: Optional[Callable[[Any], Any]] = None, init_eps: float = 0.0,
                 learn_eps: bool = False) -> None:
        super().__init__()
        self._init_eps_update(apply_func, init_eps, learn_eps)

    def forward(self, graph: Any, node_feat: Any, edge_feat: Any):
        """One GINE update of the destination nodes."""
        name = type(self).__name__
        with graph.local_scope():
            feat_src, feat_dst = check_pair_feats(name, graph, node_feat, arg="node_feat")
            check_feat(name, "edge_feat", edge_feat, graph.num_edges(), "edges",
                       feat_src.shape[-1], "the node feature size")
            graph.srcdata["hn"] = feat_src
            graph.edata["he"] = edge_feat
            graph.apply_edges(fn.u_add_e("hn", "he", "m"))
            graph.edata["m"] = F.relu(graph.edata["m"])
            graph.update_all(fn.copy_e("m", "m"), fn.sum("m", "neigh"))
            return self._eps_update(feat_dst, graph.dstdata["neigh"])
