"""EGNNConv: the E(n)-equivariant graph convolution of Satorras et al., "E(n) Equivariant Graph
Neural Networks" (ICML 2021), DGL's ``EGNNConv``."""

from __future__ import annotations

from typing import Any, Optional, Tuple

from nodeweave import ops

from .._ns import T, nn
from .._utils import check_feat, is_block
from .._checks import positive_int
from nodeweave import errors as nwerr

__all__ = ["EGNNConv"]


class EGNNConv(nn.Module):
    r"""Equivariant message passing on node features :math:`h` and coordinates :math:`x`:

    .. math::
        m_{ij} = \phi_e\big(h_i, h_j, \|x_i - x_j\|^2, a_{ij}\big),\qquad
        x_i' = x_i + \frac{1}{|N(i)|}\sum_{j \in N(i)} \frac{x_j - x_i}{\|x_j - x_i\| + 10^{-30}}
        \,\phi_x(m_{ij}),\qquad
        h_i' = \phi_h\Big(h_i, \sum_{j \in N(i)} m_{ij}\Big)

    for edges :math:`j \to i` (``i`` the destination). Note the coordinate message is DGL's:
    :math:`x_j - x_i` normalized to unit length, averaged. :math:`\phi_e` is ``edge_mlp``
    (Linear, SiLU, Linear, SiLU), :math:`\phi_x` ``coord_mlp`` (Linear, SiLU, Linear without bias,
    to one value), :math:`\phi_h` ``node_mlp`` (Linear, SiLU, Linear) on the concatenation.

    Parameters
    ----------
    in_size, hidden_size, out_size : int
    edge_feat_size : int
        Size of the edge features :math:`a_{ij}` (0: none).

    ``forward(graph, node_feat, coord_feat, edge_feat=None)`` returns ``(h', x')``: ``node_feat``
    ``(N, in_size)``, ``coord_feat`` ``(N, C)`` for any C, ``edge_feat`` ``(E, edge_feat_size)``.
    A node without in-edges keeps its coordinates and aggregates 0. On a block the destination
    nodes are the first rows of the inputs. The first layer of ``edge_mlp`` is applied per node
    and summed per edge, so no ``(E, 2 * in_size)`` tensor is built. Two nodes at the same
    position give an infinite gradient (as in DGL): avoid self-loops.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import EGNNConv
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
    >>> h, x = EGNNConv(4, 8, 2)(g, nc.ones(3, 4), nc.randn(3, 3))
    >>> tuple(h.shape), tuple(x.shape)
    ((3, 2), (3, 3))
    """

    def __init__(self, in_size: int, hidden_size: int, out_size: int, edge_feat_size: int = 0) -> None:
        super().__init__()
        self.in_size = positive_int(in_size, "in_size", "EGNNConv")
        self.hidden_size = positive_int(hidden_size, "hidden_size", "EGNNConv")
        self.out_size = positive_int(out_size, "out_size", "EGNNConv")
        self.edge_feat_size = positive_int(edge_feat_size, "edge_feat_size", "EGNNConv", allow_zero=True)
        # +1 input for the squared distance.
        self.edge_mlp = nn.Sequential(nn.Linear(2 * in_size + edge_feat_size + 1, hidden_size), nn.SiLU(),
                                      nn.Linear(hidden_size, hidden_size), nn.SiLU())
        self.node_mlp = nn.Sequential(nn.Linear(in_size + hidden_size, hidden_size), nn.SiLU(),
                                      nn.Linear(hidden_size, out_size))
        self.coord_mlp = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.SiLU(),
                                       nn.Linear(hidden_size, 1, bias=False))

    def forward(self, graph: Any, node_feat: Any, coord_feat: Any, edge_feat: Optional[Any] = None) -> Tuple[Any, Any]:
        name = "EGNNConv"
        if not is_block(graph) and graph.num_src_nodes() != graph.num_dst_nodes():
            raise nwerr.ValueError(f"{name}: the graph has {graph.num_src_nodes()} source and {graph.num_dst_nodes()} "
                                   "destination nodes; it needs one node set (a graph or a block)")
        n_src, n_dst = graph.num_src_nodes(), graph.num_dst_nodes()
        check_feat(name, "node_feat", node_feat, n_src, "nodes", self.in_size, "in_size")
        check_feat(name, "coord_feat", coord_feat, n_src, "nodes")
        if coord_feat.dim() != 2:
            raise nwerr.ValueError(f"{name}: coord_feat must be 2-D (N, C), got shape {tuple(coord_feat.shape)}")
        h_dst, x_dst = node_feat[:n_dst], coord_feat[:n_dst]
        if self.edge_feat_size > 0:
            if edge_feat is None:
                raise nwerr.ValueError(f"{name}: edge_feat is required (the module was built with "
                                       f"edge_feat_size={self.edge_feat_size})")
            check_feat(name, "edge_feat", edge_feat, graph.num_edges(), "edges", self.edge_feat_size,
                       "edge_feat_size")
        elif edge_feat is not None and (edge_feat.dim() != 2 or edge_feat.shape[-1] != 0):
            raise nwerr.ValueError(f"{name}: edge_feat was given but the module was built with edge_feat_size=0")

        x_diff = ops.u_sub_v(graph, coord_feat, x_dst)                 # x_j - x_i, (E, C)
        radial = (x_diff * x_diff).sum(1, keepdim=True)                # (E, 1)
        x_diff = x_diff / (radial.sqrt() + 1e-30)

        # edge_mlp's first Linear on cat(h_j, h_i, radial, a_ij), split by input block.
        first = self.edge_mlp[0]
        d = self.in_size
        w_src, w_dst = first.weight[:, :d], first.weight[:, d:2 * d]
        w_rad = first.weight[:, 2 * d:2 * d + 1]
        pre = ops.u_add_v(graph, node_feat @ w_src.transpose(0, 1), h_dst @ w_dst.transpose(0, 1))
        pre = pre + radial @ w_rad.transpose(0, 1) + first.bias
        if self.edge_feat_size > 0:
            pre = pre + edge_feat @ first.weight[:, 2 * d + 1:].transpose(0, 1)
        msg_h = self.edge_mlp[3](self.edge_mlp[2](self.edge_mlp[1](pre)))     # (E, hidden)
        msg_x = self.coord_mlp(msg_h) * x_diff                                # (E, C)

        x_neigh = ops.copy_e_mean(graph, msg_x)
        h_neigh = ops.copy_e_sum(graph, msg_h)
        h = self.node_mlp(T.cat([h_dst, h_neigh], dim=-1))
        return h, x_dst + x_neigh
