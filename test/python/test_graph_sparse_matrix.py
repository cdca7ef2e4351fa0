"""g.adj() as DGL 2.x's SparseMatrix (indices(), val, to_dense(), csr()/csc(), transpose, A @ X) and
g.adj_external() (the backend's sparse tensor by default, SciPy with scipy_fmt, on ctx), against
SciPy / dense NumPy references and float64 finite-difference gradients, on both backends."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
from conftest import np_of
from nodeweave.graph.sparse_matrix import SparseMatrix

SRC = [0, 2, 1, 2, 0, 2]
DST = [1, 0, 3, 0, 3, 2]          # 2 -> 0 twice: a multi-edge


def _dense(src, dst, shape, val=None):
    out = np.zeros(shape + (() if val is None else val.shape[1:]))
    for i, (u, v) in enumerate(zip(src, dst)):
        out[u, v] += 1.0 if val is None else val[i]
    return out


@pytest.mark.parametrize("idtype", ["int32", "int64"])
def test_adj_is_a_sparse_matrix_of_the_edges(backend_name, idtype):
    g = nw.heterograph({("user", "plays", "game"): (SRC, DST)}, num_nodes_dict={"user": 3, "game": 4},
                       idtype=idtype)
    A = g.adj()
    assert isinstance(A, SparseMatrix) and A.shape == (3, 4) and A.nnz == 6
    assert np_of(A.indices()).tolist() == [SRC, DST] and np_of(A.indices()).dtype == np.dtype(idtype)
    assert [np_of(t).tolist() for t in A.coo()] == [SRC, DST]
    np.testing.assert_array_equal(np_of(A.val), np.ones(6, np.float32))
    np.testing.assert_array_equal(np_of(A.to_dense()), _dense(SRC, DST, (3, 4)))
    assert A.has_duplicate() and not A.coalesce().has_duplicate()
    indptr, indices, vidx = (np_of(t) for t in A.csr())
    np.testing.assert_array_equal(indptr, np.concatenate([[0], np.cumsum(np.bincount(SRC, minlength=3))]))
    # Within a row the entries are ordered by column, then by position in val.
    rows = np.repeat(np.arange(3), np.diff(indptr))
    assert np.all(np.lexsort((vidx, indices, rows)) == np.arange(6))
    np.testing.assert_array_equal(np.asarray(SRC)[vidx], rows)
    np.testing.assert_array_equal(np.asarray(DST)[vidx], indices)
    cptr, cidx, cv = (np_of(t) for t in A.csc())
    np.testing.assert_array_equal(cptr, np.concatenate([[0], np.cumsum(np.bincount(DST, minlength=4))]))
    np.testing.assert_array_equal(np.asarray(SRC)[cv], cidx)
    At = A.T
    assert At.shape == (4, 3) and np_of(At.indices()).tolist() == [DST, SRC]
    np.testing.assert_array_equal(np_of(A.t().to_dense()), _dense(SRC, DST, (3, 4)).T)
    assert nw.graph(([0], [1])).adjacency_matrix().shape == (2, 2)


def test_adj_with_edge_weights_and_matmul_gradients(backend_name):
    T = nwb.current()
    rng = np.random.default_rng(0)
    g = nw.heterograph({("user", "plays", "game"): (SRC, DST)}, num_nodes_dict={"user": 3, "game": 4})
    w = rng.standard_normal(6)
    g.edata["w"] = T.from_numpy(w)
    A = g.adj(eweight_name="w")
    np.testing.assert_array_equal(np_of(A.val), w)
    np.testing.assert_allclose(np_of(A.to_dense()), _dense(SRC, DST, (3, 4), w))
    x = rng.standard_normal((4, 2))
    np.testing.assert_allclose(np_of(A @ T.from_numpy(x)), _dense(SRC, DST, (3, 4), w) @ x, rtol=1e-12)
    v = rng.standard_normal(4)
    np.testing.assert_allclose(np_of(A @ T.from_numpy(v)), _dense(SRC, DST, (3, 4), w) @ v, rtol=1e-12)
    c = A.coalesce()
    assert c.nnz == 5
    np.testing.assert_allclose(np_of(c.to_dense()), _dense(SRC, DST, (3, 4), w))
    g.edata["i"] = T.from_numpy(np.arange(6))
    np.testing.assert_array_equal(np_of(g.adj(eweight_name="i").to_dense()),
                                  _dense(SRC, DST, (3, 4), np.arange(6.0)))

    def run(val, feat):
        M = SparseMatrix(np.asarray(SRC), np.asarray(DST), val, (3, 4))
        return nwb.of(val).cat([(M @ feat).reshape((-1,)), M.to_dense().reshape((-1,))], 0)

    leaves = [T.from_numpy(w).requires_grad_(True), T.from_numpy(x).requires_grad_(True)]
    if backend_name == "native":
        from nodeweave.core.autograd import gradcheck
    else:
        from torch.autograd import gradcheck
    assert gradcheck(run, leaves, eps=1e-6, atol=1e-6)


def test_sparse_matrix_conversions_and_errors(backend_name):
    T = nwb.current()
    A = SparseMatrix([0, 1], [1, 0], T.from_numpy(np.array([1.0, 2.0], np.float32)), (2, 2))
    assert A.to(dtype="float64").dtype == T.dtype_from_name("float64")
    assert A.double().dtype == T.dtype_from_name("float64") and A.float() is A and A.cpu() is A
    assert str(A.device) == "cpu" and A.dtype == T.dtype_from_name("float32")
    assert "SparseMatrix(indices=" in repr(A)
    with pytest.raises(IndexError, match=r"col ids must be in \[0, 2\)"):
        SparseMatrix([0], [2], T.from_numpy(np.ones(1)), (2, 2))
    with pytest.raises(ValueError, match="one entry per non-zero"):
        SparseMatrix([0, 1], [1, 0], T.from_numpy(np.ones(3)), (2, 2))
    with pytest.raises(TypeError, match="val must be a tensor"):
        SparseMatrix([0], [0], [1.0], (1, 1))
    with pytest.raises(ValueError, match="has 2 columns but x has 3 rows"):
        A @ T.from_numpy(np.ones((3, 1), np.float32))
    with pytest.raises(KeyError, match="no feature 'nope'"):
        nw.graph(([0], [1])).adj(eweight_name="nope")


def test_adj_external_forms(backend_name):
    g = nw.heterograph({("user", "plays", "game"): (SRC, DST)}, num_nodes_dict={"user": 3, "game": 4})
    want = _dense(SRC, DST, (3, 4))
    for transpose in (False, True):
        m = g.adj_external(transpose=transpose)
        dense = m.to_dense()
        if backend_name == "pytorch":
            import torch
            assert m.layout == torch.sparse_coo and m.dtype == torch.float32
            assert torch.sparse.mm(m, torch.ones(m.shape[1], 1)).shape == (m.shape[0], 1)
        else:
            assert isinstance(m, SparseMatrix)
        np.testing.assert_array_equal(np_of(dense), want.T if transpose else want)
        for fmt in ("csr", "csc", "coo"):
            s = g.adj_external(transpose, scipy_fmt=fmt)
            assert s.format == fmt
            np.testing.assert_array_equal(s.toarray(), want.T if transpose else want)
    on_cpu = g.adj_external(ctx="cpu").to_dense()
    assert nwb.of(on_cpu).device_str(on_cpu) == "cpu"
    # DGL 1.x's keywords on adj() give adj_external's result.
    assert g.adj(scipy_fmt="csr").format == "csr"
    np.testing.assert_array_equal(np_of(g.adj(transpose=True).to_dense()), want.T)
    with pytest.raises(ValueError, match="scipy_fmt must be"):
        g.adj_external(scipy_fmt="dia")
