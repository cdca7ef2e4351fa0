"""LapPosEncoder on both backends against its formula written in torch float64 (the transformer
block head by head, the DeepSet MLP, BatchNorm over the k channels, the post-pooling MLP):
values and the gradients of both inputs and every parameter, with NaN padding; gradients by
finite differences; its transformer against torch's own ``TransformerEncoder`` with the same
parameters; initialisation, dropout and bad input."""

import math

import numpy as np
import pytest
import torch

from layer_ref_helpers import BACKENDS, check_layer, fd_check, lin, side, to_numpy

F = torch.nn.functional


# ---------------------------------------------------------------------------- the formula
def ref_block(p, pre, h, absent, heads):
    """One post-norm transformer block over the k entries of each node (keys ``absent`` masked)."""
    n, s, dim = h.shape
    d = dim // heads
    qkv = h @ p[pre + "self_attn.in_proj_weight"].T + p[pre + "self_attn.in_proj_bias"]
    q, k, v = (t.reshape(n, s, heads, d) for t in qkv.split(dim, dim=-1))
    scores = torch.einsum("nihd,njhd->nhij", q, k) / math.sqrt(d)
    scores = scores.masked_fill(absent[:, None, None, :], float("-inf"))
    att = torch.einsum("nhij,njhd->nihd", torch.softmax(scores, -1), v).reshape(n, s, dim)
    h = F.layer_norm(h + lin(p, pre + "self_attn.out_proj", att), (dim,), p[pre + "norm1.weight"],
                     p[pre + "norm1.bias"])
    ff = lin(p, pre + "linear2", torch.relu(lin(p, pre + "linear1", h)))
    return F.layer_norm(h + ff, (dim,), p[pre + "norm2.weight"], p[pre + "norm2.bias"])


def ref_mlp(p, prefix, h, count):
    """The Linear/ReLU pairs ``prefix.0``, ``prefix.2``, ... applied in turn."""
    for i in range(count):
        h = torch.relu(lin(p, f"{prefix}.{2 * i}", h))
    return h


def ref_lpe(p, buffers, vals, vecs, model, num_layer, heads, batch_norm, post, train=False):
    pe = torch.stack([vecs, vals], 2)
    empty = torch.isnan(pe)
    pe = torch.where(empty, torch.zeros((), dtype=pe.dtype), pe)
    absent = empty[:, :, 1]
    if batch_norm:
        if train:
            mean, var = pe.mean((0, 2)), pe.var((0, 2), unbiased=False)
        else:
            mean, var = (torch.tensor(buffers[f"raw_norm.running_{s}"]) for s in ("mean", "var"))
        pe = ((pe - mean[None, :, None]) / torch.sqrt(var[None, :, None] + 1e-5) * p["raw_norm.weight"][None, :, None]
              + p["raw_norm.bias"][None, :, None])
    h = lin(p, "linear", pe)
    if model == "Transformer":
        for layer in range(num_layer):
            h = ref_block(p, f"pe_encoder.layers.{layer}.", h, absent, heads)
    else:
        h = torch.relu(h)                                        # pe_encoder.0
        for i in range(num_layer - 1):
            h = torch.relu(lin(p, f"pe_encoder.{2 * i + 1}", h))
    h = torch.where(absent[..., None], torch.zeros((), dtype=h.dtype), h).sum(1)
    return h if post == 0 else ref_mlp(p, "post_mlp", h, post)


def eig_inputs(rng, n=5, k=4, pad=True):
    vals = np.repeat(rng.uniform(0, 2, (1, k)), n, axis=0)
    vecs = rng.standard_normal((n, k))
    # node 0 misses its last pair, node 2 the last two; the last node has a lone eigenvector entry
    if pad:
        vals[0, -1] = vecs[0, -1] = np.nan
        vals[2, -2:] = vecs[2, -2:] = np.nan
        vecs[n - 1, 1] = np.nan
    return {"vals": vals, "vecs": vecs}


# ---------------------------------------------------------------------------- values and gradients
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("num_layer,heads,batch_norm,post", [(1, 1, False, 0), (2, 2, True, 1), (1, 4, True, 3)])
def test_transformer(backend, num_layer, heads, batch_norm, post):
    rng = np.random.default_rng(10 + num_layer + heads)
    check_layer(backend,
                lambda ns: ns.nn.LapPosEncoder("Transformer", num_layer, 4, 8, heads, batch_norm, post),
                lambda m, t: m(t["vals"], t["vecs"]),
                lambda p, b, t: ref_lpe(p, b, t["vals"], t["vecs"], "Transformer", num_layer, heads, batch_norm, post),
                eig_inputs(rng), rng, train=False, scale=0.3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("num_layer,batch_norm,post,train", [(1, False, 0, False), (2, True, 2, False),
                                                             (4, True, 1, True), (3, False, 0, True)])
def test_deepset(backend, num_layer, batch_norm, post, train):
    rng = np.random.default_rng(20 + num_layer)
    check_layer(backend,
                lambda ns: ns.nn.LapPosEncoder("DeepSet", num_layer, 4, 3, batch_norm=batch_norm,
                                               num_post_layer=post),
                lambda m, t: m(t["vals"], t["vecs"]),
                lambda p, b, t: ref_lpe(p, b, t["vals"], t["vecs"], "DeepSet", num_layer, 1, batch_norm, post, train),
                eig_inputs(rng), rng, train=train)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("model", ["Transformer", "DeepSet"])
def test_gradients_match_finite_differences(backend, model):
    rng = np.random.default_rng(30)
    fd_check(backend, lambda ns: ns.nn.LapPosEncoder(model, 2, 3, 4, 2, True, 2), lambda m, t: m(t["vals"], t["vecs"]),
             eig_inputs(rng, n=4, k=3), rng, scale=0.3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_node_without_any_pair_encodes_to_zero(backend):
    """Every eigenvalue of node 1 is NaN (padding): nothing to attend to, a zero encoding, no NaN."""
    ns = side(backend)
    enc = ns.nn.LapPosEncoder("Transformer", 1, 3, 4, 2).eval()
    vals = ns.T.tensor([[0.5, 1.0, 1.5], [math.nan] * 3, [0.5, 1.0, math.nan]])
    out = to_numpy(enc(vals, ns.T.ones(3, 3)))
    assert not np.isnan(out).any()
    np.testing.assert_array_equal(out[1], 0.0)
    assert np.abs(out[0]).sum() > 0


def test_transformer_matches_torch_transformer_encoder():
    """The encoder blocks, given the parameters of torch's own TransformerEncoder (which DGL's
    LapPosEncoder uses), compute what it computes: same names, same values, masks included."""
    ns = side("pytorch")
    torch.manual_seed(0)
    enc = ns.nn.LapPosEncoder("Transformer", 2, 4, 8, 2).double().eval()
    layer = torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, batch_first=True, dtype=torch.float64)
    theirs = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    with torch.no_grad():
        for q in theirs.parameters():
            q.uniform_(-0.5, 0.5)
    state = {f"pe_encoder.{k}": v for k, v in theirs.state_dict().items()}
    enc.load_state_dict({**{k: v for k, v in enc.state_dict().items() if not k.startswith("pe_encoder.")}, **state})
    x = torch.randn(5, 4, 8, dtype=torch.float64)
    mask = torch.zeros(5, 4, dtype=torch.bool)
    mask[0, 3] = mask[2, 2:] = True
    ours = enc.pe_encoder(x, src_key_padding_mask=mask)
    want = theirs(x, src_key_padding_mask=mask)
    np.testing.assert_allclose(to_numpy(ours)[~mask.numpy()], to_numpy(want)[~mask.numpy()], rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------- structure, init, dropout
@pytest.mark.parametrize("backend", BACKENDS)
def test_submodules_and_initialisation(backend):
    ns = side(backend)
    enc = ns.nn.LapPosEncoder("Transformer", 3, 5, 8, 4, batch_norm=True, num_post_layer=2)
    names = dict(enc.named_parameters())
    assert tuple(names["pe_encoder.layers.2.self_attn.in_proj_weight"].shape) == (24, 8)
    assert tuple(names["pe_encoder.layers.0.linear1.weight"].shape) == (2048, 8)   # torch's default width
    assert tuple(names["raw_norm.weight"].shape) == (5,)
    assert [tuple(names[f"post_mlp.{i}.weight"].shape) for i in (0, 2)] == [(16, 8), (8, 16)]
    assert enc.pe_encoder.layers[0].dropout.p == 0.1
    w0, w2 = (to_numpy(names[f"pe_encoder.layers.{i}.self_attn.in_proj_weight"]) for i in (0, 2))
    np.testing.assert_array_equal(w0, w2)       # cloned layers start equal, as in torch
    np.testing.assert_array_equal(to_numpy(names["pe_encoder.layers.1.self_attn.in_proj_bias"]), 0.0)
    assert np.abs(w0).max() <= math.sqrt(6 / (8 + 24)) + 1e-7                     # Xavier-uniform bound
    deep = ns.nn.LapPosEncoder("DeepSet", 3, 5, 8)
    shapes = [tuple(p.shape) for n, p in deep.named_parameters() if n.endswith("weight")]
    assert shapes == [(16, 2), (16, 16), (8, 16)]
    assert deep.raw_norm is None and deep.post_mlp is None
    one = ns.nn.LapPosEncoder("DeepSet", 1, 5, 8)
    assert [tuple(p.shape) for p in one.parameters()] == [(8, 2), (8,)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_transformer_dropout_only_in_training(backend):
    ns = side(backend)
    enc = ns.nn.LapPosEncoder("Transformer", 1, 3, 4, 1)
    vals, vecs = ns.T.rand(6, 3), ns.T.randn(6, 3)
    assert not np.allclose(to_numpy(enc(vals, vecs)), to_numpy(enc(vals, vecs)))
    enc.eval()
    np.testing.assert_array_equal(to_numpy(enc(vals, vecs)), to_numpy(enc(vals, vecs)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_inputs_follow_the_parameters(backend):
    ns = side(backend)
    enc = ns.nn.LapPosEncoder("DeepSet", 2, 3, 4)
    out = enc(ns.T.rand(2, 3, dtype=ns.T.float64), ns.T.rand(2, 3, dtype=ns.T.float64))
    assert out.dtype == ns.T.float32
    assert enc.double()(ns.T.rand(2, 3), ns.T.rand(2, 3)).dtype == ns.T.float64


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_inputs(backend):
    ns = side(backend)
    L = ns.nn.LapPosEncoder
    ones = ns.T.ones
    cases = [
        (lambda: L("GNN", 1, 3, 4), ValueError, "model_type must be 'Transformer' or 'DeepSet', got 'GNN'"),
        (lambda: L("DeepSet", 0, 3, 4), ValueError, "num_layer must be a positive int"),
        (lambda: L("DeepSet", 1, 0, 4), ValueError, "k must be a positive int"),
        (lambda: L("DeepSet", 1, 3, 4, num_post_layer=-1), ValueError, "num_post_layer must be a non-negative"),
        (lambda: L("Transformer", 1, 3, 6, n_head=4), ValueError, r"dim \(6\) must be divisible by n_head \(4\)"),
        (lambda: L("DeepSet", 1, 3, 4)([[1.0]], ones(2, 3)), TypeError, "eigvals must be a tensor"),
        (lambda: L("DeepSet", 1, 3, 4)(ones(3), ones(3)), ValueError, r"eigvals must have shape \(num_nodes, k\)"),
        (lambda: L("DeepSet", 1, 3, 4)(ones(2, 3), ones(3, 3)), ValueError, "must have the same shape"),
        (lambda: L("DeepSet", 1, 3, 4, batch_norm=True)(ones(2, 2), ones(2, 2)), ValueError,
         "must have k=3 columns"),
    ]
    for call, err, msg in cases:
        with pytest.raises(err, match=msg):
            call()
