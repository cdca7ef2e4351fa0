"""HeteroGraphConv, HeteroLinear and HeteroEmbedding against dense formulas in torch float64:
each relation's mean-SAGE (and R-GCN via mod_args) written with adjacency matrices, combined per
destination type by every aggregate; gradients of every input and parameter; batched heterographs
and (src, dst) input pairs; bad inputs."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import HeteroEmbedding, HeteroGraphConv, HeteroLinear, RelGraphConv, SAGEConv

from nn_b_helpers import compare, dense_adj, leaf, param_pairs, rand_edges, torch_params

N = {"user": 5, "game": 4, "shop": 2}
D = {"user": 3, "game": 2, "shop": 4}
RELS = [("user", "follows", "user"), ("user", "plays", "game"), ("game", "played-by", "user"),
        ("shop", "sells", "game")]


def _hetero(rng):
    data = {}
    for st, et, dt in RELS:
        data[(st, et, dt)] = rand_edges(rng, N[st], N[dt], 7, isolated=(0,) if dt == "user" else ())
    return nw.heterograph(data, num_nodes_dict=dict(N)), data


def _mods(out=3):
    return {cet if cet[1] == "sells" else cet[1]: SAGEConv((D[cet[0]], D[cet[2]]), out, "mean") for cet in RELS}


def _dense_mean_sage(p, prefix, xs, xd, src, dst, n_dst, ew=None):
    A = dense_adj(src, dst, xs.shape[0], n_dst, ew)
    deg = torch.tensor(np.bincount(dst, minlength=n_dst), dtype=torch.float64).unsqueeze(-1)
    return ((A @ xs) / deg.clamp(min=1)) @ p[prefix + "fc_neigh.weight"].T + xd @ p[prefix + "fc_self.weight"].T \
        + p[prefix + "bias"]


def _key(cet):
    return str(cet) if cet[1] == "sells" else cet[1]


AGGS = {"sum": lambda ts: torch.stack(ts).sum(0), "mean": lambda ts: torch.stack(ts).mean(0),
        "max": lambda ts: torch.stack(ts).max(0).values, "min": lambda ts: torch.stack(ts).min(0).values,
        "stack": lambda ts: torch.stack(ts, 1)}


@pytest.mark.parametrize("aggregate", list(AGGS))
def test_hetero_graph_conv_every_aggregate(aggregate):
    rng = np.random.default_rng(0)
    g, data = _hetero(rng)
    conv = HeteroGraphConv(_mods(), aggregate=aggregate).double()
    with nc.no_grad():
        for name, prm in conv.named_parameters():
            if name.endswith("bias"):
                prm.copy_(nc.tensor(rng.standard_normal(tuple(prm.shape))))
    p = torch_params(conv)
    xs = {nt: leaf(rng.standard_normal((N[nt], D[nt]))) for nt in N}
    out = conv(g, {nt: v[0] for nt, v in xs.items()})
    assert sorted(out) == ["game", "user"]  # no relation ends at 'shop'
    per_type = {}
    for cet in g.canonical_etypes:  # 'stack' keeps the graph's relation order
        st, _, dt = cet
        src, dst = data[cet]
        per_type.setdefault(dt, []).append(
            _dense_mean_sage(p, f"mods.{_key(cet)}.", xs[st][1], xs[dt][1], src, dst, N[dt]))
    ref = {dt: AGGS[aggregate](ts) for dt, ts in per_type.items()}
    pairs = param_pairs(conv, p) + [(f"x[{nt}]", v[0], v[1]) for nt, v in xs.items()]
    # One backward through both outputs: concatenate them.
    flat_nw = nc.cat([out["game"].reshape(-1), out["user"].reshape(-1)])
    flat_th = torch.cat([ref["game"].reshape(-1), ref["user"].reshape(-1)])
    compare(flat_nw, flat_th, pairs, rng)


def test_hetero_graph_conv_callable_aggregate_and_mod_kwargs():
    rng = np.random.default_rng(1)
    g, data = _hetero(rng)
    seen = []

    def agg(tensors, dsttype):
        seen.append((dsttype, len(tensors)))
        return tensors[0] * 2 + sum(tensors[1:])

    conv = HeteroGraphConv(_mods(), aggregate=agg).double()
    p = torch_params(conv)
    xs = {nt: leaf(rng.standard_normal((N[nt], D[nt]))) for nt in N}
    w_nw, w_th = leaf(rng.uniform(0.5, 2.0, 7))
    out = conv(g, {nt: v[0] for nt, v in xs.items()}, mod_kwargs={"plays": {"edge_weight": w_nw}})
    assert sorted(seen) == [("game", 2), ("user", 2)]
    cet = ("user", "plays", "game")
    plays = _dense_mean_sage(p, "mods.plays.", xs["user"][1], xs["game"][1], *data[cet], N["game"], w_th)
    sells = _dense_mean_sage(p, f"mods.{_key(RELS[3])}.", xs["shop"][1], xs["game"][1], *data[RELS[3]], N["game"])
    compare(out["game"], sells * 2 + plays,  # graph order: (shop, sells, game) first
            [("edge_weight", w_nw, w_th), ("x[shop]", xs["shop"][0], xs["shop"][1])], rng)


def test_hetero_graph_conv_mod_args_with_relgraphconv():
    rng = np.random.default_rng(2)
    g, data = _hetero(rng)
    D2 = 3
    mods = {cet[1]: RelGraphConv(D2, 2, 2, "basis", 2, self_loop=False) for cet in RELS}
    conv = HeteroGraphConv(mods).double()
    p = torch_params(conv)
    etypes = {cet[1]: rng.integers(0, 2, 7) for cet in RELS}
    xs = {nt: leaf(rng.standard_normal((N[nt], D2))) for nt in N}
    out = conv(g, {nt: v[0] for nt, v in xs.items()},
               mod_args={k: (nc.tensor(v),) for k, v in etypes.items()})
    ref = torch.zeros(N["user"], 2, dtype=torch.float64)
    for cet in RELS:
        if cet[2] != "user":
            continue
        pre = f"mods.{cet[1]}.linear_r."
        src, dst = data[cet]
        for r in range(2):
            Wr = p[pre + "coeff"][r, 0] * p[pre + "W"][0] + p[pre + "coeff"][r, 1] * p[pre + "W"][1]
            sel = etypes[cet[1]] == r
            ref = ref + dense_adj(src[sel], dst[sel], N[cet[0]], N["user"]) @ xs[cet[0]][1] @ Wr
        ref = ref + p[f"mods.{cet[1]}.h_bias"]
    compare(out["user"], ref, [("x[game]", xs["game"][0], xs["game"][1])], rng)


def test_hetero_graph_conv_pair_inputs_and_skipped_types():
    rng = np.random.default_rng(3)
    g, data = _hetero(rng)
    conv = HeteroGraphConv(_mods()).double()
    xs = {nt: nc.tensor(rng.standard_normal((N[nt], D[nt]))) for nt in N}
    full = conv(g, xs)
    paired = conv(g, (xs, {"game": xs["game"], "user": xs["user"]}))
    for nt in full:
        np.testing.assert_allclose(paired[nt].detach().numpy(), full[nt].detach().numpy(), rtol=1e-12)
    # Without 'shop' inputs the 'sells' relation is skipped.
    no_shop = conv(g, {"user": xs["user"], "game": xs["game"]})
    without = HeteroGraphConv({k: v for k, v in conv.mods.items() if "sells" not in k})
    np.testing.assert_allclose(no_shop["game"].detach().numpy(),
                               without(g_without_sells(g), {"user": xs["user"], "game": xs["game"]})["game"]
                               .detach().numpy(), rtol=1e-12)
    # A pair whose destination dict lacks 'user' skips relations ending there.
    only_game = conv(g, (xs, {"game": xs["game"]}))
    assert sorted(only_game) == ["game"]


def g_without_sells(g):
    data = {cet: tuple(t.numpy() for t in g.edges(etype=cet)) for cet in g.canonical_etypes if cet[1] != "sells"}
    return nw.heterograph(data, num_nodes_dict={nt: g.num_nodes(nt) for nt in g.ntypes})


def test_hetero_graph_conv_batched_matches_per_graph():
    rng = np.random.default_rng(4)
    graphs = [_hetero(rng)[0] for _ in range(3)]
    bg = nw.batch(graphs)
    conv = HeteroGraphConv(_mods(), aggregate="mean").double()
    xs = [{nt: nc.tensor(rng.standard_normal((N[nt], D[nt]))) for nt in N} for _ in graphs]
    whole = conv(bg, {nt: nc.cat([x[nt] for x in xs]) for nt in N})
    for nt in whole:
        parts = [conv(gi, xi)[nt].detach().numpy() for gi, xi in zip(graphs, xs)]
        np.testing.assert_allclose(whole[nt].detach().numpy(), np.concatenate(parts), rtol=1e-12, atol=1e-12)


def test_hetero_graph_conv_bad_inputs():
    rng = np.random.default_rng(5)
    g, _ = _hetero(rng)
    xs = {nt: nc.zeros(N[nt], D[nt]) for nt in N}
    partial = HeteroGraphConv({"follows": SAGEConv(3, 2, "mean")})
    with pytest.raises(KeyError, match="no module for edge type"):
        partial(g, xs)
    with pytest.raises(ValueError, match="aggregate"):
        HeteroGraphConv(_mods(), aggregate="prod")
    with pytest.raises(ValueError, match="mods"):
        HeteroGraphConv({})
    with pytest.raises(KeyError, match="destination type 'game'"):
        HeteroGraphConv(_mods())(g, {"user": xs["user"], "shop": xs["shop"]})
    with pytest.raises(ValueError, match=r"relation \('game', 'played-by', 'user'\): feat\[1\] must have one "
                                         r"row per destination node \(5\), got 4"):
        HeteroGraphConv(_mods())(g, dict(xs, user=nc.zeros(4, 3)))
    with pytest.raises(TypeError, match="inputs"):
        HeteroGraphConv(_mods())(g, [xs["user"]])


# ---------------------------------------------------------------- HeteroLinear / HeteroEmbedding
def test_hetero_linear():
    rng = np.random.default_rng(6)
    cet = ("user", "plays", "game")
    lin = HeteroLinear({"user": 3, cet: 4}, 2).double()
    p = torch_params(lin)
    xu, xe = leaf(rng.standard_normal((5, 3))), leaf(rng.standard_normal((6, 4)))
    out = lin({"user": xu[0], cet: xe[0]})
    ref = torch.cat([(xu[1] @ p["linears.user.weight"].T + p["linears.user.bias"]).reshape(-1),
                     (xe[1] @ p[f"linears.{cet}.weight"].T + p[f"linears.{cet}.bias"]).reshape(-1)])
    compare(nc.cat([out["user"].reshape(-1), out[cet].reshape(-1)]), ref,
            param_pairs(lin, p) + [("user", xu[0], xu[1]), ("plays", xe[0], xe[1])], rng)
    assert "linears.user.bias" not in dict(HeteroLinear({"user": 3}, 2, bias=False).named_parameters())
    with pytest.raises(KeyError, match="game"):
        lin({"game": nc.zeros(1, 3)})


def test_hetero_embedding():
    emb = HeteroEmbedding({"user": 4, ("a", "r", "b"): 3}, 2).double()
    ids = {"user": nc.tensor([3, 0, 3]), ("a", "r", "b"): nc.tensor([[1, 2]])}
    out = emb(ids)
    w = {k: v.detach().numpy() for k, v in emb.weight.items()}
    np.testing.assert_array_equal(out["user"].detach().numpy(), w["user"][[3, 0, 3]])
    np.testing.assert_array_equal(out[("a", "r", "b")].detach().numpy(), w[("a", "r", "b")][[[1, 2]]])
    (out["user"].sum() * 2).backward()
    g = emb.weight["user"].grad.numpy()
    np.testing.assert_array_equal(g[:, 0], [2.0, 0.0, 0.0, 4.0])
    before = emb.weight["user"].detach().numpy().copy()
    emb.reset_parameters()
    assert not np.array_equal(before, emb.weight["user"].detach().numpy())
    with pytest.raises(KeyError, match="game"):
        emb({"game": nc.tensor([0])})


def test_hetero_graph_conv_takes_a_parameter_dict_as_inputs():
    # DGL's heterogeneous R-GCN example passes its learnt node embeddings as a torch.nn.ParameterDict,
    # which is dict-like without being a Mapping: it must give the outputs a plain dict gives.
    import nodeweave.nn.pytorch as nn_torch

    nw.set_backend("pytorch")
    rng = np.random.default_rng(7)
    g, _ = _hetero(rng)
    torch.manual_seed(0)
    conv = nn_torch.HeteroGraphConv({cet if cet[1] == "sells" else cet[1]:
                                     nn_torch.SAGEConv((D[cet[0]], D[cet[2]]), 3, "mean") for cet in RELS})
    embeds = torch.nn.ParameterDict({nt: torch.nn.Parameter(torch.randn(N[nt], D[nt])) for nt in N})
    out = conv(g, embeds)
    ref = conv(g, {nt: embeds[nt] for nt in N})
    assert sorted(out) == sorted(ref) == ["game", "user"]
    for nt in out:
        torch.testing.assert_close(out[nt], ref[nt], rtol=0, atol=0)
    sum(o.sum() for o in out.values()).backward()
    assert all(embeds[nt].grad is not None for nt in ("user", "game", "shop"))
    pair = conv(g, (embeds, {nt: embeds[nt] for nt in N}))  # a pair of dict-likes too
    torch.testing.assert_close(pair["user"], ref["user"], rtol=0, atol=0)
    with pytest.raises(TypeError, match="inputs"):
        conv(g, torch.zeros(3))  # indexable, but no dict
