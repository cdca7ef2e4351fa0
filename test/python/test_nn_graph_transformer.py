"""The graph transformer modules (BiasedMHA, GraphormerLayer, DegreeEncoder, SpatialEncoder,
PathEncoder, SpatialEncoder3d) against their formulas written in torch float64: values and the
gradients of every input and parameter; gradients by finite differences; masks, padding rows,
initialization, dropout and bad inputs."""

import math

import numpy as np
import pytest
import torch

import nodeweave.core as nc
from nodeweave.nn import (BiasedMHA, DegreeEncoder, GraphormerLayer, PathEncoder, SpatialEncoder,
                          SpatialEncoder3d)

from nn_check import check, fd_check, randomize

TF = torch.float64
F = torch.nn.functional


def lin(p, prefix, x):
    return F.linear(x, p[prefix + ".weight"], p.get(prefix + ".bias"))


def ref_mha(p, x, bias, mask, heads, mul=False, prefix=""):
    """softmax(Q K^T / sqrt(d) (+ or *) bias, masked) V, heads concatenated, then out_proj."""
    b, n, f = x.shape
    d = f // heads
    q, k, v = (lin(p, prefix + name, x).reshape(b, n, heads, d) for name in ("q_proj", "k_proj", "v_proj"))
    scores = torch.einsum("bihd,bjhd->bhij", q, k) / math.sqrt(d)
    if bias is not None:
        bh = bias.permute(0, 3, 1, 2)
        scores = scores * bh if mul else scores + bh
    if mask is not None:
        scores = scores.masked_fill(torch.as_tensor(mask)[:, None], float("-inf"))
    attn = torch.softmax(scores, -1)
    out = torch.einsum("bhij,bjhd->bihd", attn, v).reshape(b, n, f)
    return lin(p, prefix + "out_proj", out)


def padding_mask(rng, b, n):
    """Random masked pairs, never a whole row (a row with nothing to attend to is NaN, as in torch)."""
    m = rng.random((b, n, n)) < 0.35
    for i in range(b):
        np.fill_diagonal(m[i], False)
    return m


# ----------------------------------------------------------------------------- BiasedMHA


@pytest.mark.parametrize("mode", ["add", "mul"])
@pytest.mark.parametrize("masked", [False, True])
def test_biased_mha(rng, mode, masked):
    mha = randomize(BiasedMHA(6, 3, attn_bias_type=mode), rng).eval()
    mask = padding_mask(rng, 2, 5) if masked else None
    inputs = {"x": rng.standard_normal((2, 5, 6)), "bias": rng.standard_normal((2, 5, 5, 3))}
    check(mha, lambda m, x, bias: m(x, bias, None if mask is None else nc.tensor(mask)),
          lambda p, x, bias: ref_mha(p, x, bias, mask, 3, mode == "mul"), inputs, rng)


def test_biased_mha_without_bias_or_projection_biases(rng):
    mha = randomize(BiasedMHA(4, 2, bias=False), rng).eval()
    assert all(not n.endswith("bias") for n, _ in mha.named_parameters())
    check(mha, lambda m, x: m(x), lambda p, x: ref_mha(p, x, None, None, 2), {"x": rng.standard_normal((3, 4, 4))},
          rng)


def test_biased_mha_init_and_dropout():
    mha = BiasedMHA(16, 4)
    assert mha.dropout.p == 0.1 and float(mha.out_proj.bias.abs().max().item()) == 0.0
    bound = math.sqrt(6 / 32)                   # Xavier-uniform bound of a 16 x 16 matrix
    assert float(mha.q_proj.weight.abs().max().item()) <= bound * 2 ** -0.5 + 1e-7
    assert float(mha.out_proj.weight.abs().max().item()) > bound * 2 ** -0.5  # gain 1 for out_proj
    x = nc.randn(2, 5, 16)
    mha.train()
    assert not np.allclose(mha(x).detach().numpy(), mha(x).detach().numpy())
    mha.eval()
    np.testing.assert_array_equal(mha(x).detach().numpy(), mha(x).detach().numpy())


# ----------------------------------------------------------------------------- GraphormerLayer


def ref_graphormer(p, x, bias, mask, heads, norm_first, mul=False, act=torch.relu):
    f = x.shape[-1]

    def ln(name, h):
        return F.layer_norm(h, (f,), p[name + ".weight"], p[name + ".bias"])

    def ffn(h):
        return lin(p, "ffn.3", act(lin(p, "ffn.0", h)))

    if norm_first:
        h = x + ref_mha(p, ln("attn_layer_norm", x), bias, mask, heads, mul, "attn.")
        return h + ffn(ln("ffn_layer_norm", h))
    h = ln("attn_layer_norm", x + ref_mha(p, x, bias, mask, heads, mul, "attn."))
    return ln("ffn_layer_norm", h + ffn(h))


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_graphormer_layer(rng, norm_first):
    layer = randomize(GraphormerLayer(6, 10, 2, norm_first=norm_first), rng).eval()
    mask = padding_mask(rng, 2, 4)
    inputs = {"x": rng.standard_normal((2, 4, 6)), "bias": rng.standard_normal((2, 4, 4, 2))}
    check(layer, lambda m, x, bias: m(x, bias, nc.tensor(mask)),
          lambda p, x, bias: ref_graphormer(p, x, bias, mask, 2, norm_first), inputs, rng)


def test_graphormer_layer_mul_bias_and_activation(rng):
    layer = randomize(GraphormerLayer(4, 8, 4, attn_bias_type="mul", activation=nc.nn.Tanh()), rng).eval()
    inputs = {"x": rng.standard_normal((3, 5, 4)), "bias": rng.standard_normal((3, 5, 5, 4))}
    check(layer, lambda m, x, bias: m(x, bias), lambda p, x, bias: ref_graphormer(p, x, bias, None, 4, False, True,
                                                                                    torch.tanh), inputs, rng)


def test_graphormer_layer_dropout_only_in_training():
    layer = GraphormerLayer(8, 16, 2, dropout=0.5, attn_dropout=0.0)
    x, bias = nc.randn(2, 4, 8), nc.randn(2, 4, 4, 2)
    assert not np.allclose(layer(x, bias).detach().numpy(), layer(x, bias).detach().numpy())
    layer.eval()
    np.testing.assert_array_equal(layer(x, bias).detach().numpy(), layer(x, bias).detach().numpy())


# ----------------------------------------------------------------------------- structural encoders


def test_degree_encoder_both_directions(rng):
    enc = randomize(DegreeEncoder(3, 4), rng)
    deg = rng.integers(0, 7, (2, 2, 5))      # in- and out-degrees, some above max_degree
    deg_t = torch.as_tensor(deg).clamp(0, 3)
    check(enc, lambda m: m(nc.tensor(deg)),
          lambda p: (F.embedding(deg_t[0], p["encoder1.weight"], padding_idx=0)
                     + F.embedding(deg_t[1], p["encoder2.weight"], padding_idx=0)), {}, rng)
    # degree 0 (and padding) gets no gradient: the padding row stays fixed in training
    grad = enc.encoder1.weight.grad.numpy()
    np.testing.assert_array_equal(grad[0], 0.0)
    assert np.abs(grad[1:]).sum() > 0


@pytest.mark.parametrize("direction", ["in", "out"])
def test_degree_encoder_one_direction(rng, direction):
    enc = randomize(DegreeEncoder(4, 3, direction), rng)
    deg = rng.integers(0, 6, (3, 4))
    check(enc, lambda m: m(nc.tensor(deg)),
          lambda p: F.embedding(torch.as_tensor(deg).clamp(0, 4), p["encoder.weight"], padding_idx=0), {}, rng)


def test_degree_encoder_padding_embeds_to_zero():
    enc = DegreeEncoder(5, 3)
    out = enc(nc.tensor([[[0, 2]], [[0, 9]]])).detach().numpy()
    np.testing.assert_array_equal(out[0, 0], 0.0)
    np.testing.assert_array_equal(out[0, 1], enc.encoder1.weight.detach().numpy()[2] + enc.encoder2.weight.detach()
                                  .numpy()[5])


def test_spatial_encoder(rng):
    enc = randomize(SpatialEncoder(3, 4), rng)
    dist = rng.integers(-1, 6, (2, 5, 5))
    out = check(enc, lambda m: m(nc.tensor(dist)),
                lambda p: F.embedding(torch.as_tensor(dist).clamp(-1, 3) + 1, p["embedding_table.weight"],
                                      padding_idx=0), {}, rng)
    assert tuple(out[0].shape) == (2, 5, 5, 4)
    fresh = SpatialEncoder(2, 3)(nc.tensor([[[-1, 0]]])).detach().numpy()
    np.testing.assert_array_equal(fresh[0, 0, 0], 0.0)   # unreachable pairs: no bias


def ref_path(p, dist, pd, max_len, heads):
    w = p["embedding_table.weight"].reshape(max_len, heads, -1)
    enc = torch.einsum("bxyld,lhd->bxyh", pd, w)
    return enc / torch.as_tensor(dist).clamp(1, max_len).to(TF).unsqueeze(-1)


def test_path_encoder(rng):
    enc = randomize(PathEncoder(3, 2, 4), rng)
    dist = rng.integers(0, 6, (2, 4, 4))
    inputs = {"pd": rng.standard_normal((2, 4, 4, 3, 2))}
    check(enc, lambda m, pd: m(nc.tensor(dist), pd), lambda p, pd: ref_path(p, dist, pd, 3, 4), inputs, rng)


def ref_spatial3d(p, coord, node_type, max_type):
    b, n, _ = coord.shape
    dist = torch.cdist(coord, coord, compute_mode="donot_use_mm_for_euclid_dist")
    if node_type is None:
        rows = torch.zeros((b, n, n, 2), dtype=torch.long)
    else:
        t = torch.as_tensor(node_type)
        rows = torch.stack([(t[:, :, None] + 2).expand(b, n, n), (t[:, None, :] + max_type + 3).expand(b, n, n)], -1)
    gamma = F.embedding(rows, p["gamma.weight"], padding_idx=0).sum(-2)
    beta = F.embedding(rows, p["beta.weight"], padding_idx=0).sum(-2)
    x = gamma * dist.unsqueeze(-1) + beta
    std = p["stds"].abs() + 0.01
    kernel = torch.exp(-0.5 * ((x - p["means"]) / std) ** 2) / (math.sqrt(2 * 3.14159) * std)
    return lin(p, "linear_layer_2", F.gelu(lin(p, "linear_layer_1", kernel)))


@pytest.mark.parametrize("typed", [True, False])
def test_spatial_encoder_3d(rng, typed):
    enc = randomize(SpatialEncoder3d(4, 3, max_node_type=5), rng)
    types = rng.integers(-1, 5, (2, 5)) if typed else None
    inputs = {"coord": rng.standard_normal((2, 5, 3))}
    check(enc, lambda m, coord: m(coord, None if types is None else nc.tensor(types)),
          lambda p, coord: ref_spatial3d(p, coord, types, 5), inputs, rng)


def test_spatial_encoder_3d_coincident_points_have_finite_gradients(rng):
    enc = randomize(SpatialEncoder3d(3, 2, max_node_type=2), rng)
    coord = rng.standard_normal((1, 4, 3))
    coord[0, 2] = coord[0, 0]                # two atoms at one place: distance 0 off the diagonal
    out = check(enc, lambda m, coord: m(coord), lambda p, coord: ref_spatial3d(p, coord, None, 2),
                {"coord": coord}, rng)
    assert np.isfinite(out[0].detach().numpy()).all()


def test_spatial_encoder_3d_init():
    enc = SpatialEncoder3d(50, max_node_type=4)
    for name in ("means", "stds"):
        v = getattr(enc, name).detach().numpy()
        assert v.min() >= 0 and v.max() <= 3 and v.std() > 0.5
    np.testing.assert_array_equal(enc.gamma.weight.detach().numpy(), 1.0)
    np.testing.assert_array_equal(enc.beta.weight.detach().numpy(), 0.0)
    assert tuple(enc.gamma.weight.shape) == (11, 1)


FD_CASES = {
    "BiasedMHA": (lambda: BiasedMHA(4, 2), lambda rng: {"x": rng.standard_normal((2, 3, 4)),
                                                         "b": rng.standard_normal((2, 3, 3, 2))},
                  lambda m, x, b: m(x, b)),
    "GraphormerLayer-pre": (lambda: GraphormerLayer(4, 6, 2, norm_first=True),
                            lambda rng: {"x": rng.standard_normal((2, 3, 4)), "b": rng.standard_normal((2, 3, 3, 2))},
                            lambda m, x, b: m(x, b)),
    "GraphormerLayer-mul": (lambda: GraphormerLayer(4, 6, 2, attn_bias_type="mul"),
                            lambda rng: {"x": rng.standard_normal((2, 3, 4)), "b": rng.standard_normal((2, 3, 3, 2))},
                            lambda m, x, b: m(x, b)),
    "PathEncoder": (lambda: PathEncoder(2, 3, 2), lambda rng: {"pd": rng.standard_normal((1, 3, 3, 2, 3))},
                    lambda m, pd: m(nc.tensor([[[0, 1, 2], [1, 0, 3], [2, 1, 0]]]), pd)),
    "SpatialEncoder3d": (lambda: SpatialEncoder3d(3, 2, max_node_type=3),
                         lambda rng: {"c": rng.standard_normal((2, 3, 3))},
                         lambda m, c: m(c, nc.tensor([[0, 2, -1], [1, 1, 0]]))),
}


@pytest.mark.parametrize("name", sorted(FD_CASES))
def test_gradients_match_finite_differences(rng, name):
    make, data, run = FD_CASES[name]
    module = randomize(make(), rng, scale=0.8).eval()
    fd_check(module, run, data(rng), rng)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match=r"feat_size \(6\) must be divisible by num_heads \(4\)"):
        BiasedMHA(6, 4)
    with pytest.raises(ValueError, match="attn_bias_type must be 'add' or 'mul', got 'sum'"):
        GraphormerLayer(4, 4, 2, attn_bias_type="sum")
    mha = BiasedMHA(4, 2)
    with pytest.raises(ValueError, match=r"ndata must be \(batch_size, N, feat_size=4\), got \(3, 4\)"):
        mha(nc.ones(3, 4))
    with pytest.raises(ValueError, match=r"attn_bias must have shape \(1, 3, 3, 2\), got \(1, 3, 3\)"):
        mha(nc.ones(1, 3, 4), nc.ones(1, 3, 3))
    with pytest.raises(ValueError, match=r"attn_mask must have shape \(1, 3, 3\)"):
        mha(nc.ones(1, 3, 4), None, nc.ones(3, 3, dtype=nc.bool))
    with pytest.raises(ValueError, match="direction must be 'in', 'out' or 'both', got 'up'"):
        DegreeEncoder(3, 2, "up")
    with pytest.raises(ValueError, match=r"degrees must stack in- and out-degrees: shape \(2, batch_size, N\)"):
        DegreeEncoder(3, 2)(nc.zeros(3, 1, 4, dtype=nc.int64))
    with pytest.raises(ValueError, match=r"degrees must have shape \(batch_size, N\)"):
        DegreeEncoder(3, 2, "in")(nc.zeros(2, 1, 4, dtype=nc.int64))
    with pytest.raises(TypeError, match="SpatialEncoder: dist must hold integers"):
        SpatialEncoder(3, 2)(nc.zeros(1, 2, 2))
    with pytest.raises(ValueError, match=r"path_data must have shape .* = \(1, 2, 2, 2, 3\), got \(1, 2, 2, 3\)"):
        PathEncoder(2, 3)(nc.zeros(1, 2, 2, dtype=nc.int64), nc.zeros(1, 2, 2, 3))
    with pytest.raises(ValueError, match=r"node_type must be in \[-1, 3\)"):
        SpatialEncoder3d(2, max_node_type=3)(nc.zeros(1, 2, 3), nc.tensor([[0, 3]]))
    with pytest.raises(ValueError, match=r"coord must be a floating point \(batch_size, N, 3\) tensor"):
        SpatialEncoder3d(2)(nc.zeros(2, 3))
