"""Graph convolution layers (part A) against independent dense formulas.

Each layer's output and its gradients with respect to every input (features, edge weights, an
external weight) and every parameter are compared with the same formula written densely in
torch float64 (adjacency matrices, masked softmax/max), on homogeneous, bipartite, batched and
block-like graphs; a second check compares the gradients with central finite differences. Then:
zero-in-degree errors, dropout in eval(), SGConv's cache, and bad inputs.
"""

import math

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import (APPNPConv, ChebConv, EdgeConv, EdgeWeightNorm, GATConv, GATv2Conv,
                          GCN2Conv, GINConv, GINEConv, GraphConv, SGConv, TAGConv)

from nn_check import check, fd_check, randomize

TF = torch.float64


# ----------------------------------------------------------------------------- graphs


class G:
    """A nodeweave graph with the edge list the dense references are built from."""

    def __init__(self, g, src, dst, ns, nd):
        self.g, self.src, self.dst, self.ns, self.nd = g, np.asarray(src), np.asarray(dst), ns, nd

    @property
    def ne(self):
        return len(self.src)


def _edges(rng, ns, nd, p, loops):
    m = rng.random((nd, ns)) < p
    if loops:
        np.fill_diagonal(m, True)
    for i in range(nd):  # every destination gets an in-edge unless a test removes it
        if not m[i].any():
            m[i, rng.integers(ns)] = True
    dst, src = np.nonzero(m)
    perm = rng.permutation(len(src))  # edge ids in no particular order
    return src[perm], dst[perm]


def homo(rng, n=6, p=0.35, loops=True, isolated=0):
    """A simple graph; the last ``isolated`` nodes have no in-edges."""
    src, dst = _edges(rng, n, n, p, loops)
    keep = dst < n - isolated
    src, dst = src[keep], dst[keep]
    return G(nw.graph((src, dst), num_nodes=n), src, dst, n, n)


def bipartite(rng, ns=6, nd=4, p=0.4):
    src, dst = _edges(rng, ns, nd, p, False)
    g = nw.heterograph({("_U", "_E", "_V"): (src, dst)}, num_nodes_dict={"_U": ns, "_V": nd})
    return G(g, src, dst, ns, nd)


def batched(rng, sizes=(4, 5, 3), **kw):
    parts = [homo(rng, n, **kw) for n in sizes]
    return nw.batch([p.g for p in parts]), parts


def node_slices(parts, attr="nd"):
    out, start = [], 0
    for p in parts:
        out.append(slice(start, start + getattr(p, attr)))
        start += getattr(p, attr)
    return out


def edge_slices(parts):
    return node_slices(parts, "ne")


# ----------------------------------------------------------------------------- dense pieces


def adj(G, w=None):
    """(nd, ns) adjacency, A[i, j] = weight of edge j -> i."""
    vals = torch.ones(G.ne, dtype=TF) if w is None else w.reshape(-1)
    A = torch.zeros(G.nd, G.ns, dtype=TF)
    return A.index_put((torch.as_tensor(G.dst), torch.as_tensor(G.src)), vals, accumulate=True)


def mask(G):
    m = torch.zeros(G.nd, G.ns, dtype=torch.bool)
    m[torch.as_tensor(G.dst), torch.as_tensor(G.src)] = True
    return m


def in_deg(G):
    return torch.as_tensor(np.bincount(G.dst, minlength=G.nd), dtype=TF).clamp(min=1)


def out_deg(G):
    return torch.as_tensor(np.bincount(G.src, minlength=G.ns), dtype=TF).clamp(min=1)


def sym_adj(G, w=None):
    """D^-1/2 A D^-1/2 with in-degrees on both sides (homogeneous), or the EdgeWeightNorm('both')
    normalization of ``w``: w_ji / sqrt(out_w(j) in_w(i))."""
    if w is None:
        d = in_deg(G).pow(-0.5)
        return d[:, None] * adj(G) * d[None, :]
    A = adj(G, w)
    return safe_pow(A.sum(1), -0.5)[:, None] * A * safe_pow(A.sum(0), -0.5)[None, :]


def safe_pow(s, power):
    """s ** power where s > 0; 1 elsewhere (those nodes have no edges to scale)."""
    return torch.where(s > 0, s, torch.ones_like(s)).pow(power)


def lin(p, name, x):
    y = x @ p[name + ".weight"].T
    if name + ".bias" in p:
        y = y + p[name + ".bias"]
    return y


def masked_max(vals, m):
    """max over j of vals[i, j, :] where m[i, j]; 0 for rows without any."""
    out = vals.masked_fill(~m[:, :, None], -math.inf).amax(1)
    return torch.where(m.any(1)[:, None], out, torch.zeros_like(out))


def dense_edges(G, e):
    """(nd, ns, *) tensor holding edge values ``e`` (E, *) at [dst, src] (simple graphs)."""
    out = torch.zeros((G.nd, G.ns) + tuple(e.shape[1:]), dtype=TF)
    return out.index_put((torch.as_tensor(G.dst), torch.as_tensor(G.src)), e)


# ----------------------------------------------------------------------------- references


def ref_graphconv(G, p, feat, norm="both", ew=None, weight=None, act=None):
    x = feat
    power = -0.5 if norm == "both" else -1.0
    if norm in ("left", "both"):
        x = x * out_deg(G).pow(power)[:, None]
    h = adj(G, ew) @ x
    w = weight if weight is not None else p.get("weight")
    if w is not None:
        h = h @ w
    if norm in ("right", "both"):
        h = h * in_deg(G).pow(power)[:, None]
    if "bias" in p:
        h = h + p["bias"]
    return act(h) if act else h


def ref_gat(G, p, xs, xd, heads, out, slope=0.2, ew=None):
    fc_s = "fc_src" if "fc_src.weight" in p else "fc"
    fc_d = "fc_dst" if "fc_dst.weight" in p else "fc"
    zs = lin(p, fc_s, xs).reshape(G.ns, heads, out)
    zd = lin(p, fc_d, xd).reshape(G.nd, heads, out)
    el = (zs * p["attn_l"]).sum(-1)  # (ns, H)
    er = (zd * p["attn_r"]).sum(-1)  # (nd, H)
    logits = torch.nn.functional.leaky_relu(er[:, None, :] + el[None, :, :], slope)
    m = mask(G)[:, :, None]
    att = torch.softmax(logits.masked_fill(~m, -1e30), dim=1) * m  # (nd, ns, H)
    if ew is not None:
        att = att * adj(G, ew)[:, :, None]
    rst = torch.einsum("ijh,jho->iho", att, zs)
    if "res_fc.weight" in p:
        rst = rst + lin(p, "res_fc", xd).reshape(G.nd, heads, out)
    if "bias" in p:
        rst = rst + p["bias"].reshape(heads, out)
    edge_att = att[torch.as_tensor(G.dst), torch.as_tensor(G.src)][:, :, None]
    return rst, edge_att


def ref_gatv2(G, p, xs, xd, heads, out, slope=0.2, share=False, identity_res=False):
    zs = lin(p, "fc_src", xs).reshape(G.ns, heads, out)
    zd = lin(p, "fc_src" if share else "fc_dst", xd).reshape(G.nd, heads, out)
    pre = torch.nn.functional.leaky_relu(zd[:, None] + zs[None, :], slope)  # (nd, ns, H, O)
    logits = (pre * p["attn"][0]).sum(-1)
    m = mask(G)[:, :, None]
    att = torch.softmax(logits.masked_fill(~m, -1e30), dim=1) * m
    rst = torch.einsum("ijh,jho->iho", att, zs)
    if "res_fc.weight" in p:
        rst = rst + lin(p, "res_fc", xd).reshape(G.nd, heads, out)
    elif identity_res:
        rst = rst + xd.reshape(G.nd, heads, out)
    return rst, att[torch.as_tensor(G.dst), torch.as_tensor(G.src)][:, :, None]


def ref_gin(G, p, xs, xd, agg, eps, ew=None, act=None):
    if agg == "max":
        w = torch.ones(G.ne, dtype=TF) if ew is None else ew.reshape(-1)
        vals = dense_edges(G, w)[:, :, None] * xs[None, :, :]
        neigh = masked_max(vals, mask(G))
    else:
        neigh = adj(G, ew) @ xs
        if agg == "mean":
            neigh = neigh / in_deg(G)[:, None]
    eps = p.get("eps", torch.tensor([eps], dtype=TF))
    h = (1 + eps) * xd + neigh
    if "apply_func.weight" in p:
        h = lin(p, "apply_func", h)
    return act(h) if act else h


def ref_gine(G, p, xs, xd, ef, eps):
    msg = torch.relu(xs[None, :, :] + dense_edges(G, ef)) * mask(G)[:, :, None]
    eps = p.get("eps", torch.tensor([eps], dtype=TF))
    return lin(p, "apply_func", (1 + eps) * xd + msg.sum(1))


def ref_sgc(G, p, x, k, ew=None):
    a = sym_adj(G, ew)
    for _ in range(k):
        x = a @ x
    return lin(p, "fc", x)


def ref_appnp(G, x, k, alpha, ew=None):
    if ew is None:
        a = in_deg(G).pow(-0.5)[:, None] * adj(G) * out_deg(G).pow(-0.5)[None, :]
    else:
        a = sym_adj(G, ew)
    h = x
    for _ in range(k):
        h = (1 - alpha) * (a @ h) + alpha * x
    return h


def ref_tag(G, p, x, k, ew=None):
    a = sym_adj(G, ew)
    hs = [x]
    for _ in range(k):
        hs.append(a @ hs[-1])
    return lin(p, "lin", torch.cat(hs, -1))


def ref_cheb(G, p, x, k, lam):
    n = G.nd
    lap = torch.eye(n, dtype=TF) - sym_adj(G)
    lt = 2.0 / lam * lap - torch.eye(n, dtype=TF)
    ts = [x]
    if k > 1:
        ts.append(lt @ x)
    for _ in range(2, k):
        ts.append(2 * lt @ ts[-1] - ts[-2])
    return torch.relu(lin(p, "linear", torch.cat(ts, -1)))


def ref_gcn2(G, p, x, x0, alpha, beta, project, ew=None):
    ah = sym_adj(G, ew) @ x
    x0 = x0[:G.nd]
    if project:
        h = (1 - alpha) * ah + alpha * x0
        rst = (1 - beta) * h + beta * h @ p["weight1"]
    else:
        rst = ((1 - beta) * (1 - alpha) * ah + beta * (1 - alpha) * ah @ p["weight1"]
               + (1 - beta) * alpha * x0 + beta * alpha * x0 @ p["weight2"])
    return rst + p["bias"] if "bias" in p else rst


def ref_edgeconv(G, p, xs, xd, bn=False):
    diff = xs[None, :, :] - xd[:, None, :]  # x_j - x_i, (nd, ns, D)
    msg = lin(p, "theta", diff) + lin(p, "phi", xd)[:, None, :]
    if bn:  # batch norm over the edges, training mode (biased variance)
        e = msg[torch.as_tensor(G.dst), torch.as_tensor(G.src)]
        e = (e - e.mean(0)) / torch.sqrt(e.var(0, unbiased=False) + 1e-5) * p["bn.weight"] \
            + p["bn.bias"]
        msg = dense_edges(G, e)
    return masked_max(msg, mask(G))


# ----------------------------------------------------------------------------- GraphConv


@pytest.mark.parametrize("norm", ["both", "right", "left", "none"])
@pytest.mark.parametrize("sizes", [(5, 3), (3, 5)], ids=["project-first", "aggregate-first"])
def test_graphconv_dense(rng, norm, sizes):
    G = homo(rng, 7)
    conv = randomize(GraphConv(*sizes, norm=norm), rng)
    x = rng.standard_normal((7, sizes[0]))
    check(conv, lambda m, x: m(G.g, x), lambda p, x: ref_graphconv(G, p, x, norm), {"x": x}, rng)


def test_graphconv_is_the_gcn_formula(rng):
    # D^-1/2 (A + I) D^-1/2 X W + b on a symmetric graph with self-loops, written out in NumPy.
    n = 6
    a = (rng.random((n, n)) < 0.4).astype(float)
    a = np.triu(a, 1)
    a = a + a.T + np.eye(n)
    dst, src = np.nonzero(a)
    g = nw.graph((src, dst), num_nodes=n)
    conv = randomize(GraphConv(4, 3), rng)
    x = rng.standard_normal((n, 4))
    d = a.sum(1) ** -0.5
    want = (d[:, None] * a * d[None, :]) @ x @ conv.weight.detach().numpy() + conv.bias.detach().numpy()
    np.testing.assert_allclose(conv(g, nc.tensor(x)).detach().numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("norm", ["both", "right", "none"])
def test_graphconv_edge_weight(rng, norm):
    G = homo(rng, 6)
    conv = randomize(GraphConv(4, 3, norm=norm, activation=nc.tanh), rng)
    inputs = {"x": rng.standard_normal((6, 4)), "w": rng.uniform(0.2, 2.0, G.ne)}
    check(conv, lambda m, x, w: m(G.g, x, edge_weight=w),
          lambda p, x, w: ref_graphconv(G, p, x, norm, ew=w, act=torch.tanh), inputs, rng)


@pytest.mark.parametrize("norm", ["both", "right", "left"])
def test_graphconv_bipartite(rng, norm):
    G = bipartite(rng)
    conv = randomize(GraphConv(4, 2, norm=norm), rng)
    xs, xd = rng.standard_normal((6, 4)), rng.standard_normal((4, 4))
    check(conv, lambda m, xs, xd: m(G.g, (xs, xd)), lambda p, xs, xd: ref_graphconv(G, p, xs, norm),
          {"xs": xs, "xd": xd}, rng)
    # DGL reads only the source features, so a single source tensor works too.
    check(conv, lambda m, xs: m(G.g, xs), lambda p, xs: ref_graphconv(G, p, xs, norm), {"xs": xs},
          rng)


def test_graphconv_batched(rng):
    bg, parts = batched(rng)
    conv = randomize(GraphConv(4, 3), rng)
    x = rng.standard_normal((12, 4))
    rows = node_slices(parts)
    check(conv, lambda m, x: m(bg, x),
          lambda p, x: torch.cat([ref_graphconv(P, p, x[s]) for P, s in zip(parts, rows)]),
          {"x": x}, rng)


def test_graphconv_external_weight_and_no_bias(rng):
    G = homo(rng, 5)
    conv = randomize(GraphConv(4, 3, weight=False, bias=False), rng)
    assert list(dict(conv.named_parameters())) == []
    inputs = {"x": rng.standard_normal((5, 4)), "w": rng.standard_normal((4, 3))}
    check(conv, lambda m, x, w: m(G.g, x, weight=w),
          lambda p, x, w: ref_graphconv(G, p, x, weight=w), inputs, rng)
    with pytest.raises(ValueError, match="External weight"):
        GraphConv(4, 3)(G.g, nc.ones(5, 4), weight=nc.ones(4, 3))


def test_graphconv_init_and_reset():
    conv = GraphConv(20, 10)
    assert tuple(conv.weight.shape) == (20, 10) and tuple(conv.bias.shape) == (10,)
    bound = math.sqrt(6.0 / 30)
    assert float(abs(conv.weight).amax().item()) <= bound
    assert float(abs(conv.bias).amax().item()) == 0.0
    with nc.no_grad():
        conv.bias.fill_(3.0)
    conv.reset_parameters()
    assert float(abs(conv.bias).amax().item()) == 0.0
    assert "normalization=both" in repr(conv)


# ----------------------------------------------------------------------------- GAT


@pytest.mark.parametrize("residual,in_feats", [(False, 5), (True, 5), (True, 6)],
                         ids=["plain", "res-linear", "res-identity"])
@pytest.mark.parametrize("bias", [True, False])
def test_gat_dense(rng, residual, in_feats, bias):
    G = homo(rng, 7)
    heads, out = 3, 2
    conv = randomize(GATConv(in_feats, out, heads, residual=residual, bias=bias), rng)
    if residual and in_feats == heads * out:
        assert isinstance(conv.res_fc, nc.nn.Identity)
    x = rng.standard_normal((7, in_feats))

    def ref(p, x):
        rst, att = ref_gat(G, p, x, x, heads, out)
        if residual and in_feats == heads * out:
            rst = rst + x.reshape(7, heads, out)
        return rst, att

    got = check(conv, lambda m, x: m(G.g, x, get_attention=True), ref, {"x": x}, rng)
    assert got[0].shape == (7, heads, out) and got[1].shape == (G.ne, heads, 1)


def test_gat_bipartite_pair_in_feats(rng):
    G = bipartite(rng)
    conv = randomize(GATConv((5, 3), 2, num_heads=2, residual=True, activation=nc.relu), rng)
    inputs = {"xs": rng.standard_normal((6, 5)), "xd": rng.standard_normal((4, 3))}

    def ref(p, xs, xd):
        rst, att = ref_gat(G, p, xs, xd, 2, 2)
        return torch.relu(rst), att

    check(conv, lambda m, xs, xd: m(G.g, (xs, xd), get_attention=True), ref, inputs, rng)


def test_gat_edge_weight_and_batched(rng):
    bg, parts = batched(rng)
    conv = randomize(GATConv(4, 3, num_heads=2, negative_slope=0.1), rng)
    inputs = {"x": rng.standard_normal((12, 4)),
              "w": rng.uniform(0.1, 2.0, sum(p.ne for p in parts))}
    rows, edges = node_slices(parts), edge_slices(parts)

    def ref(p, x, w):
        outs = [ref_gat(P, p, x[r], x[r], 2, 3, slope=0.1, ew=w[e])
                for P, r, e in zip(parts, rows, edges)]
        return torch.cat([o[0] for o in outs]), torch.cat([o[1] for o in outs])

    check(conv, lambda m, x, w: m(bg, x, edge_weight=w, get_attention=True), ref, inputs, rng)


def test_gat_dropout_only_in_training(rng):
    G = homo(rng, 6)
    conv = randomize(GATConv(4, 3, num_heads=2, feat_drop=0.5, attn_drop=0.5), rng)
    x = nc.tensor(rng.standard_normal((6, 4)))
    conv.eval()
    a, b = conv(G.g, x).detach(), conv(G.g, x).detach()
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    p = {k: torch.tensor(v.detach().numpy()) for k, v in conv.named_parameters()}
    np.testing.assert_allclose(a.numpy(), ref_gat(G, p, torch.tensor(x.numpy()),
                                                  torch.tensor(x.numpy()), 2, 3)[0].numpy(),
                               rtol=1e-10)
    conv.train()
    c = conv(G.g, x).detach()
    assert not np.allclose(c.numpy(), a.numpy())


# ----------------------------------------------------------------------------- GATv2


@pytest.mark.parametrize("share", [False, True])
@pytest.mark.parametrize("residual", [False, True])
def test_gatv2_dense(rng, share, residual):
    G = homo(rng, 6)
    conv = randomize(GATv2Conv(5, 2, num_heads=3, residual=residual, share_weights=share), rng)
    if share:
        assert conv.fc_dst is conv.fc_src
    x = rng.standard_normal((6, 5))
    got = check(conv, lambda m, x: m(G.g, x, get_attention=True),
                lambda p, x: ref_gatv2(G, p, x, x, 3, 2, share=share), {"x": x}, rng)
    assert got[0].shape == (6, 3, 2)


def test_gatv2_bipartite_and_batched(rng):
    G = bipartite(rng)
    conv = randomize(GATv2Conv((5, 3), 2, num_heads=2, residual=True), rng)
    inputs = {"xs": rng.standard_normal((6, 5)), "xd": rng.standard_normal((4, 3))}
    check(conv, lambda m, xs, xd: m(G.g, (xs, xd)),
          lambda p, xs, xd: ref_gatv2(G, p, xs, xd, 2, 2)[0], inputs, rng)

    bg, parts = batched(rng)
    conv = randomize(GATv2Conv(4, 4, num_heads=1, residual=True, activation=nc.relu), rng)
    x = rng.standard_normal((12, 4))
    rows = node_slices(parts)
    check(conv, lambda m, x: m(bg, x),
          lambda p, x: torch.relu(torch.cat([ref_gatv2(P, p, x[r], x[r], 1, 4,
                                                       identity_res=True)[0]
                                             for P, r in zip(parts, rows)])), {"x": x}, rng)


# ----------------------------------------------------------------------------- GIN / GINE


@pytest.mark.parametrize("agg", ["sum", "max", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("learn_eps", [False, True])
def test_gin_dense(rng, agg, weighted, learn_eps):
    G = homo(rng, 7, loops=False)
    conv = randomize(GINConv(nc.nn.Linear(4, 3), agg, init_eps=0.3, learn_eps=learn_eps), rng)
    assert ("eps" in dict(conv.named_parameters())) == learn_eps
    eps = float(conv.eps.detach().numpy()[0])
    inputs = {"x": rng.standard_normal((7, 4))}
    if weighted:
        inputs["w"] = rng.uniform(-1.0, 2.0, (G.ne, 1))
        run = lambda m, x, w: m(G.g, x, edge_weight=w)  # noqa: E731
        ref = lambda p, x, w: ref_gin(G, p, x, x, agg, eps, ew=w)  # noqa: E731
    else:
        run = lambda m, x: m(G.g, x)  # noqa: E731
        ref = lambda p, x: ref_gin(G, p, x, x, agg, eps)  # noqa: E731
    check(conv, run, ref, inputs, rng)


@pytest.mark.parametrize("agg", ["sum", "max", "mean"])
def test_gin_bipartite_batched_no_apply_func(rng, agg):
    G = bipartite(rng)
    conv = GINConv(None, agg, init_eps=-0.25, activation=nc.tanh).double()
    inputs = {"xs": rng.standard_normal((6, 3)), "xd": rng.standard_normal((4, 3))}
    check(conv, lambda m, xs, xd: m(G.g, (xs, xd)),
          lambda p, xs, xd: ref_gin(G, p, xs, xd, agg, -0.25, act=torch.tanh), inputs, rng)

    bg, parts = batched(rng, loops=False)
    x = rng.standard_normal((12, 3))
    rows = node_slices(parts)
    check(conv, lambda m, x: m(bg, x),
          lambda p, x: torch.cat([ref_gin(P, p, x[r], x[r], agg, -0.25, act=torch.tanh)
                                  for P, r in zip(parts, rows)]), {"x": x}, rng)


@pytest.mark.parametrize("learn_eps", [False, True])
def test_gine_dense(rng, learn_eps):
    G = homo(rng, 6, loops=False)
    conv = randomize(GINEConv(nc.nn.Linear(3, 2), init_eps=0.5, learn_eps=learn_eps), rng)
    inputs = {"x": rng.standard_normal((6, 3)), "e": rng.standard_normal((G.ne, 3))}
    check(conv, lambda m, x, e: m(G.g, x, e), lambda p, x, e: ref_gine(G, p, x, x, e, 0.5),
          inputs, rng)


def test_gine_bipartite_and_batched(rng):
    G = bipartite(rng)
    conv = randomize(GINEConv(nc.nn.Linear(3, 2)), rng)
    inputs = {"xs": rng.standard_normal((6, 3)), "xd": rng.standard_normal((4, 3)),
              "e": rng.standard_normal((G.ne, 3))}
    check(conv, lambda m, xs, xd, e: m(G.g, (xs, xd), e),
          lambda p, xs, xd, e: ref_gine(G, p, xs, xd, e, 0.0), inputs, rng)

    bg, parts = batched(rng, loops=False)
    inputs = {"x": rng.standard_normal((12, 3)),
              "e": rng.standard_normal((sum(p.ne for p in parts), 3))}
    rows, edges = node_slices(parts), edge_slices(parts)
    check(conv, lambda m, x, e: m(bg, x, e),
          lambda p, x, e: torch.cat([ref_gine(P, p, x[r], x[r], e[s], 0.0)
                                     for P, r, s in zip(parts, rows, edges)]), inputs, rng)


# ----------------------------------------------------------------------------- SGC / APPNP / TAG


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_sgconv_dense(rng, k, weighted):
    G = homo(rng, 7)
    conv = randomize(SGConv(4, 3, k=k), rng)
    inputs = {"x": rng.standard_normal((7, 4))}
    if weighted:
        inputs["w"] = rng.uniform(0.2, 2.0, G.ne)
        check(conv, lambda m, x, w: m(G.g, x, edge_weight=w),
              lambda p, x, w: ref_sgc(G, p, x, k, ew=w), inputs, rng)
    else:
        check(conv, lambda m, x: m(G.g, x), lambda p, x: ref_sgc(G, p, x, k), inputs, rng)


def test_sgconv_batched_and_norm(rng):
    bg, parts = batched(rng)
    ln = nc.nn.LayerNorm(4)
    conv = randomize(SGConv(4, 2, k=2, norm=ln), rng)
    x = rng.standard_normal((12, 4))
    rows = node_slices(parts)

    def ref(p, x):
        h = torch.cat([sym_adj(P) @ (sym_adj(P) @ x[r]) for P, r in zip(parts, rows)])
        h = torch.nn.functional.layer_norm(h, (4,), p["norm.weight"], p["norm.bias"])
        return lin(p, "fc", h)

    check(conv, lambda m, x: m(bg, x), ref, {"x": x}, rng)


def test_sgconv_cached_reuses_propagation(rng):
    G = homo(rng, 6)
    conv = randomize(SGConv(4, 3, k=2, cached=True), rng)
    x1 = nc.tensor(rng.standard_normal((6, 4)), requires_grad=True)
    first = conv(G.g, x1)
    first.sum().backward()
    assert x1.grad is not None
    # A later call ignores its features (and graph): the propagation is reused.
    other = nw.graph(([0], [1]), num_nodes=6)
    second = conv(other, nc.tensor(rng.standard_normal((6, 4))), edge_weight=None)
    np.testing.assert_allclose(second.detach().numpy(), first.detach().numpy(), rtol=1e-12)
    second.sum().backward()  # the cache holds no autograd history: a second backward works
    p = {k: torch.tensor(v.detach().numpy()) for k, v in conv.named_parameters()}
    np.testing.assert_allclose(first.detach().numpy(),
                               ref_sgc(G, p, torch.tensor(x1.detach().numpy()), 2).numpy(),
                               rtol=1e-10)
    uncached = randomize(SGConv(4, 3, k=2), rng)
    a = uncached(G.g, nc.tensor(rng.standard_normal((6, 4))))
    b = uncached(G.g, nc.tensor(rng.standard_normal((6, 4))))
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("weighted", [False, True])
def test_appnp_dense(rng, weighted):
    G = homo(rng, 7, loops=False)
    conv = APPNPConv(k=4, alpha=0.2)
    inputs = {"x": rng.standard_normal((7, 3))}
    if weighted:
        inputs["w"] = rng.uniform(0.2, 2.0, G.ne)
        check(conv, lambda m, x, w: m(G.g, x, edge_weight=w),
              lambda p, x, w: ref_appnp(G, x, 4, 0.2, ew=w), inputs, rng)
    else:
        check(conv, lambda m, x: m(G.g, x), lambda p, x: ref_appnp(G, x, 4, 0.2), inputs, rng)


def test_appnp_batched_and_edge_drop(rng):
    bg, parts = batched(rng)
    conv = APPNPConv(k=3, alpha=0.3, edge_drop=0.5)
    x = rng.standard_normal((12, 2))
    rows = node_slices(parts)
    conv.eval()
    check(conv, lambda m, x: m(bg, x),
          lambda p, x: torch.cat([ref_appnp(P, x[r], 3, 0.3) for P, r in zip(parts, rows)]),
          {"x": x}, rng)
    conv.train()
    nc.manual_seed(1)
    xt = nc.tensor(x)
    dropped = conv(bg, xt)
    assert not np.allclose(dropped.numpy(), conv.eval()(bg, xt).numpy())


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_tagconv_dense(rng, k, weighted):
    G = homo(rng, 7)
    conv = randomize(TAGConv(3, 2, k=k), rng)
    assert tuple(conv.lin.weight.shape) == (2, 3 * (k + 1))
    inputs = {"x": rng.standard_normal((7, 3))}
    if weighted:
        inputs["w"] = rng.uniform(0.2, 2.0, G.ne)
        check(conv, lambda m, x, w: m(G.g, x, edge_weight=w),
              lambda p, x, w: ref_tag(G, p, x, k, ew=w), inputs, rng)
    else:
        check(conv, lambda m, x: m(G.g, x), lambda p, x: ref_tag(G, p, x, k), inputs, rng)


def test_tagconv_batched(rng):
    bg, parts = batched(rng)
    conv = randomize(TAGConv(3, 2, k=2, activation=nc.tanh), rng)
    x = rng.standard_normal((12, 3))
    rows = node_slices(parts)
    check(conv, lambda m, x: m(bg, x),
          lambda p, x: torch.tanh(torch.cat([ref_tag(P, p, x[r], 2)
                                             for P, r in zip(parts, rows)])), {"x": x}, rng)


# ----------------------------------------------------------------------------- Cheb / GCN2


@pytest.mark.parametrize("k", [1, 2, 4])
def test_chebconv_dense(rng, k):
    G = homo(rng, 7, loops=False)
    conv = randomize(ChebConv(3, 2, k=k), rng)
    x = rng.standard_normal((7, 3))
    check(conv, lambda m, x: m(G.g, x, lambda_max=1.7), lambda p, x: ref_cheb(G, p, x, k, 1.7),
          {"x": x}, rng)
    with pytest.warns(UserWarning, match="lambda_max"):
        got = conv(G.g, nc.tensor(x))
    p = {n: torch.tensor(v.detach().numpy()) for n, v in conv.named_parameters()}
    np.testing.assert_allclose(got.detach().numpy(), ref_cheb(G, p, torch.tensor(x), k, 2.0),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("as_tensor", [False, True])
def test_chebconv_batched_per_graph_lambda(rng, as_tensor):
    bg, parts = batched(rng, loops=False)
    lams = [1.2, 1.9, 1.5]
    conv = randomize(ChebConv(3, 2, k=3), rng)
    x = rng.standard_normal((12, 3))
    rows = node_slices(parts)
    lam = nc.tensor(np.array(lams)) if as_tensor else lams
    check(conv, lambda m, x: m(bg, x, lambda_max=lam),
          lambda p, x: torch.cat([ref_cheb(P, p, x[r], 3, lm)
                                  for P, r, lm in zip(parts, rows, lams)]), {"x": x}, rng)


@pytest.mark.parametrize("project", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_gcn2_dense(rng, project, weighted):
    G = homo(rng, 6)
    conv = randomize(GCN2Conv(4, layer=2, alpha=0.3, lambda_=0.8,
                              project_initial_features=project), rng)
    beta = math.log(0.8 / 2 + 1)
    inputs = {"x": rng.standard_normal((6, 4)), "x0": rng.standard_normal((8, 4))}
    if weighted:
        inputs["w"] = rng.uniform(0.2, 2.0, G.ne)
        check(conv, lambda m, x, x0, w: m(G.g, x, x0, edge_weight=w),
              lambda p, x, x0, w: ref_gcn2(G, p, x, x0, 0.3, beta, project, ew=w), inputs, rng)
    else:
        check(conv, lambda m, x, x0: m(G.g, x, x0),
              lambda p, x, x0: ref_gcn2(G, p, x, x0, 0.3, beta, project), inputs, rng)


def test_gcn2_batched_and_activation(rng):
    bg, parts = batched(rng)
    conv = randomize(GCN2Conv(3, layer=1, activation=nc.relu, bias=False), rng)
    assert conv.bias is None and conv.weight2 is None
    beta = math.log(1 / 1 + 1)
    inputs = {"x": rng.standard_normal((12, 3)), "x0": rng.standard_normal((12, 3))}
    rows = node_slices(parts)
    check(conv, lambda m, x, x0: m(bg, x, x0),
          lambda p, x, x0: torch.relu(torch.cat([ref_gcn2(P, p, x[r], x0[r], 0.1, beta, True)
                                                 for P, r in zip(parts, rows)])), inputs, rng)


# ----------------------------------------------------------------------------- EdgeConv


def test_edgeconv_dense(rng):
    G = homo(rng, 7, loops=False)
    conv = randomize(EdgeConv(4, 3), rng)
    x = rng.standard_normal((7, 4))
    check(conv, lambda m, x: m(G.g, x), lambda p, x: ref_edgeconv(G, p, x, x), {"x": x}, rng)


def test_edgeconv_bipartite_and_batched(rng):
    G = bipartite(rng)
    conv = randomize(EdgeConv(3, 2), rng)
    inputs = {"xs": rng.standard_normal((6, 3)), "xd": rng.standard_normal((4, 3))}
    check(conv, lambda m, xs, xd: m(G.g, (xs, xd)),
          lambda p, xs, xd: ref_edgeconv(G, p, xs, xd), inputs, rng)
    bg, parts = batched(rng, loops=False)
    x = rng.standard_normal((12, 3))
    rows = node_slices(parts)
    check(conv, lambda m, x: m(bg, x),
          lambda p, x: torch.cat([ref_edgeconv(P, p, x[r], x[r]) for P, r in zip(parts, rows)]),
          {"x": x}, rng)


def test_edgeconv_batch_norm(rng):
    G = homo(rng, 7, loops=False)
    conv = randomize(EdgeConv(4, 3, batch_norm=True), rng)
    x = rng.standard_normal((7, 4))
    check(conv, lambda m, x: m(G.g, x), lambda p, x: ref_edgeconv(G, p, x, x, bn=True), {"x": x},
          rng)


# ----------------------------------------------------------------------------- finite differences


FD_CASES = {
    "GraphConv": (lambda: GraphConv(3, 2), lambda m, G, x, w, e: m(G.g, x, edge_weight=w)),
    "GATConv": (lambda: GATConv(3, 2, 2, residual=True),
                lambda m, G, x, w, e: m(G.g, x, edge_weight=w, get_attention=True)),
    "GATv2Conv": (lambda: GATv2Conv(3, 2, 2, residual=True),
                  lambda m, G, x, w, e: m(G.g, x, get_attention=True)),
    "GINConv": (lambda: GINConv(nc.nn.Linear(3, 2), "max", learn_eps=True),
                lambda m, G, x, w, e: m(G.g, x, edge_weight=w)),
    "GINEConv": (lambda: GINEConv(nc.nn.Linear(3, 2), learn_eps=True),
                 lambda m, G, x, w, e: m(G.g, x, e)),
    "SGConv": (lambda: SGConv(3, 2, k=2), lambda m, G, x, w, e: m(G.g, x, edge_weight=w)),
    "APPNPConv": (lambda: APPNPConv(3, 0.1), lambda m, G, x, w, e: m(G.g, x, edge_weight=w)),
    "TAGConv": (lambda: TAGConv(3, 2), lambda m, G, x, w, e: m(G.g, x, edge_weight=w)),
    "ChebConv": (lambda: ChebConv(3, 2, 3), lambda m, G, x, w, e: m(G.g, x, lambda_max=[1.5])),
    "GCN2Conv": (lambda: GCN2Conv(3, 2, project_initial_features=False),
                 lambda m, G, x, w, e: m(G.g, x, x * 0.5, edge_weight=w)),
    "EdgeConv": (lambda: EdgeConv(3, 2), lambda m, G, x, w, e: m(G.g, x)),
    "EdgeConv-bn": (lambda: EdgeConv(3, 2, batch_norm=True), lambda m, G, x, w, e: m(G.g, x)),
}


@pytest.mark.parametrize("name", sorted(FD_CASES))
def test_gradients_match_finite_differences(rng, name):
    make, run = FD_CASES[name]
    G = homo(rng, 5, p=0.5)
    module = randomize(make(), rng, scale=0.8)
    inputs = {"x": rng.standard_normal((5, 3)), "w": rng.uniform(0.5, 1.5, G.ne),
              "e": rng.standard_normal((G.ne, 3))}
    fd_check(module, lambda m, x, w, e: run(m, G, x, w, e), inputs, rng)


# ----------------------------------------------------------------------------- blocks


BLOCK_CASES = {
    "GraphConv": (lambda: GraphConv(3, 2), lambda m, g, f: m(g, f)),
    "GATConv": (lambda: GATConv(3, 2, 2, residual=True), lambda m, g, f: m(g, f)),
    "GATv2Conv": (lambda: GATv2Conv(3, 2, 2, residual=True), lambda m, g, f: m(g, f)),
    "GATv2Conv-shared": (lambda: GATv2Conv(3, 2, 2, share_weights=True), lambda m, g, f: m(g, f)),
    "GINConv": (lambda: GINConv(nc.nn.Linear(3, 2), "mean"), lambda m, g, f: m(g, f)),
    "GINEConv": (lambda: GINEConv(None), lambda m, g, f: m(g, f, nc.ones(g.num_edges(), 3,
                                                                          dtype=nc.float64))),
    "EdgeConv": (lambda: EdgeConv(3, 2), lambda m, g, f: m(g, f)),
}


@pytest.mark.parametrize("name", sorted(BLOCK_CASES))
def test_block_uses_first_rows_as_destination_features(rng, name):
    make, run = BLOCK_CASES[name]
    G = bipartite(rng, ns=7, nd=4)
    module = randomize(make(), rng)
    x = nc.tensor(rng.standard_normal((7, 3)))
    want = run(module, G.g, (x, x[:4]))
    G.g.is_block = True
    got = run(module, G.g, x)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)


# ----------------------------------------------------------------------------- zero in-degree


ZERO_IN_DEGREE = {
    "GraphConv": lambda allow: GraphConv(3, 2, allow_zero_in_degree=allow),
    "GATConv": lambda allow: GATConv(3, 2, 2, allow_zero_in_degree=allow),
    "GATv2Conv": lambda allow: GATv2Conv(3, 2, 2, allow_zero_in_degree=allow),
    "SGConv": lambda allow: SGConv(3, 2, allow_zero_in_degree=allow),
    "GCN2Conv": lambda allow: GCN2Conv(3, 1, allow_zero_in_degree=allow),
    "EdgeConv": lambda allow: EdgeConv(3, 2, allow_zero_in_degree=allow),
}


def _call(name, module, g, x):
    return module(g, x, x) if name == "GCN2Conv" else module(g, x)


@pytest.mark.parametrize("name", sorted(ZERO_IN_DEGREE))
def test_zero_in_degree_raises_unless_allowed(rng, name):
    G = homo(rng, 6, isolated=2)
    x = nc.tensor(rng.standard_normal((6, 3)).astype(np.float32))
    with pytest.raises(ValueError, match="0-in-degree nodes.*add_self_loop"):
        _call(name, ZERO_IN_DEGREE[name](False), G.g, x)
    module = ZERO_IN_DEGREE[name](False)
    module.set_allow_zero_in_degree(True)
    assert _call(name, module, G.g, x).shape[0] == 6
    fixed = nw.add_self_loop(G.g)
    assert _call(name, ZERO_IN_DEGREE[name](False), fixed, x).shape[0] == 6


def test_zero_in_degree_outputs_when_allowed(rng):
    G = homo(rng, 6, isolated=2)
    x = rng.standard_normal((6, 3))
    gc = randomize(GraphConv(3, 2, allow_zero_in_degree=True), rng)
    check(gc, lambda m, x: m(G.g, x), lambda p, x: ref_graphconv(G, p, x), {"x": x}, rng)
    gat = randomize(GATConv(3, 2, 2, allow_zero_in_degree=True), rng)
    got = check(gat, lambda m, x: m(G.g, x), lambda p, x: ref_gat(G, p, x, x, 2, 2)[0], {"x": x},
                rng)
    np.testing.assert_allclose(got[0].detach().numpy()[4:],
                               np.broadcast_to(gat.bias.detach().numpy().reshape(2, 2), (2, 2, 2)))
    ec = randomize(EdgeConv(3, 2, allow_zero_in_degree=True), rng)
    got = check(ec, lambda m, x: m(G.g, x), lambda p, x: ref_edgeconv(G, p, x, x), {"x": x}, rng)
    assert not got[0].detach().numpy()[4:].any()  # nodes without in-edges aggregate to 0
    gin = GINConv(None, "max").double()
    check(gin, lambda m, x: m(G.g, x), lambda p, x: ref_gin(G, p, x, x, "max", 0.0), {"x": x}, rng)


# ----------------------------------------------------------------------------- EdgeWeightNorm


@pytest.mark.parametrize("norm", ["both", "right", "left", "none"])
def test_edge_weight_norm(rng, norm):
    G = bipartite(rng)
    w = rng.uniform(0.2, 2.0, G.ne)

    def ref(p, w):
        A = adj(G, w)
        if norm == "both":
            A = safe_pow(A.sum(1), -0.5)[:, None] * A * safe_pow(A.sum(0), -0.5)[None, :]
        elif norm == "right":
            A = A * safe_pow(A.sum(1), -1.0)[:, None]
        elif norm == "left":
            A = A * safe_pow(A.sum(0), -1.0)[None, :]
        return A[torch.as_tensor(G.dst), torch.as_tensor(G.src)]

    check(EdgeWeightNorm(norm), lambda m, w: m(G.g, w), ref, {"w": w}, rng)
    with pytest.raises(ValueError, match="non-positive"):
        EdgeWeightNorm("both")(G.g, nc.tensor(-w))
    with pytest.raises(ValueError, match="scalar edge weights"):
        EdgeWeightNorm(norm)(G.g, nc.ones(G.ne, 2))


# ----------------------------------------------------------------------------- bad inputs


def _g(rng):
    return homo(rng, 5).g


BAD_INPUTS = [
    # (description, call, exception, message)
    ("rows", lambda g: GraphConv(3, 2)(g, nc.ones(4, 3)), ValueError,
     r"GraphConv: feat has 4 rows but the graph has 5 source nodes"),
    ("size", lambda g: GraphConv(3, 2)(g, nc.ones(5, 4)), ValueError,
     r"GraphConv: feat of shape \(5, 4\) has 4 features .* expected in_feats=3"),
    ("type", lambda g: GraphConv(3, 2)(g, np.ones((5, 3))), TypeError,
     r"GraphConv: feat must be a tensor"),
    ("int feat", lambda g: GINConv()(g, nc.ones(5, 3).long()), TypeError,
     r"GINConv: feat must be a floating point tensor"),
    ("edge weight", lambda g: GraphConv(3, 2)(g, nc.ones(5, 3), edge_weight=nc.ones(2)),
     ValueError, r"GraphConv: edge_weight has 2 rows but the graph has \d+ edges"),
    ("gat size", lambda g: GATConv(3, 2, 2)(g, nc.ones(5, 2)), ValueError,
     r"GATConv: feat .* expected in_feats=3"),
    ("gat pair", lambda g: GATConv((3, 4), 2, 2)(g, (nc.ones(5, 3), nc.ones(5, 3))), ValueError,
     r"GATConv: feat\[1\] .* expected in_feats=4"),
    ("gat pair sizes", lambda g: GATConv((3, 4), 2, 2)(g, nc.ones(5, 3)), ValueError,
     r"GATConv: the module was built for .* sizes \(3, 4\); pass feat as a"),
    ("gatv2 pair sizes", lambda g: GATv2Conv((3, 4), 2, 2)(g, nc.ones(5, 3)), ValueError,
     r"GATv2Conv: the module was built for"),
    ("gatv2 rows", lambda g: GATv2Conv(3, 2, 2)(g, nc.ones(6, 3)), ValueError,
     r"GATv2Conv: feat has 6 rows"),
    ("gat edge weight", lambda g: GATConv(3, 2, 1)(g, nc.ones(5, 3), edge_weight=nc.ones(1)),
     ValueError, r"GATConv: edge_weight has 1 rows"),
    ("gin weight", lambda g: GINConv()(g, nc.ones(5, 3), edge_weight=nc.ones(3)), ValueError,
     r"GINConv: edge_weight has 3 rows"),
    ("gine edges", lambda g: GINEConv()(g, nc.ones(5, 3), nc.ones(2, 3)), ValueError,
     r"GINEConv: edge_feat has 2 rows"),
    ("gine size", lambda g: GINEConv()(g, nc.ones(5, 3), nc.ones(g.num_edges(), 2)), ValueError,
     r"GINEConv: edge_feat .* expected the node feature size=3"),
    ("gine node rows", lambda g: GINEConv()(g, nc.ones(3, 3), nc.ones(g.num_edges(), 3)),
     ValueError, r"GINEConv: node_feat has 3 rows"),
    ("sgc size", lambda g: SGConv(3, 2)(g, nc.ones(5, 2)), ValueError,
     r"SGConv: feat .* expected in_feats=3"),
    ("appnp rows", lambda g: APPNPConv(2, 0.1)(g, nc.ones(7, 2)), ValueError,
     r"APPNPConv: feat has 7 rows but the graph has 5 nodes"),
    ("appnp weight", lambda g: APPNPConv(2, 0.1)(g, nc.ones(5, 2), edge_weight=nc.ones(1)),
     ValueError, r"APPNPConv: edge_weight has 1 rows"),
    ("tag rows", lambda g: TAGConv(3, 2)(g, nc.ones(4, 3)), ValueError,
     r"TAGConv: feat has 4 rows"),
    ("cheb size", lambda g: ChebConv(3, 2, 2)(g, nc.ones(5, 4), lambda_max=2.0), ValueError,
     r"ChebConv: feat .* expected in_feats=3"),
    ("cheb lambda", lambda g: ChebConv(3, 2, 2)(g, nc.ones(5, 3), lambda_max=[1.0, 2.0]),
     ValueError, r"ChebConv: lambda_max has 2 values but the graph is a batch of 1"),
    ("gcn2 feat_0", lambda g: GCN2Conv(3, 1, allow_zero_in_degree=True)(
        g, nc.ones(5, 3), nc.ones(4, 3)), ValueError, r"GCN2Conv: feat_0 has 4 rows"),
    ("gcn2 size", lambda g: GCN2Conv(3, 1)(g, nc.ones(5, 3), nc.ones(5, 2)), ValueError,
     r"GCN2Conv: feat_0 .* expected in_feats=3"),
    ("edgeconv size", lambda g: EdgeConv(3, 2)(g, nc.ones(5, 2)), ValueError,
     r"EdgeConv: feat .* expected in_feats=3"),
    ("norm", lambda g: GraphConv(3, 2, norm="sym"), ValueError, r"Invalid norm value"),
    ("aggregator", lambda g: GINConv(None, "lstm"), KeyError, r"lstm"),
    ("cheb k", lambda g: ChebConv(3, 2, 0), ValueError, r"k must be a positive int"),
    ("gcn2 layer", lambda g: GCN2Conv(3, 0), ValueError, r"layer must be an int >= 1"),
    ("weight shape", lambda g: GraphConv(3, 2, weight=False)(g, nc.ones(5, 3),
                                                             weight=nc.ones(2, 2)),
     ValueError, r"weight must have shape \(3, out_feats\)"),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_inputs_raise_clear_errors(rng, case):
    _, call, exc, msg = case
    with pytest.raises(exc, match=msg):
        call(_g(rng))


def test_bipartite_needs_a_pair_or_a_block(rng):
    G = bipartite(rng)
    x = nc.ones(6, 3)
    for module in (GATConv(3, 2, 1), GINConv(), EdgeConv(3, 2)):
        with pytest.raises(ValueError, match="pass feat as a \\(src_feat, dst_feat\\) pair"):
            module(G.g, x)
    with pytest.raises(ValueError, match="feat\\[1\\] has 6 rows but the graph has 4 destination"):
        GINConv()(G.g, (x, x))
    for module in (SGConv(3, 2), APPNPConv(1, 0.1), TAGConv(3, 2), ChebConv(3, 2, 2)):
        with pytest.raises(ValueError, match="needs a homogeneous graph"):
            module(G.g, x)


def test_float32_default_modules_run(rng):
    # The everyday path: float32 parameters and features, no .double().
    G = homo(rng, 6)
    x = nc.tensor(rng.standard_normal((6, 4)).astype(np.float32))
    for module, extra in [(GraphConv(4, 2), ()), (GATConv(4, 2, 2), ()), (GATv2Conv(4, 2, 2), ()),
                          (GINConv(nc.nn.Linear(4, 2)), ()), (SGConv(4, 2), ()),
                          (APPNPConv(2, 0.1), ()), (TAGConv(4, 2), ()), (ChebConv(4, 2, 2), ()),
                          (GCN2Conv(4, 1), (x,)), (EdgeConv(4, 2), ())]:
        kwargs = {"lambda_max": 2.0} if isinstance(module, ChebConv) else {}
        out = module(G.g, x, *extra, **kwargs)
        assert out.dtype == nc.float32 and out.shape[0] == 6
    e = nc.ones(G.ne, 4)
    assert GINEConv(None)(G.g, x, e).dtype == nc.float32


def test_int32_graphs_give_the_same_results(rng):
    G = homo(rng, 6)
    g32 = nw.graph((G.src.astype(np.int32), G.dst.astype(np.int32)), num_nodes=6, idtype="int32")
    assert g32.idtype == nc.int32
    x = nc.tensor(rng.standard_normal((6, 4)))
    w = nc.tensor(rng.uniform(0.5, 1.5, G.ne))
    for module, kwargs in [(GraphConv(4, 2), {"edge_weight": w}), (GATConv(4, 2, 2), {}),
                           (SGConv(4, 2, k=2), {"edge_weight": w}),
                           (APPNPConv(2, 0.1), {"edge_weight": w}),
                           (ChebConv(4, 2, 2), {"lambda_max": nc.tensor([1.5])}),
                           (EdgeConv(4, 2), {})]:
        module.double()
        want = module(G.g, x, **kwargs).detach().numpy()
        got = module(g32, x, **kwargs).detach().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=type(module).__name__)


def test_gat_pair_sizes_with_one_tensor(rng):
    # Built with equal (source, destination) sizes, a single tensor feeds both projections.
    G = homo(rng, 5)
    conv = randomize(GATConv((3, 3), 2, num_heads=2), rng)
    x = rng.standard_normal((5, 3))
    check(conv, lambda m, x: m(G.g, x), lambda p, x: ref_gat(G, p, x, x, 2, 2)[0], {"x": x}, rng)
