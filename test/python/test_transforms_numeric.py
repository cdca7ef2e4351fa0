"""Transform objects that compute values (GCNNorm, RowFeatNormalizer, PPR, HeatKernel, GDC,
SIGNDiffusion, LapPE / LaplacianPE, RandomWalkPE, SVDPE) and the functions behind the encodings, on
homogeneous graphs and heterographs, on both backends, against dense float64 NumPy references
written from the papers' formulas (independent of the implementation's SciPy calls)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.graph.transforms import positional_encoding as pe_module
from nodeweave.transforms import (GCNNorm, GDC, PPR, HeatKernel, LapPE, LaplacianPE, RandomWalkPE,
                                  RowFeatNormalizer, SIGNDiffusion, SVDPE)

from transforms_support import E, N, T, bk, dense_in, hetero, homo, snapshot  # noqa: F401

# ----------------------------------------------------------------------------- GCN normalization


def ref_gcn_weights(g, ct, weight=None):
    s, d = E(g, ct)
    w = np.ones(len(s)) if weight is None else N(g.edges[ct].data[weight]).astype(np.float64)
    deg = np.zeros(g.num_nodes(ct[0]))
    np.add.at(deg, d, w)
    inv = np.array([1 / math.sqrt(x) if x > 0 else 0.0 for x in deg])
    return inv[s] * w * inv[d]


def test_gcn_norm_unweighted_and_weighted(bk, rng):
    g = homo(rng)
    del g.edata["w"]
    before = snapshot(g)
    out = GCNNorm()(g)
    np.testing.assert_allclose(N(out.edata["w"]), ref_gcn_weights(g, g.canonical_etypes[0]), rtol=1e-6)
    assert N(out.edata["w"]).dtype == np.float32 and snapshot(g) == before
    g.edata["x"] = T((rng.random(g.num_edges()) + 0.5).astype(np.float32))
    wx = GCNNorm(eweight_name="x")(g)
    np.testing.assert_allclose(N(wx.edata["x"]), ref_gcn_weights(g, g.canonical_etypes[0], "x"), rtol=1e-5)
    np.testing.assert_array_equal(N(g.edata["x"]), N(g.edata["x"]))
    g.edata["col"] = T(N(g.edata["x"]).reshape(-1, 1))  # (E, 1) weights keep their shape
    col = GCNNorm(eweight_name="col")(g).edata["col"]
    np.testing.assert_allclose(N(col)[:, 0], N(wx.edata["x"]), rtol=1e-6)


def test_gcn_norm_heterograph_and_gradient(rng):
    g = hetero(rng)
    out = GCNNorm()(g)
    np.testing.assert_allclose(N(out.edges["follows"].data["w"]), ref_gcn_weights(g, ("user", "follows", "user"), "w"),
                               rtol=1e-5)
    for et in ("plays", "played_by"):  # only relations from a type to itself are normalized
        np.testing.assert_array_equal(N(out.edges[et].data["w"]), N(g.edges[et].data["w"]))
    # the weighted normalization is differentiable in the weights: finite differences in float64
    h = homo(rng, n=5, m=9)
    base = (rng.random(9) + 0.5)
    w = nc.tensor(base, requires_grad=True)
    h.edata["w"] = w
    GCNNorm()(h).edata["w"].sum().backward()

    def f(x):
        h.edata["w"] = nc.tensor(x)
        return ref_gcn_weights(h, h.canonical_etypes[0], "w").sum()

    eps = 1e-6
    fd = [(f(base + eps * np.eye(9)[i]) - f(base - eps * np.eye(9)[i])) / (2 * eps) for i in range(9)]
    np.testing.assert_allclose(w.grad.numpy(), fd, rtol=1e-5, atol=1e-8)


# ----------------------------------------------------------------------------- row normalization


@pytest.mark.parametrize("subtract_min", [False, True])
def test_row_feat_normalizer(bk, rng, subtract_min):
    g = hetero(rng)
    g.nodes["user"].data["feat"] = T(np.array([[1, 3, 0], [0, 0, 0], [0.2, 0.3, 0.1], [-1, 2, 4], [5, 5, 0],
                                               [0, 1, 0]], np.float32))
    out = RowFeatNormalizer(subtract_min=subtract_min, node_feat_names=["feat"], edge_feat_names=["w"])(g)
    for views, types in ((("nodes"), g.ntypes), (("edges"), g.canonical_etypes)):
        for t in types:
            name = "feat" if views == "nodes" else "w"
            x = N(getattr(g, views)[t].data[name]).astype(np.float64)
            if subtract_min:
                x = x - x.min()
            want = x / np.maximum(x.sum(-1, keepdims=True), 1.0)
            np.testing.assert_allclose(N(getattr(out, views)[t].data[name]), want, rtol=1e-6)
    with pytest.raises(KeyError, match="no node feature 'nope'"):
        RowFeatNormalizer(node_feat_names=["nope"])(g)
    assert RowFeatNormalizer()(g) is g  # nothing to do


# ----------------------------------------------------------------------------- diffusion


def keep_edges(s_mat, eps=None, avg_degree=None):
    n = s_mat.shape[0]
    thr = eps if eps is not None else np.sort(s_mat.ravel())[::-1][avg_degree * n - 1]
    vd, vs = np.nonzero(s_mat >= thr)
    return vs, vd, s_mat[vd, vs]


def expm_series(m, terms=80):
    out, term = np.eye(len(m)), np.eye(len(m))
    for k in range(1, terms):
        term = term @ m / k
        out = out + term
    return out


CASES = {
    "ppr": (lambda: PPR(alpha=0.3, eps=0.02), lambda a: 0.3 * np.linalg.solve(np.eye(len(a)) - 0.7 * a, np.eye(len(a)))),
    "heat": (lambda: HeatKernel(t=1.5, eps=0.02), lambda a: expm_series(1.5 * (a - np.eye(len(a))))),
    "gdc": (lambda: GDC([0.4, 0.3, 0.2, 0.1], eps=0.02),
            lambda a: sum(c * np.linalg.matrix_power(a, k) for k, c in enumerate([0.4, 0.3, 0.2, 0.1]))),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("weighted", [False, True])
def test_diffusion_matches_dense_formula(bk, rng, name, weighted):
    make, formula = CASES[name]
    g = homo(rng)
    if weighted:  # weights small enough that I - 0.7 A is invertible
        g.edata["w"] = T((N(g.edata["w"]) / 4).astype(np.float32))
    else:
        del g.edata["w"]
    a = dense_in(g, weight="w" if weighted else None)  # parallel edges add up
    s_mat = formula(a)
    vs, vd, w = keep_edges(s_mat, eps=0.02)
    out = make()(g)
    np.testing.assert_array_equal(np.stack(E(out)), np.stack([vs, vd]))
    np.testing.assert_allclose(N(out.edata["w"]), w, rtol=2e-5, atol=1e-7)
    np.testing.assert_array_equal(N(out.ndata["feat"]), N(g.ndata["feat"]))
    # avg_degree keeps the avg_degree * N largest entries (and any tied with the last of them)
    t = make()
    t.eps = None
    t.avg_degree = 3
    out = t(g)
    vs, vd, w = keep_edges(s_mat, avg_degree=3)
    assert out.num_edges() == len(vs) >= 3 * g.num_nodes()
    np.testing.assert_array_equal(np.stack(E(out)), np.stack([vs, vd]))
    np.testing.assert_allclose(N(out.edata["w"]), w, rtol=2e-5, atol=1e-7)


def test_diffusion_heterograph_per_relation(bk, rng):
    g = hetero(rng)
    out = PPR(alpha=0.5, eps=0.01)(g)
    a = dense_in(g, "follows", "w")
    vs, vd, w = keep_edges(0.5 * np.linalg.inv(np.eye(6) - 0.5 * a), eps=0.01)
    np.testing.assert_array_equal(np.stack(E(out, "follows")), np.stack([vs, vd]))
    np.testing.assert_allclose(N(out.edges["follows"].data["w"]), w, rtol=2e-5)
    for et in ("plays", "played_by"):
        np.testing.assert_array_equal(np.stack(E(out, et)), np.stack(E(g, et)))
        np.testing.assert_array_equal(N(out.edges[et].data["w"]), N(g.edges[et].data["w"]))


def test_diffusion_arguments():
    with pytest.raises(ValueError, match=r"PPR: alpha must be in \(0, 1\]"):
        PPR(alpha=0)
    with pytest.raises(ValueError, match="avg_degree must be a positive int"):
        HeatKernel(avg_degree=0)
    with pytest.raises(TypeError, match="GDC: coefs must be a non-empty list"):
        GDC([])
    with pytest.raises(TypeError, match="eweight_name"):
        PPR(eweight_name=1)
    g = nw.graph(([0, 1], [1, 0]))
    g.edata["w"] = nc.tensor([2.0, 2.0])  # I - (1 - 0.5) A is singular
    with pytest.raises(ValueError, match="singular"):
        PPR(alpha=0.5, eps=0.1)(g)


# ----------------------------------------------------------------------------- SIGN


def ref_sign(m, x, op, k, alpha=0.2):
    """``m[v, u]``: weight of u -> v. Returns [T x, T^2 x, ...]."""
    if op == "rw":
        z = m.sum(1, keepdims=True)
        op_m = np.divide(m, z, out=np.zeros_like(m), where=z != 0)
    elif op in ("gcn", "ppr"):
        deg = m.sum(1)
        inv = np.divide(1.0, np.sqrt(deg), out=np.zeros_like(deg), where=deg > 0)
        op_m = inv[:, None] * m * inv[None, :]
    else:
        op_m = m
    outs, h = [], x
    for _ in range(k):
        h = op_m @ h
        if op == "ppr":
            h = (1 - alpha) * h + alpha * x
        outs.append(h)
    return outs


@pytest.mark.parametrize("op", ["raw", "rw", "gcn", "ppr"])
@pytest.mark.parametrize("weighted", [False, True])
def test_sign_diffusion(bk, rng, op, weighted):
    g = homo(rng)
    x = N(g.ndata["feat"]).astype(np.float64)
    out = SIGNDiffusion(k=3, diffuse_op=op, eweight_name="w" if weighted else None, alpha=0.2)(g)
    want = ref_sign(dense_in(g, weight="w" if weighted else None), x, op, 3)
    for i in range(3):
        np.testing.assert_allclose(N(out.ndata[f"out_feat_{i + 1}"]), want[i], rtol=1e-5, atol=1e-6)
    assert set(out.edata) == {"w"} and set(g.ndata) == {"feat"}  # nothing left on the input


@pytest.mark.parametrize("op", ["raw", "gcn"])
def test_sign_diffusion_heterograph(bk, rng, op):
    g = hetero(rng)
    out = SIGNDiffusion(k=2, diffuse_op=op, in_feat_name="feat", out_feat_name="h")(g)
    hom = nw.to_homogeneous(g, ndata=["feat"])  # nodes numbered type by type: game, then user
    want = ref_sign(dense_in(hom), N(hom.ndata["feat"]).astype(np.float64), op, 2)
    for i in range(2):
        np.testing.assert_allclose(N(out.nodes["game"].data[f"h_{i + 1}"]), want[i][:3], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(N(out.nodes["user"].data[f"h_{i + 1}"]), want[i][3:], rtol=1e-5, atol=1e-6)
    del g.nodes["game"].data["feat"]
    with pytest.raises(ValueError, match="SIGNDiffusion on a heterograph"):
        SIGNDiffusion(k=1)(g)


def test_sign_arguments(rng):
    with pytest.raises(ValueError, match="diffuse_op must be one of"):
        SIGNDiffusion(k=2, diffuse_op="heat")
    with pytest.raises(ValueError, match="SIGNDiffusion: k must be a positive int"):
        SIGNDiffusion(k=0)
    with pytest.raises(KeyError, match="no node feature 'x'"):
        SIGNDiffusion(k=1, in_feat_name="x")(homo(rng))


# ----------------------------------------------------------------------------- positional encodings


def ref_rwpe(a_out, k):
    """``a_out[u, v]``: weight of u -> v."""
    rs = a_out.sum(1, keepdims=True)
    p = np.divide(a_out, rs, out=np.zeros_like(a_out), where=rs != 0)
    return np.stack([np.diag(np.linalg.matrix_power(p, i)) for i in range(1, k + 1)], 1)


@pytest.mark.parametrize("weighted", [False, True])
def test_random_walk_pe(bk, rng, weighted):
    g = homo(rng)
    out = RandomWalkPE(k=5, feat_name="rw", eweight_name="w" if weighted else None)(g)
    want = ref_rwpe(dense_in(g, weight="w" if weighted else None).T, 5)
    np.testing.assert_allclose(N(out.ndata["rw"]), want, rtol=1e-5, atol=1e-7)
    assert N(out.ndata["rw"]).dtype == np.float32
    np.testing.assert_allclose(N(nw.random_walk_pe(g, 5)), ref_rwpe(dense_in(g).T, 5), rtol=1e-5, atol=1e-7)


def test_random_walk_pe_heterograph(bk, rng):
    g = hetero(rng)
    out = RandomWalkPE(k=3)(g)
    want = ref_rwpe(dense_in(nw.to_homogeneous(g)).T, 3)
    np.testing.assert_allclose(N(out.nodes["game"].data["PE"]), want[:3], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(N(out.nodes["user"].data["PE"]), want[3:], rtol=1e-5, atol=1e-7)


def bidirected(rng, n=10, m=18):
    pairs = {(int(a), int(b)) for a, b in zip(rng.integers(0, n, m), rng.integers(0, n, m)) if a != b}
    s = np.array([p[0] for p in pairs] + [p[1] for p in pairs])
    d = np.array([p[1] for p in pairs] + [p[0] for p in pairs])
    return nw.graph((s, d), num_nodes=n)


def ref_laplacian(a):
    deg = np.clip(a.sum(0), 1, None)
    return np.eye(len(a)) - a / np.sqrt(deg)[:, None] / np.sqrt(deg)[None, :]


def assert_eigvecs(pe, vals, lap, k):
    """Each column is a unit eigenvector of ``lap`` for the matching eigenvalue, columns are
    orthonormal, and the eigenvalues are the k smallest after the first."""
    want_vals = np.linalg.eigvalsh(lap)[1:k + 1]
    np.testing.assert_allclose(vals, want_vals, atol=1e-5)
    np.testing.assert_allclose(lap @ pe, pe * vals[None, :], atol=1e-5)
    np.testing.assert_allclose(pe.T @ pe, np.eye(k), atol=1e-5)


def test_lap_pe(bk, rng):
    g = bidirected(rng)
    lap = ref_laplacian(dense_in(g))
    out = LapPE(k=4, feat_name="lap", eigval_name="ev")(g)
    pe, ev = N(out.ndata["lap"]).astype(np.float64), N(out.ndata["ev"]).astype(np.float64)
    assert pe.shape == (10, 4) and ev.shape == (10, 4) and np.all(ev == ev[0])
    assert_eigvecs(pe, ev[0], lap, 4)
    pe2, vals = nw.lap_pe(g, 4, return_eigval=True)
    assert_eigvecs(N(pe2).astype(np.float64), N(vals).astype(np.float64), lap, 4)
    assert LaplacianPE is not LapPE and issubclass(LaplacianPE, LapPE) and nw.laplacian_pe(g, 2).shape[1] == 2


def test_lap_pe_sparse_solver_agrees(bk, rng, monkeypatch):
    g = bidirected(rng, n=40, m=90)
    monkeypatch.setattr(pe_module, "DENSE_EIGEN_LIMIT", 5)  # take the Lanczos path
    pe, vals = nw.lap_pe(g, 3, return_eigval=True)
    assert_eigvecs(N(pe).astype(np.float64), N(vals).astype(np.float64), ref_laplacian(dense_in(g)), 3)


def test_lap_pe_padding_signs_and_errors(bk, rng):
    g = nw.graph(([0, 1, 1, 2], [1, 0, 2, 1]))
    pe, vals = nw.lap_pe(g, 5, padding=True, return_eigval=True)
    assert tuple(pe.shape) == (3, 5)
    np.testing.assert_array_equal(N(pe)[:, 2:], 0.0)
    assert np.isnan(N(vals)[2:]).all() and not np.isnan(N(vals)[:2]).any()
    with pytest.raises(ValueError, match="k must be smaller than the number of nodes"):
        nw.lap_pe(g, 3)
    # random signs follow the seed
    big = bidirected(rng)
    nc.manual_seed(3)
    a = N(nw.lap_pe(big, 4))
    nc.manual_seed(3)
    np.testing.assert_array_equal(a, N(nw.lap_pe(big, 4)))


def test_lap_pe_heterograph(bk, rng):
    g = nw.heterograph({("a", "ab", "b"): ([0, 1, 2, 2], [0, 0, 1, 2]), ("b", "ba", "a"): ([0, 0, 1, 2], [0, 1, 2, 2])})
    out = LapPE(k=2)(g)
    hom = nw.to_homogeneous(g)
    pe = np.concatenate([N(out.nodes["a"].data["PE"]), N(out.nodes["b"].data["PE"])]).astype(np.float64)
    lap = ref_laplacian(dense_in(hom))
    np.testing.assert_allclose(lap @ pe, pe * np.linalg.eigvalsh(lap)[1:3][None, :], atol=1e-5)


@pytest.mark.parametrize("random_flip", [False, True])
def test_svd_pe(bk, rng, random_flip):
    g = homo(rng)
    a = dense_in(g).T  # a[u, v] = edges u -> v
    out = SVDPE(k=3, random_flip=random_flip)(g)
    enc = N(out.ndata["svd_pe"]).astype(np.float64)
    assert enc.shape == (9, 6)
    u, s, vh = np.linalg.svd(a)
    if not random_flip:
        # sign-free check: the encodings rebuild the rank-3 approximation U_3 S_3 V_3^T
        np.testing.assert_allclose(enc[:, :3] @ enc[:, 3:].T, (u[:, :3] * s[:3]) @ vh[:3], atol=1e-5)
        np.testing.assert_allclose(np.abs(enc[:, :3]), np.abs(u[:, :3] * np.sqrt(s[:3])), atol=1e-5)
    else:
        plain = N(nw.svd_pe(g, 3, random_flip=False)).astype(np.float64)
        same = np.isclose(enc, plain, atol=1e-6).all(1) | np.isclose(enc, -plain, atol=1e-6).all(1)
        assert same.all()  # each row flipped as a whole (or not)
    padded = N(nw.svd_pe(g, 12, padding=True, random_flip=False))
    assert padded.shape == (9, 24)
    # as DGL: [U_9 sqrt(S), V_9 sqrt(S), 2 * (12 - 9) zero columns]
    np.testing.assert_allclose(np.abs(padded[:, :9]), np.abs(u * np.sqrt(s)), atol=1e-5)
    np.testing.assert_array_equal(padded[:, 18:], 0.0)
    with pytest.raises(ValueError, match="k must be at most the number of nodes"):
        nw.svd_pe(g, 12)


def test_encoding_arguments():
    with pytest.raises(ValueError, match="RandomWalkPE: k must be a positive int"):
        RandomWalkPE(k=0)
    with pytest.raises(TypeError, match="LapPE: feat_name must be a feature name"):
        LapPE(k=2, feat_name=3)
    with pytest.raises(TypeError, match="SVDPE: padding must be True or False"):
        SVDPE(k=2, padding=1)
    with pytest.raises(ValueError, match="random_walk_pe: k must be a positive int"):
        nw.random_walk_pe(nw.graph(([0], [1])), 0)
