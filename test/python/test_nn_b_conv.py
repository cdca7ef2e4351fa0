"""GatedGraphConv and NNConv against their dense formulas in torch float64: forward values and
gradients of the inputs and every parameter, on homogeneous (with isolated nodes), bipartite
(NNConv) and batched graphs; bad inputs."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import GatedGraphConv, NNConv

from nn_b_helpers import (batched_graph, bipartite_graph, compare, dense_adj, homo_graph, leaf, param_pairs,
                          torch_params)


# ---------------------------------------------------------------- GatedGraphConv
def _gru(p, x, h):
    """torch.nn.GRUCell's formula, written out on the copied parameters."""
    gi = x @ p["gru.weight_ih"].T + p["gru.bias_ih"]
    gh = h @ p["gru.weight_hh"].T + p["gru.bias_hh"]
    ir, iz, inn = gi.chunk(3, 1)
    hr, hz, hn = gh.chunk(3, 1)
    r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
    n = torch.tanh(inn + r * hn)
    return (1 - z) * n + z * h


def _dense_ggc(p, x, src, dst, etypes, n, n_etypes, n_steps, out_feats):
    h = torch.cat([x, torch.zeros(n, out_feats - x.shape[1], dtype=torch.float64)], 1)
    et = np.zeros(len(src), np.int64) if etypes is None else etypes
    adj = [dense_adj(src[et == r], dst[et == r], n, n) for r in range(n_etypes)]
    for _ in range(n_steps):
        a = sum(adj[r] @ (h @ p[f"linears.{r}.weight"].T + p[f"linears.{r}.bias"]) for r in range(n_etypes))
        h = _gru(p, a, h)
    return h


@pytest.mark.parametrize("n_etypes,in_feats", [(1, 3), (1, 5), (3, 2)])
@pytest.mark.parametrize("batched", [False, True])
def test_gated_graph_conv(n_etypes, in_feats, batched):
    rng = np.random.default_rng(0)
    if batched:
        g, src, dst = batched_graph(rng, (4, 1, 5), (7, 0, 9))
    else:
        g, src, dst = homo_graph(rng, n=8, e=20, isolated=(3,))
    n = g.num_nodes()
    nc.manual_seed(0)
    conv = GatedGraphConv(in_feats, 5, n_steps=3, n_etypes=n_etypes).double()
    with nc.no_grad():  # non-zero biases, so the bias path is checked
        for lin in conv.linears:
            lin.bias.copy_(nc.tensor(rng.standard_normal(5)))
    p = torch_params(conv)
    x_nw, x_th = leaf(rng.standard_normal((n, in_feats)))
    etypes = rng.integers(0, n_etypes, len(src)) if n_etypes > 1 else None
    out = conv(g, x_nw, None if etypes is None else nc.tensor(etypes))
    ref = _dense_ggc(p, x_th, src, dst, etypes, n, n_etypes, 3, 5)
    compare(out, ref, [("feat", x_nw, x_th)] + param_pairs(conv, p), rng)


def test_gated_graph_conv_etypes_list_and_init():
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    conv = GatedGraphConv(2, 3, n_steps=1, n_etypes=2)
    x = nc.ones(3, 2)
    a = conv(g, x, [0, 1, 1]).detach().numpy()
    b = conv(g, x, nc.tensor([0, 1, 1])).detach().numpy()
    np.testing.assert_array_equal(a, b)
    for lin in conv.linears:
        assert (lin.bias.detach().numpy() == 0).all()
    assert [n for n, _ in conv.named_parameters()][-4:] == ["gru.weight_ih", "gru.weight_hh", "gru.bias_ih",
                                                            "gru.bias_hh"]


def test_gated_graph_conv_bad_inputs():
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    conv = GatedGraphConv(2, 3, n_steps=2, n_etypes=2)
    with pytest.raises(ValueError, match="etypes is required"):
        conv(g, nc.ones(3, 2))
    with pytest.raises(ValueError, match="etypes must have one entry per edge"):
        conv(g, nc.ones(3, 2), nc.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"n_etypes=2"):
        conv(g, nc.ones(3, 2), nc.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="feat"):
        conv(g, nc.ones(4, 2), nc.tensor([0, 1, 1]))
    with pytest.raises(ValueError, match="feat"):
        conv(g, nc.ones(3, 3), nc.tensor([0, 1, 1]))
    with pytest.raises(ValueError, match="in_feats"):
        GatedGraphConv(4, 3, 1, 1)
    bg = nw.heterograph({("_U", "_E", "_V"): ([0], [0])}, num_nodes_dict={"_U": 2, "_V": 1})
    with pytest.raises(ValueError, match="source and destination"):
        GatedGraphConv(2, 3, 1, 1)(bg, nc.ones(2, 2))


# ---------------------------------------------------------------- NNConv
def _dense_nnconv(p, agg, x_src, x_dst, efeat, src, dst, n_dst, in_src, out, residual):
    w = (efeat @ p["edge_func.weight"].T + p["edge_func.bias"]).reshape(-1, in_src, out)
    rows = []
    for v in range(n_dst):
        e = np.flatnonzero(dst == v)
        if not len(e):
            rows.append(torch.zeros(out, dtype=torch.float64))
            continue
        prod = x_src[src[e]].unsqueeze(-1) * w[e]  # (deg, in, out)
        red = {"sum": prod.sum(0), "mean": prod.mean(0), "max": prod.max(0).values}[agg]
        rows.append(red.sum(0))
    rst = torch.stack(rows)
    if residual:
        rst = rst + (x_dst @ p["res_fc.weight"].T if "res_fc.weight" in p else x_dst)
    return rst + p["bias"] if "bias" in p else rst


@pytest.mark.parametrize("agg", ["sum", "mean", "max"])
@pytest.mark.parametrize("kind", ["homo", "bipartite", "batched"])
@pytest.mark.parametrize("residual", [False, True])
def test_nnconv(agg, kind, residual):
    rng = np.random.default_rng(1)
    if kind == "homo":
        g, src, dst = homo_graph(rng, n=7, e=15, isolated=(4,))
        in_src = in_dst = 3
        n_src = n_dst = 7
    elif kind == "bipartite":
        g, src, dst = bipartite_graph(rng, n_src=6, n_dst=4, e=12, isolated=(2,))
        in_src, in_dst, n_src, n_dst = 3, 2, 6, 4
    else:
        g, src, dst = batched_graph(rng, (4, 1, 5), (7, 0, 9))
        in_src = in_dst = 3
        n_src = n_dst = 10
    out_feats = 3 if kind != "bipartite" else 4  # identity residual (homo) and a Linear (bipartite)
    nc.manual_seed(0)
    conv = NNConv((in_src, in_dst), out_feats, nc.nn.Linear(2, in_src * out_feats), agg,
                  residual=residual).double()
    with nc.no_grad():
        conv.bias.copy_(nc.tensor(rng.standard_normal(out_feats)))
    p = torch_params(conv)
    xs_nw, xs_th = leaf(rng.standard_normal((n_src, in_src)))
    e_nw, e_th = leaf(rng.standard_normal((len(src), 2)))
    pairs = [("efeat", e_nw, e_th), ("feat_src", xs_nw, xs_th)] + param_pairs(conv, p)
    if kind == "bipartite":
        xd_nw, xd_th = leaf(rng.standard_normal((n_dst, in_dst)))
        feat = (xs_nw, xd_nw)
        pairs.append(("feat_dst", xd_nw, xd_th))
    else:
        feat, xd_th = xs_nw, xs_th
    out = conv(g, feat, e_nw)
    ref = _dense_nnconv(p, agg, xs_th, xd_th, e_th, src, dst, n_dst, in_src, out_feats, residual)
    compare(out, ref, pairs, rng)


def test_nnconv_parameters_and_bad_inputs():
    conv = NNConv(3, 4, nc.nn.Linear(2, 12), "sum", residual=True, bias=False)
    assert sorted(n for n, _ in conv.named_parameters()) == ["edge_func.bias", "edge_func.weight",
                                                             "res_fc.weight"]
    assert isinstance(NNConv(3, 3, nc.nn.Linear(2, 9), residual=True).res_fc, nc.nn.Identity)
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    with pytest.raises(ValueError, match="efeat"):
        conv(g, nc.ones(3, 3), nc.ones(2, 2))
    with pytest.raises(ValueError, match="edge_func"):
        NNConv(3, 4, nc.nn.Linear(2, 5))(g, nc.ones(3, 3), nc.ones(3, 2))
    with pytest.raises(ValueError, match="feat"):
        conv(g, nc.ones(4, 3), nc.ones(3, 2))
    with pytest.raises(ValueError, match="aggregator_type"):
        NNConv(3, 4, nc.nn.Linear(2, 12), "min")
