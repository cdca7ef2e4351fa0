"""HGTConv against the heterogeneous graph transformer written densely in torch float64 (per-edge
typed projections, a masked softmax over each node's in-edges, typed output and gated skip):
values and the gradients of the features and of every parameter, on graphs with a node without
in-edges, with presorted types, on a block and on a heterograph made homogeneous; gradients by
finite differences; dropout; bad inputs."""

import math

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import HGTConv

from nn_check import check, fd_check, randomize

TF = torch.float64


def edges(rng, ns, nd, p=0.45, no_in=()):
    m = rng.random((nd, ns)) < p
    for i in range(nd):
        if not m[i].any():
            m[i, rng.integers(ns)] = True
    for i in no_in:
        m[i] = False
    dst, src = np.nonzero(m)
    perm = rng.permutation(len(src))  # edge ids in no particular order
    return src[perm], dst[perm]


def ref_hgt(p, x, src, dst, ntype, etype, n_dst, heads, d, use_norm=False):
    """The layer's formula, edge by edge (vectorized), with a dense (N_dst, E) in-edge mask."""
    src, dst = torch.as_tensor(src), torch.as_tensor(dst)
    nt, et = torch.as_tensor(ntype), torch.as_tensor(etype)
    n, width = x.shape[0], heads * d

    def typed(inp, W, types):  # inp[r] @ W[types[r]]
        return torch.einsum("ri,rio->ro", inp, W[types])

    k = typed(x, p["linear_k.W"], nt).reshape(n, heads, d)
    v = typed(x, p["linear_v.W"], nt).reshape(n, heads, d)
    q = typed(x[:n_dst], p["linear_q.W"], nt[:n_dst]).reshape(n_dst, heads, d)
    mask = dst[None, :] == torch.arange(n_dst)[:, None]                    # (N_dst, E)
    out_heads = []
    for i in range(heads):
        kw = typed(k[src, i], p[f"relation_att.{i}.W"], et)                 # (E, d)
        score = (kw * q[dst, i]).sum(1) * p[f"relation_pri.{i}"][et] / math.sqrt(d)
        alpha = torch.softmax(torch.where(mask, score[None, :], torch.full_like(mask, -1e30, dtype=TF)), 1) * mask
        msg = typed(v[src, i], p[f"relation_msg.{i}.W"], et)
        out_heads.append(alpha @ msg)
    h = typed(torch.cat(out_heads, 1), p["linear_a.W"], nt[:n_dst])
    gate = torch.sigmoid(p["skip"][nt[:n_dst]]).unsqueeze(-1)
    res = x[:n_dst] @ p["residual_w"] if "residual_w" in p else x[:n_dst]
    h = h * gate + res * (1 - gate)
    if use_norm:
        h = torch.nn.functional.layer_norm(h, (width,), p["norm.weight"], p["norm.bias"])
    return h


@pytest.mark.parametrize("case", ["identity-residual", "residual-weight-norm", "one-head"])
def test_hgt_conv_matches_dense_reference(rng, case):
    in_size, d, heads, n_nt, n_et, norm = {"identity-residual": (6, 3, 2, 2, 3, False),
                                          "residual-weight-norm": (5, 2, 3, 3, 2, True),
                                          "one-head": (4, 4, 1, 2, 4, False)}[case]
    n = 8
    src, dst = edges(rng, n, n, no_in=(5,))
    nt, et = rng.integers(0, n_nt, n), rng.integers(0, n_et, len(src))
    conv = randomize(HGTConv(in_size, d, heads, n_nt, n_et, use_norm=norm), rng).eval()
    assert ("residual_w" in dict(conv.named_parameters())) == (in_size != d * heads)
    g = nw.graph((src, dst), num_nodes=n)
    out = check(conv, lambda m, x: m(g, x, nc.tensor(nt), nc.tensor(et)),
                lambda p, x: ref_hgt(p, x, src, dst, nt, et, n, heads, d, norm),
                {"x": rng.standard_normal((n, in_size))}, rng)
    assert tuple(out[0].shape) == (n, d * heads)


def test_hgt_conv_presorted_equals_unsorted(rng):
    n = 9
    src, dst = edges(rng, n, n)
    et = rng.integers(0, 3, len(src))
    order = np.argsort(et, kind="stable")        # edges sorted by type, nodes too (node ids = type order)
    src, dst, et = src[order], dst[order], et[order]
    nt = np.sort(rng.integers(0, 2, n))
    conv = randomize(HGTConv(4, 2, 2, 2, 3), rng).eval()
    g = nw.graph((src, dst), num_nodes=n)
    x = rng.standard_normal((n, 4))
    check(conv, lambda m, x: m(g, x, nc.tensor(nt), nc.tensor(et), presorted=True),
          lambda p, x: ref_hgt(p, x, src, dst, nt, et, n, 2, 2), {"x": x}, rng)
    with pytest.raises(ValueError, match=r"presorted=True but etype is not sorted"):
        conv(g, nc.tensor(x), nc.tensor(nt), nc.tensor(et[::-1].copy()), presorted=True)
    with pytest.raises(ValueError, match=r"presorted=True but ntype is not sorted"):
        conv(g, nc.tensor(x), nc.tensor(nt[::-1].copy()), nc.tensor(et), presorted=True)


def test_hgt_conv_on_a_block(rng):
    ns, nd = 8, 3
    src, dst = edges(rng, ns, nd)
    g = nw.heterograph({("_U", "_E", "_V"): (src, dst)}, num_nodes_dict={"_U": ns, "_V": nd})
    g.is_block = True  # destination nodes are the first source nodes
    nt, et = rng.integers(0, 2, ns), rng.integers(0, 2, len(src))
    conv = randomize(HGTConv(4, 3, 2, 2, 2, use_norm=True), rng).eval()
    out = check(conv, lambda m, x: m(g, x, nc.tensor(nt), nc.tensor(et)),
                lambda p, x: ref_hgt(p, x, src, dst, nt, et, nd, 2, 3, True),
                {"x": rng.standard_normal((ns, 4))}, rng)
    assert tuple(out[0].shape) == (nd, 6)


def test_hgt_conv_on_a_heterograph_made_homogeneous(rng):
    hg = nw.heterograph({("user", "follows", "user"): ([0, 1, 2], [1, 2, 0]),
                         ("user", "plays", "game"): ([0, 1, 2, 2], [0, 0, 1, 1]),
                         ("game", "played-by", "user"): ([0, 1, 1], [1, 2, 0])})
    g = nw.to_homogeneous(hg)
    nt, et = g.ndata["_TYPE"].numpy(), g.edata["_TYPE"].numpy()
    src, dst = (a.numpy() for a in g.edges())
    conv = randomize(HGTConv(4, 2, 2, len(hg.ntypes), len(hg.canonical_etypes)), rng).eval()
    x = rng.standard_normal((g.num_nodes(), 4))
    check(conv, lambda m, x: m(g, x, g.ndata["_TYPE"], g.edata["_TYPE"], presorted=True),
          lambda p, x: ref_hgt(p, x, src, dst, nt, et, g.num_nodes(), 2, 2), {"x": x}, rng)


def test_hgt_conv_gradients_match_finite_differences(rng):
    n = 6
    src, dst = edges(rng, n, n, no_in=(2,))
    nt, et = nc.tensor(rng.integers(0, 2, n)), nc.tensor(rng.integers(0, 2, len(src)))
    g = nw.graph((src, dst), num_nodes=n)
    conv = randomize(HGTConv(3, 2, 2, 2, 2, use_norm=True), rng, scale=0.8).eval()
    fd_check(conv, lambda m, x: m(g, x, nt, et), {"x": rng.standard_normal((n, 3))}, rng)


def test_hgt_conv_defaults_and_dropout(rng):
    conv = HGTConv(4, 2, 2, 2, 3)
    assert conv.drop.p == 0.2 and not conv.use_norm
    for i in range(2):  # priors start at 1, the skip gate at sigmoid(1)
        np.testing.assert_array_equal(conv.relation_pri[i].detach().numpy(), np.ones(3))
    np.testing.assert_array_equal(conv.skip.detach().numpy(), np.ones(2))
    g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
    x, nt, et = nc.randn(4, 4), nc.tensor([0, 1, 0, 1]), nc.tensor([0, 2, 1, 0])
    conv.train()
    a, b = conv(g, x, nt, et), conv(g, x, nt, et)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())   # dropout after linear_a
    conv.eval()
    np.testing.assert_array_equal(conv(g, x, nt, et).detach().numpy(), conv(g, x, nt, et).detach().numpy())


def test_hgt_conv_bad_inputs_name_the_argument():
    conv = HGTConv(4, 2, 2, 2, 3)
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    x, nt, et = nc.ones(3, 4), nc.tensor([0, 1, 0]), nc.tensor([0, 2, 1])
    with pytest.raises(ValueError, match=r"HGTConv: ntype must have one entry per source node \(3\), got 2"):
        conv(g, x, nc.tensor([0, 1]), et)
    with pytest.raises(ValueError, match=r"HGTConv: etype must be in \[0, 3\)"):
        conv(g, x, nt, nc.tensor([0, 3, 1]))
    with pytest.raises(ValueError, match="HGTConv: x"):
        conv(g, nc.ones(3, 5), nt, et)
    with pytest.raises(ValueError, match="HGTConv: x"):
        conv(g, nc.ones(2, 4), nt, et)
    hg = nw.heterograph({("a", "r", "b"): ([0], [1]), ("b", "s", "a"): ([1], [0])})
    with pytest.raises(ValueError, match="to_homogeneous"):
        conv(hg, x, nt, et)
    with pytest.raises(ValueError, match="num_heads must be a positive int, got 0"):
        HGTConv(4, 2, 0, 2, 3)
