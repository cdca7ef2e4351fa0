"""DGNConv: directional graph networks of Beaini et al., "Directional Graph Networks" (ICML
2021): PNA with aggregators steered by Laplacian eigenvectors."""

from __future__ import annotations

import re
from typing import Any, Sequence

from nodeweave import ops

from .._utils import check_feat
from .pnaconv import STATISTICS, PNAConv, PNAConvTower
from nodeweave import errors as nwerr

__all__ = ["DGNConv", "DGNConvTower", "DIRECTIONAL"]

DIRECTIONAL = tuple(f"dir{k}-{kind}" for k in (1, 2, 3) for kind in ("av", "dx"))
_DIR = re.compile(r"dir([123])-(av|dx)")
# DGL's constant: the L1 norm of a node's field gets 1e-30 so that a zero field divides to 0.
_FIELD_EPS = 1e-30


class DGNConvTower(PNAConvTower):
    """A :class:`PNAConvTower` that also has the directional aggregators ``dir{k}-av`` and
    ``dir{k}-dx`` (see :class:`DGNConv`)."""

    def aggregate(self, graph: Any, msg: Any, h: Any, name: str, eig: Any):
        match = _DIR.fullmatch(name)
        if match is None:
            return super().aggregate(graph, msg, h, name, eig)
        col = eig[:, int(match.group(1)) - 1:int(match.group(1))]
        field = ops.u_sub_v(graph, col, col)                          # F_ji = phi_j - phi_i, (E, 1)
        l1 = ops.gspmm(graph, "copy_rhs", "sum", None, field.abs())  # per destination, (N, 1)
        weight = field / ops.copy_v(graph, l1 + _FIELD_EPS)
        if match.group(2) == "av":
            return ops.gspmm(graph, "copy_rhs", "sum", None, msg * weight.abs())
        weighted = ops.gspmm(graph, "copy_rhs", "sum", None, msg * weight)
        total = ops.gspmm(graph, "copy_rhs", "sum", None, weight)
        return (weighted - total * h).abs()


class DGNConv(PNAConv):
    r"""Directional graph network layer: :class:`PNAConv` whose aggregators may also be
    directional, along the gradient of the :math:`k`-th smallest Laplacian eigenvector
    :math:`\phi_k` (``eig_vec[:, k-1]``; DGL computes them with its ``LaplacianPE`` transform).
    With :math:`F_{ji} = \phi_k(j) - \phi_k(i)` on edge :math:`j \to i`
    and :math:`\hat F_{ji} = F_{ji} / (\sum_{l \in N(i)} |F_{li}| + 10^{-30})`:

    .. math::
        \text{dir}k\text{-av}:\ \sum_{j \in N(i)} |\hat F_{ji}|\, m_{ji},\qquad
        \text{dir}k\text{-dx}:\ \Big|\sum_{j \in N(i)} \hat F_{ji}\, m_{ji}
        - h_i \sum_{j \in N(i)} \hat F_{ji}\Big|

    with :math:`m_{ji}` the tower's messages and :math:`h_i` the tower's input slice, for
    :math:`k \in \{1, 2, 3\}`. Everything else (towers, scalers, norm, mixing, residual,
    parameters) is :class:`PNAConv`'s.

    ``forward(graph, node_feat, edge_feat=None, eig_vec=None)``: ``eig_vec`` ``(N, K)`` with
    ``K >= k`` for every ``dir{k}`` aggregator (required when there is one).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import DGNConv
    >>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]), num_nodes=4)
    >>> conv = DGNConv(4, 4, ["mean", "dir1-av", "dir1-dx"], ["identity"], delta=1.0)
    >>> conv(g, nc.randn(4, 4), eig_vec=nc.randn(4, 2)).shape
    (4, 4)
    """

    _tower_type = DGNConvTower
    _statistics = STATISTICS + DIRECTIONAL

    def __init__(self, in_size: int, out_size: int, aggregators: Sequence[str], scalers: Sequence[str],
                 delta: float, dropout: float = 0.0, num_towers: int = 1, edge_feat_size: int = 0,
                 residual: bool = True) -> None:
        super().__init__(in_size, out_size, aggregators, scalers, delta, dropout, num_towers, edge_feat_size,
                         residual)
        directions = [int(a[3]) for a in aggregators if _DIR.fullmatch(a)]
        self.use_eig_vec = bool(directions)
        self._eig_size = max(directions, default=0)

    def forward(self, graph: Any, node_feat: Any, edge_feat: Any = None, eig_vec: Any = None):
        """New node features; ``eig_vec`` steers the directional aggregators."""
        name = type(self).__name__
        self._check_inputs(graph, node_feat, edge_feat)
        if self.use_eig_vec:
            if eig_vec is None:
                raise nwerr.ValueError(f"{name}: eig_vec is required by the directional aggregators "
                                       f"(at least {self._eig_size} eigenvectors per node)")
            check_feat(name, "eig_vec", eig_vec, graph.num_nodes(), "nodes")
            if eig_vec.dim() != 2 or eig_vec.shape[1] < self._eig_size:
                raise nwerr.ValueError(f"{name}: eig_vec must have shape (num_nodes, K) with K >= "
                                       f"{self._eig_size}, got {tuple(eig_vec.shape)}")
        return self._run(graph, node_feat, edge_feat, eig_vec if self.use_eig_vec else None)
