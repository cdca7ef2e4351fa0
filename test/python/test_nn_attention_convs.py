"""DotGatConv, AGNNConv, EGATConv and EdgeGATConv on both backends against their formulas written
densely in torch float64 (values, gradients of every input and parameter), on homogeneous graphs
with repeated edges and nodes without in-edges, bipartite graphs, blocks and batches; then their
errors for bad input."""

import math

import numpy as np
import pytest
import torch

import nodeweave as nw

from layer_ref_helpers import (BACKENDS, batched, bipartite, check_layer, homo, leaky_relu, lin, side,
                               tensor, to_numpy)

GRAPHS = ("homo", "bipartite", "block", "batched")


def make_graph(rng, kind):
    """(graph, Edges, whether the destination features are given separately)."""
    if kind == "homo":
        return (*homo(rng, isolated=(2,)), False)
    if kind == "bipartite":
        return (*bipartite(rng, isolated=(1,)), True)
    if kind == "block":
        return (*bipartite(rng, ns=7, nd=3, isolated=(2,), block=True), False)
    return (*batched(rng), False)


def node_inputs(rng, E, paired, d_src, d_dst, extra=()):
    """Node features: ``x`` ``(ns, *extra, d_src)`` and, when paired, ``xd`` ``(nd, *extra, d_dst)``."""
    out = {"x": rng.standard_normal((E.ns,) + tuple(extra) + (d_src,))}
    if paired:
        out["xd"] = rng.standard_normal((E.nd,) + tuple(extra) + (d_dst,))
    return out


def feat_arg(t, paired):
    return (t["x"], t["xd"]) if paired else t["x"]


def dst_part(t, E, paired):
    """The destination features of the reference: the pair's second part or the first rows."""
    return t["xd"] if paired else t["x"][:E.nd]


# ---------------------------------------------------------------------------- DotGatConv
def ref_dotgat(p, t, E, paired, heads, out, separate):
    ws, wd = ("fc_src", "fc_dst") if separate else ("fc", "fc")
    zs = lin(p, ws, t["x"]).reshape(E.ns, heads, out)
    zd = lin(p, wd, dst_part(t, E, paired)).reshape(E.nd, heads, out)
    a = E.softmax((E.u(zs) * E.v(zd)).sum(-1, keepdim=True) / math.sqrt(out))
    return E.sum(E.u(zs) * a), a


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", GRAPHS)
def test_dotgat(backend, kind):
    rng = np.random.default_rng(1)
    g, E, paired = make_graph(rng, kind)
    separate = kind == "bipartite"
    in_feats = (5, 3) if separate else 5
    inputs = node_inputs(rng, E, paired, 5, 3)
    check_layer(backend, lambda ns: ns.nn.DotGatConv(in_feats, 2, 3, allow_zero_in_degree=True),
                lambda m, t: m(g, feat_arg(t, paired), get_attention=True),
                lambda p, b, t: ref_dotgat(p, t, E, paired, 3, 2, separate), inputs, rng)


def test_dotgat_pair_with_one_projection_and_parameters():
    rng = np.random.default_rng(2)
    g, E = bipartite(rng)
    inputs = node_inputs(rng, E, True, 4, 4)
    conv = check_layer("native", lambda ns: ns.nn.DotGatConv(4, 3, 2),
                       lambda m, t: m(g, (t["x"], t["xd"])),
                       lambda p, b, t: ref_dotgat(p, t, E, True, 2, 3, False)[0], inputs, rng)
    assert sorted(n for n, _ in conv.named_parameters()) == ["fc.weight"]
    assert sorted(n for n, _ in side("native").nn.DotGatConv((4, 2), 3, 2).named_parameters()) == [
        "fc_dst.weight", "fc_src.weight"]


# ---------------------------------------------------------------------------- AGNNConv
def ref_agnn(p, b, t, E, paired):
    beta = p["beta"] if "beta" in p else torch.tensor(b["beta"])
    xs = t["x"]
    xd = dst_part(t, E, paired)  # the whole tensor again on a homogeneous graph

    def unit(x):
        return x / x.norm(dim=-1, keepdim=True).clamp(min=1e-12)

    cos = (E.u(unit(xs)) * E.v(unit(xd))).sum(-1, keepdim=True)
    return E.sum(E.u(xs) * E.softmax(beta * cos))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", GRAPHS)
@pytest.mark.parametrize("learn_beta", [True, False])
def test_agnn(backend, kind, learn_beta):
    rng = np.random.default_rng(3)
    g, E, paired = make_graph(rng, kind)
    inputs = node_inputs(rng, E, paired, 4, 4)
    conv = check_layer(backend, lambda ns: ns.nn.AGNNConv(0.5, learn_beta, allow_zero_in_degree=True),
                       lambda m, t: m(g, feat_arg(t, paired)),
                       lambda p, b, t: ref_agnn(p, b, t, E, paired), inputs, rng, scale=2.0)
    assert [n for n, _ in conv.named_parameters()] == (["beta"] if learn_beta else [])


@pytest.mark.parametrize("backend", BACKENDS)
def test_agnn_extra_feature_dims_and_zero_rows(backend):
    """Features (N, 2, D) are normalized along the last dimension; an all-zero row stays zero."""
    rng = np.random.default_rng(4)
    g, E = homo(rng)
    x = rng.standard_normal((E.ns, 2, 3))
    x[4] = 0.0
    check_layer(backend, lambda ns: ns.nn.AGNNConv(), lambda m, t: m(g, t["x"]),
                lambda p, b, t: ref_agnn(p, b, t, E, False), {"x": x}, rng)


def test_agnn_initial_beta():
    ns = side("native")
    assert ns.nn.AGNNConv(init_beta=2.5).beta.tolist() == [2.5]
    assert dict(ns.nn.AGNNConv(learn_beta=False).named_buffers())["beta"].tolist() == [1.0]


# ---------------------------------------------------------------------------- EGATConv
def ref_egat(p, t, E, paired, heads, fn_out, fe_out, weighted):
    xs = t["x"]
    xd = t["xd"] if paired else xs[:E.nd]
    f = E.u(lin(p, "fc_ni", xs)) + E.v(lin(p, "fc_nj", xd)) + lin(p, "fc_fij", t["e"])
    if "bias" in p:
        f = f + p["bias"]
    f = leaky_relu(f, 0.01).reshape(E.ne, heads, fe_out)
    a = E.softmax((f * p["attn"]).sum(-1, keepdim=True))
    if weighted:
        a = a * t["w"].reshape(-1, 1, 1)
    h = lin(p, "fc_node_src", xs).reshape(E.ns, heads, fn_out)
    return E.sum(E.u(h) * a), f, a


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["homo", "bipartite", "block", "batched"])
@pytest.mark.parametrize("weighted,bias", [(False, True), (True, True), (True, False)])
def test_egat(backend, kind, weighted, bias):
    rng = np.random.default_rng(5)
    if kind == "homo":
        g, E = homo(rng)
    elif kind == "bipartite":
        g, E = bipartite(rng)
    elif kind == "block":
        g, E = bipartite(rng, ns=7, nd=4, block=True)
    else:
        g, E = batched(rng, sizes=(4, 5), edges=(8, 11))
    paired = kind == "bipartite"
    inputs = node_inputs(rng, E, paired, 5, 2)
    inputs["e"] = rng.standard_normal((E.ne, 3))
    inputs["w"] = rng.uniform(0.2, 2.0, E.ne)
    in_feats = (5, 2) if paired else 5
    check_layer(backend, lambda ns: ns.nn.EGATConv(in_feats, 3, 4, 2, num_heads=3, bias=bias),
                lambda m, t: m(g, feat_arg(t, paired), t["e"], edge_weight=t["w"] if weighted else None,
                               get_attention=True),
                lambda p, b, t: ref_egat(p, t, E, paired, 3, 4, 2, weighted), inputs, rng,
                const=() if weighted else ("w",))


def test_egat_returns_two_outputs_without_attention():
    rng = np.random.default_rng(6)
    g, E = homo(rng)
    ns = side("native")
    out = ns.nn.EGATConv(3, 2, 4, 5, 2).double()(g, tensor(ns, rng.standard_normal((7, 3))),
                                         tensor(ns, rng.standard_normal((E.ne, 2))))
    assert [tuple(o.shape) for o in out] == [(7, 2, 4), (E.ne, 2, 5)]


# ---------------------------------------------------------------------------- EdgeGATConv
def ref_edgegat(p, t, E, paired, heads, out, separate, slope, residual, act):
    ws, wd = ("fc_src", "fc_dst") if separate else ("fc", "fc")
    xs = t["x"]
    xd = dst_part(t, E, paired)
    zs = lin(p, ws, xs).reshape(*xs.shape[:-1], heads, out)
    zd = lin(p, wd, xd).reshape(*xd.shape[:-1], heads, out)
    ze = lin(p, "fc_edge", t["e"]).reshape(*t["e"].shape[:-1], heads, out)
    logits = (E.u((zs * p["attn_l"]).sum(-1, keepdim=True)) + E.v((zd * p["attn_r"]).sum(-1, keepdim=True))
              + (ze * p["attn_edge"]).sum(-1, keepdim=True))
    a = E.softmax(leaky_relu(logits, slope))
    rst = E.sum((E.u(zs) + ze) * a)
    if residual:
        rst = rst + lin(p, "res_fc", xd).reshape(*xd.shape[:-1], heads, out)
    if "bias" in p:
        rst = rst + p["bias"].reshape(heads, out)
    return (torch.tanh(rst) if act else rst), a


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", GRAPHS)
@pytest.mark.parametrize("residual,bias,act", [(True, True, False), (False, False, True)])
def test_edgegat(backend, kind, residual, bias, act):
    rng = np.random.default_rng(7)
    g, E, paired = make_graph(rng, kind)
    separate = kind == "bipartite"
    inputs = node_inputs(rng, E, paired, 5, 3)
    inputs["e"] = rng.standard_normal((E.ne, 2))
    in_feats = (5, 3) if separate else 5

    def build(ns):
        return ns.nn.EdgeGATConv(in_feats, 2, 4, num_heads=2, negative_slope=0.1, residual=residual,
                                 activation=ns.T.tanh if act else None, allow_zero_in_degree=True, bias=bias)

    check_layer(backend, build, lambda m, t: m(g, feat_arg(t, paired), t["e"], get_attention=True),
                lambda p, b, t: ref_edgegat(p, t, E, paired, 2, 4, separate, 0.1, residual, act), inputs, rng)


@pytest.mark.parametrize("backend", BACKENDS)
def test_edgegat_extra_dims_and_pair_with_one_projection(backend):
    rng = np.random.default_rng(8)
    g, E = homo(rng)
    inputs = {"x": rng.standard_normal((E.ns, 2, 5)), "e": rng.standard_normal((E.ne, 2, 3))}
    check_layer(backend, lambda ns: ns.nn.EdgeGATConv(5, 3, 2, num_heads=2),
                lambda m, t: m(g, t["x"], t["e"]),
                lambda p, b, t: ref_edgegat(p, t, E, False, 2, 2, False, 0.2, True, False)[0], inputs, rng)
    g, E = bipartite(rng)
    inputs = node_inputs(rng, E, True, 5, 5)
    inputs["e"] = rng.standard_normal((E.ne, 3))
    check_layer(backend, lambda ns: ns.nn.EdgeGATConv(5, 3, 2, num_heads=2),
                lambda m, t: m(g, (t["x"], t["xd"]), t["e"]),
                lambda p, b, t: ref_edgegat(p, t, E, True, 2, 2, False, 0.2, True, False)[0], inputs, rng)


def test_edgegat_dropout_only_in_training():
    rng = np.random.default_rng(9)
    g, E = homo(rng)
    ns = side("native")
    conv = ns.nn.EdgeGATConv(3, 2, 4, 2, feat_drop=0.5, attn_drop=0.5).double()
    x, e = tensor(ns, rng.standard_normal((7, 3))), tensor(ns, rng.standard_normal((E.ne, 2)))
    conv.eval()
    np.testing.assert_array_equal(to_numpy(conv(g, x, e)), to_numpy(conv(g, x, e)))
    conv.train()
    assert not np.allclose(to_numpy(conv(g, x, e)), to_numpy(conv(g, x, e)))


# ---------------------------------------------------------------------------- zero in-degree, bad input
def _lonely():
    return nw.graph(([0, 1], [1, 0]), num_nodes=3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["DotGatConv", "AGNNConv", "EGATConv", "EdgeGATConv"])
def test_zero_in_degree_raises_unless_allowed(backend, name):
    ns = side(backend)
    g = _lonely()
    x, e = ns.T.ones(3, 4), ns.T.ones(2, 2)
    build = {"DotGatConv": lambda **kw: ns.nn.DotGatConv(4, 2, 1, **kw),
             "AGNNConv": lambda **kw: ns.nn.AGNNConv(**kw),
             "EGATConv": lambda **kw: ns.nn.EGATConv(4, 2, 2, 2, 1),
             "EdgeGATConv": lambda **kw: ns.nn.EdgeGATConv(4, 2, 2, 1, **kw)}[name]
    args = (g, x, e) if name in ("EGATConv", "EdgeGATConv") else (g, x)
    with pytest.raises(ValueError, match=f"{name}: There are 0-in-degree nodes"):
        build()(*args)
    if name == "EGATConv":  # as in DGL, EGATConv has no switch
        return
    conv = build(allow_zero_in_degree=True)
    out = conv(*args)
    assert tuple(out.shape)[0] == 3
    conv.set_allow_zero_in_degree(False)
    with pytest.raises(ValueError, match="0-in-degree"):
        conv(*args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_inputs_name_the_argument(backend):
    ns = side(backend)
    g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0])))
    ne = g.num_edges()
    ones = ns.T.ones
    bi = nw.heterograph({("_U", "_E", "_V"): ([0, 1, 2], [0, 0, 1])}, num_nodes_dict={"_U": 3, "_V": 2})
    cases = [
        (lambda: ns.nn.DotGatConv(4, 2, 2)(g, ones(3, 5)), ValueError, "expected in_feats=4"),
        (lambda: ns.nn.DotGatConv(4, 2, 2)(g, ones(4, 4)), ValueError, "feat has 4 rows but the graph has 3"),
        (lambda: ns.nn.DotGatConv(4, 2, 2)(bi, ones(3, 4)), ValueError, r"pass feat as a \(src_feat, dst_feat\)"),
        (lambda: ns.nn.DotGatConv(4, 2, 0), ValueError, "num_heads must be a positive int"),
        (lambda: ns.nn.AGNNConv()(g, [[1.0]] * 3), TypeError, "feat must be a tensor"),
        (lambda: ns.nn.AGNNConv()(bi, (ones(3, 4), ones(2, 3))), ValueError, "same shape past the node"),
        (lambda: ns.nn.AGNNConv()(g, ones(3, dtype=ns.T.float64)), ValueError, "at least 2-D"),
        (lambda: ns.nn.EGATConv(4, 2, 3, 3, 1)(g, ones(3, 4), ones(ne, 3)), ValueError,
         "efeats .* expected in_edge_feats=2"),
        (lambda: ns.nn.EGATConv(4, 2, 3, 3, 1)(g, ones(3, 4), ones(ne - 1, 2)), ValueError,
         f"efeats has {ne - 1} rows but the graph has {ne} edges"),
        (lambda: ns.nn.EGATConv(4, 2, 3, 3, 1)(g, ones(3, 4), ones(ne, 2), edge_weight=ones(ne, 2)), ValueError,
         "edge_weight must hold one value per edge"),
        (lambda: ns.nn.EGATConv(4, 2, 3, 3, 1)(g, ones(3, 4), ones(ne, 2), edge_weight=ones(ne - 1)),
         ValueError, "edge_weight has"),
        (lambda: ns.nn.EGATConv((4, 3), 2, 3, 3, 1)(bi, (ones(3, 4), ones(2, 4)), ones(3, 2)), ValueError,
         r"nfeats\[1\] .* expected in_feats=3"),
        (lambda: ns.nn.EdgeGATConv(4, 2, 3, 1)(g, ones(3, 4), ones(ne, 5)), ValueError,
         "edge_feat .* expected edge_feats=2"),
        (lambda: ns.nn.EdgeGATConv(4, 2, 3, 1)(g, ones(3, 4), ones(ne, 2, dtype=ns.T.int64)), TypeError,
         "edge_feat must be a floating point tensor"),
        (lambda: ns.nn.EdgeGATConv(-1, 2, 3, 1), ValueError, "in_feats must be a positive int"),
    ]
    for i, (call, err, msg) in enumerate(cases):
        with pytest.raises(err, match=msg):
            call()
