"""WeightAndSum (gated per-graph sum) against its formula in torch float64 with finite
differences, and the graph-passing Sequential (one graph for all modules, one graph per module,
tuples of features between modules) against dense adjacency references, on both backends; then
bad input."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.function as fn

from layer_ref_helpers import BACKENDS, batched, check_layer, fd_check, lin, side, tensor, to_numpy


# ---------------------------------------------------------------------------- WeightAndSum
def ref_weight_and_sum(p, x, sizes):
    gate = torch.sigmoid(lin(p, "atom_weighting.0", x))
    return torch.stack([part.sum(0) for part in torch.split(gate * x, list(sizes))])


@pytest.mark.parametrize("backend", BACKENDS)
def test_weight_and_sum(backend):
    rng = np.random.default_rng(0)
    g, E = batched(rng, sizes=(4, 1, 5), edges=(5, 0, 8))
    check_layer(backend, lambda ns: ns.nn.WeightAndSum(3), lambda m, t: m(g, t["x"]),
                lambda p, b, t: ref_weight_and_sum(p, t["x"], E.sizes), {"x": rng.standard_normal((10, 3))}, rng)
    fd_check(backend, lambda ns: ns.nn.WeightAndSum(3), lambda m, t: m(g, t["x"]), {"x": rng.standard_normal((10, 3))},
             rng)


@pytest.mark.parametrize("backend", BACKENDS)
def test_weight_and_sum_bad_inputs(backend):
    ns = side(backend)
    g = nw.graph(([0], [1]))
    with pytest.raises(ValueError, match="in_feats must be a positive int"):
        ns.nn.WeightAndSum(0)
    with pytest.raises(ValueError, match=r"feats must have one row per node \(2\)"):
        ns.nn.WeightAndSum(3)(g, ns.T.ones(3, 3))
    with pytest.raises(ValueError, match=r"feats must have shape \(num_nodes, 3\)"):
        ns.nn.WeightAndSum(3)(g, ns.T.ones(2, 4))


# ---------------------------------------------------------------------------- Sequential
def propagate_layers(ns):
    """Two modules of the backend ``ns``: ``Spread`` (node features summed over in-edges, added to
    themselves; edge features plus both ends) and ``Halve`` (pairs of nodes summed into one)."""

    class Spread(ns.tnn.Module):
        def forward(self, graph, h, e):
            with graph.local_scope():
                graph.ndata["h"] = h
                graph.update_all(fn.copy_u("h", "m"), fn.sum("m", "s"))
                graph.apply_edges(fn.u_add_v("h", "h", "uv"))
                return h + graph.ndata["s"], e + graph.edata["uv"]

    class Halve(ns.tnn.Module):
        def forward(self, graph, h):
            with graph.local_scope():
                graph.ndata["h"] = h
                graph.update_all(fn.copy_u("h", "m"), fn.sum("m", "s"))
                out = h + graph.ndata["s"]
                return out.reshape(graph.num_nodes() // 2, 2, out.shape[1]).sum(1)

    return Spread, Halve


def adjacency(g):
    src, dst = (to_numpy(t) for t in g.edges())
    a = np.zeros((g.num_nodes(), g.num_nodes()))
    np.add.at(a, (dst, src), 1.0)
    return a, src, dst


@pytest.mark.parametrize("backend", BACKENDS)
def test_sequential_one_graph_with_tuples(backend):
    ns = side(backend)
    rng = np.random.default_rng(1)
    Spread, _ = propagate_layers(ns)
    g = nw.graph(([0, 1, 2, 2, 3], [1, 2, 0, 3, 3]), num_nodes=4)
    h0, e0 = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    net = ns.nn.Sequential(Spread(), Spread(), Spread())
    h, e = net(g, tensor(ns, h0), tensor(ns, e0))
    a, src, dst = adjacency(g)
    for _ in range(3):                                   # the same three steps, densely
        e0 = e0 + h0[src] + h0[dst]
        h0 = h0 + a @ h0
    np.testing.assert_allclose(to_numpy(h), h0, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(e), e0, rtol=1e-12)
    assert isinstance(net, ns.tnn.Sequential) and len(net) == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_sequential_one_graph_per_module(backend):
    ns = side(backend)
    rng = np.random.default_rng(2)
    _, Halve = propagate_layers(ns)
    graphs = [nw.rand_graph(n, 3 * n) for n in (8, 4, 2)]
    x = rng.standard_normal((8, 2))
    out = ns.nn.Sequential(Halve(), Halve(), Halve())(graphs, tensor(ns, x))
    for g in graphs:
        a, _, _ = adjacency(g)
        x = (x + a @ x).reshape(-1, 2, 2).sum(1)
    np.testing.assert_allclose(to_numpy(out), x, rtol=1e-12)
    assert tuple(out.shape) == (1, 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sequential_of_graph_layers_trains(backend):
    """Parameters of the graph layers inside are the Sequential's own (one optimizer step moves them)."""
    ns = side(backend)
    net = ns.nn.Sequential(ns.nn.GraphConv(3, 4, activation=ns.F.tanh), ns.nn.GraphConv(4, 2))
    g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0])))
    assert len(list(net.parameters())) == 4
    before = to_numpy(net[1].weight).copy()
    opt = (torch.optim.SGD if backend == "pytorch" else ns.T.optim.SGD)(net.parameters(), lr=0.1)
    net(g, ns.T.randn(3, 3)).pow(2).sum().backward()
    opt.step()
    assert not np.allclose(to_numpy(net[1].weight), before)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sequential_bad_inputs(backend):
    ns = side(backend)
    _, Halve = propagate_layers(ns)
    net = ns.nn.Sequential(Halve(), Halve())
    with pytest.raises(ValueError, match="list of 1 graphs for 2 modules"):
        net([nw.graph(([0], [1]))], ns.T.ones(2, 2))
    with pytest.raises(TypeError, match="graph must be a graph or a list of graphs"):
        net(ns.T.ones(2, 2), ns.T.ones(2, 2))
