"""TWIRLSConv and TWIRLSUnfoldingAndAttention against the propagation written with dense
adjacency matrices in torch float64 (both step rules, the attention reweighting with its clips,
the MLPs around it): values and the gradients of every input and parameter; gradients by finite
differences; self-loop handling, the propagation cache, dropout and bad inputs."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import TWIRLSConv, TWIRLSUnfoldingAndAttention

from nn_check import check, fd_check, randomize

TF = torch.float64
F = torch.nn.functional


def simple_edges(rng, n, p=0.35):
    """Edges of a simple graph without self-loops, in random edge-id order."""
    m = rng.random((n, n)) < p
    np.fill_diagonal(m, False)
    dst, src = np.nonzero(m)
    perm = rng.permutation(len(src))
    return src[perm], dst[perm]


def with_loops(src, dst, n):
    """The graph TWIRLS propagates on: the edges plus one self-loop per node, appended."""
    return np.concatenate([src, np.arange(n)]), np.concatenate([dst, np.arange(n)])


def ref_unfold(X, src, dst, n, prop_step, alp, lam, precond, attn_aft=-1, init_att=False, tau=0.2, T=-1.0, p=1.0,
               etas=None):
    """``prop_step`` steps with a dense weighted adjacency A[v, u] (u -> v)."""
    alp = alp if alp > 0 else 1 / (1 + lam)
    src_t, dst_t = torch.as_tensor(src), torch.as_tensor(dst)

    def adjacency(w):
        return torch.zeros((n, n), dtype=TF).index_put((dst_t, src_t), w, accumulate=True)

    A = adjacency(torch.ones(len(src), dtype=TF))

    def attention(Y):
        Ye = Y * etas if etas is not None else Y
        d2 = ((Ye[src_t] - Ye[dst_t]) ** 2).sum(1)
        w = (d2 + 1e-7) ** (1 - p / 2)
        w = torch.clamp(w, min=tau)
        inv = 1 / w
        if T > 0:
            inv = torch.where(w > T, torch.zeros_like(inv), inv)
        return adjacency(inv + 1e-9)

    if init_att:
        A = attention(X)
    Y = X
    for k in range(prop_step):
        deg = A.sum(1)
        dl = lam * deg + (1 - lam) if precond else deg
        s = dl.pow(-0.5)
        AY = s[:, None] * (A @ (s[:, None] * Y))
        if precond:
            Y = (1 - alp) * Y + alp * lam * AY + alp * X / dl[:, None]
        else:
            Y = (1 - alp * lam - alp) * Y + alp * lam * AY + alp * X
        if k == attn_aft - 1:
            A = attention(Y)
    return Y


def ref_mlp(p, prefix, x, num_layers, init_activate, norm, bufs):
    step = 0

    def activate(h):
        nonlocal step
        name = f"{prefix}.norms.{step}"
        if norm == "layer":
            h = F.layer_norm(h, h.shape[-1:], p[name + ".weight"], p[name + ".bias"])
        elif norm == "batch":  # eval mode: running statistics
            h = F.batch_norm(h, bufs[name + ".running_mean"], bufs[name + ".running_var"], p[name + ".weight"],
                             p[name + ".bias"], False)
        step += norm != "none"
        return torch.relu(h)

    if init_activate:
        x = activate(x)
    for i in range(num_layers):
        x = F.linear(x, p[f"{prefix}.layers.{i}.weight"], p[f"{prefix}.layers.{i}.bias"])
        if i != num_layers - 1:
            x = activate(x)
    return x


CONFIGS = {
    "default": {},
    "eq30": dict(precond=False, lam=0.7, alp=0.3),
    "attention-clipped": dict(attention=True, tau=0.4, T=3.0, p=0.8),
    "attention-eta-before-layernorm": dict(attention=True, use_eta=True, attn_bef=True, norm="layer",
                                           num_mlp_before=2, num_mlp_after=2),
    "no-mlp-before-batchnorm": dict(num_mlp_before=0, num_mlp_after=2, norm="batch"),
    "no-mlp-after": dict(num_mlp_after=0),
    "attention-eq30-p0": dict(attention=True, p=0.0, T=5.0, precond=False, lam=2.0),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_twirls_conv(rng, name):
    kw = CONFIGS[name]
    n, prop_step, (din, dout, dh) = 7, 5, (5, 3, 4)
    src, dst = simple_edges(rng, n)
    g = nw.graph((src, dst), num_nodes=n)
    conv = randomize(TWIRLSConv(din, dout, dh, prop_step, **kw), rng, scale=0.9).eval()
    bufs = {k: torch.tensor(v.numpy()) for k, v in conv.named_buffers()}
    nb, na, norm = kw.get("num_mlp_before", 1), kw.get("num_mlp_after", 1), kw.get("norm", "none")
    ls, ld = with_loops(src, dst, n)

    def ref(p, x):
        h = ref_mlp(p, "mlp_bef", x, nb, False, norm, bufs)
        h = ref_unfold(h, ls, ld, n, prop_step, kw.get("alp", 0), kw.get("lam", 1), kw.get("precond", True),
                       prop_step // 2 if kw.get("attention") else -1, kw.get("attn_bef", False), kw.get("tau", 0.2),
                       kw.get("T", -1), kw.get("p", 1), p.get("unfolding.etas"))
        return ref_mlp(p, "mlp_aft", h, na, nb > 0 and na > 0, norm, bufs)

    out = check(conv, lambda m, x: m(g, x), ref, {"x": rng.standard_normal((n, din))}, rng)
    assert tuple(out[0].shape) == (n, dout)


def test_twirls_conv_replaces_self_loops(rng):
    n = 6
    src, dst = simple_edges(rng, n)
    conv = randomize(TWIRLSConv(3, 2, 4, 4), rng).eval()
    x = nc.tensor(rng.standard_normal((n, 3)))
    plain = conv(nw.graph((src, dst), num_nodes=n), x).detach().numpy()
    looped = nw.graph((np.concatenate([[2, 2, 0], src]), np.concatenate([[2, 2, 0], dst])), num_nodes=n)
    np.testing.assert_allclose(conv(looped, x).detach().numpy(), plain, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("precond", [True, False])
def test_twirls_unfolding_with_attention_after_steps(rng, precond):
    n = 6
    ls, ld = with_loops(*simple_edges(rng, n), n)
    g = nw.graph((ls, ld), num_nodes=n)
    prop = randomize(TWIRLSUnfoldingAndAttention(4, 0.4, 0.8, 4, attn_aft=2, use_eta=True, T=4.0, precond=precond),
                     rng)
    check(prop, lambda m, x: m(g, x),
          lambda p, x: ref_unfold(x, ls, ld, n, 4, 0.4, 0.8, precond, 2, False, 0.2, 4.0, 1.0, p["etas"]),
          {"x": rng.standard_normal((n, 4))}, rng)


FD_CASES = {
    "conv-attention-eta": dict(attention=True, use_eta=True, attn_bef=True, norm="layer", p=0.6, tau=0.05),
    "conv-eq30": dict(precond=False, lam=0.5, alp=0.4, num_mlp_before=2),
}


@pytest.mark.parametrize("name", list(FD_CASES))
def test_twirls_gradients_match_finite_differences(rng, name):
    n = 6
    g = nw.graph(simple_edges(rng, n), num_nodes=n)
    conv = randomize(TWIRLSConv(3, 2, 3, 4, **FD_CASES[name]), rng, scale=0.8).eval()
    fd_check(conv, lambda m, x: m(g, x), {"x": rng.standard_normal((n, 3))}, rng)


def test_twirls_conv_caches_the_propagation_of_the_same_input(rng):
    n = 5
    g = nw.graph(simple_edges(rng, n), num_nodes=n)
    conv = TWIRLSConv(4, 2, 3, 3, num_mlp_before=0).double()
    assert conv.cacheable and not TWIRLSConv(4, 2, 3, 3).cacheable
    x = nc.tensor(rng.standard_normal((n, 4)))
    first = conv(g, x)
    assert conv._cache is not None and conv._cache[0] is g and conv._cache[1] is x
    cached = conv._cache[2]
    np.testing.assert_array_equal(conv(g, x).detach().numpy(), first.detach().numpy())
    assert conv._cache[2] is cached                          # reused, not recomputed
    y = nc.tensor(rng.standard_normal((n, 4)))
    assert not np.allclose(conv(g, y).detach().numpy(), first.detach().numpy())   # another input: recomputed
    x_grad = nc.tensor(rng.standard_normal((n, 4)), requires_grad=True)
    conv(g, x_grad).sum().backward()
    assert x_grad.grad is not None and conv._cache[1] is y   # an input that needs grad is not cached


def test_twirls_conv_dropout_only_in_training(rng):
    g = nw.graph(simple_edges(rng, 5), num_nodes=5)
    conv = TWIRLSConv(4, 2, 8, 3, attention=True, dropout=0.5, attn_dropout=0.5, inp_dropout=0.5)
    x = nc.randn(5, 4)
    assert not np.allclose(conv(g, x).detach().numpy(), conv(g, x).detach().numpy())
    conv.eval()
    np.testing.assert_array_equal(conv(g, x).detach().numpy(), conv(g, x).detach().numpy())


def test_twirls_bad_inputs_name_the_argument():
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    with pytest.raises(ValueError, match="norm must be 'none', 'batch' or 'layer', got 'group'"):
        TWIRLSConv(4, 2, 8, 3, norm="group")
    with pytest.raises(ValueError, match=r"output_d \(2\) must equal input_d \(4\)"):
        TWIRLSConv(4, 2, 8, 3, num_mlp_before=0, num_mlp_after=0)
    with pytest.raises(ValueError, match="TWIRLSConv: feat"):
        TWIRLSConv(4, 2, 8, 3)(g, nc.ones(3, 5))
    with pytest.raises(ValueError, match="prop_step must be a non-negative int"):
        TWIRLSConv(4, 2, 8, -1)
    with pytest.raises(ValueError, match="every node needs an in-edge"):
        TWIRLSUnfoldingAndAttention(4, 1, 1, 2)(nw.graph(([0, 1], [1, 2])), nc.ones(3, 4))
    hg = nw.heterograph({("a", "r", "b"): ([0], [1])})
    with pytest.raises(ValueError, match="TWIRLSConv"):
        TWIRLSConv(4, 2, 8, 3)(hg, nc.ones(2, 4))
