"""EGNNConv and AtomicConv (layers on atom coordinates and distances) against their formulas
written edge by edge in torch float64: values and the gradients of every input and parameter, on
graphs with a node without in-edges and on a block; gradients by finite differences; EGNN's
E(n) equivariance; bad inputs."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import AtomicConv, EGNNConv

from nn_check import check, fd_check, randomize

TF = torch.float64
F = torch.nn.functional


def edges(rng, ns, nd, p=0.45, no_in=()):
    """Random edges without self-loops (EGNN's direction x_j - x_i is undefined on a loop)."""
    m = rng.random((nd, ns)) < p
    np.fill_diagonal(m, False)
    for i in range(nd):
        if not m[i].any():
            m[i, (i + 1) % ns] = True
    for i in no_in:
        m[i] = False
    dst, src = np.nonzero(m)
    perm = rng.permutation(len(src))
    return src[perm], dst[perm]


def in_edge_matrix(dst, n_dst):
    """(N_dst, E): 1 where edge e ends at node v."""
    return (torch.as_tensor(dst)[None, :] == torch.arange(n_dst)[:, None]).to(TF)


# ----------------------------------------------------------------------------- EGNNConv


def ref_egnn(p, h, x, e, src, dst, n_dst):
    def lin(name, t):
        return F.linear(t, p[name + ".weight"], p.get(name + ".bias"))

    src, dst = torch.as_tensor(src), torch.as_tensor(dst)
    diff = x[src] - x[dst]
    radial = (diff ** 2).sum(1, keepdim=True)
    diff = diff / (radial.sqrt() + 1e-30)
    parts = [h[src], h[dst], radial] + ([] if e is None else [e])
    m_h = F.silu(lin("edge_mlp.2", F.silu(lin("edge_mlp.0", torch.cat(parts, 1)))))
    m_x = lin("coord_mlp.2", F.silu(lin("coord_mlp.0", m_h))) * diff
    M = in_edge_matrix(dst, n_dst)
    h_neigh = M @ m_h
    x_neigh = (M @ m_x) / M.sum(1, keepdim=True).clamp(min=1)
    h_out = lin("node_mlp.2", F.silu(lin("node_mlp.0", torch.cat([h[:n_dst], h_neigh], 1))))
    return h_out, x[:n_dst] + x_neigh


@pytest.mark.parametrize("edge_feat_size", [0, 3])
def test_egnn_conv(rng, edge_feat_size):
    n = 7
    src, dst = edges(rng, n, n, no_in=(4,))
    g = nw.graph((src, dst), num_nodes=n)
    conv = randomize(EGNNConv(4, 6, 5, edge_feat_size), rng)
    inputs = {"h": rng.standard_normal((n, 4)), "x": rng.standard_normal((n, 3))}
    if edge_feat_size:
        inputs["e"] = rng.standard_normal((len(src), edge_feat_size))
        run, ref = (lambda m, h, x, e: m(g, h, x, e)), (lambda p, h, x, e: ref_egnn(p, h, x, e, src, dst, n))
    else:
        run, ref = (lambda m, h, x: m(g, h, x)), (lambda p, h, x: ref_egnn(p, h, x, None, src, dst, n))
    h_out, x_out = check(conv, run, ref, inputs, rng)
    np.testing.assert_array_equal(x_out.detach().numpy()[4], inputs["x"][4])   # no in-edges: it stays


def test_egnn_conv_on_a_block_with_2d_coordinates(rng):
    ns, nd = 7, 3
    src, dst = edges(rng, ns, nd)
    g = nw.heterograph({("_U", "_E", "_V"): (src, dst)}, num_nodes_dict={"_U": ns, "_V": nd})
    g.is_block = True
    conv = randomize(EGNNConv(3, 4, 2), rng)
    h_out, x_out = check(conv, lambda m, h, x: m(g, h, x), lambda p, h, x: ref_egnn(p, h, x, None, src, dst, nd),
                         {"h": rng.standard_normal((ns, 3)), "x": rng.standard_normal((ns, 2))}, rng)
    assert tuple(h_out.shape) == (nd, 2) and tuple(x_out.shape) == (nd, 2)


def test_egnn_conv_is_equivariant(rng):
    """Rotating, reflecting and translating the coordinates leaves h' unchanged and moves x' the same way."""
    n = 6
    g = nw.graph(edges(rng, n, n), num_nodes=n)
    conv = randomize(EGNNConv(3, 5, 4), rng)
    h, x = nc.tensor(rng.standard_normal((n, 3))), rng.standard_normal((n, 3))
    q, _ = np.linalg.qr(rng.standard_normal((3, 3)))       # orthogonal
    shift = rng.standard_normal(3)
    h1, x1 = conv(g, h, nc.tensor(x))
    h2, x2 = conv(g, h, nc.tensor(x @ q.T + shift))
    np.testing.assert_allclose(h2.detach().numpy(), h1.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x2.detach().numpy(), x1.detach().numpy() @ q.T + shift, rtol=1e-10, atol=1e-12)


def test_egnn_conv_gradients_match_finite_differences(rng):
    n = 6
    src, dst = edges(rng, n, n, no_in=(1,))
    g = nw.graph((src, dst), num_nodes=n)
    conv = randomize(EGNNConv(2, 3, 2, 2), rng, scale=0.8)
    fd_check(conv, lambda m, h, x, e: m(g, h, x, e),
             {"h": rng.standard_normal((n, 2)), "x": rng.standard_normal((n, 3)),
              "e": rng.standard_normal((len(src), 2))}, rng)


def test_egnn_conv_layout_matches_dgl():
    conv = EGNNConv(4, 8, 2, 3)
    assert [(k, tuple(v.shape)) for k, v in conv.state_dict().items()] == [
        ("edge_mlp.0.weight", (8, 12)), ("edge_mlp.0.bias", (8,)), ("edge_mlp.2.weight", (8, 8)),
        ("edge_mlp.2.bias", (8,)), ("node_mlp.0.weight", (8, 12)), ("node_mlp.0.bias", (8,)),
        ("node_mlp.2.weight", (2, 8)), ("node_mlp.2.bias", (2,)), ("coord_mlp.0.weight", (8, 8)),
        ("coord_mlp.0.bias", (8,)), ("coord_mlp.2.weight", (1, 8))]


def test_egnn_conv_bad_inputs_name_the_argument():
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    h, x = nc.ones(3, 4), nc.randn(3, 3)
    with pytest.raises(ValueError, match="EGNNConv: edge_feat is required"):
        EGNNConv(4, 8, 2, 3)(g, h, x)
    with pytest.raises(ValueError, match="EGNNConv: edge_feat was given but the module was built with edge_feat_size=0"):
        EGNNConv(4, 8, 2)(g, h, x, nc.ones(3, 2))
    with pytest.raises(ValueError, match="EGNNConv: node_feat"):
        EGNNConv(5, 8, 2)(g, h, x)
    with pytest.raises(ValueError, match="EGNNConv: coord_feat"):
        EGNNConv(4, 8, 2)(g, h, nc.randn(2, 3))
    with pytest.raises(ValueError, match=r"coord_feat must be 2-D \(N, C\)"):
        EGNNConv(4, 8, 2)(g, h, nc.randn(3, 3, 1))
    with pytest.raises(ValueError, match="edge_feat_size must be a non-negative int"):
        EGNNConv(4, 8, 2, -1)


# ----------------------------------------------------------------------------- AtomicConv


def ref_atomic(p, z, r, src, dst, n_dst, types):
    c, mu, gamma = (p["radial_pooling." + k].reshape(-1) for k in
                    ("interaction_cutoffs", "rbf_kernel_means", "rbf_kernel_scaling"))
    filt = torch.exp(-gamma * (r - mu) ** 2) * torch.where(r <= c, 0.5 * (torch.cos(np.pi * r / c) + 1),
                                                           torch.zeros_like(r * c))     # (E, K)
    zs = z[torch.as_tensor(src)]                                                       # (E, 1)
    weight = zs if types is None else (zs == torch.as_tensor(types)).to(TF)            # (E, T)
    per_edge = (weight[:, :, None] * filt[:, None, :]).reshape(len(src), -1)          # index t * K + k
    return in_edge_matrix(dst, n_dst) @ per_edge


@pytest.mark.parametrize("typed", [True, False])
def test_atomic_conv(rng, typed):
    n = 8
    src, dst = edges(rng, n, n, no_in=(2,))
    g = nw.graph((src, dst), num_nodes=n)
    types = [1.0, 6.0, 8.0] if typed else None
    conv = AtomicConv([2.5, 3.0, 1.2, 2.0], [0.5, 1.0, 1.5, 0.2], [1.0, 2.0, 0.5, 0.3], types).double()
    z = rng.choice([1.0, 6.0, 7.0, 8.0], (n, 1)) if typed else rng.uniform(1, 9, (n, 1))
    out = check(conv, lambda m, z, r: m(g, z, r), lambda p, z, r: ref_atomic(p, z, r, src, dst, n, types),
                {"z": z, "r": rng.uniform(0.2, 3.2, (len(src), 1))}, rng)
    assert tuple(out[0].shape) == (n, 4 * (3 if typed else 1))
    np.testing.assert_array_equal(out[0].detach().numpy()[2], 0.0)


def test_atomic_conv_counts_neighbours_by_type():
    # node 0 receives from a carbon at distance 1 and a hydrogen beyond the cutoff
    g = nw.graph(([1, 2], [0, 0]), num_nodes=3)
    conv = AtomicConv([2.0], [1.0], [1.0], [1.0, 6.0])
    out = conv(g, nc.tensor([[0.0], [6.0], [1.0]]), nc.tensor([[1.0], [2.5]]))
    want_c = np.exp(0.0) * 0.5 * (np.cos(np.pi / 2) + 1)   # rbf at the mean, cutoff half-way
    np.testing.assert_allclose(out.detach().numpy()[0], [0.0, want_c], rtol=1e-6)
    assert not conv.features_to_use.requires_grad
    assert [n for n, p in conv.named_parameters() if p.requires_grad] == [
        "radial_pooling.interaction_cutoffs", "radial_pooling.rbf_kernel_means", "radial_pooling.rbf_kernel_scaling"]


def test_atomic_conv_gradients_match_finite_differences(rng):
    n = 6
    src, dst = edges(rng, n, n)
    g = nw.graph((src, dst), num_nodes=n)
    conv = AtomicConv([2.5, 3.0], [0.5, 1.0], [1.0, 2.0]).double()
    fd_check(conv, lambda m, z, r: m(g, z, r),
             {"z": rng.uniform(1, 9, (n, 1)), "r": rng.uniform(0.2, 2.4, (len(src), 1))}, rng)


def test_atomic_conv_bad_inputs_name_the_argument():
    g = nw.graph(([0, 1], [1, 0]))
    with pytest.raises(ValueError, match="one value per radial filter, got 2, 1 and 2"):
        AtomicConv([1.0, 2.0], [1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="interaction_cutoffs must be a non-empty 1-D sequence"):
        AtomicConv([], [], [])
    conv = AtomicConv([1.0], [1.0], [1.0])
    with pytest.raises(ValueError, match="AtomicConv: feat"):
        conv(g, nc.ones(2, 2), nc.ones(2, 1))
    with pytest.raises(ValueError, match="AtomicConv: distances"):
        conv(g, nc.ones(2, 1), nc.ones(3, 1))
