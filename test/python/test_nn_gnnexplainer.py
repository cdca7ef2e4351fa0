"""GNNExplainer on both backends against the explanation written out in torch float64: the same
initial masks, the model as dense incidence products, DGL's loss (prediction's negative
log-likelihood plus the masks' size and entropy terms) and torch's Adam, step for step; the
node's k-hop in-neighbourhood against a breadth-first search, the slicing of extra node and edge
arguments, the model left untouched, and bad input."""

import math

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.function as fn

from layer_ref_helpers import BACKENDS, side, tensor, to_numpy

TF = torch.float64


def make_model(ns, in_feats, classes, pool, rng):
    """Linear, then a sum of eweight-scaled messages (plus optional per-node ``bias`` and per-edge
    ``scale`` arguments), then (``pool``) the mean over each graph's nodes."""

    class Model(ns.tnn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ns.tnn.Linear(in_feats, classes).double()
            with ns.T.no_grad():
                self.lin.weight.copy_(ns.T.tensor(rng.uniform(-1, 1, (classes, in_feats))))
                self.lin.bias.copy_(ns.T.tensor(rng.uniform(-1, 1, classes)))

        def forward(self, graph, feat, eweight=None, bias=None, scale=None):
            with graph.local_scope():
                graph.ndata["h"] = self.lin(feat)
                w = ns.T.ones(graph.num_edges(), dtype=feat.dtype) if eweight is None else eweight
                graph.edata["w"] = (w if scale is None else w * scale).reshape(-1, 1)
                graph.update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "h"))
                h = graph.ndata["h"] if bias is None else graph.ndata["h"] + bias
                return ns.nn.AvgPooling()(graph, h) if pool else h

    return Model()


def ref_logits(lin_w, lin_b, feat, src, dst, n, eweight, sizes=None, bias=None, scale=None):
    h = feat @ lin_w.T + lin_b
    s_src = torch.zeros(len(src), n, dtype=TF)
    s_src[torch.arange(len(src)), src] = 1
    s_dst = torch.zeros(len(dst), n, dtype=TF)
    s_dst[torch.arange(len(dst)), dst] = 1
    w = eweight if scale is None else eweight * scale
    out = s_dst.T @ (w[:, None] * (s_src @ h))
    if bias is not None:
        out = out + bias
    if sizes is None:
        return out
    return torch.stack([part.mean(0) for part in torch.split(out, list(sizes))])


def ref_explain(model, feat, src, dst, n, rows, init, epochs, lr, coef, sizes=None, **kw):
    """The explanation loop in torch float64: returns sigmoid of the final masks."""
    w, b = (torch.tensor(to_numpy(t)) for t in (model.lin.weight, model.lin.bias))
    feat = torch.tensor(feat)
    with torch.no_grad():
        pred = ref_logits(w, b, feat, src, dst, n, torch.ones(len(src), dtype=TF), sizes, **kw).argmax(-1)
    fm, em = (torch.tensor(a, requires_grad=True) for a in init)
    opt = torch.optim.Adam([fm, em], lr=lr)
    a1, a2, b1, b2 = coef
    for _ in range(epochs):
        opt.zero_grad()
        logits = ref_logits(w, b, feat * torch.sigmoid(fm), src, dst, n, torch.sigmoid(em), sizes, **kw)
        lp = torch.log_softmax(logits, -1)
        loss = -lp[rows, pred[rows]].sum()
        m, f = torch.sigmoid(em), torch.sigmoid(fm)
        ent = lambda x: -x * torch.log(x + 1e-15) - (1 - x) * torch.log(1 - x + 1e-15)  # noqa: E731
        loss = loss + a1 * m.sum() + a2 * ent(m).mean() + b1 * f.mean() + b2 * ent(f).mean()
        loss.backward()
        opt.step()
    return torch.sigmoid(fm.detach()).reshape(-1).numpy(), torch.sigmoid(em.detach()).numpy()


def fixed_explainer(ns, init, **kw):
    """A GNNExplainer starting from the given mask logits (its ``_init_masks`` replaced)."""

    class Fixed(ns.nn.GNNExplainer):
        def _init_masks(self, graph, feat):
            return tensor(ns, init[0]), tensor(ns, init[1])

    return Fixed(**kw)


def random_graph(rng, n=9, ne=20):
    src, dst = rng.integers(0, n, ne), rng.integers(0, n, ne)
    return src.astype(np.int64), dst.astype(np.int64)


def in_hood(src, dst, node, hops):
    nodes = {node}
    for _ in range(hops):
        nodes |= {int(s) for s, d in zip(src, dst) if d in nodes}
    return sorted(nodes)


COEF = dict(alpha1=0.005, alpha2=1.0, beta1=1.0, beta2=0.1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("hops", [1, 2])
def test_explain_node(backend, hops):
    ns = side(backend)
    rng = np.random.default_rng(hops)
    src, dst = random_graph(rng)
    g = nw.graph((src, dst), num_nodes=9)
    feat = rng.standard_normal((9, 4))
    bias, scale = rng.standard_normal((9, 3)), rng.uniform(0.5, 1.5, len(src))
    node = int(dst[0])
    model = make_model(ns, 4, 3, False, rng)
    keep = in_hood(src, dst, node, hops)
    eids = [e for e in range(len(src)) if src[e] in keep and dst[e] in keep]
    init = (rng.standard_normal((1, 4)) * 0.3, rng.standard_normal(len(eids)) * 0.3)
    explainer = fixed_explainer(ns, init, model=model, num_hops=hops, lr=0.05, num_epochs=25, log=False, **COEF)
    new_id, sg, feat_mask, edge_mask = explainer.explain_node(node, g, tensor(ns, feat), bias=tensor(ns, bias),
                                                              scale=tensor(ns, scale))
    assert to_numpy(sg.ndata[nw.NID]).tolist() == keep
    assert sorted(to_numpy(sg.edata[nw.EID]).tolist()) == eids
    assert to_numpy(new_id).tolist() == [keep.index(node)]
    order = to_numpy(sg.edata[nw.EID])                 # the subgraph's edges, in its order
    pos = {v: i for i, v in enumerate(keep)}
    s_src = torch.tensor([pos[int(src[e])] for e in order])
    s_dst = torch.tensor([pos[int(dst[e])] for e in order])
    want_f, want_e = ref_explain(model, feat[keep], s_src, s_dst, len(keep), [keep.index(node)], init, 25, 0.05,
                                 COEF.values(), bias=torch.tensor(bias[keep]), scale=torch.tensor(scale[order]))
    np.testing.assert_allclose(to_numpy(feat_mask), want_f, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(to_numpy(edge_mask), want_e, rtol=1e-8, atol=1e-12)
    assert not np.allclose(want_e, 1 / (1 + np.exp(-init[1])))      # the masks did move


@pytest.mark.parametrize("backend", BACKENDS)
def test_explain_graph(backend):
    ns = side(backend)
    rng = np.random.default_rng(5)
    sizes = (5, 4)
    (s1, d1), (s2, d2) = random_graph(rng, 5, 9), random_graph(rng, 4, 7)
    g = nw.batch([nw.graph((s1, d1), num_nodes=5), nw.graph((s2, d2), num_nodes=4)])
    src, dst = np.concatenate([s1, s2 + 5]), np.concatenate([d1, d2 + 5])
    feat = rng.standard_normal((9, 3))
    model = make_model(ns, 3, 4, True, rng)
    init = (rng.standard_normal((1, 3)) * 0.3, rng.standard_normal(len(src)) * 0.3)
    coef = dict(alpha1=0.01, alpha2=0.5, beta1=2.0, beta2=0.3)
    explainer = fixed_explainer(ns, init, model=model, num_hops=1, lr=0.1, num_epochs=20, log=False, **coef)
    feat_mask, edge_mask = explainer.explain_graph(g, tensor(ns, feat))
    want_f, want_e = ref_explain(model, feat, torch.tensor(src), torch.tensor(dst), 9, [0, 1], init, 20, 0.1,
                                 coef.values(), sizes=sizes)
    assert tuple(feat_mask.shape) == (3,) and tuple(edge_mask.shape) == (len(src),)
    np.testing.assert_allclose(to_numpy(feat_mask), want_f, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(to_numpy(edge_mask), want_e, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_model_is_left_as_it_was(backend):
    """Only the masks learn: the model's parameters keep their values and get no .grad, and a
    model in training mode is back in training mode (eval during the explanation)."""
    ns = side(backend)
    rng = np.random.default_rng(6)
    model = make_model(ns, 3, 2, False, rng).train()
    seen = []
    forward = model.forward

    def spy(*args, **kwargs):
        seen.append(model.training)
        return forward(*args, **kwargs)

    model.forward = spy
    before = to_numpy(model.lin.weight).copy()
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    ns.nn.GNNExplainer(model, num_hops=2, num_epochs=3, log=False).explain_graph(g, ns.T.randn(3, 3,
                                                                                           dtype=ns.T.float64))
    assert seen and not any(seen) and model.training
    np.testing.assert_array_equal(to_numpy(model.lin.weight), before)
    assert model.lin.weight.grad is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_initial_masks_and_zero_epochs(backend):
    ns = side(backend)
    rng = np.random.default_rng(7)
    g = nw.rand_graph(400, 3000)
    explainer = ns.nn.GNNExplainer(make_model(ns, 2, 2, False, rng), num_hops=1, num_epochs=0, log=False)
    fm, em = explainer._init_masks(g, ns.T.zeros(400, 2000, dtype=ns.T.float64))
    assert tuple(fm.shape) == (1, 2000) and tuple(em.shape) == (3000,) and em.dtype == ns.T.float64
    assert abs(to_numpy(fm).std() - 0.1) < 0.01
    assert abs(to_numpy(em).std() - math.sqrt(2) * math.sqrt(2 / 800)) < 0.005
    init = (rng.standard_normal((1, 2)), rng.standard_normal(g.num_edges()))
    f, e = fixed_explainer(ns, init, model=explainer.model, num_hops=1, num_epochs=0,
                           log=False).explain_graph(g, ns.T.randn(400, 2, dtype=ns.T.float64))
    np.testing.assert_allclose(to_numpy(f), 1 / (1 + np.exp(-init[0][0])), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(e), 1 / (1 + np.exp(-init[1])), rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_inputs(backend):
    ns = side(backend)
    rng = np.random.default_rng(8)
    model = make_model(ns, 3, 2, False, rng)
    g = nw.graph(([0, 1], [1, 2]))
    x = ns.T.randn(3, 3, dtype=ns.T.float64)
    E = ns.nn.GNNExplainer
    hetero = nw.heterograph({("a", "r", "b"): ([0], [0])})

    class Flat(ns.tnn.Module):
        def forward(self, graph, feat, eweight=None):
            return feat.sum(1)

    cases = [
        (lambda: E("model", 1), TypeError, "model must be a callable module"),
        (lambda: E(model, -1), ValueError, "num_hops must be a non-negative int"),
        (lambda: E(model, 1, num_epochs=2.5), ValueError, "num_epochs must be a non-negative int"),
        (lambda: E(model, 1, lr=0), ValueError, "lr must be a positive number"),
        (lambda: E(model, 1, alpha2=-1.0), ValueError, "alpha2 must be a non-negative number"),
        (lambda: E(model, 1, log=False).explain_node(3, g, x), ValueError,
         r"node_id must be a node of the graph \(0..2\)"),
        (lambda: E(model, 1, log=False).explain_node(0, g, x[:2]), ValueError, "feat has 2 rows but the graph has 3"),
        (lambda: E(model, 1, log=False).explain_graph(g, ns.T.ones(3, 3, dtype=ns.T.int64)), ValueError,
         "feat must be a floating point"),
        (lambda: E(model, 1, log=False).explain_graph(hetero, ns.T.ones(2, 3)), ValueError,
         "the graph must be homogeneous"),
        (lambda: E(Flat(), 1, log=False).explain_graph(g, x), ValueError, "must return 2-D logits"),
    ]
    for call, err, msg in cases:
        with pytest.raises(err, match=msg):
            call()


# ---------------------------------------------------------------------------- HeteroGNNExplainer
RELS = {("user", "plays", "game"): (4, 3), ("game", "by", "user"): (3, 4), ("user", "follows", "user"): (4, 4)}


def hetero_graph(rng):
    edges = {}
    for ct, (ns_, nd) in RELS.items():
        ne = {"plays": 6, "by": 4, "follows": 3}[ct[1]]
        dst = np.concatenate([np.arange(nd), rng.integers(0, nd, ne - nd)]) if ne >= nd else rng.integers(0, nd, ne)
        edges[ct] = (rng.integers(0, ns_, len(dst)).astype(np.int64), dst.astype(np.int64))
    return nw.heterograph(edges, num_nodes_dict={"user": 4, "game": 3}), edges


def hetero_model(ns, rng, classes, pool):
    """Per relation a Linear of the source features, eweight-scaled and summed into the
    destination; node logits per type, or (``pool``) the sum over types of each type's mean."""

    class Model(ns.tnn.Module):
        def __init__(self):
            super().__init__()
            self.lins = ns.tnn.ModuleDict({ct[1]: ns.tnn.Linear(3, classes).double() for ct in RELS})
            with ns.T.no_grad():
                for lin_ in self.lins.values():
                    lin_.weight.copy_(ns.T.tensor(rng.uniform(-1, 1, (classes, 3))))
                    lin_.bias.copy_(ns.T.tensor(rng.uniform(-1, 1, classes)))

        def forward(self, graph, feat, eweight=None):
            with graph.local_scope():
                funcs = {}
                for ct in graph.canonical_etypes:
                    graph.nodes[ct[0]].data[f"h_{ct[1]}"] = self.lins[ct[1]](feat[ct[0]])
                    w = ns.T.ones(graph.num_edges(ct), dtype=ns.T.float64) if eweight is None else eweight[ct]
                    graph.edges[ct].data["w"] = w.reshape(-1, 1)
                    funcs[ct] = (fn.u_mul_e(f"h_{ct[1]}", "w", "m"), fn.sum("m", "out"))
                graph.multi_update_all(funcs, "sum")
                out = {nt: graph.nodes[nt].data["out"] for nt in graph.ntypes}
                if not pool:
                    return out
                return sum(h.mean(0, keepdim=True) for h in out.values())

    return Model()


def ref_hetero_logits(model, feat, edges, counts, eweight, pool):
    out = {nt: 0.0 for nt in counts}
    for ct, (src, dst) in edges.items():
        w_, b_ = (torch.tensor(to_numpy(t)) for t in (model.lins[ct[1]].weight, model.lins[ct[1]].bias))
        h = feat[ct[0]] @ w_.T + b_
        inc = torch.zeros(counts[ct[2]], len(src), dtype=TF)
        inc[torch.as_tensor(dst), torch.arange(len(src))] = 1
        out[ct[2]] = out[ct[2]] + inc @ (eweight[ct][:, None] * h[torch.as_tensor(src)])
    if pool:
        return sum(h.mean(0, keepdim=True) for h in out.values())
    return out


def ref_hetero_explain(model, feat, edges, counts, init, epochs, lr, pick, rows, pool):
    feat = {k: torch.tensor(v) for k, v in feat.items()}
    ones = {ct: torch.ones(len(e[0]), dtype=TF) for ct, e in edges.items()}
    with torch.no_grad():
        pred = pick(ref_hetero_logits(model, feat, edges, counts, ones, pool)).argmax(-1)
    fms = {k: torch.tensor(v, requires_grad=True) for k, v in init[0].items()}
    ems = {k: torch.tensor(v, requires_grad=True) for k, v in init[1].items()}
    opt = torch.optim.Adam([*fms.values(), *ems.values()], lr=lr)
    ent = lambda x: -x * torch.log(x + 1e-15) - (1 - x) * torch.log(1 - x + 1e-15)  # noqa: E731
    for _ in range(epochs):
        opt.zero_grad()
        h = {nt: f * torch.sigmoid(fms[nt]) for nt, f in feat.items()}
        w = {ct: torch.sigmoid(m) for ct, m in ems.items()}
        lp = torch.log_softmax(pick(ref_hetero_logits(model, h, edges, counts, w, pool)), -1)
        loss = -lp[rows, pred[rows]].sum()
        for m in w.values():
            loss = loss + 0.005 * m.sum() + ent(m).mean()
        for nt in fms:
            f = torch.sigmoid(fms[nt])
            loss = loss + f.mean() + 0.1 * ent(f).mean()
        loss.backward()
        opt.step()
    return ({k: torch.sigmoid(v.detach()).reshape(-1).numpy() for k, v in fms.items()},
            {k: torch.sigmoid(v.detach()).numpy() for k, v in ems.items()})


def fixed_hetero(ns, init, **kw):
    class Fixed(ns.nn.HeteroGNNExplainer):
        def _init_masks(self, graph, feat):
            return ({k: tensor(ns, v) for k, v in init[0].items()}, {k: tensor(ns, v) for k, v in init[1].items()})

    return Fixed(**kw)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hetero_explain_graph(backend):
    ns = side(backend)
    rng = np.random.default_rng(11)
    g, edges = hetero_graph(rng)
    counts = {"user": 4, "game": 3}
    feat = {nt: rng.standard_normal((n, 3)) for nt, n in counts.items()}
    model = hetero_model(ns, rng, 3, pool=True)
    init = ({nt: rng.standard_normal((1, 3)) * 0.3 for nt in counts},
            {ct: rng.standard_normal(len(e[0])) * 0.3 for ct, e in edges.items()})
    explainer = fixed_hetero(ns, init, model=model, num_hops=1, lr=0.05, num_epochs=15, log=False)
    feat_mask, edge_mask = explainer.explain_graph(g, {k: tensor(ns, v) for k, v in feat.items()})
    want_f, want_e = ref_hetero_explain(model, feat, edges, counts, init, 15, 0.05, lambda out: out, [0], True)
    assert sorted(feat_mask) == ["game", "user"] and set(edge_mask) == set(edges)
    for k in want_f:
        np.testing.assert_allclose(to_numpy(feat_mask[k]), want_f[k], rtol=1e-8, atol=1e-12)
    for k in want_e:
        np.testing.assert_allclose(to_numpy(edge_mask[k]), want_e[k], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hetero_explain_node(backend):
    ns = side(backend)
    rng = np.random.default_rng(12)
    g, edges = hetero_graph(rng)
    counts = {"user": 4, "game": 3}
    feat = {nt: rng.standard_normal((n, 3)) for nt, n in counts.items()}
    model = hetero_model(ns, rng, 2, pool=False)
    # the 1-hop in-neighbourhood of game 1: itself and the users playing it
    keep = {"game": [1], "user": sorted({int(s) for s, d in zip(*edges[("user", "plays", "game")]) if d == 1})}
    sub_edges, sub_ids = {}, {}
    for ct, (src, dst) in edges.items():
        ids = [e for e in range(len(src)) if src[e] in keep[ct[0]] and dst[e] in keep[ct[2]]]
        sub_ids[ct] = ids
    init = ({nt: rng.standard_normal((1, 3)) * 0.3 for nt in counts},
            {ct: rng.standard_normal(len(ids)) * 0.3 for ct, ids in sub_ids.items()})
    explainer = fixed_hetero(ns, init, model=model, num_hops=1, lr=0.05, num_epochs=15, log=False)
    new_id, sg, feat_mask, edge_mask = explainer.explain_node("game", 1, g, {k: tensor(ns, v) for k, v in feat.items()})
    assert {nt: to_numpy(sg.nodes[nt].data[nw.NID]).tolist() for nt in sg.ntypes} == keep
    assert to_numpy(new_id).tolist() == [0]
    for ct in edges:                                   # the reference subgraph, in the subgraph's edge order
        order = to_numpy(sg.edges[ct].data[nw.EID]).tolist()
        assert sorted(order) == sub_ids[ct]
        pos_s = {v: i for i, v in enumerate(keep[ct[0]])}
        pos_d = {v: i for i, v in enumerate(keep[ct[2]])}
        sub_edges[ct] = (np.array([pos_s[int(edges[ct][0][e])] for e in order], np.int64),
                         np.array([pos_d[int(edges[ct][1][e])] for e in order], np.int64))
    sub_feat = {nt: feat[nt][keep[nt]] for nt in counts}
    want_f, want_e = ref_hetero_explain(model, sub_feat, sub_edges, {nt: len(v) for nt, v in keep.items()}, init, 15,
                                        0.05, lambda out: out["game"], [0], False)
    for k in want_f:
        np.testing.assert_allclose(to_numpy(feat_mask[k]), want_f[k], rtol=1e-8, atol=1e-12)
    for k in want_e:
        np.testing.assert_allclose(to_numpy(edge_mask[k]), want_e[k], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hetero_bad_inputs(backend):
    ns = side(backend)
    rng = np.random.default_rng(13)
    g, _ = hetero_graph(rng)
    node_model = hetero_model(ns, rng, 2, pool=False)
    feat = {"user": ns.T.randn(4, 3, dtype=ns.T.float64), "game": ns.T.randn(3, 3, dtype=ns.T.float64)}
    E = ns.nn.HeteroGNNExplainer
    cases = [
        (lambda: E(node_model, 1, log=False).explain_graph(g, feat["user"]), TypeError, "feat must be a dict"),
        (lambda: E(node_model, 1, log=False).explain_graph(g, {"user": feat["user"]}), ValueError,
         r"no features for the node types \['game'\]"),
        (lambda: E(node_model, 1, log=False).explain_graph(g, {**feat, "game": ns.T.ones(2, 3)}), ValueError,
         r"feat\['game'\] has 2 rows"),
        (lambda: E(node_model, 1, log=False).explain_node("item", 0, g, feat), ValueError, "ntype 'item' is not"),
        (lambda: E(node_model, 1, log=False).explain_node("game", 3, g, feat), ValueError, r"node_id must be a node"),
        (lambda: E(hetero_model(ns, rng, 2, pool=True), 1, log=False).explain_node("game", 0, g, feat), ValueError,
         "must return a dict"),
        (lambda: E(node_model, 1, log=False).explain_graph(g, feat), ValueError, "must return 2-D logits"),
        (lambda: ns.nn.GNNExplainer(node_model, 1, log=False).explain_graph(g, feat["user"]), ValueError,
         "HeteroGNNExplainer takes the others"),
    ]
    for call, err, msg in cases:
        with pytest.raises(err, match=msg):
            call()
