"""SubgraphX and HeteroSubgraphX on both backends: Shapley values against exact enumeration over
the coalitions (deterministic with one hop, statistical with two), the search tree's children
against a brute-force rule with networkx, the search finding the one subgraph that carries the
prediction, the best explored leaf returned, and bad input."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest

import nodeweave as nw
from layer_ref_helpers import BACKENDS, side, to_numpy


def score_model(ns, weights):
    """Logits ``[sum_v x_v . w, 0]`` over all nodes (of all types, ``weights`` by type): the
    target-0 probability of a set of kept nodes is ``sigmoid(sum of their scores)``."""

    class Model(ns.tnn.Module):
        def forward(self, g, h):
            feats = h if isinstance(h, dict) else {"_N": h}
            s = sum((f * ns.T.tensor(weights[nt], dtype=f.dtype)).sum() for nt, f in feats.items())
            return ns.T.cat([s.reshape(1, 1), ns.T.zeros(1, 1, dtype=s.dtype)], dim=1)

    return Model()


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def both_ways(pairs, n):
    src = [a for a, b in pairs] + [b for a, b in pairs]
    dst = [b for a, b in pairs] + [a for a, b in pairs]
    return nw.graph((src, dst), num_nodes=n)


PATH = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_shapley_with_one_hop_is_exact(backend):
    """num_hops=1: the set's region is the set itself, every other node always takes part."""
    ns = side(backend)
    g = both_ways(PATH, 6)
    score = np.array([0.5, -1.0, 2.0, 0.3, -0.7, 1.1])
    ex = ns.nn.SubgraphX(score_model(ns, {"_N": np.ones(1)}), num_hops=1, num_rollouts=1, shapley_steps=3)
    ex.explain_graph(g, ns.T.tensor(score[:, None]), target_class=0)
    for nodes in ([2, 3], [0], [1, 2, 3, 4]):
        rest = sum(score[v] for v in range(6) if v not in nodes)
        want = sigmoid(score.sum()) - sigmoid(rest)
        assert abs(ex.shapley(nodes) - want) < 1e-12


@pytest.mark.parametrize("backend", BACKENDS)
def test_shapley_with_two_hops_against_enumeration(backend):
    """num_hops=2: the nodes next to the set ({1, 4} for {2, 3}) are the players; a coalition is a
    uniform prefix length (0..2) and a uniform subset of that size."""
    ns = side(backend)
    nw.seed(0)
    g = both_ways(PATH, 6)
    score = np.array([0.5, -1.0, 2.0, 0.3, -0.7, 1.1])
    ex = ns.nn.SubgraphX(score_model(ns, {"_N": np.ones(1)}), num_hops=2, num_rollouts=1, shapley_steps=4000)
    ex.explain_graph(g, ns.T.tensor(score[:, None]), target_class=0)
    players, outside, mine = [1, 4], [0, 5], [2, 3]

    def p(kept):
        return sigmoid(sum(score[v] for v in kept))

    cases = []                                              # (probability, marginal contribution)
    for k in range(len(players) + 1):
        subsets = list(itertools.combinations(players, k))
        for s in subsets:
            base = outside + list(s)
            cases.append((1 / (len(players) + 1) / len(subsets), p(base + mine) - p(base)))
    mean = sum(w * d for w, d in cases)
    var = sum(w * (d - mean) ** 2 for w, d in cases)
    got = ex.shapley(mine)
    assert abs(got - mean) < 5 * math.sqrt(var / 4000) + 1e-12


def reference_children(g, nodes, num_child, high2low):
    """The rule, by brute force: degrees within the set, the num_child highest (lowest) first with
    ties by id, the largest weakly connected component after removing each (ties: smallest node)."""
    src, dst = (to_numpy(t).tolist() for t in g.edges())
    inner = [(a, b) for a, b in zip(src, dst) if a in nodes and b in nodes]
    deg = {v: sum((a == v) + (b == v) for a, b in inner) for v in nodes}
    order = sorted(nodes, key=lambda v: (-deg[v] if high2low else deg[v], v))[:num_child]
    out = []
    for v in order:
        h = nx.DiGraph()
        h.add_nodes_from(u for u in nodes if u != v)
        h.add_edges_from((a, b) for a, b in inner if v not in (a, b))
        comps = sorted(nx.weakly_connected_components(h), key=lambda c: (-len(c), min(c)))
        child = tuple(sorted(comps[0]))
        if child not in out:
            out.append(child)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("high2low,num_child", [(True, 12), (False, 12), (True, 2), (False, 3)])
def test_children_follow_the_rule(backend, high2low, num_child):
    ns = side(backend)
    # a triangle 0-1-2, a path 2-3-4-5-6, a leaf 7 on 4, a repeated edge 5 -> 6 and a self-loop on 3
    g = both_ways([(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (4, 5), (5, 6), (4, 7), (5, 6)], 8)
    g = nw.add_edges(g, [3], [3])
    ex = ns.nn.SubgraphX(score_model(ns, {"_N": np.ones(1)}), num_hops=1, num_child=num_child, high2low=high2low,
                         num_rollouts=1, shapley_steps=2)
    ex.explain_graph(g, ns.T.ones(8, 1), target_class=0)
    for nodes in [tuple(range(8)), (2, 3, 4, 5, 6, 7), (0, 1, 2, 3)]:
        node = ex.mcts_node_maps.get(nodes) or nw.nn.native.explain.subgraphx.MCTSNode(nodes)
        node.children = None
        got = [c.nodes for c in ex.get_mcts_children(node)]
        assert got == reference_children(g, set(nodes), num_child, high2low)
        assert all(c.immediate_reward is not None for c in node.children)


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_finds_the_subgraph_that_carries_the_prediction(backend):
    ns = side(backend)
    nw.seed(1)
    g = both_ways([(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (4, 5), (5, 6)], 7)
    x = np.array([[1.0], [1.0], [1.0], [0.0], [0.0], [0.0], [0.0]])    # only the triangle scores
    ex = ns.nn.SubgraphX(score_model(ns, {"_N": np.array([3.0])}), num_hops=1, high2low=False, num_rollouts=10,
                         shapley_steps=5)
    found = ex.explain_graph(g, ns.T.tensor(x), target_class=0)
    assert isinstance(found, ns.T.Tensor) and to_numpy(found).tolist() == [0, 1, 2]
    leaves = [m for m in ex.mcts_node_maps.values() if len(m.nodes) <= 3]
    assert max(m.immediate_reward for m in leaves) == ex.mcts_node_maps[(0, 1, 2)].immediate_reward
    assert abs(ex.mcts_node_maps[(0, 1, 2)].immediate_reward - (sigmoid(9.0) - 0.5)) < 1e-12
    found_1 = ex.explain_graph(g, ns.T.tensor(x), target_class=1)          # the class the triangle argues against
    assert to_numpy(found_1).tolist() != [0, 1, 2]


def hetero():
    return nw.heterograph({("user", "plays", "game"): ([0, 1, 2, 3], [0, 0, 1, 2]),
                           ("game", "played-by", "user"): ([0, 0, 1, 2], [0, 1, 2, 3]),
                           ("user", "follows", "user"): ([0, 1], [1, 0])},
                          num_nodes_dict={"user": 4, "game": 3})


@pytest.mark.parametrize("backend", BACKENDS)
def test_hetero_search_and_shapley(backend):
    ns = side(backend)
    nw.seed(2)
    g = hetero()
    score = {"game": np.array([2.0, 0.0, 0.0]), "user": np.array([1.5, 1.5, 0.0, 0.0])}
    feat = {nt: ns.T.tensor(v[:, None]) for nt, v in score.items()}
    ex = ns.nn.HeteroSubgraphX(score_model(ns, {"game": np.ones(1), "user": np.ones(1)}), num_hops=1,
                               high2low=False, num_rollouts=10, shapley_steps=3)
    found = ex.explain_graph(g, feat, target_class=0)
    # flat numbering as to_homogeneous: game 0..2, then user 3..6; the scoring nodes: game 0, users 0 and 1
    assert {nt: to_numpy(v).tolist() for nt, v in found.items()} == {"game": [0], "user": [0, 1]}
    total = sum(v.sum() for v in score.values())
    flat = np.concatenate([score["game"], score["user"]])
    for nodes in ([0, 3, 4], [1, 5], [6]):
        want = sigmoid(total) - sigmoid(total - flat[nodes].sum())
        assert abs(ex.shapley(nodes) - want) < 1e-12
    hom = nw.to_homogeneous(g)
    ntype = to_numpy(hom.ndata[nw.NTYPE]).tolist()
    assert ntype == [g.ntypes.index("game")] * 3 + [g.ntypes.index("user")] * 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_input(backend):
    ns = side(backend)
    model = score_model(ns, {"_N": np.ones(1), "game": np.ones(1), "user": np.ones(1)})
    ex = ns.nn.SubgraphX(model, num_hops=1, num_rollouts=1, shapley_steps=1)
    with pytest.raises(ValueError, match="more than node_min=3 nodes"):
        ex.explain_graph(nw.graph(([0], [1]), num_nodes=3), ns.T.ones(3, 1), target_class=0)
    g = both_ways(PATH, 6)
    with pytest.raises(ValueError, match="target_class 2 is not one of the model's 2 classes"):
        ex.explain_graph(g, ns.T.ones(6, 1), target_class=2)
    with pytest.raises(ValueError, match="target_class must be a class index"):
        ex.explain_graph(g, ns.T.ones(6, 1), target_class=-1)
    with pytest.raises(ValueError, match="homogeneous"):
        ex.explain_graph(hetero(), ns.T.ones(6, 1), target_class=0)
    with pytest.raises(ValueError, match="rows but the graph has 6"):
        ex.explain_graph(g, ns.T.ones(5, 1), target_class=0)
    with pytest.raises(ValueError, match="num_child must be an int >= 1"):
        ns.nn.SubgraphX(model, num_hops=1, num_child=0)
    hx = ns.nn.HeteroSubgraphX(model, num_hops=1)
    with pytest.raises(TypeError, match="feat must be a dict"):
        hx.explain_graph(hetero(), ns.T.ones(7, 1), target_class=0)
    with pytest.raises(ValueError, match="no features for the node types"):
        hx.explain_graph(hetero(), {"user": ns.T.ones(4, 1)}, target_class=0)
