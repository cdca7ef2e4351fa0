"""PNAConv: principal neighbourhood aggregation of Corso et al., "Principal Neighbourhood
Aggregation for Graph Nets" (NeurIPS 2020).

Each statistic of a node's incoming messages is a fused segment reduction over its in-edges
(``copy_e`` gSpMMs: sum, mean, max, min, and the means of squares and of centred powers), so no
degree-bucketed mailbox is built.
"""

from __future__ import annotations

from typing import Any, List, Sequence

from nodeweave import ops

from .._ns import F, T, nn
from .._checks import positive_int
from .._utils import check_feat, graph_tensor, is_block, per_graph_to_nodes
from nodeweave import errors as nwerr

__all__ = ["PNAConv", "PNAConvTower", "STATISTICS", "SCALERS"]

STATISTICS = ("mean", "sum", "max", "min", "std", "var", "moment3", "moment4", "moment5")
SCALERS = ("identity", "amplification", "attenuation")

# DGL's constants: std = sqrt(var + 1e-30) and moments sign(m) |m + 1e-30|^(1/n) keep the
# gradient finite where the spread is 0 (one in-edge, or equal messages).
_ROOT_EPS = 1e-30


def neighbour_statistic(graph: Any, msg: Any, name: str):
    """Statistic ``name`` (one of :data:`STATISTICS`) of the messages ``msg`` ``(E, D)`` over each
    destination's in-edges, ``(N_dst, D)``; 0 for nodes without in-edges except ``std``
    (``sqrt(1e-30)``), which the caller masks."""
    if name in ("sum", "mean", "max", "min"):
        return ops.gspmm(graph, "copy_rhs", name, None, msg)
    mean = ops.gspmm(graph, "copy_rhs", "mean", None, msg)
    if name in ("var", "std"):
        # E[m^2] - E[m]^2 clamped at 0 (rounding can make it slightly negative)
        var = F.relu(ops.gspmm(graph, "copy_rhs", "mean", None, msg * msg) - mean * mean)
        return var if name == "var" else T.sqrt(var + _ROOT_EPS)
    n = int(name[len("moment"):])
    centred = ops.e_sub_v(graph, msg, mean)
    moment = ops.gspmm(graph, "copy_rhs", "mean", None, centred.pow(n))
    return T.sign(moment) * (moment.abs() + _ROOT_EPS).pow(1.0 / n)


def check_names(layer: str, what: str, names: Any, allowed: Sequence[str]) -> List[str]:
    """``names`` as a non-empty list of strings from ``allowed``, else ValueError naming ``what``."""
    if isinstance(names, str) or not isinstance(names, (list, tuple)) or not names:
        raise nwerr.ValueError(f"{layer}: {what} must be a non-empty list of names from {list(allowed)}, got "
                               f"{names!r}")
    bad = [n for n in names if n not in allowed]
    if bad:
        raise nwerr.ValueError(f"{layer}: unknown {what} {bad}; choose from {list(allowed)}")
    return list(names)


class PNAConvTower(nn.Module):
    r"""One tower of :class:`PNAConv`: messages ``M``, the aggregators times the scalers, the
    update ``U``, the graph-size norm, batch norm and dropout (see :class:`PNAConv`).

    ``forward(graph, h, edge_feat, snorm, eig=None)`` takes this tower's slice ``h`` of the node
    features and the per-node graph-size norm ``snorm`` ``(N, 1)``.
    """

    def __init__(self, in_size: int, out_size: int, aggregators: Sequence[str], scalers: Sequence[str],
                 delta: float, dropout: float = 0.0, edge_feat_size: int = 0) -> None:
        super().__init__()
        self.in_size = in_size
        self.out_size = out_size
        self.aggregators = list(aggregators)
        self.scalers = list(scalers)
        self.delta = float(delta)
        self.edge_feat_size = edge_feat_size
        self.M = nn.Linear(2 * in_size + edge_feat_size, in_size)
        self.U = nn.Linear((len(aggregators) * len(scalers) + 1) * in_size, out_size)
        self.dropout = nn.Dropout(dropout)
        self.batchnorm = nn.BatchNorm1d(out_size)

    def messages(self, graph: Any, h: Any, edge_feat: Any):
        """``M([h_src, h_dst, e])`` per edge, as ``h_src M_s + h_dst M_d + e M_e + b``: the node
        parts are projected per node (narrow) and added per edge by one gSDDMM."""
        d = self.in_size
        w = self.M.weight
        src = h.matmul(w[:, :d].t())
        dst = h.matmul(w[:, d:2 * d].t())
        msg = ops.u_add_v(graph, src, dst) + self.M.bias
        if self.edge_feat_size > 0:
            msg = msg + edge_feat.matmul(w[:, 2 * d:].t())
        return msg

    def aggregate(self, graph: Any, msg: Any, h: Any, name: str, eig: Any):
        """One aggregator's ``(N, in_size)`` output (subclasses add aggregators that read ``h``
        and ``eig``)."""
        return neighbour_statistic(graph, msg, name)

    def forward(self, graph: Any, h: Any, edge_feat: Any, snorm: Any, eig: Any = None):
        msg = self.messages(graph, h, edge_feat)
        agg = T.cat([self.aggregate(graph, msg, h, a, eig) for a in self.aggregators], dim=1)
        degs = graph_tensor(graph.in_degrees()).to(agg).reshape(-1, 1)
        # Nodes without in-edges aggregate to 0 (DGL never calls its reducer on them); the degree
        # is clamped to 1 first so that attenuation's delta / log(1) = inf never enters the graph.
        has_in = (degs > 0).to(agg)
        log_deg = T.log(degs.clamp(min=1) + 1)
        scaled = []
        for s in self.scalers:
            if s == "identity":
                scaled.append(agg)
            elif s == "amplification":
                scaled.append(agg * (log_deg / self.delta))
            else:
                scaled.append(agg * (self.delta / log_deg))
        neigh = T.cat(scaled, dim=1) * has_in
        out = self.U(T.cat([h, neigh], dim=1)) * snorm
        return self.dropout(self.batchnorm(out))


class PNAConv(nn.Module):
    r"""Principal neighbourhood aggregation.

    Per tower (the node features are split into ``num_towers`` column blocks of
    ``in_size / num_towers``), with messages :math:`m_{ji} = M([h_j, h_i, e_{ji}])`:

    .. math::
        a_i = \big\Vert_{s \in \text{scalers}} \big\Vert_{g \in \text{aggregators}}
              s(d_i)\; g(\{m_{ji} : j \in N(i)\}),\qquad
        t_i = \mathrm{Dropout}\Big(\mathrm{BN}\big(U([h_i \Vert a_i]) / \sqrt{|V_{G(i)}|}\big)\Big)

    :math:`d_i` is the in-degree, :math:`|V_{G(i)}|` the number of nodes of :math:`i`'s graph in
    a batch. Aggregators: ``mean``, ``sum``, ``max``, ``min``, ``var`` (:math:`\max(0, E[m^2] -
    E[m]^2)`), ``std`` (:math:`\sqrt{\mathrm{var} + 10^{-30}}`), ``moment3``/``4``/``5``
    (:math:`\mathrm{sign}(\mu_n) (|\mu_n| + 10^{-30})^{1/n}` of the centred moment
    :math:`\mu_n`). Scalers: ``identity``, ``amplification`` (:math:`\log(d+1)/\delta`),
    ``attenuation`` (:math:`\delta/\log(d+1)`). A node without in-edges aggregates to 0. The
    towers' outputs are concatenated and mixed: :math:`h_i' = \mathrm{LeakyReLU}_{0.01}(W t_i +
    b) + h_i` (the residual when ``residual`` and ``in_size == out_size``).

    Parameters
    ----------
    in_size, out_size : int
        Both divisible by ``num_towers``.
    aggregators : list of str
    scalers : list of str
    delta : float
        The mean of :math:`\log(d + 1)` over the training graphs' nodes.
    dropout : float
    num_towers : int
    edge_feat_size : int
        Size of the edge features (0: none; the messages then read only the two nodes).
    residual : bool

    ``forward(graph, node_feat, edge_feat=None)``: homogeneous graphs and batches;
    ``node_feat`` ``(N, in_size)``, ``edge_feat`` ``(E, edge_feat_size)``; output
    ``(N, out_size)``. Sub-modules have DGL's names (``towers.{t}.M``, ``towers.{t}.U``,
    ``towers.{t}.batchnorm``, ``mixing_layer.0``) with their default initialization.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import PNAConv
    >>> g = nw.graph(([0, 1, 2, 3], [1, 2, 0, 0]), num_nodes=4)
    >>> conv = PNAConv(4, 4, ["mean", "max", "std"], ["identity", "amplification"], delta=1.0)
    >>> conv(g, nc.randn(4, 4)).shape
    (4, 4)
    """

    _tower_type = PNAConvTower
    _statistics = STATISTICS

    def __init__(self, in_size: int, out_size: int, aggregators: Sequence[str], scalers: Sequence[str],
                 delta: float, dropout: float = 0.0, num_towers: int = 1, edge_feat_size: int = 0,
                 residual: bool = True) -> None:
        super().__init__()
        name = type(self).__name__
        self.in_size = positive_int(in_size, "in_size", name)
        self.out_size = positive_int(out_size, "out_size", name)
        num_towers = positive_int(num_towers, "num_towers", name)
        if in_size % num_towers or out_size % num_towers:
            raise nwerr.ValueError(f"{name}: in_size ({in_size}) and out_size ({out_size}) must be divisible by "
                                   f"num_towers ({num_towers})")
        aggregators = check_names(name, "aggregators", aggregators, self._statistics)
        scalers = check_names(name, "scalers", scalers, SCALERS)
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not delta > 0:
            raise nwerr.ValueError(f"{name}: delta must be a positive number (the mean log(degree + 1) of the "
                                   f"training nodes), got {delta!r}")
        self.edge_feat_size = positive_int(edge_feat_size, "edge_feat_size", name, allow_zero=True)
        self.tower_in_size = in_size // num_towers
        self.tower_out_size = out_size // num_towers
        self.residual = residual and in_size == out_size
        self.towers = nn.ModuleList([
            self._tower_type(self.tower_in_size, self.tower_out_size, aggregators, scalers, delta,
                             dropout=dropout, edge_feat_size=edge_feat_size)
            for _ in range(num_towers)])
        self.mixing_layer = nn.Sequential(nn.Linear(out_size, out_size), nn.LeakyReLU())

    def reset_parameters(self) -> None:
        """``Linear``'s default initialization; fresh batch norms."""
        for tower in self.towers:
            for mod in (tower.M, tower.U, tower.batchnorm):
                mod.reset_parameters()
        self.mixing_layer[0].reset_parameters()

    def _check_inputs(self, graph: Any, node_feat: Any, edge_feat: Any) -> None:
        name = type(self).__name__
        if is_block(graph) or not graph.is_homogeneous:
            raise nwerr.ValueError(f"{name} needs a homogeneous graph (each node's messages read its own "
                                   f"features), got node types {graph.ntypes} and edge types "
                                   f"{graph.canonical_etypes}{' (a block)' if is_block(graph) else ''}")
        check_feat(name, "node_feat", node_feat, graph.num_nodes(), "nodes", self.in_size, "in_size")
        if node_feat.dim() != 2:
            raise nwerr.ValueError(f"{name}: node_feat must have shape (num_nodes, {self.in_size}), got "
                                   f"{tuple(node_feat.shape)}")
        if self.edge_feat_size > 0:
            if edge_feat is None:
                raise nwerr.ValueError(f"{name}: edge_feat is required (edge_feat_size={self.edge_feat_size})")
            check_feat(name, "edge_feat", edge_feat, graph.num_edges(), "edges", self.edge_feat_size,
                       "edge_feat_size")
            if edge_feat.dim() != 2:
                raise nwerr.ValueError(f"{name}: edge_feat must be 2-D, got shape {tuple(edge_feat.shape)}")

    def _run(self, graph: Any, node_feat: Any, edge_feat: Any, eig: Any):
        counts = graph_tensor(graph.batch_num_nodes()).to(node_feat).clamp(min=1)
        snorm = per_graph_to_nodes(graph, counts.pow(-0.5).reshape(-1, 1))
        width = self.tower_in_size
        h_cat = T.cat([tower(graph, node_feat[:, t * width:(t + 1) * width], edge_feat, snorm, eig)
                       for t, tower in enumerate(self.towers)], dim=1)
        out = self.mixing_layer(h_cat)
        return out + node_feat if self.residual else out

    def forward(self, graph: Any, node_feat: Any, edge_feat: Any = None):
        """New node features."""
        self._check_inputs(graph, node_feat, edge_feat)
        return self._run(graph, node_feat, edge_feat, None)

    def extra_repr(self) -> str:
        tower = self.towers[0]
        return (f"in_size={self.in_size}, out_size={self.out_size}, aggregators={tower.aggregators}, "
                f"scalers={tower.scalers}, delta={tower.delta}, num_towers={len(self.towers)}, "
                f"edge_feat_size={self.edge_feat_size}, residual={self.residual}")

