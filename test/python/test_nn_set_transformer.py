"""SetTransformerEncoder (SAB and ISAB blocks) and SetTransformerDecoder on both backends against
the Set Transformer written graph by graph in torch float64 (no padding: each graph's nodes as
one set): values and the gradients of the features and every parameter, on batches with a
one-node and an empty graph; finite differences; initialisation, dropout and bad input."""

import math

import numpy as np
import pytest
import torch

import nodeweave as nw

from layer_ref_helpers import BACKENDS, check_layer, fd_check, lin, side, to_numpy

F = torch.nn.functional


def batch_of(sizes):
    graphs = [nw.graph((np.arange(n - 1), np.arange(1, n)), num_nodes=n) if n else nw.graph(([], []), num_nodes=0)
              for n in sizes]
    return nw.batch(graphs)


def ref_mha(p, pre, x, mem, heads, d_head):
    """One set: queries ``x`` (Lx, D) over ``mem`` (Lm, D); residual, LayerNorm, FFN, LayerNorm."""
    if len(mem):
        q = (x @ p[pre + "proj_q.weight"].T).reshape(len(x), heads, d_head)
        k = (mem @ p[pre + "proj_k.weight"].T).reshape(len(mem), heads, d_head)
        v = (mem @ p[pre + "proj_v.weight"].T).reshape(len(mem), heads, d_head)
        att = torch.softmax(torch.einsum("ihd,jhd->hij", q, k) / math.sqrt(d_head), dim=-1)
        out = torch.einsum("hij,jhd->ihd", att, v).reshape(len(x), heads * d_head) @ p[pre + "proj_o.weight"].T
    else:
        out = torch.zeros_like(x)                               # an empty set: nothing to attend to
    d = x.shape[1]
    h = F.layer_norm(x + out, (d,), p[pre + "norm_in.weight"], p[pre + "norm_in.bias"])
    ff = lin(p, pre + "ffn.3", torch.relu(lin(p, pre + "ffn.0", h)))
    return F.layer_norm(h + ff, (d,), p[pre + "norm_inter.weight"], p[pre + "norm_inter.bias"])


def sets(feat, sizes):
    return list(torch.split(feat, list(sizes)))


def ref_encoder(p, feat, sizes, n_layers, block, heads, d_head):
    out = []
    for x in sets(feat, sizes):
        for i in range(n_layers):
            pre = f"layers.{i}."
            if block == "sab":
                x = ref_mha(p, pre + "mha.", x, x, heads, d_head)
            else:
                memory = ref_mha(p, pre + "mha.0.", p[pre + "inducing_points"], x, heads, d_head)
                x = ref_mha(p, pre + "mha.1.", x, memory, heads, d_head)
        out.append(x)
    return torch.cat(out)


def ref_decoder(p, feat, sizes, n_layers, heads, d_head):
    out = []
    for x in sets(feat, sizes):
        mem = lin(p, "pma.ffn.3", torch.relu(lin(p, "pma.ffn.0", x)))
        h = ref_mha(p, "pma.mha.", p["pma.seed_vectors"], mem, heads, d_head)
        for i in range(n_layers):
            h = ref_mha(p, f"layers.{i}.mha.", h, h, heads, d_head)
        out.append(h.reshape(-1))
    return torch.stack(out)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("block,n_layers,heads,d_head", [("sab", 1, 2, 3), ("sab", 2, 1, 4), ("isab", 2, 2, 3)])
def test_encoder(backend, block, n_layers, heads, d_head):
    rng = np.random.default_rng(n_layers + heads)
    sizes = (4, 1, 5)
    g = batch_of(sizes)
    check_layer(backend,
                lambda ns: ns.nn.SetTransformerEncoder(6, heads, d_head, 10, n_layers, block,
                                                       m=3 if block == "isab" else None),
                lambda m, t: m(g, t["x"]),
                lambda p, b, t: ref_encoder(p, t["x"], sizes, n_layers, block, heads, d_head),
                {"x": rng.standard_normal((10, 6))}, rng, scale=0.5)


@pytest.mark.filterwarnings("ignore:SetTransformerDecoder. with k = 1")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n_layers,k", [(0, 2), (1, 3), (2, 1)])
def test_decoder(backend, n_layers, k):
    rng = np.random.default_rng(10 + k)
    sizes = (3, 0, 4, 1)
    g = batch_of(sizes)
    out = check_layer(backend, lambda ns: ns.nn.SetTransformerDecoder(5, 2, 3, 7, n_layers, k),
                      lambda m, t: m(g, t["x"]), lambda p, b, t: ref_decoder(p, t["x"], sizes, n_layers, 2, 3),
                      {"x": rng.standard_normal((8, 5))}, rng, scale=0.5)
    assert tuple(out.pma.seed_vectors.shape) == (k, 5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_graph(backend):
    rng = np.random.default_rng(20)
    single = nw.graph(([0, 1, 2], [1, 2, 3]), num_nodes=6)
    check_layer(backend, lambda ns: ns.nn.SetTransformerDecoder(4, 2, 2, 8, 1, 2),
                lambda m, t: m(single, t["x"]), lambda p, b, t: ref_decoder(p, t["x"], (6,), 1, 2, 2),
                {"x": rng.standard_normal((6, 4))}, rng, scale=0.5)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("which", ["sab", "isab", "decoder"])
def test_gradients_match_finite_differences(backend, which):
    rng = np.random.default_rng(30)
    g = batch_of((3, 2))
    build = {"sab": lambda ns: ns.nn.SetTransformerEncoder(4, 2, 2, 6, 1),
             "isab": lambda ns: ns.nn.SetTransformerEncoder(4, 2, 2, 6, 1, "isab", m=2),
             "decoder": lambda ns: ns.nn.SetTransformerDecoder(4, 2, 2, 6, 1, 2)}[which]
    fd_check(backend, build, lambda m, t: m(g, t["x"]), {"x": rng.standard_normal((5, 4))}, rng, scale=0.5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nodes_attend_only_within_their_graph(backend):
    ns = side(backend)
    enc = ns.nn.SetTransformerEncoder(4, 2, 2, 8, 2).eval()
    g = batch_of((3, 4))
    x = ns.T.randn(7, 4)
    alone = to_numpy(enc(batch_of((3,)), x[:3]))
    moved = x.clone()
    moved[3:] = moved[3:] * 5.0                      # change only the second graph
    np.testing.assert_allclose(to_numpy(enc(g, moved))[:3], alone, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_initialisation_and_dropout(backend):
    ns = side(backend)
    enc = ns.nn.SetTransformerEncoder(8, 2, 4, 16, 1, "isab", m=3, dropouth=0.5, dropouta=0.5)
    mha = enc.layers[0].mha[0]
    bound = math.sqrt(6 / (8 + 8))
    assert np.abs(to_numpy(mha.proj_q.weight)).max() <= bound + 1e-7
    assert mha.proj_q.bias is None and tuple(enc.layers[0].inducing_points.shape) == (3, 8)
    g, x = batch_of((4, 3)), ns.T.randn(7, 8)
    assert not np.allclose(to_numpy(enc(g, x)), to_numpy(enc(g, x)))
    enc.eval()
    np.testing.assert_array_equal(to_numpy(enc(g, x)), to_numpy(enc(g, x)))
    with pytest.warns(UserWarning, match="k = 1 the SAB layers"):
        ns.nn.SetTransformerDecoder(8, 2, 4, 16, 1, 1)
    with pytest.warns(UserWarning, match="m = 1"):
        ns.nn.SetTransformerEncoder(8, 2, 4, 16, 1, "isab", m=1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_inputs(backend):
    ns = side(backend)
    g = batch_of((2, 3))
    cases = [
        (lambda: ns.nn.SetTransformerEncoder(4, 2, 2, 8, 1, "mab"), ValueError, "block_type must be 'sab' or 'isab'"),
        (lambda: ns.nn.SetTransformerEncoder(4, 2, 2, 8, 1, "isab"), ValueError, "needs m"),
        (lambda: ns.nn.SetTransformerEncoder(4, 2, 2, 8, 0), ValueError, "n_layers must be a positive int"),
        (lambda: ns.nn.SetTransformerDecoder(4, 2, 2, 8, 1, 0), ValueError, "k must be a positive int"),
        (lambda: ns.nn.SetTransformerEncoder(4, 0, 2, 8), ValueError, "num_heads must be a positive int"),
        (lambda: ns.nn.SetTransformerEncoder(4, 2, 2, 8)(g, ns.T.ones(4, 4)), ValueError,
         r"feat must have one row per node \(5\)"),
        (lambda: ns.nn.SetTransformerDecoder(4, 2, 2, 8, 1, 2)(g, ns.T.ones(5, 3)), ValueError,
         r"feat must have shape \(num_nodes, 4\)"),
    ]
    for call, err, msg in cases:
        with pytest.raises(err, match=msg):
            call()
