"""Layer behaviours DGL's tests rely on: a HeteroGraphConv pickles (torch.save of the module) with
every aggregate, GatedGraphConv takes float edge types holding whole numbers (as DGL's ``==`` does),
and lap_pe / LaplacianPE run on directed graphs (real parts of the eigenpairs, as DGL), checked
against NumPy eigenvalues and the annihilating real polynomial of each eigenpair. Both backends."""

import importlib
import io
import pickle

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.graph.transforms.positional_encoding as pe_module
from conftest import np_of


def _nn(backend_name):
    return importlib.import_module(f"nodeweave.nn.{backend_name}")


def _roundtrip(module, backend_name):
    if backend_name == "pytorch":
        import torch

        buf = io.BytesIO()
        torch.save(module, buf)
        buf.seek(0)
        return torch.load(buf, weights_only=False)
    return pickle.loads(pickle.dumps(module))


@pytest.mark.parametrize("aggregate", ["sum", "max", "min", "mean", "stack"])
def test_hetero_graph_conv_pickles(backend_name, aggregate):
    nn = _nn(backend_name)
    T = nwb.current()
    rng = np.random.default_rng(0)
    g = nw.heterograph({("user", "follows", "user"): ([0, 1, 2], [1, 2, 0]),
                        ("user", "plays", "game"): ([0, 2], [0, 1]),
                        ("game", "rev", "user"): ([1], [2])})
    conv = nn.HeteroGraphConv({"follows": nn.SAGEConv(3, 2, "mean"), "plays": nn.SAGEConv(3, 2, "mean"),
                               "rev": nn.GraphConv(3, 2, allow_zero_in_degree=True)}, aggregate=aggregate)
    feats = {"user": T.from_numpy(rng.standard_normal((3, 3)).astype(np.float32)),
             "game": T.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))}
    back = _roundtrip(conv, backend_name)
    assert repr(back.agg_fn) == f"{aggregate}_aggregate"
    want, got = conv(g, feats), back(g, feats)
    assert sorted(want) == sorted(got)
    for k in want:
        np.testing.assert_array_equal(np_of(got[k]), np_of(want[k]))


def test_gated_graph_conv_takes_whole_float_edge_types(backend_name):
    nn = _nn(backend_name)
    T = nwb.current()
    rng = np.random.default_rng(1)
    g = nw.graph(([0, 1, 2, 3, 0], [1, 2, 3, 0, 2]))
    conv = nn.GatedGraphConv(3, 4, n_steps=2, n_etypes=2)
    feat = T.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
    ints = np.array([0, 1, 1, 0, 1])
    want = np_of(conv(g, feat, T.from_numpy(ints)))
    np.testing.assert_array_equal(np_of(conv(g, feat, T.from_numpy(ints.astype(np.float32)))), want)
    one = nn.GatedGraphConv(3, 3, n_steps=1, n_etypes=1)
    np.testing.assert_allclose(np_of(one(g, feat, T.from_numpy(np.zeros(5, np.float32)))),
                               np_of(one(g, feat)), rtol=1e-6, atol=1e-6)
    with pytest.raises(TypeError, match="whole-number edge type"):
        conv(g, feat, T.from_numpy(np.array([0.0, 0.5, 1.0, 0.0, 1.0], np.float32)))
    with pytest.raises(ValueError, match=r"etypes must be in \[0, n_etypes=2\)"):
        conv(g, feat, T.from_numpy(np.array([0.0, 2.0, 1.0, 0.0, 1.0], np.float32)))


def _laplacian(src, dst, n):
    a = np.zeros((n, n))
    np.add.at(a, (src, dst), 1.0)
    deg = np.clip(a.sum(0), 1, None)  # in-degrees
    return np.eye(n) - a / np.sqrt(deg)[:, None] / np.sqrt(deg)[None, :]


def _check_directed_pe(pe, vals, lap, k):
    """Eigenvalues: the real parts of the k eigenvalues after the first, by real part. Each
    column: a non-zero real vector that (L - a)^2 + b^2 annihilates, a + ib its eigenvalue (the
    real part of an eigenvector of a complex pair lies in the pair's real invariant plane)."""
    ref = np.linalg.eigvals(lap)
    ref = ref[np.argsort(ref.real, kind="stable")][1:k + 1]
    np.testing.assert_allclose(vals, ref.real, atol=1e-6)
    n = len(lap)
    for j in range(k):
        a, b = ref[j].real, abs(ref[j].imag)
        poly = lap @ lap - 2 * a * lap + (a * a + b * b) * np.eye(n)
        assert np.linalg.norm(pe[:, j]) > 1e-3
        np.testing.assert_allclose(poly @ pe[:, j], 0.0, atol=1e-5)


def test_lap_pe_on_a_directed_graph(backend_name):
    src, dst = np.array([0, 1, 2, 0, 3, 1, 4, 2]), np.array([1, 2, 0, 2, 0, 3, 1, 4])
    g = nw.graph((src, dst))
    pe, vals = nw.lap_pe(g, 3, return_eigval=True)
    assert tuple(pe.shape) == (5, 3)
    _check_directed_pe(np_of(pe).astype(np.float64), np_of(vals).astype(np.float64), _laplacian(src, dst, 5), 3)
    out = nw.transforms.LaplacianPE(k=2, feat_name="pe")(g)
    assert tuple(out.ndata["pe"].shape) == (5, 2)
    padded = np_of(nw.lap_pe(g, 6, padding=True))
    assert padded.shape == (5, 6) and (padded[:, 4:] == 0).all()


def test_lap_pe_directed_sparse_solver(backend_name, monkeypatch):
    rng = np.random.default_rng(2)
    n = 30
    src, dst = rng.integers(0, n, 80), rng.integers(0, n, 80)
    src, dst = np.concatenate([src, np.arange(n)]), np.concatenate([dst, (np.arange(n) + 1) % n])
    monkeypatch.setattr(pe_module, "DENSE_EIGEN_LIMIT", 5)   # the sparse (ARPACK) path
    pe, vals = nw.lap_pe(nw.graph((src, dst), num_nodes=n), 3, return_eigval=True)
    _check_directed_pe(np_of(pe).astype(np.float64), np_of(vals).astype(np.float64),
                       _laplacian(src, dst, n), 3)
