"""SubgraphX (Yuan et al., "On Explainability of Graph Neural Networks via Subgraph Explorations",
ICML 2021), DGL's ``SubgraphX`` and ``HeteroSubgraphX``: a Monte Carlo tree search over connected
subgraphs, pruning one node at a time, scored by a sampled Shapley value of the subgraph for the
model's probability of a target class.

Both explainers search on the graph's nodes numbered as :func:`nodeweave.to_homogeneous` numbers
them (one node type: the node ids themselves); only the feature masking and the result differ.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._ns import T, nn
from .._utils import graph_tensor
from ._common import check_hetero_feat, check_feat, eval_mode
from nodeweave import errors as nwerr

__all__ = ["MCTSNode", "SubgraphX", "HeteroSubgraphX"]


class MCTSNode:
    """A node of the search tree: a connected set of graph nodes (sorted flat ids), its visit
    count, the rewards its rollouts brought, its own Shapley value (``immediate_reward``, None
    until computed) and its children (None until expanded)."""

    def __init__(self, nodes: Tuple[int, ...]) -> None:
        self.nodes = nodes
        self.num_visit = 0
        self.total_reward = 0.0
        self.immediate_reward: Optional[float] = None
        self.children: Optional[List["MCTSNode"]] = None

    def __repr__(self) -> str:
        return f"MCTSNode({list(self.nodes)})"


def _int(value: Any, name: str, cls: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        raise nwerr.ValueError(f"{cls}: {name} must be an int >= {lo}, got {value!r}")
    return int(value)


class _Search(nn.Module):
    """The search shared by both explainers; subclasses say how features are masked and how the
    result is handed back."""

    def __init__(self, model: Any, num_hops: int, coef: float = 10.0, high2low: bool = True, num_child: int = 12,
                 num_rollouts: int = 20, node_min: int = 3, shapley_steps: int = 100, log: bool = False) -> None:
        super().__init__()
        cls = type(self).__name__
        if not callable(model):
            raise nwerr.TypeError(f"{cls}: model must be a callable module, got {type(model).__name__}")
        self.model = model
        self.num_hops = _int(num_hops, "num_hops", cls, 0)
        if isinstance(coef, bool) or not isinstance(coef, numbers.Real) or not math.isfinite(coef) or coef < 0:
            raise nwerr.ValueError(f"{cls}: coef must be a non-negative number, got {coef!r}")
        self.coef = float(coef)
        self.high2low = bool(high2low)
        self.num_child = _int(num_child, "num_child", cls, 1)
        self.num_rollouts = _int(num_rollouts, "num_rollouts", cls, 1)
        self.node_min = _int(node_min, "node_min", cls, 1)
        self.shapley_steps = _int(shapley_steps, "shapley_steps", cls, 1)
        self.log = bool(log)

    # --------------------------------------------------------------- set up per explanation
    def _prepare(self, graph: Any, feat: Any, target_class: Any, kwargs: Dict[str, Any]) -> None:
        """Flat numbering, edges, and the state one explanation uses."""
        cls = type(self).__name__
        self._offsets, n = {}, 0
        for nt in graph.ntypes:
            self._offsets[nt] = n
            n += graph.num_nodes(nt)
        if n <= self.node_min:
            raise nwerr.ValueError(f"{cls}: the graph must have more than node_min={self.node_min} nodes, got {n}")
        src, dst = [], []
        for ct in graph.canonical_etypes:
            s, d = (graph_tensor(t).cpu().numpy().astype(np.int64) for t in graph.edges(etype=ct))
            src.append(s + self._offsets[ct[0]])
            dst.append(d + self._offsets[ct[2]])
        self._src = np.concatenate(src) if src else np.zeros(0, np.int64)
        self._dst = np.concatenate(dst) if dst else np.zeros(0, np.int64)
        self._n = n
        if isinstance(target_class, T.Tensor):
            target_class = target_class.reshape(-1)[0].item() if target_class.numel() == 1 else target_class
        if isinstance(target_class, bool) or not isinstance(target_class, numbers.Integral) or target_class < 0:
            raise nwerr.ValueError(f"{cls}: target_class must be a class index (an int >= 0), got {target_class!r}")
        self.graph, self.feat, self.kwargs = graph, feat, kwargs
        self.target_class = int(target_class)
        self._rng = _generator()
        self.mcts_node_maps: Dict[Tuple[int, ...], MCTSNode] = {}

    # --------------------------------------------------------------- Shapley value
    def _region(self, nodes: Tuple[int, ...]) -> np.ndarray:
        """``nodes`` and every node within ``num_hops - 1`` hops of them, along edges either way."""
        inside = np.zeros(self._n, bool)
        inside[list(nodes)] = True
        for _ in range(self.num_hops - 1):
            grow = inside.copy()
            grow[self._dst[inside[self._src]]] = True
            grow[self._src[inside[self._dst]]] = True
            inside = grow
        return inside

    def _target_prob(self, keep: np.ndarray) -> Any:
        """The model's probabilities of ``target_class`` (one per output row) with the features of
        the nodes outside ``keep`` zeroed."""
        logits = self.model(self.graph, self._masked(keep), **self.kwargs)
        if not isinstance(logits, T.Tensor) or logits.dim() != 2:
            got = tuple(logits.shape) if isinstance(logits, T.Tensor) else type(logits).__name__
            raise nwerr.ValueError(f"{type(self).__name__}: the model must return 2-D logits (one row per graph), "
                                   f"got {got}")
        if self.target_class >= logits.shape[1]:
            raise nwerr.ValueError(f"{type(self).__name__}: target_class {self.target_class} is not one of the "
                                   f"model's {logits.shape[1]} classes")
        return T.softmax(logits, dim=-1)[:, self.target_class]

    def shapley(self, subgraph_nodes: Any) -> float:
        """Monte Carlo Shapley value of the node set (flat ids) for the target class: over
        ``shapley_steps`` draws of a coalition ``S`` of the other nodes of its region (a random
        prefix of a random order of those nodes and one end marker; the nodes outside the region
        always take part), the mean of ``p(S + set) - p(S)``."""
        nodes = tuple(int(v) for v in subgraph_nodes)
        region = self._region(nodes)
        mine = np.zeros(self._n, bool)
        mine[list(nodes)] = True
        players = np.nonzero(region & ~mine)[0]
        total, count = 0.0, 0
        with T.no_grad():
            for _ in range(self.shapley_steps):
                order = self._rng.permutation(len(players) + 1)     # index len(players): the end marker
                chosen = players[order[:int(np.nonzero(order == len(players))[0][0])]]
                without = ~region
                without[chosen] = True
                gain = self._target_prob(without | mine) - self._target_prob(without)
                total += float(gain.sum().item())
                count += int(gain.numel())
        return total / max(count, 1)

    # --------------------------------------------------------------- tree search
    def _largest_component(self, keep: np.ndarray) -> Tuple[int, ...]:
        """The largest weakly connected component among the nodes in ``keep`` (ties: the one with
        the smallest node)."""
        parent = np.arange(self._n)

        def find(a: int) -> int:
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        both = keep[self._src] & keep[self._dst]
        for a, b in zip(self._src[both], self._dst[both]):
            ra, rb = find(int(a)), find(int(b))
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        members = np.nonzero(keep)[0]
        roots = np.array([find(int(v)) for v in members])
        labels, counts = np.unique(roots, return_counts=True)
        best = labels[counts == counts.max()].min()   # roots are the smallest node of their component
        return tuple(int(v) for v in members[roots == best])

    def get_mcts_children(self, mcts_node: MCTSNode) -> List[MCTSNode]:
        """The children of a search node (expanded once): for each of the ``num_child`` nodes of
        highest (``high2low``) or lowest degree within the set (ties: smaller id first), the largest
        connected component of the set without it; their Shapley values are computed on first use."""
        if mcts_node.children is not None:
            return mcts_node.children
        keep = np.zeros(self._n, bool)
        keep[list(mcts_node.nodes)] = True
        inner = keep[self._src] & keep[self._dst]
        degree = np.bincount(self._src[inner], minlength=self._n) + np.bincount(self._dst[inner], minlength=self._n)
        members = np.asarray(mcts_node.nodes)
        key = -degree[members] if self.high2low else degree[members]
        chosen = members[np.lexsort((members, key))][:self.num_child]
        children: Dict[Tuple[int, ...], MCTSNode] = {}
        for v in chosen:
            rest = keep.copy()
            rest[v] = False
            nodes = self._largest_component(rest)
            child = self.mcts_node_maps.setdefault(nodes, MCTSNode(nodes))
            children.setdefault(nodes, child)
        mcts_node.children = list(children.values())
        for child in mcts_node.children:
            if child.immediate_reward is None:
                child.immediate_reward = self.shapley(child.nodes)
        return mcts_node.children

    def mcts_rollout(self, mcts_node: MCTSNode) -> float:
        """One rollout from ``mcts_node`` down to a leaf (at most ``node_min`` nodes), choosing
        the child with the best ``mean reward + coef * immediate reward * sqrt(visits of all
        children) / (1 + visits)``; returns the leaf's Shapley value, added to each node passed."""
        if len(mcts_node.nodes) <= self.node_min:
            return mcts_node.immediate_reward if mcts_node.immediate_reward is not None \
                else self._reward_of(mcts_node)
        children = self.get_mcts_children(mcts_node)
        root = math.sqrt(sum(c.num_visit for c in children))
        chosen = max(children, key=lambda c: c.total_reward / max(c.num_visit, 1)
                     + self.coef * c.immediate_reward * root / (1 + c.num_visit))
        reward = self.mcts_rollout(chosen)
        chosen.num_visit += 1
        chosen.total_reward += reward
        return reward

    def _reward_of(self, node: MCTSNode) -> float:
        node.immediate_reward = self.shapley(node.nodes)
        return node.immediate_reward

    def _search(self) -> Tuple[int, ...]:
        root_nodes = tuple(range(self._n))
        root = MCTSNode(root_nodes)
        self.mcts_node_maps[root_nodes] = root
        with eval_mode(self.model):
            for i in range(self.num_rollouts):
                if self.log:
                    print(f"Rollout {i}/{self.num_rollouts}, {len(self.mcts_node_maps)} subgraphs explored")
                self.mcts_rollout(root)
        leaves = [m for m in self.mcts_node_maps.values()
                  if len(m.nodes) <= self.node_min and m.immediate_reward is not None]
        best = max(leaves, key=lambda m: m.immediate_reward)   # the first explored among equals
        return best.nodes


def _generator() -> np.random.Generator:
    from nodeweave.sampling._seed import numpy_generator

    return numpy_generator()


class SubgraphX(_Search):
    r"""Finds the connected subgraph (at most ``node_min`` nodes) most important for the model's
    prediction of ``target_class`` on a graph (DGL's ``SubgraphX``).

    The search starts from the whole graph; a child of a node set is the largest connected
    component left after removing one of its ``num_child`` highest-degree (``high2low``; else
    lowest-degree) nodes. Each set is scored by its Shapley value: the mean over ``shapley_steps``
    random coalitions ``S`` of the other nodes within ``num_hops - 1`` hops of ``p(S + set) - p(S)``,
    ``p`` the model's probability of ``target_class`` with the features of the nodes outside the
    coalition set to zero (nodes farther away always keep theirs). ``num_rollouts`` rollouts of
    the Monte Carlo tree search (trade-off ``coef`` between a child's mean reward and its Shapley
    value) explore the sets; the explored set of at most ``node_min`` nodes with the highest Shapley
    value is returned.

    Parameters (DGL's): ``model`` (called as ``model(graph, feat, **kwargs)``, returns logits, one
    row per graph), ``num_hops`` (the model's depth), ``coef=10.0``, ``high2low=True``,
    ``num_child=12``, ``num_rollouts=20``, ``node_min=3``, ``shapley_steps=100``, ``log=False``.
    The random coalitions come from nodeweave's generator (:func:`nodeweave.seed`).

    Differences from DGL 2.1: of several largest components the one with the smallest node is
    taken, and degree ties are broken by node id (DGL leaves both to its libraries' orders).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import SubgraphX, GraphConv, AvgPooling
    >>> class Model(nc.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.conv, self.pool = GraphConv(2, 2), AvgPooling()
    ...     def forward(self, g, h):
    ...         return self.pool(g, self.conv(g, h))
    >>> g = nw.graph(([0, 1, 2, 3, 4, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0, 1, 2, 3, 4]))
    >>> explainer = SubgraphX(Model(), num_hops=1, num_rollouts=5, shapley_steps=10)
    >>> nodes = explainer.explain_graph(nw.add_self_loop(g), nc.randn(6, 2), target_class=0)
    >>> 1 <= len(nodes) <= 3
    True
    """

    def _masked(self, keep: np.ndarray) -> Any:
        mask = T.from_numpy(keep.astype(np.float64)).to(self.feat.device).to(self.feat.dtype)
        return self.feat * mask.unsqueeze(1)

    def explain_graph(self, graph: Any, feat: Any, target_class: Any, **kwargs: Any) -> Any:
        """The node ids (sorted, int64) of the most important subgraph found."""
        cls = type(self).__name__
        if len(graph.ntypes) != 1 or len(graph.canonical_etypes) != 1:
            raise nwerr.ValueError(f"{cls}: the graph must be homogeneous (HeteroSubgraphX takes the others), got "
                                   f"node types {graph.ntypes} and edge types {graph.canonical_etypes}")
        check_feat(cls, "feat", feat, graph.num_nodes())
        self._prepare(graph, feat, target_class, dict(kwargs))
        best = self._search()
        return T.from_numpy(np.asarray(best, np.int64)).to(feat.device)


class HeteroSubgraphX(_Search):
    r""":class:`SubgraphX` on a heterogeneous graph (DGL's ``HeteroSubgraphX``): the search runs on
    all nodes of all types (connectivity along edges of every type, either way) and ``feat`` is a
    dict by node type. Returns ``{node type: sorted ids}`` of the most important subgraph found
    (empty for the types it has no node of). Parameters and differences as :class:`SubgraphX`;
    besides, DGL's Shapley value here masks the wrong set (its "with the subgraph" prediction
    leaves the subgraph's features out), and a set without edges left after a removal becomes one
    node chosen at random in DGL, the smallest-id node here.

    >>> import nodeweave as nw, nodeweave.core as nc, nodeweave.function as fn
    >>> from nodeweave.nn import HeteroSubgraphX
    >>> class Model(nc.nn.Module):
    ...     def __init__(self, rels):
    ...         super().__init__()
    ...         self.lins = nc.nn.ModuleDict({r[1]: nc.nn.Linear(2, 2) for r in rels})
    ...     def forward(self, g, h):
    ...         with g.local_scope():
    ...             funcs = {}
    ...             for r in g.canonical_etypes:
    ...                 g.nodes[r[0]].data["h_" + r[1]] = self.lins[r[1]](h[r[0]])
    ...                 funcs[r] = (fn.copy_u("h_" + r[1], "m"), fn.mean("m", "h"))
    ...             g.multi_update_all(funcs, "sum")
    ...             return sum(g.nodes[t].data["h"].mean(0, keepdim=True) for t in g.ntypes)
    >>> g = nw.heterograph({("user", "plays", "game"): ([0, 1, 1, 2], [0, 0, 1, 1]),
    ...                     ("game", "played-by", "user"): ([0, 0, 1, 1], [0, 1, 1, 2])})
    >>> explainer = HeteroSubgraphX(Model(g.canonical_etypes), num_hops=1, num_rollouts=5, shapley_steps=10)
    >>> found = explainer.explain_graph(g, {"user": nc.randn(3, 2), "game": nc.randn(2, 2)}, target_class=1)
    >>> sorted(found), 1 <= sum(len(v) for v in found.values()) <= 3
    (['game', 'user'], True)
    """

    def _masked(self, keep: np.ndarray) -> Dict[str, Any]:
        out = {}
        for nt, f in self.feat.items():
            a = self._offsets[nt]
            part = keep[a:a + self.graph.num_nodes(nt)].astype(np.float64)
            out[nt] = f * T.from_numpy(part).to(f.device).to(f.dtype).unsqueeze(1)
        return out

    def explain_graph(self, graph: Any, feat: Dict[str, Any], target_class: Any, **kwargs: Any) -> Dict[str, Any]:
        """``{node type: sorted node ids}`` of the most important subgraph found."""
        check_hetero_feat(type(self).__name__, graph, feat)
        self._prepare(graph, {nt: feat[nt] for nt in graph.ntypes}, target_class, dict(kwargs))
        best = np.asarray(self._search(), np.int64)
        out = {}
        for nt in graph.ntypes:
            a = self._offsets[nt]
            ids = best[(best >= a) & (best < a + graph.num_nodes(nt))] - a
            out[nt] = T.from_numpy(ids).to(feat[nt].device)
        return out
