"""GMMConv, CFConv and GatedGCNConv on both backends against their formulas written densely in
torch float64 (values, gradients of every input and parameter), on homogeneous graphs with
repeated edges and nodes without in-edges, bipartite graphs, blocks and batches; then their errors
for bad input."""

import math

import numpy as np
import pytest
import torch

import nodeweave as nw

from layer_ref_helpers import BACKENDS, batch_norm, batched, bipartite, check_layer, homo, lin, side

GRAPHS = ("homo", "bipartite", "block", "batched")


def make_graph(rng, kind):
    """(graph, Edges, whether the destination features are given separately)."""
    if kind == "homo":
        return (*homo(rng, isolated=(3,)), False)
    if kind == "bipartite":
        return (*bipartite(rng, isolated=(2,)), True)
    if kind == "block":
        return (*bipartite(rng, ns=7, nd=4, isolated=(1,), block=True), False)
    return (*batched(rng), False)


def feats(rng, E, paired, d_src, d_dst):
    out = {"x": rng.standard_normal((E.ns, d_src))}
    if paired:
        out["xd"] = rng.standard_normal((E.nd, d_dst))
    return out


def feat_arg(t, paired):
    return (t["x"], t["xd"]) if paired else t["x"]


def dst_part(t, E, paired):
    return t["xd"] if paired else t["x"][:E.nd]


# ---------------------------------------------------------------------------- GMMConv
def ref_gmm(p, t, E, paired, agg, k, out, residual):
    h = lin(p, "fc", t["x"]).reshape(E.ns, k, out)
    z = (t["u"].unsqueeze(1) - p["mu"].unsqueeze(0)) * p["inv_sigma"].unsqueeze(0)
    w = torch.exp(-0.5 * (z * z).sum(-1, keepdim=True))              # (E, K, 1)
    msg = E.u(h) * w
    red = {"sum": E.sum, "mean": E.mean, "max": E.extreme}[agg](msg)
    rst = red.sum(1)
    if residual:
        xd = dst_part(t, E, paired)
        rst = rst + (lin(p, "res_fc", xd) if "res_fc.weight" in p else xd)
    return rst + p["bias"] if "bias" in p else rst


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", GRAPHS)
@pytest.mark.parametrize("agg", ["sum", "mean", "max"])
def test_gmm(backend, kind, agg):
    rng = np.random.default_rng(10)
    g, E, paired = make_graph(rng, kind)
    in_feats = (4, 3) if paired else 4
    out = 3 if paired else 4  # a Linear residual on the bipartite graph, the identity otherwise
    inputs = dict(feats(rng, E, paired, 4, 3), u=rng.standard_normal((E.ne, 2)))
    check_layer(backend,
                lambda ns: ns.nn.GMMConv(in_feats, out, dim=2, n_kernels=3, aggregator_type=agg, residual=True,
                                         allow_zero_in_degree=True),
                lambda m, t: m(g, feat_arg(t, paired), t["u"]),
                lambda p, b, t: ref_gmm(p, t, E, paired, agg, 3, out, True), inputs, rng)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gmm_no_residual_no_bias_ignores_destination_features(backend):
    rng = np.random.default_rng(11)
    g, E = bipartite(rng)
    inputs = dict(feats(rng, E, True, 3, 5), u=rng.standard_normal((E.ne, 1)))
    conv = check_layer(backend, lambda ns: ns.nn.GMMConv((3, 5), 2, 1, 4, bias=False),
                       lambda m, t: m(g, (t["x"], t["xd"]), t["u"]),
                       lambda p, b, t: ref_gmm(p, t, E, True, "sum", 4, 2, False), inputs, rng)
    assert sorted(n for n, _ in conv.named_parameters()) == ["fc.weight", "inv_sigma", "mu"]


def test_gmm_initialization():
    ns = side("native")
    assert isinstance(ns.nn.GMMConv(4, 4, 2, 3, residual=True).res_fc, ns.tnn.Identity)
    conv = ns.nn.GMMConv(4, 3, 2, 50, residual=True)
    assert tuple(conv.res_fc.weight.shape) == (3, 4) and conv.res_fc.bias is None
    assert (conv.inv_sigma.detach().numpy() == 1).all() and (conv.bias.detach().numpy() == 0).all()
    assert 0.05 < conv.mu.detach().numpy().std() < 0.15
    assert tuple(conv.fc.weight.shape) == (150, 4)


# ---------------------------------------------------------------------------- CFConv
def ssp(x):
    return torch.log1p(torch.exp(x)) - math.log(2.0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", GRAPHS)
def test_cfconv(backend, kind):
    rng = np.random.default_rng(12)
    g, E, paired = make_graph(rng, kind)
    inputs = dict(feats(rng, E, paired, 3, 3), e=rng.standard_normal((E.ne, 2)))

    def ref(p, b, t):
        he = ssp(lin(p, "project_edge.2", ssp(lin(p, "project_edge.0", t["e"]))))
        h = E.sum(E.u(lin(p, "project_node", t["x"])) * he)
        return ssp(lin(p, "project_out.0", h))

    conv = check_layer(backend, lambda ns: ns.nn.CFConv(3, 2, 5, 4), lambda m, t: m(g, feat_arg(t, paired), t["e"]),
                       ref, inputs, rng)
    assert sorted(n for n, _ in conv.named_parameters()) == [
        "project_edge.0.bias", "project_edge.0.weight", "project_edge.2.bias", "project_edge.2.weight",
        "project_node.bias", "project_node.weight", "project_out.0.bias", "project_out.0.weight"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_shifted_softplus(backend):
    ns = side(backend)
    from importlib import import_module
    ssp_mod = import_module(f"{ns.nn.__name__}.conv.cfconv").ShiftedSoftplus(beta=2, shift=3, threshold=5)
    x = np.array([-3.0, 0.0, 1.0, 2.4, 7.0])
    got = ssp_mod(ns.T.tensor(x)).detach().cpu().numpy()
    want = np.where(2 * x > 5, x, np.log1p(np.exp(2 * x)) / 2) - np.log(3.0)
    np.testing.assert_allclose(got, want, rtol=1e-12)


# ---------------------------------------------------------------------------- GatedGCNConv
def ref_gatedgcn(p, b, t, E, paired, train, bn, act, residual):
    xs, xd = t["x"], dst_part(t, E, paired)
    e_hat = E.u(lin(p, "D", xs)) + E.v(lin(p, "E", xd)) + lin(p, "C", t["e"])
    sig = torch.sigmoid(e_hat)
    h = lin(p, "A", xd) + E.sum(E.u(lin(p, "B", xs)) * sig) / (E.sum(sig) + 1e-6)
    e = e_hat
    if bn:
        h = batch_norm(h, p, b, "bn_node", train)
        e = batch_norm(e, p, b, "bn_edge", train)
    if act:
        h, e = torch.relu(h), torch.relu(e)
    if residual:
        h, e = xd + h, t["e"] + e
    return h, e


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", GRAPHS)
@pytest.mark.parametrize("sizes", [(4, 4, 4), (3, 2, 5)])
@pytest.mark.parametrize("bn,train,act", [(True, False, True), (True, True, True), (False, True, False)])
def test_gatedgcn(backend, kind, sizes, bn, train, act):
    rng = np.random.default_rng(13)
    g, E, paired = make_graph(rng, kind)
    i, ef, o = sizes
    inputs = dict(feats(rng, E, paired, i, i), e=rng.standard_normal((E.ne, ef)))

    def build(ns):
        return ns.nn.GatedGCNConv(i, ef, o, batch_norm=bn, activation=ns.F.relu if act else None)

    conv = check_layer(backend, build, lambda m, t: m(g, feat_arg(t, paired), t["e"]),
                       lambda p, b, t: ref_gatedgcn(p, b, t, E, paired, train, bn, act, sizes == (4, 4, 4)),
                       inputs, rng, train=train)
    assert conv.residual == (sizes == (4, 4, 4))


def test_gatedgcn_default_activation_is_relu_and_dropout_acts_in_training():
    rng = np.random.default_rng(14)
    g, E = homo(rng)
    ns = side("native")
    conv = ns.nn.GatedGCNConv(3, 3, 3, dropout=0.5, residual=False).double().eval()
    x = ns.T.tensor(rng.standard_normal((E.ns, 3)))
    e = ns.T.tensor(rng.standard_normal((E.ne, 3)))
    h, f = conv(g, x, e)
    assert float(h.min()) >= 0 and float(f.min()) >= 0
    conv.train()
    h1, _ = conv(g, x, e)
    h2, _ = conv(g, x, e)
    assert not np.allclose(h1.detach().numpy(), h2.detach().numpy())


# ---------------------------------------------------------------------------- errors
@pytest.mark.parametrize("backend", BACKENDS)
def test_gmm_zero_in_degree(backend):
    ns = side(backend)
    g = nw.graph(([0, 1], [1, 0]), num_nodes=3)
    with pytest.raises(ValueError, match="GMMConv: There are 0-in-degree nodes"):
        ns.nn.GMMConv(2, 2, 1, 1)(g, ns.T.ones(3, 2), ns.T.ones(2, 1))
    conv = ns.nn.GMMConv(2, 2, 1, 1, bias=False, allow_zero_in_degree=True)
    out = conv(g, ns.T.ones(3, 2), ns.T.ones(2, 1))
    assert out.detach().cpu().numpy()[2].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_inputs_name_the_argument(backend):
    ns = side(backend)
    g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0])))
    ne = g.num_edges()
    ones = ns.T.ones
    bi = nw.heterograph({("_U", "_E", "_V"): ([0, 1, 2], [0, 0, 1])}, num_nodes_dict={"_U": 3, "_V": 2})
    cases = [
        (lambda: ns.nn.GMMConv(4, 2, 3, 2)(g, ones(3, 4), ones(ne, 2)), ValueError, "pseudo .* expected dim=3"),
        (lambda: ns.nn.GMMConv(4, 2, 3, 2)(g, ones(3, 4), ones(ne + 1, 3)), ValueError,
         f"pseudo has {ne + 1} rows but the graph has {ne} edges"),
        (lambda: ns.nn.GMMConv(4, 2, 3, 2)(g, ones(3, 5), ones(ne, 3)), ValueError, "expected in_feats=4"),
        (lambda: ns.nn.GMMConv(4, 2, 3, 2, residual=True)(bi, ones(3, 4), ones(3, 3)), ValueError,
         r"pass feat as a \(src_feat, dst_feat\) pair"),
        (lambda: ns.nn.GMMConv(4, 2, 3, 2, "min"), ValueError, "aggregator_type must be one of sum, mean, max"),
        (lambda: ns.nn.GMMConv(4, 2, 3, 0), ValueError, "n_kernels must be a positive int"),
        (lambda: ns.nn.CFConv(4, 2, 3, 2)(g, ones(3, 4), ones(ne, 3)), ValueError, "edge_feats .* edge_in_feats=2"),
        (lambda: ns.nn.CFConv(4, 2, 3, 2)(g, ones(3, 3), ones(ne, 2)), ValueError,
         "node_feats .* expected in_feats=4"),
        (lambda: ns.nn.CFConv(4, 2, 3, 2)(g, ones(3, 4), None), TypeError, "edge_feats must be a tensor"),
        (lambda: ns.nn.GatedGCNConv(4, 2, 3)(g, ones(3, 4), ones(ne, 3)), ValueError,
         "edge_feat .* expected edge_feats=2"),
        (lambda: ns.nn.GatedGCNConv(4, 2, 3)(g, ones(2, 4), ones(ne, 2)), ValueError,
         "feat has 2 rows but the graph has 3"),
        (lambda: ns.nn.GatedGCNConv(4, 2, 3)(bi, ones(3, 4), ones(3, 2)), ValueError, r"\(src_feat, dst_feat\)"),
        (lambda: ns.nn.GatedGCNConv(4, 2, 3)(g, ones(3, 2, 4), ones(ne, 2)), ValueError, "must be 2-D"),
        (lambda: ns.nn.GatedGCNConv(0, 2, 3), ValueError, "input_feats must be a positive int"),
    ]
    for call, err, msg in cases:
        with pytest.raises(err, match=msg):
            call()
