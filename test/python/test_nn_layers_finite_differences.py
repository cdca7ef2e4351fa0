"""The gradients of GMMConv, DotGatConv, AGNNConv, EGATConv, EdgeGATConv, GatedGCNConv, CFConv,
PNAConv, DGNConv, JumpingKnowledge and LabelPropagation, on both backends, against central finite
differences in float64 (every floating input and every parameter, a few random entries each).

The graphs have no repeated edges and the features are random, so max/min aggregations have no
ties (a finite difference across a tie would straddle a kink)."""

import numpy as np
import pytest

import nodeweave as nw

from layer_ref_helpers import BACKENDS, fd_check


def simple_graph(rng, n, degrees, loops=False):
    """Node ``v`` gets ``degrees[v]`` in-edges from distinct sources (a self-loop first when
    ``loops``)."""
    src, dst = [], []
    for v, d in enumerate(degrees):
        others = [u for u in rng.permutation(n) if u != v]
        picks = ([v] if loops else []) + others[:d - int(loops)]
        src += picks
        dst += [v] * len(picks)
    return nw.graph((np.array(src, np.int64), np.array(dst, np.int64)), num_nodes=n)


def bipartite(rng, ns=5, nd=3):
    src = np.concatenate([rng.choice(ns, 2, replace=False) for _ in range(nd)]).astype(np.int64)
    dst = np.repeat(np.arange(nd), 2).astype(np.int64)
    return nw.heterograph({("_U", "_E", "_V"): (src, dst)}, num_nodes_dict={"_U": ns, "_V": nd})


def homo(rng):
    return simple_graph(rng, 6, [1, 2, 3, 2, 4, 3], loops=True)


def pna_graph(rng):
    return simple_graph(rng, 7, [0, 1, 3, 4, 3, 5, 3])


# name: (graph(rng), build(ns), inputs(rng, g), run(module, g, t), train)
CASES = {
    "GMMConv-sum-residual": (homo, lambda ns: ns.nn.GMMConv(3, 3, 2, 2, residual=True),
                             lambda rng, g: {"x": rng.standard_normal((6, 3)),
                                             "u": rng.standard_normal((g.num_edges(), 2))},
                             lambda m, g, t: m(g, t["x"], t["u"]), False),
    "GMMConv-max-bipartite": (bipartite, lambda ns: ns.nn.GMMConv((3, 2), 2, 1, 3, "max", residual=True),
                              lambda rng, g: {"x": rng.standard_normal((5, 3)), "xd": rng.standard_normal((3, 2)),
                                              "u": rng.standard_normal((g.num_edges(), 1))},
                              lambda m, g, t: m(g, (t["x"], t["xd"]), t["u"]), False),
    "DotGatConv": (homo, lambda ns: ns.nn.DotGatConv(3, 2, 2),
                   lambda rng, g: {"x": rng.standard_normal((6, 3))},
                   lambda m, g, t: m(g, t["x"], get_attention=True), False),
    "DotGatConv-bipartite": (bipartite, lambda ns: ns.nn.DotGatConv((3, 2), 2, 2),
                             lambda rng, g: {"x": rng.standard_normal((5, 3)), "xd": rng.standard_normal((3, 2))},
                             lambda m, g, t: m(g, (t["x"], t["xd"])), False),
    "AGNNConv": (homo, lambda ns: ns.nn.AGNNConv(0.8),
                 lambda rng, g: {"x": rng.standard_normal((6, 3))}, lambda m, g, t: m(g, t["x"]), False),
    "EGATConv-edge-weight": (homo, lambda ns: ns.nn.EGATConv(3, 2, 2, 3, 2),
                             lambda rng, g: {"x": rng.standard_normal((6, 3)),
                                             "e": rng.standard_normal((g.num_edges(), 2)),
                                             "w": rng.uniform(0.3, 2.0, g.num_edges())},
                             lambda m, g, t: m(g, t["x"], t["e"], edge_weight=t["w"], get_attention=True), False),
    "EdgeGATConv-tanh": (homo, lambda ns: ns.nn.EdgeGATConv(3, 2, 2, 2, activation=ns.T.tanh),
                         lambda rng, g: {"x": rng.standard_normal((6, 3)),
                                         "e": rng.standard_normal((g.num_edges(), 2))},
                         lambda m, g, t: m(g, t["x"], t["e"], get_attention=True), False),
    "GatedGCNConv-train": (homo, lambda ns: ns.nn.GatedGCNConv(3, 3, 3),
                           lambda rng, g: {"x": rng.standard_normal((6, 3)),
                                           "e": rng.standard_normal((g.num_edges(), 3))},
                           lambda m, g, t: m(g, t["x"], t["e"]), True),
    "GatedGCNConv-eval": (homo, lambda ns: ns.nn.GatedGCNConv(3, 2, 4, activation=ns.T.tanh),
                          lambda rng, g: {"x": rng.standard_normal((6, 3)),
                                          "e": rng.standard_normal((g.num_edges(), 2))},
                          lambda m, g, t: m(g, t["x"], t["e"]), False),
    "CFConv": (homo, lambda ns: ns.nn.CFConv(3, 2, 4, 2),
               lambda rng, g: {"x": rng.standard_normal((6, 3)), "e": rng.standard_normal((g.num_edges(), 2))},
               lambda m, g, t: m(g, t["x"], t["e"]), False),
    "PNAConv-all": (pna_graph,
                    lambda ns: ns.nn.PNAConv(4, 4, ["mean", "sum", "max", "min", "std", "var", "moment3", "moment4",
                                                    "moment5"], ["identity", "amplification", "attenuation"], 1.2,
                                             num_towers=2, edge_feat_size=2),
                    lambda rng, g: {"x": rng.standard_normal((7, 4)), "e": rng.standard_normal((g.num_edges(), 2))},
                    lambda m, g, t: m(g, t["x"], t["e"]), True),
    "DGNConv": (pna_graph,
                lambda ns: ns.nn.DGNConv(3, 2, ["dir1-av", "dir1-dx", "dir2-dx", "max"], ["identity", "attenuation"],
                                         0.8),
                lambda rng, g: {"x": rng.standard_normal((7, 3)), "eig": rng.standard_normal((7, 2))},
                lambda m, g, t: m(g, t["x"], eig_vec=t["eig"]), False),
    "JumpingKnowledge-lstm": (lambda rng: None, lambda ns: ns.nn.JumpingKnowledge("lstm", 3, 3),
                              lambda rng, g: {f"h{i}": rng.standard_normal((4, 3)) for i in range(3)},
                              lambda m, g, t: m([t["h0"], t["h1"], t["h2"]]), False),
    "JumpingKnowledge-max": (lambda rng: None, lambda ns: ns.nn.JumpingKnowledge("max"),
                             lambda rng, g: {f"h{i}": rng.standard_normal((4, 3)) for i in range(2)},
                             lambda m, g, t: m([t["h0"], t["h1"]]), False),
    "LabelPropagation-float-labels": (homo, lambda ns: ns.nn.LabelPropagation(3, 0.7, clamp=False, normalize=True),
                                      lambda rng, g: {"y": rng.uniform(0.1, 1.0, (6, 3)),
                                                      "mask": np.array([1, 0, 1, 1, 0, 1], bool)},
                                      lambda m, g, t: m(g, t["y"], mask=t["mask"]), False),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_finite_differences(backend, name):
    graph, build, inputs, run, train = CASES[name]
    rng = np.random.default_rng(sorted(CASES).index(name))
    g = graph(rng)
    fd_check(backend, build, lambda m, t: run(m, g, t), inputs(rng, g), rng, train=train)
