"""PGExplainer and HeteroPGExplainer on both backends: edge masks, masked predictions and training
losses against their formulas in torch float64 (values and the explanation network's gradients),
reverse-edge pairing by brute force, the concrete relaxation's noise statistics, node explanations
on batched in-neighbourhoods, the optimiser leaving the model alone, and bad input."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.function as fn
from layer_ref_helpers import BACKENDS, randomize, side, to_numpy

D_IN, D_EMB, C = 3, 4, 2
lsm = torch.nn.functional


# ---------------------------------------------------------------------------------- models
def homo_model(ns, graph_level=True):
    """A weighted sum of linear messages, tanh: the embeddings; logits per graph (mean) or node."""

    class Model(ns.tnn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.out = ns.tnn.Linear(D_IN, D_EMB), ns.tnn.Linear(D_EMB, C)

        def forward(self, g, h, embed=False, edge_weight=None):
            with g.local_scope():
                g.ndata["h"] = self.lin(h)
                w = ns.T.ones(g.num_edges(), 1, dtype=h.dtype) if edge_weight is None else edge_weight.reshape(-1, 1)
                g.edata["w"] = w
                g.update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "z"))
                z = ns.T.tanh(g.ndata["z"])
            if embed:
                return z
            return self.out(ns.nn.AvgPooling()(g, z)) if graph_level else self.out(z)

    return Model()


RELS = [("game", "played-by", "user"), ("user", "plays", "game"), ("user", "follows", "user")]


def hetero_model(ns, graph_level=True):
    class Model(ns.tnn.Module):
        def __init__(self):
            super().__init__()
            self.lins = ns.tnn.ModuleDict({ct[1]: ns.tnn.Linear(D_IN, D_EMB) for ct in RELS})
            self.out = ns.tnn.Linear(D_EMB, C)

        def forward(self, g, h, embed=False, edge_weight=None):
            with g.local_scope():
                funcs = {}
                for ct in g.canonical_etypes:
                    g.nodes[ct[0]].data[f"h_{ct[1]}"] = self.lins[ct[1]](h[ct[0]])
                    w = (ns.T.ones(g.num_edges(ct), 1, dtype=h[ct[0]].dtype) if edge_weight is None
                         else edge_weight[ct].reshape(-1, 1))
                    g.edges[ct].data["w"] = w
                    funcs[ct] = (fn.u_mul_e(f"h_{ct[1]}", "w", "m"), fn.sum("m", "z"))
                g.multi_update_all(funcs, "sum")
                z = {nt: ns.T.tanh(g.nodes[nt].data["z"]) for nt in g.ntypes}
            if embed:
                return z
            if graph_level:
                return self.out(sum(v.mean(0, keepdim=True) for v in z.values()))
            return {nt: self.out(v) for nt, v in z.items()}

    return Model()


# ------------------------------------------------------------------------------ references
def rev_brute(src, dst):
    out = []
    for e in range(len(src)):
        hit = [f for f in range(len(src)) if src[f] == dst[e] and dst[f] == src[e]]
        out.append(hit[0] if hit else e)
    return out


def th_params(module):
    return {k: torch.tensor(to_numpy(p), requires_grad=True) for k, p in module.named_parameters()}


def mlp(p, rows):
    h = torch.relu(rows @ p["elayers.0.weight"].T + p["elayers.0.bias"])
    return (h @ p["elayers.2.weight"].T + p["elayers.2.bias"]).reshape(-1)


def ref_embed(p, src, dst, x, w, n):
    h = x @ p["model.lin.weight"].T + p["model.lin.bias"]
    agg = torch.zeros(n, D_EMB, dtype=torch.float64).index_add(0, torch.tensor(dst), w[:, None] * h[src])
    return torch.tanh(agg)


def ref_homo(p, src, dst, x, n, graph_ids, centre=None, bias=None, tau=1.0):
    """(probs, mask, values) of the homogeneous explainer in eval mode, or with sample_bias=0.5
    (``bias``: the noise is then exactly 0 and the gate sigmoid(w / tau))."""
    z = ref_embed(p, src, dst, x, torch.ones(len(src), dtype=torch.float64), n).detach()
    rows = [z[src], z[dst]] + ([] if centre is None else [z[centre]])
    logits_e = mlp(p, torch.cat(rows, dim=1))
    values = torch.sigmoid(logits_e / tau)
    mask = (values + values[rev_brute(src, dst)]) / 2
    zm = ref_embed(p, src, dst, x, mask, n)
    if graph_ids is None:
        out = zm @ p["model.out.weight"].T + p["model.out.bias"]
    else:
        pooled = torch.stack([zm[graph_ids == b].mean(0) for b in range(graph_ids.max() + 1)])
        out = pooled @ p["model.out.weight"].T + p["model.out.bias"]
    return torch.softmax(out, -1), mask, values


def ref_loss(probs, pred, values, mask, budget, connect):
    pred_loss = (-torch.log(probs.gather(1, pred[:, None]) + 1e-6)).mean()
    size = budget * values.sum() if budget <= 0 else budget * torch.relu(values.sum() - budget)
    m = mask * 0.98 + 0.01
    ent = (-m * torch.log(m) - (1 - m) * torch.log(1 - m)).mean()
    return pred_loss + size + connect * ent


def compare_grads(ns, explainer, got, want, rng):
    """Gradients of one random projection of the outputs, for the explanation network's parameters."""
    cots = [rng.standard_normal(tuple(w.shape)) for w in want]
    sum((g * ns.T.tensor(c)).sum() for g, c in zip(got, cots)).backward()
    return cots


def check_elayer_grads(explainer, tp):
    for k, par in explainer.named_parameters():
        if k.startswith("elayers"):
            np.testing.assert_allclose(to_numpy(par.grad), tp[k].grad.numpy(), rtol=1e-8, atol=1e-11, err_msg=k)


# ------------------------------------------------------------------------------- graphs
def two_graphs():
    """Two graphs batched: reverse pairs, an edge without a reverse (4 -> 0 in the first) and a
    repeated edge (1 -> 2 twice in the second)."""
    g1 = nw.graph(([0, 1, 1, 2, 3, 2, 4], [1, 0, 2, 1, 2, 3, 0]), num_nodes=5)
    g2 = nw.graph(([0, 1, 1, 2, 2], [1, 0, 2, 1, 2]), num_nodes=3)
    return nw.batch([g1, g2]), np.array([0] * 5 + [1] * 3)


def numpy_edges(g, etype=None):
    return tuple(np.asarray(to_numpy(t)).astype(np.int64) for t in g.edges(etype=etype))


@pytest.mark.parametrize("backend", BACKENDS)
def test_explain_graph_matches_reference(backend):
    ns = side(backend)
    rng = np.random.default_rng(0)
    g, gid = two_graphs()
    x = rng.standard_normal((8, D_IN))
    ex = randomize(ns, ns.nn.PGExplainer(homo_model(ns), D_EMB), rng)
    probs, mask = ex.explain_graph(g, ns.T.tensor(x))
    assert ex.edge_mask is None                                        # cleared after an explanation
    src, dst = numpy_edges(g)
    tp = th_params(ex)
    want_p, want_m, _ = ref_homo(tp, src, dst, torch.tensor(x), 8, gid)
    np.testing.assert_allclose(to_numpy(probs), want_p.detach().numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(to_numpy(mask), want_m.detach().numpy(), rtol=1e-9, atol=1e-12)
    cots = compare_grads(ns, ex, [probs, mask], [want_p, want_m], rng)
    sum((w * torch.tensor(c)).sum() for w, c in zip([want_p, want_m], cots)).backward()
    check_elayer_grads(ex, tp)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("budget", [0.3, -0.2])
def test_train_step_loss_and_gradients(backend, budget):
    """sample_bias=0.5 makes the noise exactly 0: the gate is sigmoid(w / temperature)."""
    ns = side(backend)
    rng = np.random.default_rng(1)
    g, gid = two_graphs()
    x = rng.standard_normal((8, D_IN))
    ex = randomize(ns, ns.nn.PGExplainer(homo_model(ns), D_EMB, coff_budget=budget, coff_connect=0.05,
                                         sample_bias=0.5), rng)
    loss = ex.train_step(g, ns.T.tensor(x), 3.0)
    loss.backward()
    src, dst = numpy_edges(g)
    tp = th_params(ex)
    with torch.no_grad():
        z = ref_embed(tp, src, dst, torch.tensor(x), torch.ones(len(src), dtype=torch.float64), 8)
        logits = torch.stack([z[gid == b].mean(0) for b in range(2)]) @ tp["model.out.weight"].T + tp["model.out.bias"]
    probs, mask, values = ref_homo(tp, src, dst, torch.tensor(x), 8, gid, tau=3.0)
    want = ref_loss(probs, logits.argmax(-1), values, mask, budget, 0.05)
    assert abs(float(to_numpy(loss)) - want.item()) < 1e-10
    want.backward()
    check_elayer_grads(ex, tp)
    assert np.abs(to_numpy(ex.elayers[2].weight.grad)).sum() > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_concrete_noise_statistics(backend):
    ns = side(backend)
    ex = ns.nn.PGExplainer(homo_model(ns), D_EMB)
    w = ns.T.full((40000,), 0.7, dtype=ns.T.float64)
    gates = to_numpy(ex.concrete_sample(w, beta=2.0, training=True))
    p = 1 / (1 + np.exp(-0.7))                       # P(logistic noise > -w) = sigmoid(w)
    assert abs((gates > 0.5).mean() - p) < 4 * np.sqrt(p * (1 - p) / len(gates))
    np.testing.assert_allclose(to_numpy(ex.concrete_sample(w, training=False)), np.full(40000, p))
    ex.sample_bias = 0.2                              # noise within log(0.2 / 0.8) .. log(0.8 / 0.2)
    gates = to_numpy(ex.concrete_sample(w, beta=2.0, training=True))
    lo, hi = (1 / (1 + np.exp(-(0.7 + s * np.log(4)) / 2.0)) for s in (-1, 1))
    assert gates.min() >= lo - 1e-12 and gates.max() <= hi + 1e-12 and gates.max() - gates.min() > 0.5 * (hi - lo)


def khop_in(src, dst, node, k):
    keep = {node}
    for _ in range(k):
        keep |= {int(s) for s, d in zip(src, dst) if d in keep}
    return sorted(keep)


@pytest.mark.parametrize("backend", BACKENDS)
def test_explain_node_matches_reference(backend):
    ns = side(backend)
    rng = np.random.default_rng(2)
    g = nw.graph(([0, 1, 1, 2, 2, 3, 4, 5, 3], [1, 0, 2, 1, 3, 2, 3, 4, 5]), num_nodes=6)
    x = rng.standard_normal((6, D_IN))
    ex = randomize(ns, ns.nn.PGExplainer(homo_model(ns, graph_level=False), D_EMB, num_hops=1,
                                         explain_graph=False), rng)
    gsrc, gdst = numpy_edges(g)
    results = [ex.explain_node(nodes, g, ns.T.tensor(x)) for nodes in ([3, 0], ns.T.tensor([3, 0]))]
    probs, mask, bg, inverse = results[0]
    kept = [khop_in(gsrc, gdst, 3, 1), khop_in(gsrc, gdst, 0, 1)]
    assert to_numpy(bg.ndata[nw.NID]).tolist() == kept[0] + kept[1]
    assert to_numpy(bg.ndata[nw.NID])[to_numpy(inverse)].tolist() == [3, 0]
    src, dst = numpy_edges(bg)
    n = bg.num_nodes()
    first = int(to_numpy(bg.batch_num_edges())[0])                  # edges of the first neighbourhood
    centre = np.where(np.arange(len(src)) < first, to_numpy(inverse)[0], to_numpy(inverse)[1])
    xb = torch.tensor(x[to_numpy(bg.ndata[nw.NID])])
    tp = th_params(ex)
    want_p, want_m, _ = ref_homo(tp, src, dst, xb, n, None, centre=centre)
    for p_, m_, _, inv in results:
        np.testing.assert_allclose(to_numpy(p_), want_p.detach().numpy(), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(to_numpy(m_), want_m.detach().numpy(), rtol=1e-9, atol=1e-12)
        assert to_numpy(inv).tolist() == to_numpy(inverse).tolist()
    one = ex.explain_node(ns.T.tensor(3), g, ns.T.tensor(x))
    np.testing.assert_allclose(to_numpy(one[1]), want_m.detach().numpy()[:one[2].num_edges()], rtol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_training_moves_the_explainer_only(backend):
    ns = side(backend)
    rng = np.random.default_rng(3)
    g = nw.graph(([0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]))
    x = ns.T.tensor(rng.standard_normal((4, D_IN)))
    ex = randomize(ns, ns.nn.PGExplainer(homo_model(ns, graph_level=False), D_EMB, num_hops=1,
                                         explain_graph=False), rng)
    assert {id(p) for p in ex.parameters()} == {id(p) for p in ex.elayers.parameters()}
    model_before = {k: to_numpy(v).copy() for k, v in ex.model.named_parameters()}
    elayer_before = to_numpy(ex.elayers[0].weight).copy()
    opt = ns.T.optim.Adam(list(ex.parameters()), lr=0.05)
    for nodes in (0, [1, 2], ns.T.tensor(3)):
        loss = ex.train_step_node(nodes, g, x, 5.0)
        assert loss.dim() == 0 and np.isfinite(float(to_numpy(loss)))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert not np.allclose(to_numpy(ex.elayers[0].weight), elayer_before)
    for k, v in ex.model.named_parameters():
        np.testing.assert_array_equal(to_numpy(v), model_before[k])


# ---------------------------------------------------------------------------- heterographs
def hetero_graph():
    return nw.heterograph({("user", "plays", "game"): ([0, 1, 2, 2], [0, 0, 1, 0]),
                           ("game", "played-by", "user"): ([0, 0, 1], [0, 1, 2]),
                           ("user", "follows", "user"): ([0, 1, 2], [1, 0, 0])},
                          num_nodes_dict={"user": 3, "game": 2})


def ref_hetero(p, g, x, centre=None, graph_level=True):
    """The hetero explainer in eval mode on ``g``'s to_homogeneous numbering."""
    off = {"game": 0, "user": g.num_nodes("game")}
    n = g.num_nodes()
    src, dst, ct_of = [], [], []
    for ct in g.canonical_etypes:
        s, d = numpy_edges(g, ct)
        src += (s + off[ct[0]]).tolist()
        dst += (d + off[ct[2]]).tolist()
        ct_of += [ct] * len(s)
    src, dst = np.array(src), np.array(dst)

    def embed(w):
        z = torch.zeros(n, D_EMB, dtype=torch.float64)
        for e, ct in enumerate(ct_of):
            h = x[ct[0]][src[e] - off[ct[0]]] @ p[f"model.lins.{ct[1]}.weight"].T + p[f"model.lins.{ct[1]}.bias"]
            z = z.index_add(0, torch.tensor([dst[e]]), (w[e] * h)[None])
        return torch.tanh(z)

    z = embed(torch.ones(len(src), dtype=torch.float64)).detach()
    rows = [z[src], z[dst]] + ([] if centre is None else [z[centre].expand(len(src), -1)])
    v = torch.sigmoid(mlp(p, torch.cat(rows, 1)))
    mask = (v + v[rev_brute(src, dst)]) / 2
    zm = embed(mask)
    masks = {ct: mask[[e for e in range(len(src)) if ct_of[e] == ct]] for ct in g.canonical_etypes}
    if graph_level:
        pooled = zm[:off["user"]].mean(0) + zm[off["user"]:].mean(0)
        return torch.softmax(pooled @ p["model.out.weight"].T + p["model.out.bias"], -1)[None], masks
    logits = zm @ p["model.out.weight"].T + p["model.out.bias"]
    return {"game": torch.softmax(logits[:off["user"]], -1), "user": torch.softmax(logits[off["user"]:], -1)}, masks


@pytest.mark.parametrize("backend", BACKENDS)
def test_hetero_explain_graph_matches_reference(backend):
    ns = side(backend)
    rng = np.random.default_rng(4)
    g = hetero_graph()
    x = {"user": rng.standard_normal((3, D_IN)), "game": rng.standard_normal((2, D_IN))}
    ex = randomize(ns, ns.nn.HeteroPGExplainer(hetero_model(ns), D_EMB), rng)
    probs, masks = ex.explain_graph(g, {k: ns.T.tensor(v) for k, v in x.items()})
    tp = th_params(ex)
    want_p, want_m = ref_hetero(tp, g, {k: torch.tensor(v) for k, v in x.items()})
    np.testing.assert_allclose(to_numpy(probs), want_p.detach().numpy(), rtol=1e-9, atol=1e-12)
    assert sorted(masks) == sorted(g.canonical_etypes)
    for ct in g.canonical_etypes:
        np.testing.assert_allclose(to_numpy(masks[ct]), want_m[ct].detach().numpy(), rtol=1e-9, atol=1e-12)
    outs, wants = [probs] + [masks[ct] for ct in g.canonical_etypes], [want_p] + [want_m[ct] for ct in g.canonical_etypes]
    cots = compare_grads(ns, ex, outs, wants, rng)
    sum((w * torch.tensor(c)).sum() for w, c in zip(wants, cots)).backward()
    check_elayer_grads(ex, tp)
    loss = ex.train_step(g, {k: ns.T.tensor(v) for k, v in x.items()}, 1.0)
    assert loss.dim() == 0 and np.isfinite(float(to_numpy(loss)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_hetero_explain_node(backend):
    ns = side(backend)
    rng = np.random.default_rng(5)
    g = hetero_graph()
    x = {"user": ns.T.tensor(rng.standard_normal((3, D_IN))), "game": ns.T.tensor(rng.standard_normal((2, D_IN)))}
    ex = randomize(ns, ns.nn.HeteroPGExplainer(hetero_model(ns, graph_level=False), D_EMB, num_hops=1,
                                               explain_graph=False), rng)
    probs, masks, bg, inverse = ex.explain_node({"user": [2], "game": ns.T.tensor([1])}, g, x)
    ids = bg.ndata[nw.NID]
    assert to_numpy(ids["user"])[to_numpy(inverse["user"])].tolist() == [2]
    assert to_numpy(ids["game"])[to_numpy(inverse["game"])].tolist() == [1]
    assert {ct: tuple(m.shape) for ct, m in masks.items()} == {ct: (bg.num_edges(ct),) for ct in bg.canonical_etypes}
    assert {nt: tuple(p.shape) for nt, p in probs.items()} == {nt: (bg.num_nodes(nt), C) for nt in bg.ntypes}
    # one neighbourhood alone against the reference: node user 2, its 1-hop in-neighbourhood
    p1, m1, sg, inv1 = ex.explain_node({"user": 2}, g, x)
    sids = sg.ndata[nw.NID]
    xs = {nt: torch.tensor(to_numpy(x[nt])[to_numpy(sids[nt])]) for nt in sg.ntypes}
    want_p, want_m = ref_hetero(th_params(ex), sg, xs, centre=sg.num_nodes("game") + int(to_numpy(inv1["user"])[0]),
                                graph_level=False)
    for nt in sg.ntypes:
        np.testing.assert_allclose(to_numpy(p1[nt]), want_p[nt].detach().numpy(), rtol=1e-9, atol=1e-12)
    for ct in sg.canonical_etypes:
        np.testing.assert_allclose(to_numpy(m1[ct]), want_m[ct].detach().numpy(), rtol=1e-9, atol=1e-12)
    loss = ex.train_step_node({"user": [0, 2]}, g, x, 2.0)
    loss.backward()
    assert loss.dim() == 0 and ex.elayers[0].weight.grad is not None


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_input(backend):
    ns = side(backend)
    g = nw.graph(([0, 1], [1, 0]))
    x = ns.T.zeros(2, D_IN)
    graph_ex = ns.nn.PGExplainer(homo_model(ns), D_EMB)
    node_ex = ns.nn.PGExplainer(homo_model(ns, graph_level=False), D_EMB, explain_graph=False)
    with pytest.raises(ValueError, match="explain_graph=True"):
        node_ex.explain_graph(g, x)
    with pytest.raises(ValueError, match="need num_hops"):
        node_ex.explain_node(0, g, x)
    node_ex.num_hops = 1
    with pytest.raises(ValueError, match="must not repeat"):
        node_ex.explain_node([1, 1], g, x)
    with pytest.raises(ValueError, match="nodes of the graph"):
        node_ex.explain_node(5, g, x)
    with pytest.raises(ValueError, match="num_features=3"):
        ns.nn.PGExplainer(homo_model(ns), 3).explain_graph(g, x)
    with pytest.raises(ValueError, match="homogeneous"):
        graph_ex.explain_graph(hetero_graph(), x)
    with pytest.raises(ValueError, match="temperature must be a positive"):
        graph_ex.train_step(g, x, 0.0)
    with pytest.raises(RuntimeError, match="no masks yet"):
        ns.nn.PGExplainer(homo_model(ns), D_EMB).loss(ns.T.ones(1, 2), ns.T.tensor([0]))
    with pytest.raises(ValueError, match="num_features must be a positive int"):
        ns.nn.PGExplainer(homo_model(ns), 0)
    with pytest.raises(ValueError, match="sample_bias"):
        ns.nn.PGExplainer(homo_model(ns), D_EMB, sample_bias=0.7)
    hx = ns.nn.HeteroPGExplainer(hetero_model(ns), D_EMB)
    with pytest.raises(TypeError, match="feat must be a dict"):
        hx.explain_graph(hetero_graph(), x)
    hn = ns.nn.HeteroPGExplainer(hetero_model(ns, graph_level=False), D_EMB, num_hops=1, explain_graph=False)
    with pytest.raises(TypeError, match="nodes must be a dict"):
        hn.explain_node([0], hetero_graph(), {"user": ns.T.zeros(3, D_IN), "game": ns.T.zeros(2, D_IN)})
