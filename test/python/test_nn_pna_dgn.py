"""PNAConv and DGNConv on both backends against their formulas written densely in torch float64
(values, gradients of the node and edge features, the eigenvectors and every parameter) on
homogeneous graphs with repeated edges and nodes without in-edges, and on batches; then their
errors for bad input.

The odd moments of exactly two messages are 0 up to rounding, and their n-th root turns a rounding
of 1e-17 into 1e-6, on DGL as here; so the graphs give every node 0, 1 or at least 3 in-edges.
"""

import math

import numpy as np
import pytest
import torch

import nodeweave as nw

from layer_ref_helpers import BACKENDS, Edges, batch_norm, check_layer, leaky_relu, lin, side

AGGS = ["mean", "sum", "max", "min", "std", "var", "moment3", "moment4", "moment5"]
SCALERS = ["identity", "amplification", "attenuation"]


def graph_edges(rng, n, degrees=(0, 1, 3, 4, 5)):
    """Edges whose destinations have in-degrees drawn from ``degrees`` (repeated sources allowed),
    node 0 with none and node 1 with one, so both cases are always there."""
    dst = []
    for v in range(n):
        d = 0 if v == 0 else 1 if v == 1 else rng.choice(degrees)
        dst += [v] * int(d)
    dst = np.array(dst, np.int64)
    src = rng.integers(0, n, len(dst))
    perm = rng.permutation(len(dst))
    return src[perm], dst[perm]


def make_graph(rng, kind):
    if kind == "homo":
        src, dst = graph_edges(rng, 8)
        return nw.graph((src, dst), num_nodes=8), Edges(src, dst, 8, 8, sizes=[8])
    sizes, graphs, srcs, dsts, off = (5, 2, 6), [], [], [], 0
    for n in sizes:
        s, d = graph_edges(rng, n)
        graphs.append(nw.graph((s, d), num_nodes=n))
        srcs.append(s + off)
        dsts.append(d + off)
        off += n
    return nw.batch(graphs), Edges(np.concatenate(srcs), np.concatenate(dsts), off, off, sizes=list(sizes))


# ---------------------------------------------------------------------------- the dense formula
def statistic(E, msg, name, x, eig):
    if name == "sum":
        return E.sum(msg)
    if name == "mean":
        return E.mean(msg)
    if name in ("max", "min"):
        return E.extreme(msg, largest=name == "max")
    if name in ("var", "std"):
        mu = E.mean(msg)
        var = torch.relu(E.mean(msg * msg) - mu * mu)
        return var if name == "var" else torch.sqrt(var + 1e-30)
    if name.startswith("moment"):
        n = int(name[-1])
        centred = msg - E.v(E.mean(msg))
        mom = E.mean(centred ** n)
        return torch.sign(mom) * (mom.abs() + 1e-30) ** (1.0 / n)
    k, kind = int(name[3]), name[5:]                   # dir{k}-av / dir{k}-dx
    phi = eig[:, k - 1:k]
    field = E.u(phi) - E.v(phi)
    w = field / E.v(E.sum(field.abs()) + 1e-30)
    if kind == "av":
        return E.sum(w.abs() * msg)
    return (E.sum(w * msg) - E.sum(w) * x).abs()


def ref_pna(p, b, t, E, aggs, scalers, delta, towers, ef, in_size, out_size, train):
    x, e, eig = t["x"], t.get("e"), t.get("eig")
    d_in = in_size // towers
    deg = E.in_deg().reshape(-1, 1)
    safe = deg.clamp(min=1)
    snorm = torch.cat([torch.full((n, 1), 1.0 / math.sqrt(n), dtype=torch.float64) for n in E.sizes])
    outs = []
    for i in range(towers):
        pre = f"towers.{i}."
        xt = x[:, i * d_in:(i + 1) * d_in]
        parts = [E.u(xt), E.v(xt)] + ([e] if ef else [])
        msg = lin(p, pre + "M", torch.cat(parts, dim=1))
        agg = torch.cat([statistic(E, msg, a, xt, eig) for a in aggs], dim=1)
        scale = {"identity": torch.ones_like(safe), "amplification": torch.log(safe + 1) / delta,
                 "attenuation": delta / torch.log(safe + 1)}
        neigh = torch.cat([agg * scale[s] for s in scalers], dim=1)
        neigh = torch.where(deg > 0, neigh, torch.zeros((), dtype=torch.float64))
        h = lin(p, pre + "U", torch.cat([xt, neigh], dim=1)) * snorm
        outs.append(batch_norm(h, p, b, pre + "batchnorm", train))
    out = leaky_relu(lin(p, "mixing_layer.0", torch.cat(outs, dim=1)), 0.01)
    return out + x if in_size == out_size else out


CONFIGS = [  # towers, edge feature size, in_size, out_size, aggregators, scalers
    (1, 0, 4, 4, AGGS, SCALERS),
    (2, 3, 4, 6, AGGS, SCALERS),
    (1, 2, 3, 5, ["std", "moment3", "max"], ["attenuation"]),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["homo", "batched"])
@pytest.mark.parametrize("config", range(len(CONFIGS)))
@pytest.mark.parametrize("train", [False, True])
def test_pna(backend, kind, config, train):
    rng = np.random.default_rng(20 + config)
    towers, ef, i, o, aggs, scalers = CONFIGS[config]
    g, E = make_graph(rng, kind)
    inputs = {"x": rng.standard_normal((E.ns, i))}
    if ef:
        inputs["e"] = rng.standard_normal((E.ne, ef))
    conv = check_layer(backend,
                       lambda ns: ns.nn.PNAConv(i, o, aggs, scalers, 1.3, num_towers=towers, edge_feat_size=ef),
                       lambda m, t: m(g, t["x"], t.get("e")),
                       lambda p, b, t: ref_pna(p, b, t, E, aggs, scalers, 1.3, towers, ef, i, o, train),
                       inputs, rng, train=train)
    assert conv.residual == (i == o)


DIR_AGGS = ["mean", "dir1-av", "dir1-dx", "dir2-av", "dir3-dx", "moment4"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["homo", "batched"])
@pytest.mark.parametrize("towers,ef", [(1, 0), (2, 2)])
def test_dgn(backend, kind, towers, ef):
    rng = np.random.default_rng(30)
    g, E = make_graph(rng, kind)
    inputs = {"x": rng.standard_normal((E.ns, 4)), "eig": rng.standard_normal((E.ns, 3))}
    if ef:
        inputs["e"] = rng.standard_normal((E.ne, ef))
    scalers = ["identity", "amplification"]
    check_layer(backend,
                lambda ns: ns.nn.DGNConv(4, 4, DIR_AGGS, scalers, 0.9, num_towers=towers, edge_feat_size=ef),
                lambda m, t: m(g, t["x"], t.get("e"), eig_vec=t["eig"]),
                lambda p, b, t: ref_pna(p, b, t, E, DIR_AGGS, scalers, 0.9, towers, ef, 4, 4, False), inputs, rng)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dgn_without_directions_is_pna(backend):
    """Without a dir aggregator DGNConv needs no eigenvectors and computes PNAConv."""
    rng = np.random.default_rng(31)
    g, E = make_graph(rng, "homo")
    inputs = {"x": rng.standard_normal((E.ns, 4))}
    conv = check_layer(backend, lambda ns: ns.nn.DGNConv(4, 2, ["mean", "var"], ["identity"], 2.0),
                       lambda m, t: m(g, t["x"]),
                       lambda p, b, t: ref_pna(p, b, t, E, ["mean", "var"], ["identity"], 2.0, 1, 0, 4, 2, False),
                       inputs, rng)
    assert not conv.use_eig_vec


def test_pna_parameter_names():
    conv = side("native").nn.PNAConv(4, 6, ["mean", "max"], ["identity", "attenuation"], 1.0, num_towers=2,
                                     edge_feat_size=3)
    names = sorted(n for n, _ in conv.named_parameters())
    assert names == sorted([f"towers.{i}.{m}.{w}" for i in range(2) for m in ("M", "U", "batchnorm")
                            for w in ("weight", "bias")] + ["mixing_layer.0.weight", "mixing_layer.0.bias"])
    assert tuple(conv.towers[0].M.weight.shape) == (2, 2 * 2 + 3)
    assert tuple(conv.towers[0].U.weight.shape) == (3, (2 * 2 + 1) * 2)


# ---------------------------------------------------------------------------- errors
@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_inputs_name_the_argument(backend):
    ns = side(backend)
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    ones = ns.T.ones
    bi = nw.heterograph({("_U", "_E", "_V"): ([0, 1, 2], [0, 0, 1])}, num_nodes_dict={"_U": 3, "_V": 2})
    pna = ns.nn.PNAConv(4, 4, ["mean"], ["identity"], 1.0, edge_feat_size=2)
    dgn = ns.nn.DGNConv(4, 4, ["dir2-av"], ["identity"], 1.0)
    cases = [
        (lambda: ns.nn.PNAConv(4, 4, ["median"], ["identity"], 1.0), ValueError, r"unknown aggregators \['median'\]"),
        (lambda: ns.nn.PNAConv(4, 4, "mean", ["identity"], 1.0), ValueError, "aggregators must be a non-empty list"),
        (lambda: ns.nn.PNAConv(4, 4, ["mean"], ["log"], 1.0), ValueError, r"unknown scalers \['log'\]"),
        (lambda: ns.nn.PNAConv(4, 4, ["dir1-av"], ["identity"], 1.0), ValueError, "unknown aggregators"),
        (lambda: ns.nn.PNAConv(4, 6, ["mean"], ["identity"], 1.0, num_towers=4), ValueError,
         r"divisible by num_towers \(4\)"),
        (lambda: ns.nn.PNAConv(4, 4, ["mean"], ["identity"], 0.0), ValueError, "delta must be a positive number"),
        (lambda: pna(g, ones(3, 4)), ValueError, r"edge_feat is required \(edge_feat_size=2\)"),
        (lambda: pna(g, ones(3, 4), ones(3, 1)), ValueError, "edge_feat .* expected edge_feat_size=2"),
        (lambda: pna(g, ones(3, 5), ones(3, 2)), ValueError, "node_feat .* expected in_size=4"),
        (lambda: pna(g, ones(2, 4), ones(3, 2)), ValueError, "node_feat has 2 rows but the graph has 3 nodes"),
        (lambda: pna(bi, ones(3, 4), ones(3, 2)), ValueError, "PNAConv needs a homogeneous graph"),
        (lambda: dgn(g, ones(3, 4)), ValueError, r"eig_vec is required .*at least 2 eigenvectors"),
        (lambda: dgn(g, ones(3, 4), eig_vec=ones(3, 1)), ValueError, r"eig_vec must have shape \(num_nodes, K\) "
                                                                     "with K >= 2"),
        (lambda: dgn(g, ones(3, 4), eig_vec=ones(4, 2)), ValueError, "eig_vec has 4 rows but the graph has 3"),
    ]
    for call, err, msg in cases:
        with pytest.raises(err, match=msg):
            call()
