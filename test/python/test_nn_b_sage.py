"""SAGEConv against its dense formula in torch float64 (adjacency matrices, per-node max and LSTM
for pool/lstm): forward values and gradients of features, edge weights and every parameter, on a
homogeneous graph with an isolated node, a bipartite graph and a batched graph."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import SAGEConv

from nn_b_helpers import (batched_graph, bipartite_graph, compare, dense_adj, homo_graph, leaf, param_pairs,
                          torch_params)


def _dense_sage(agg, p, x_src, x_dst, src, dst, n_dst, ew, lstm_ref=None):
    n_src = x_src.shape[0]
    A = dense_adj(src, dst, n_src, n_dst, ew)
    deg = torch.tensor(np.bincount(dst, minlength=n_dst), dtype=torch.float64).unsqueeze(-1)
    w = ew if ew is not None else torch.ones(len(src), dtype=torch.float64)
    if agg == "mean":
        neigh = (A @ x_src) / deg.clamp(min=1)
    elif agg == "gcn":
        neigh = (A @ x_src + x_dst) / (deg + 1)
    elif agg == "pool":
        hp = torch.relu(x_src @ p["fc_pool.weight"].T + p["fc_pool.bias"])
        rows = []
        for v in range(n_dst):
            e = np.flatnonzero(dst == v)
            rows.append((hp[src[e]] * w[e].unsqueeze(-1)).max(0).values if len(e)
                        else torch.zeros(x_src.shape[1], dtype=torch.float64))
        neigh = torch.stack(rows)
    else:
        rows = []
        for v in range(n_dst):
            e = np.flatnonzero(dst == v)  # edge-id order
            if len(e):
                seq = (x_src[src[e]] * w[e].unsqueeze(-1)).unsqueeze(0)
                _, (h, _) = lstm_ref(seq)
                rows.append(h[0, 0])
            else:
                rows.append(torch.zeros(x_src.shape[1], dtype=torch.float64))
        neigh = torch.stack(rows)
    out = neigh @ p["fc_neigh.weight"].T
    if agg != "gcn":
        out = out + x_dst @ p["fc_self.weight"].T
    return out + p["bias"] if "bias" in p else out


def _run(conv, g, src, dst, x_pair, ew, rng, n_dst, agg):
    p = torch_params(conv)
    pairs = []
    lstm_ref = None
    if agg == "lstm":
        lstm_ref = torch.nn.LSTM(conv._in_src_feats, conv._in_src_feats, batch_first=True).double()
        lstm_ref.load_state_dict({k[5:]: v.detach() for k, v in p.items() if k.startswith("lstm.")})
        for k, v in lstm_ref.named_parameters():
            p["lstm." + k] = v
    pairs = param_pairs(conv, p)
    if isinstance(x_pair[0], tuple):
        (xs_nw, xs_th), (xd_nw, xd_th) = x_pair
        feat = (xs_nw, xd_nw)
        pairs += [("feat_src", xs_nw, xs_th), ("feat_dst", xd_nw, xd_th)]
    else:
        xs_nw, xs_th = x_pair
        feat, xd_th = xs_nw, xs_th
        pairs += [("feat", xs_nw, xs_th)]
    ew_nw, ew_th = (None, None) if ew is None else ew
    if ew is not None:
        pairs += [("edge_weight", ew_nw, ew_th)]
    out = conv(g, feat, edge_weight=ew_nw)
    ref = _dense_sage(agg, p, xs_th, xd_th, src, dst, n_dst, ew_th, lstm_ref)
    compare(out, ref, pairs, rng)


@pytest.mark.parametrize("agg", ["mean", "gcn", "pool", "lstm"])
@pytest.mark.parametrize("in_feats,out_feats", [(5, 3), (3, 4)])  # linear before / after aggregation
@pytest.mark.parametrize("weighted", [False, True])
def test_sage_homogeneous(agg, in_feats, out_feats, weighted):
    rng = np.random.default_rng(0)
    g, src, dst = homo_graph(rng, n=7, e=18, isolated=(2, 5))
    nc.manual_seed(1)
    conv = SAGEConv(in_feats, out_feats, agg).double()
    x = leaf(rng.standard_normal((7, in_feats)))
    ew = leaf(rng.uniform(0.5, 2.0, len(src))) if weighted else None
    _run(conv, g, src, dst, x, ew, rng, 7, agg)


@pytest.mark.parametrize("agg", ["mean", "gcn", "pool", "lstm"])
def test_sage_bipartite(agg):
    rng = np.random.default_rng(1)
    g, src, dst = bipartite_graph(rng, n_src=6, n_dst=4, e=13, isolated=(1,))
    in_dst = 5 if agg == "gcn" else 3
    conv = SAGEConv((5, in_dst), 4, agg).double()
    pair = (leaf(rng.standard_normal((6, 5))), leaf(rng.standard_normal((4, in_dst))))
    _run(conv, g, src, dst, pair, leaf(rng.uniform(0.5, 2.0, len(src))), rng, 4, agg)


@pytest.mark.parametrize("agg", ["mean", "gcn", "pool", "lstm"])
def test_sage_batched_matches_dense_and_per_graph(agg):
    rng = np.random.default_rng(2)
    bg, src, dst = batched_graph(rng, (4, 1, 5), (6, 0, 9))
    conv = SAGEConv(3, 2, agg, bias=False).double()
    x = leaf(rng.standard_normal((10, 3)))
    _run(conv, bg, src, dst, x, None, rng, 10, agg)
    xs = x[0].detach()
    whole = conv(bg, xs).detach().numpy()
    parts = [conv(gi, xi).detach().numpy() for gi, xi in zip(nw.unbatch(bg), xs.split([4, 1, 5]))]
    np.testing.assert_allclose(whole, np.concatenate(parts), rtol=1e-12, atol=1e-12)


def test_sage_isolated_nodes_get_only_the_self_term():
    g = nw.graph(([0, 1], [1, 0]), num_nodes=3)
    x = nc.tensor(np.arange(9.0).reshape(3, 3))
    for agg in ("mean", "pool", "lstm"):
        conv = SAGEConv(3, 2, agg)
        conv.double()
        out = conv(g, x).detach().numpy()
        np.testing.assert_allclose(out[2], (x.numpy()[2] @ conv.fc_self.weight.detach().numpy().T), atol=1e-12)
    # A graph without any edge: the lstm mailbox path has nothing to reduce.
    empty = nw.graph(([], []), num_nodes=2)
    conv = SAGEConv(3, 2, "lstm").double()
    out = conv(empty, x[:2]).detach().numpy()
    np.testing.assert_allclose(out, x.numpy()[:2] @ conv.fc_self.weight.detach().numpy().T, atol=1e-12)


def test_sage_activation_norm_dropout_eval_and_init():
    rng = np.random.default_rng(3)
    g, src, dst = homo_graph(rng)
    conv = SAGEConv(4, 3, "mean", feat_drop=0.5, activation=nc.tanh, norm=lambda t: t * 2).double()
    conv.eval()
    x = nc.tensor(rng.standard_normal((7, 4)))
    p = {k: torch.tensor(v.detach().numpy()) for k, v in conv.named_parameters()}
    ref = 2 * torch.tanh(_dense_sage("mean", p, torch.tensor(x.numpy()), torch.tensor(x.numpy()), src, dst, 7, None))
    np.testing.assert_allclose(conv(g, x).detach().numpy(), ref.numpy(), rtol=1e-12)
    conv.train()
    assert not np.allclose(conv(g, x).detach().numpy(), ref.numpy())
    # DGL's init: Xavier-uniform with the ReLU gain, zero bias.
    big = SAGEConv(200, 100, "gcn")
    bound = np.sqrt(2.0) * np.sqrt(6.0 / 300)
    w = big.fc_neigh.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert (big.bias.detach().numpy() == 0).all()
    assert not hasattr(big, "fc_self") or big._modules.get("fc_self") is None
    assert "bias" not in dict(SAGEConv(3, 2, "mean", bias=False).named_parameters())


def test_sage_bad_inputs_name_the_argument():
    rng = np.random.default_rng(4)
    g, src, _ = homo_graph(rng)
    bg, _, _ = bipartite_graph(rng)
    conv = SAGEConv(3, 2, "mean")
    with pytest.raises(ValueError, match="feat"):
        conv(g, nc.zeros(6, 3))
    with pytest.raises(ValueError, match=r"feat.*\(num_nodes, 3\)"):
        conv(g, nc.zeros(7, 4))
    with pytest.raises(ValueError, match="edge_weight"):
        conv(g, nc.zeros(7, 3), edge_weight=nc.ones(len(src) + 1))
    with pytest.raises(ValueError, match="pair"):
        conv(bg, nc.zeros(6, 3))
    with pytest.raises(ValueError, match=r"feat\[1\]"):
        conv(bg, (nc.zeros(6, 3), nc.zeros(3, 3)))
    with pytest.raises(ValueError, match="aggregator_type"):
        SAGEConv(3, 2, "median")
    with pytest.raises(ValueError, match="gcn"):
        SAGEConv((3, 4), 2, "gcn")(bg, (nc.zeros(6, 3), nc.zeros(4, 4)))
