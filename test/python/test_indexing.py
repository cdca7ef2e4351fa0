"""Indexing against NumPy and PyTorch: index_select, gather, scatter, scatter_add, index_add,
index_copy, masked_fill, masked_select, nonzero, embedding and its row-sparse gradient, the in-place
forms, and Tensor.__getitem__ / __setitem__. Every dtype, int32/int64 indices, non-contiguous
inputs and indices, negative dims, duplicate indices, float64 gradcheck (first and second order)
and every bad-input error."""

import doctest

import numpy as np
import pytest
import torch

import nodeweave.core as nc
from nodeweave import _C

ALL = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
ACCUM = [d for d in ALL if d != "bool"]  # dtypes index_add / scatter_add accumulate in
IDX = ["int32", "int64"]


# ---------------------------------------------------------------- helpers

def values(rng, shape, dtype):
    """Random values exactly representable in `dtype`, small enough that sums of a few never
    overflow or round (bfloat16 values are returned as float32)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "uint8":
        return rng.integers(0, 10, shape).astype(np.uint8)
    if dtype in ("int8", "int32", "int64"):
        return rng.integers(-10, 10, shape).astype(dtype)
    return (rng.integers(-16, 16, shape) * 0.5).astype("float32" if dtype == "bfloat16" else dtype)


def make(arr, dtype):
    return nc.tensor(np.asarray(arr), dtype=dtype)


def layouts(arr, dtype):
    """Tensors holding `arr`: contiguous, a transposed (permuted) view, and a step-2 slice."""
    out = [make(arr, dtype)]
    if arr.ndim >= 2:
        perm = list(range(arr.ndim))[::-1]
        out.append(make(np.ascontiguousarray(arr.transpose(perm)), dtype).permute(perm))
    if arr.ndim >= 1 and arr.shape[-1] > 0:
        big = np.repeat(arr, 2, axis=-1)
        out.append(_C._slice(make(big, dtype), -1, 0, big.shape[-1], 2))
    out = out[:1] + [t for t in out[1:] if not t.is_contiguous()]  # size-1 dims can make a "view" contiguous
    for t in out:
        np.testing.assert_array_equal(t.numpy(), arr)
    return out


@pytest.fixture(params=[1, 2, 5], ids=lambda n: f"{n}threads")
def threads(request):
    """Runs a test at several thread counts: each picks different parallel strategies, and with
    more threads than cores the threads interleave, so a race would show as a wrong value."""
    before = nc.get_num_threads()
    nc.set_num_threads(request.param)
    yield request.param
    nc.set_num_threads(before)


def f64(rng, shape):
    return nc.tensor(rng.standard_normal(shape), requires_grad=True)


def gradgradcheck(fn, inputs, rng):
    """Second order: gradcheck of the vector-Jacobian product of fn with respect to the inputs and
    the output weights, so the backward's own backward is exercised (even for linear ops)."""
    out = fn(*inputs)
    w = nc.tensor(rng.standard_normal(out.shape), requires_grad=True)
    n = len(inputs)

    def vjp(*args):
        xs, weight = list(args[:n]), args[n]
        with nc.enable_grad():
            xs = [x if x.requires_grad or x.dtype.name != "float64" else x.detach().requires_grad_(True)
                  for x in xs]
            diff = [x for x in xs if x.requires_grad]
            grads = nc.autograd.grad(fn(*xs), diff, grad_outputs=weight, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else nc.zeros_like(x) for g, x in zip(grads, diff))

    assert nc.autograd.gradcheck(vjp, list(inputs) + [w])


def check_grads(fn, inputs, rng):
    assert nc.autograd.gradcheck(fn, inputs)
    gradgradcheck(fn, inputs, rng)


def np_gather(x, dim, idx):
    corner = tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(idx.shape))
    return np.take_along_axis(x[corner], idx, axis=dim)


def np_scatter(x, dim, idx, src, add=False):
    """Serial reference: positions in row-major order, so among repeated targets the last wins."""
    out = x.copy()
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        if add:
            out[tuple(tgt)] += src[pos]
        else:
            out[tuple(tgt)] = src[pos]
    return out


def np_index_add(x, dim, idx, src, alpha):
    out = x.copy()
    np.add.at(np.moveaxis(out, dim, 0), idx, (np.moveaxis(src, dim, 0) * alpha).astype(x.dtype))
    return out


def np_index_copy(x, dim, idx, src):
    out = x.copy()
    moved, s = np.moveaxis(out, dim, 0), np.moveaxis(src, dim, 0)
    for k, i in enumerate(idx):  # serial: the last of repeated indices wins
        moved[i] = s[k]
    return out


# ---------------------------------------------------------------- index_select

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("idx_dtype", IDX)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select_matches_numpy(rng, dtype, idx_dtype, dim):
    x = values(rng, (4, 5, 3), dtype)
    idx = rng.integers(0, x.shape[dim], 7)  # 7 picks from <= 5: repeats guaranteed
    want = np.take(x, idx, axis=dim)
    for xt in layouts(x, dtype):
        for it in layouts(idx, idx_dtype):
            got = nc.index_select(xt, dim, it)
            assert got.dtype.name == dtype and got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want)
            np.testing.assert_array_equal(xt.index_select(dim, it).numpy(), want)


def test_index_select_scalar_index_and_0d_input():
    x = nc.tensor([[1, 2], [3, 4], [5, 6]])
    assert x.index_select(0, nc.tensor(2)).tolist() == [[5, 6]]  # 0-d index keeps the dim, as torch
    assert x.index_select(1, nc.tensor([], dtype=nc.int64)).shape == (3, 0)
    s = nc.tensor(7.0).index_select(0, nc.tensor([0]))
    assert s.shape == () and s.item() == 7.0


def test_index_select_grad(rng):
    idx = nc.tensor([2, 0, 2, 3])
    check_grads(lambda x: nc.index_select(x, 1, idx), [f64(rng, (3, 4))], rng)
    check_grads(lambda x: nc.index_select(x, -2, idx[:2]) * x[:2], [f64(rng, (3, 4))], rng)


# ---------------------------------------------------------------- gather

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("idx_dtype", IDX)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_matches_numpy(rng, dtype, idx_dtype, dim):
    x = values(rng, (4, 5, 3), dtype)
    ishape = [3, 4, 2]  # smaller than x outside dim
    ishape[dim] = 6
    idx = rng.integers(0, x.shape[dim], ishape)
    want = np_gather(x, dim % 3, idx)
    for xt in layouts(x, dtype):
        for it in layouts(idx, idx_dtype):
            got = nc.gather(xt, dim, it)
            assert got.dtype.name == dtype and got.shape == tuple(ishape)
            np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(make(x, dtype).gather(dim, make(idx, "int64")).numpy(), want)


def test_gather_matches_torch_large(rng, threads):
    x = rng.standard_normal((300, 200))
    idx = rng.integers(0, 300, (400, 150))
    got = nc.gather(nc.tensor(x), 0, nc.tensor(idx))
    want = torch.gather(torch.from_numpy(x), 0, torch.from_numpy(idx))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    rows = rng.integers(0, 300, 50000)  # an index expanded along the features: one value per row
    got = nc.gather(nc.tensor(x), 0, nc.tensor(rows).unsqueeze(1).expand(-1, 200))
    np.testing.assert_array_equal(got.numpy(), x[rows])
    np.testing.assert_array_equal(nc.index_select(nc.tensor(x), 0, nc.tensor(rows)).numpy(), x[rows])
    np.testing.assert_array_equal(nc.index_select(nc.tensor(x[:, 0]), 0, nc.tensor(rows)).numpy(), x[rows, 0])


def test_gather_grad(rng):
    idx = nc.tensor([[0, 0, 2], [1, 3, 3]])
    check_grads(lambda x: nc.gather(x, 1, idx), [f64(rng, (3, 4))], rng)
    check_grads(lambda x: nc.gather(x, 0, nc.tensor([[2, 0], [2, 2]])) ** 2, [f64(rng, (3, 3))], rng)


# ---------------------------------------------------------------- scatter / scatter_add

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("idx_dtype", IDX)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_matches_serial_reference(rng, dtype, idx_dtype, dim):
    x = values(rng, (4, 5, 3), dtype)
    ishape = [3, 4, 2]
    ishape[dim] = 6  # more entries than targets along dim: repeated targets, the last one wins
    idx = rng.integers(0, x.shape[dim], ishape)
    src = values(rng, [s + 1 for s in ishape], dtype)  # larger than index: only its corner is read
    want = np_scatter(x, dim % 3, idx, src[tuple(slice(0, s) for s in ishape)])
    for xt in layouts(x, dtype):
        for it in layouts(idx, idx_dtype):
            got = nc.scatter(xt, dim, it, layouts(src, dtype)[-1])
            np.testing.assert_array_equal(got.numpy(), want)
            np.testing.assert_array_equal(x, xt.numpy())  # out of place
    np.testing.assert_array_equal(make(x, dtype).scatter(dim, make(idx, "int64"), make(src, dtype)).numpy(), want)


@pytest.mark.parametrize("dtype", ["int32", "float16", "float64"])
def test_scatter_scalar_value(rng, dtype):
    x = values(rng, (3, 4), dtype)
    idx = np.array([[1, 3], [0, 0], [2, 1]])
    want = np_scatter(x, 1, idx, np.full(idx.shape, 2, dtype=x.dtype))
    np.testing.assert_array_equal(nc.scatter(make(x, dtype), 1, nc.tensor(idx), 2).numpy(), want)
    np.testing.assert_array_equal(nc.scatter(make(x, dtype), 1, nc.tensor(idx), value=2).numpy(), want)
    np.testing.assert_array_equal(make(x, dtype).scatter(1, nc.tensor(idx), value=2.0).numpy(), want)


@pytest.mark.parametrize("dtype", ACCUM)
@pytest.mark.parametrize("idx_dtype", IDX)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_add_matches_serial_reference(rng, dtype, idx_dtype, dim):
    x = values(rng, (4, 5, 3), dtype)
    ishape = [3, 4, 2]
    ishape[dim] = 6
    idx = rng.integers(0, x.shape[dim], ishape)
    src = values(rng, [s + 1 for s in ishape], dtype)
    want = np_scatter(x, dim % 3, idx, src[tuple(slice(0, s) for s in ishape)], add=True)
    for xt in layouts(x, dtype):
        for it in layouts(idx, idx_dtype):
            got = nc.scatter_add(xt, dim, it, layouts(src, dtype)[-1])
            np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(make(x, dtype).scatter_add(dim, make(idx, "int32"), make(src, dtype)).numpy(), want)


@pytest.mark.parametrize("shape,dim,ishape", [
    ((50000,), 0, (120000,)),          # 1-D: threads own ranges of target rows
    ((1000, 300), 0, (2000, 300)),     # wide rows: threads split the feature dim
    ((300, 1000), 1, (300, 2000)),     # many outer rows: threads split the outer dim
    ((2000, 5), 0, (30000, 4)),        # narrow rows, index narrower than self
    ((2000, 5), 0, "expanded"),        # one index value per row, expanded along the features
])
def test_scatter_add_parallel_paths_match_numpy(rng, threads, shape, dim, ishape):
    x = rng.standard_normal(shape)
    if ishape == "expanded":
        ishape = (60000, shape[1])
        idx = np.broadcast_to(rng.integers(0, shape[0], (60000, 1)), ishape)
        idx_nc = nc.tensor(np.ascontiguousarray(idx[:, :1])).expand(-1, shape[1])
    else:
        idx = rng.integers(0, shape[dim], ishape)
        idx_nc = nc.tensor(idx)
    src = rng.standard_normal(ishape)
    want = x.copy()
    coords = list(np.indices(ishape))
    coords[dim] = idx
    np.add.at(want, tuple(coords), src)
    got = nc.scatter_add(nc.tensor(x), dim, idx_nc, nc.tensor(src))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    # scatter with a permutation per line (no repeats) against the same positions
    perm = np.argsort(rng.random(shape), axis=dim)[tuple(slice(0, s) for s in ishape)] if ishape[dim] <= shape[dim] else None
    if perm is not None:
        got = nc.scatter(nc.tensor(x), dim, nc.tensor(perm), nc.tensor(src))
        ref = torch.from_numpy(x.copy()).scatter_(dim, torch.from_numpy(perm), torch.from_numpy(src))
        np.testing.assert_array_equal(got.numpy(), ref.numpy())


def test_scatter_grads(rng):
    idx = nc.tensor([[2, 0], [1, 3], [3, 2]])  # distinct per row: no overwritten sources
    check_grads(lambda x, s: nc.scatter(x, 1, idx, s), [f64(rng, (3, 4)), f64(rng, (3, 3))], rng)
    dup = nc.tensor([[2, 2, 0], [1, 1, 1]])
    check_grads(lambda x, s: nc.scatter_add(x, 1, dup, s) ** 2, [f64(rng, (2, 4)), f64(rng, (2, 3))], rng)
    check_grads(lambda x, s: nc.scatter_add(x, 0, nc.tensor([[1, 0], [1, 1]]), s), [f64(rng, (2, 2)), f64(rng, (3, 2))], rng)


# ---------------------------------------------------------------- index_add / index_copy

@pytest.mark.parametrize("dtype", ACCUM)
@pytest.mark.parametrize("idx_dtype", IDX)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_add_matches_numpy(rng, dtype, idx_dtype, dim):
    x = values(rng, (4, 5, 3), dtype)
    idx = rng.integers(0, x.shape[dim], 7)  # repeats add up
    sshape = list(x.shape)
    sshape[dim] = 7
    src = values(rng, sshape, dtype)
    alpha = 0.5 if dtype.startswith(("float", "bfloat")) else 2
    want = np_index_add(x, dim, idx, src, alpha)
    for xt in layouts(x, dtype):
        for st in layouts(src, dtype):
            got = nc.index_add(xt, dim, layouts(idx, idx_dtype)[-1], st, alpha=alpha)
            np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(make(x, dtype).index_add(dim, make(idx, idx_dtype), make(src, dtype), alpha=alpha).numpy(), want)
    np.testing.assert_array_equal(nc.index_add(make(x, dtype), dim, make(idx, idx_dtype), make(src, dtype)).numpy(),
                                  np_index_add(x, dim, idx, src, 1))


@pytest.mark.parametrize("shape,dim,k", [((4000, 100), 0, 6000), ((50000,), 0, 120000), ((30000, 3), 0, 90000),
                                         ((64, 3000), 1, 5000)])
def test_index_add_parallel_paths_match_torch(rng, threads, shape, dim, k):
    x = rng.standard_normal(shape)
    idx = rng.integers(0, shape[dim], k)
    sshape = list(shape)
    sshape[dim] = k
    src = rng.standard_normal(sshape)
    got = nc.index_add(nc.tensor(x), dim, nc.tensor(idx), nc.tensor(src), alpha=1.5)
    want = torch.from_numpy(x).index_add(dim, torch.from_numpy(idx), torch.from_numpy(src), alpha=1.5)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("idx_dtype", IDX)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_copy_matches_numpy(rng, dtype, idx_dtype, dim):
    x = values(rng, (4, 5, 3), dtype)
    idx = np.array([2, 0, 2, 1])  # repeated target: the last source wins
    sshape = list(x.shape)
    sshape[dim] = 4
    src = values(rng, sshape, dtype)
    want = np_index_copy(x, dim, idx, src)
    for xt in layouts(x, dtype):
        for st in layouts(src, dtype):
            np.testing.assert_array_equal(nc.index_copy(xt, dim, make(idx, idx_dtype), st).numpy(), want)
    np.testing.assert_array_equal(make(x, dtype).index_copy(dim, make(idx, idx_dtype), make(src, dtype)).numpy(), want)


def test_index_add_copy_grads(rng):
    dup = nc.tensor([2, 0, 2])
    check_grads(lambda x, s: nc.index_add(x, 0, dup, s, alpha=0.7), [f64(rng, (3, 2)), f64(rng, (3, 2))], rng)
    check_grads(lambda x, s: nc.index_add(x, 1, dup, s) ** 2, [f64(rng, (2, 3)), f64(rng, (2, 3))], rng)
    uniq = nc.tensor([2, 0], dtype=nc.int32)
    check_grads(lambda x, s: nc.index_copy(x, 1, uniq, s), [f64(rng, (2, 3)), f64(rng, (2, 2))], rng)
    check_grads(lambda x, s: nc.index_copy(x, 0, uniq, s) * x, [f64(rng, (3, 2)), f64(rng, (2, 2))], rng)


# ---------------------------------------------------------------- masked_fill / masked_select

FILL = {"bool": True, "uint8": 7, "int8": -7, "int32": 70, "int64": -70, "float16": 2.5, "bfloat16": -2.5,
        "float32": 1.25, "float64": -1.75}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("mshape", [(4, 5, 3), (5, 1), (3,), (2, 4, 5, 3), ()])
def test_masked_fill_matches_numpy(rng, dtype, mshape):
    x = values(rng, (4, 5, 3), dtype)
    mask = rng.random(mshape) < 0.5
    v = FILL[dtype]
    want = np.where(mask, np.array(v).astype(x.dtype), x)  # broadcasts both ways, like torch
    for xt in layouts(x, dtype):
        for mt in layouts(mask, "bool") if mask.ndim else [nc.tensor(mask)]:
            got = nc.masked_fill(xt, mt, v)
            assert got.dtype.name == dtype
            np.testing.assert_array_equal(got.numpy(), want)
            np.testing.assert_array_equal(xt.masked_fill(mt, v).numpy(), want)


def test_masked_fill_value_conversion_and_tensor_value(rng):
    x = nc.tensor([1, 2, 3])
    m = nc.tensor([True, False, True])
    assert nc.masked_fill(x, m, 1.9).tolist() == [1, 2, 1]  # truncated toward zero, as torch
    assert nc.masked_fill(nc.tensor([1.0, 2.0, 3.0]), m, nc.tensor(-4.0)).tolist() == [-4.0, 2.0, -4.0]
    assert nc.masked_fill(nc.tensor([1.5, 2.0]), nc.tensor([True, False]), nc.tensor(3, dtype=nc.int32)).dtype.name == "float32"


def test_masked_fill_grads(rng):
    mask = nc.tensor([True, False, False, True])
    check_grads(lambda x: nc.masked_fill(x, mask, 3.0) ** 2, [f64(rng, (3, 4))], rng)
    big = nc.tensor(rng.random((2, 3, 4)) < 0.5)
    check_grads(lambda x: nc.masked_fill(x, big, -1.0), [f64(rng, (3, 4))], rng)  # grad summed over the broadcast
    check_grads(lambda x, v: nc.masked_fill(x, mask, v) * x, [f64(rng, (2, 4)), f64(rng, ())], rng)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("xshape,mshape", [((4, 5, 3), (4, 5, 3)), ((4, 5, 3), (5, 1)), ((5, 1), (4, 5, 3)),
                                           ((), ()), ((3,), ())])
def test_masked_select_matches_numpy(rng, dtype, xshape, mshape):
    x = values(rng, xshape, dtype)
    mask = rng.random(mshape) < 0.5
    xb, mb = np.broadcast_arrays(x, mask)
    want = xb[mb]
    for xt in layouts(x, dtype) if x.ndim else [make(x, dtype)]:
        for mt in layouts(mask, "bool") if mask.ndim else [nc.tensor(mask)]:
            got = nc.masked_select(xt, mt)
            assert got.dtype.name == dtype and got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want)
            np.testing.assert_array_equal(xt.masked_select(mt).numpy(), want)


def test_masked_select_large_and_empty(rng, threads):
    x = rng.standard_normal((700, 500))
    mask = x > 0.3
    np.testing.assert_array_equal(nc.masked_select(nc.tensor(x), nc.tensor(mask)).numpy(), x[mask])
    assert nc.masked_select(nc.tensor(x), nc.zeros(700, 500, dtype=nc.bool)).shape == (0,)


def test_masked_select_grad(rng):
    mask = nc.tensor(rng.random((3, 4)) < 0.5)
    check_grads(lambda x: nc.masked_select(x, mask), [f64(rng, (3, 4))], rng)
    check_grads(lambda x: nc.masked_select(x, mask) ** 2, [f64(rng, (3, 1))], rng)  # x broadcast to the mask


# ---------------------------------------------------------------- nonzero

@pytest.mark.parametrize("dtype", ALL)
def test_nonzero_matches_numpy(rng, dtype):
    x = values(rng, (4, 5, 3), dtype)
    if dtype.startswith(("float", "bfloat")):
        x.flat[[0, 5, 9]] = [-0.0, np.nan, 0.0]  # -0.0 is zero, NaN is not
    want = np.argwhere(x)
    for xt in layouts(x, dtype):
        got = nc.nonzero(xt)
        assert got.dtype.name == "int64" and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
        cols = xt.nonzero(as_tuple=True)
        assert len(cols) == 3
        for c, w in zip(cols, np.nonzero(x)):
            np.testing.assert_array_equal(c.numpy(), w)


def test_nonzero_large(rng, threads):
    big = rng.random((600, 400)) < 0.2
    np.testing.assert_array_equal(nc.nonzero(nc.tensor(big)).numpy(), np.argwhere(big))
    np.testing.assert_array_equal(nc.nonzero(nc.tensor(big).t()).numpy(), np.argwhere(big.T))


def test_nonzero_edge_cases(rng):
    assert nc.nonzero(nc.tensor(3.0)).shape == (1, 0)
    assert nc.nonzero(nc.tensor(0.0)).shape == (0, 0)
    assert [c.tolist() for c in nc.nonzero(nc.tensor(3.0), as_tuple=True)] == [[0]]
    assert nc.nonzero(nc.zeros(0, 3)).shape == (0, 2)


# ---------------------------------------------------------------- embedding

@pytest.mark.parametrize("ishape", [(), (5,), (2, 3), (2, 2, 2)])
@pytest.mark.parametrize("idx_dtype", IDX)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int64"])
def test_embedding_matches_numpy(rng, ishape, idx_dtype, dtype):
    w = values(rng, (6, 4), dtype)
    idx = rng.integers(0, 6, ishape)
    for wt in layouts(w, dtype):
        for it in layouts(idx, idx_dtype) if idx.ndim else [make(idx, idx_dtype)]:
            got = nc.embedding(wt, it)
            assert got.shape == ishape + (4,)
            np.testing.assert_array_equal(got.numpy(), w[idx])


def test_embedding_grad(rng):
    idx = nc.tensor([[1, 3, 1], [0, 1, 3]])
    check_grads(lambda w: nc.embedding(w, idx) ** 2, [f64(rng, (4, 2))], rng)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("idx_dtype", IDX)
def test_embedding_sparse_grad_equals_dense_gradient(rng, dtype, idx_dtype):
    idx = rng.integers(0, 50, (30, 7))
    g = values(rng, (30, 7, 8), dtype)
    ids, rows = _C._embedding_sparse_grad(make(g, dtype), make(idx, idx_dtype), 50)
    dense = np.zeros((50, 8), dtype=np.float64)
    np.add.at(dense, idx.ravel(), g.reshape(-1, 8).astype(np.float64))
    np.testing.assert_array_equal(ids.numpy(), np.unique(idx))
    assert rows.dtype.name == dtype and ids.dtype.name == "int64"
    np.testing.assert_array_equal(rows.numpy().astype(np.float64), dense[np.unique(idx)])
    # the same as the dense gradient autograd computes through embedding
    w = nc.zeros(50, 8, dtype=nc.float64, requires_grad=True)
    (nc.embedding(w, make(idx, idx_dtype)) * nc.tensor(g.astype(np.float64))).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[ids.numpy()], rows.numpy().astype(np.float64))


def test_embedding_sparse_grad_noncontiguous_and_empty(rng):
    g = rng.standard_normal((4, 3))
    ids, rows = _C._embedding_sparse_grad(layouts(g, "float64")[1], layouts(np.array([3, 1, 3, 0]), "int64")[1], 4)
    assert ids.tolist() == [0, 1, 3]
    np.testing.assert_allclose(rows.numpy(), [g[3], g[1], g[0] + g[2]])
    ids, rows = _C._embedding_sparse_grad(nc.zeros(0, 5), nc.tensor([], dtype=nc.int64), 3)
    assert ids.shape == (0,) and rows.shape == (0, 5)


# ---------------------------------------------------------------- in-place forms

INPLACE = {
    "index_add_": (lambda t, i, s: t.index_add_(0, i, s, alpha=2.0), lambda t, i, s: nc.index_add(t, 0, i, s, alpha=2.0)),
    "index_copy_": (lambda t, i, s: t.index_copy_(0, i, s), lambda t, i, s: nc.index_copy(t, 0, i, s)),
    "scatter_": (lambda t, i, s: t.scatter_(0, i.unsqueeze(1).expand(-1, 3), s),
                 lambda t, i, s: nc.scatter(t, 0, i.unsqueeze(1).expand(-1, 3), s)),
    "scatter_add_": (lambda t, i, s: t.scatter_add_(0, i.unsqueeze(1).expand(-1, 3), s),
                     lambda t, i, s: nc.scatter_add(t, 0, i.unsqueeze(1).expand(-1, 3), s)),
    "masked_fill_": (lambda t, i, s: t.masked_fill_(t > 0, -3.0), lambda t, i, s: nc.masked_fill(t, t > 0, -3.0)),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_matches_out_of_place_and_bumps_version(rng, name):
    inplace, outplace = INPLACE[name]
    x = rng.standard_normal((4, 3))
    idx = nc.tensor([3, 1, 3])
    src = nc.tensor(rng.standard_normal((3, 3)))
    want = outplace(nc.tensor(x), idx, src).numpy()
    t = nc.tensor(x)
    v0, ptr = t._version, t.data_ptr()
    r = inplace(t, idx, src)
    assert t._version > v0 and r.data_ptr() == ptr == t.data_ptr()
    np.testing.assert_array_equal(t.numpy(), want)
    # through a transposed view: the base sees the writes
    base = nc.tensor(np.ascontiguousarray(x.T))
    view = base.t()
    inplace(view, idx, src)
    np.testing.assert_array_equal(base.numpy().T, want)
    assert base._version > 0


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_autograd(rng, name):
    inplace, _ = INPLACE[name]
    idx = nc.tensor([3, 1, 0])  # distinct: scatter_ and index_copy_ overwrite nothing twice

    def fn(x, s):
        h = x * 1.0
        inplace(h, idx, s)
        return h * x

    check_grads(fn, [f64(rng, (4, 3)), f64(rng, (3, 3))], rng)
    leaf = nc.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        inplace(leaf, idx, nc.tensor(rng.standard_normal((3, 3))))
    with nc.no_grad():
        inplace(leaf, idx, nc.tensor(rng.standard_normal((3, 3))))  # allowed without autograd
    view = (leaf * 1.0)[1:]
    with pytest.raises(RuntimeError, match="view"):
        inplace(view, nc.tensor([2, 0, 1]), nc.tensor(rng.standard_normal((3, 3))))


def test_inplace_source_aliasing_self_reads_old_values():
    t = nc.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    t.index_add_(0, nc.tensor([1, 2, 0]), t)
    np.testing.assert_array_equal(t.numpy(), [[6.0, 8.0], [4.0, 6.0], [8.0, 10.0]])
    u = nc.tensor([1.0, 2.0, 3.0])
    u.index_copy_(0, nc.tensor([1, 2, 0]), u)
    assert u.tolist() == [3.0, 1.0, 2.0]


def test_masked_fill_inplace_tensor_value_gets_gradient(rng):
    def fn(x, v):
        h = x * 1.0
        h.masked_fill_(nc.tensor([True, False, True]), v)
        return h * h

    check_grads(fn, [f64(rng, (2, 3)), f64(rng, ())], rng)


# ---------------------------------------------------------------- __getitem__

X_SHAPE = (4, 5, 3)
_M = np.random.default_rng(1)
MASK_FULL = _M.random(X_SHAPE) < 0.5
MASK_2D = _M.random((4, 5)) < 0.5

# name -> index built with T(values, dtype), the tensor constructor of the library under test.
GET_CASES = {
    "int": lambda T: 1,
    "neg_int": lambda T: -2,
    "ints": lambda T: (1, -1),
    "all_ints": lambda T: (3, 4, 2),
    "slice": lambda T: slice(1, None),
    "slice_step": lambda T: (slice(None), slice(0, 5, 2)),
    "slice_neg_bounds": lambda T: slice(-3, -1),
    "slice_past_end": lambda T: (slice(2, 100), slice(-100, 2)),
    "empty_slice": lambda T: slice(3, 1),
    "none": lambda T: (None, 0, None),
    "ellipsis": lambda T: (Ellipsis, 1),
    "ellipsis_mid": lambda T: (0, ..., None, 2),
    "empty_tuple": lambda T: (),
    "full_slices": lambda T: (slice(None), slice(None), slice(None)),
    "list": lambda T: [2, 0, 2],
    "list_neg": lambda T: [-1, 0],
    "empty_list": lambda T: [],
    "list_bool": lambda T: [True, False, True, True],
    "tensor_i64": lambda T: T([3, 1, -4], "int64"),
    "tensor_i32_dim1": lambda T: (slice(None), T([0, 4, -1], "int32")),
    "tensor_0d": lambda T: T(2, "int64"),
    "tensor_2d": lambda T: T([[0, 1], [2, 3]], "int64"),
    "two_adjacent": lambda T: (T([0, 2], "int64"), T([1, 3], "int64")),
    "two_adjacent_mid": lambda T: (slice(None), T([0, 2], "int64"), T([1, 0], "int32")),
    "two_separated": lambda T: (T([0, 2], "int64"), slice(None), T([1, 0], "int64")),
    "three": lambda T: (T([0, 3], "int64"), T([1, 1], "int64"), T([2, 0], "int64")),
    "broadcast_idx": lambda T: (T([[0], [2]], "int64"), T([1, 3, 4], "int64")),
    "int_and_tensor": lambda T: (1, slice(None), T([0, 2], "int64")),
    "tensor_none_slice": lambda T: (T([1, 3], "int64"), None, slice(1, 4, 2), ...),
    "mask_full": lambda T: T(MASK_FULL, "bool"),
    "mask_2d": lambda T: T(MASK_2D, "bool"),
    "mask_lead": lambda T: T([True, False, True, True], "bool"),
    "mask_last": lambda T: (..., T([True, False, True], "bool")),
    "mask_and_int": lambda T: (T([False, True, True, False], "bool"), slice(None), 1),
    "bool_true": lambda T: True,
    "bool_false": lambda T: False,
}
BASIC = {"int", "neg_int", "ints", "all_ints", "slice", "slice_step", "slice_neg_bounds", "slice_past_end",
         "empty_slice", "none", "ellipsis", "ellipsis_mid", "empty_tuple", "full_slices"}
DUPLICATES = {"list", "tensor_2d"}


def nc_T(v, dtype):
    return nc.tensor(np.asarray(v), dtype=dtype)


def torch_T(v, dtype):
    return torch.tensor(np.asarray(v), dtype=getattr(torch, dtype))


@pytest.mark.parametrize("case", sorted(GET_CASES))
def test_getitem_matches_torch(case):
    x = np.arange(60.0).reshape(X_SHAPE)
    want = torch.from_numpy(x)[GET_CASES[case](torch_T)].numpy()
    for xt in layouts(x, "float64"):
        got = xt[GET_CASES[case](nc_T)]
        assert got.shape == want.shape, case
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("dtype", ALL)
def test_getitem_dtypes(rng, dtype):
    x = values(rng, X_SHAPE, dtype)
    t = make(x, dtype)
    for case in ("ints", "slice_step", "two_separated", "mask_full", "mask_2d"):
        want = x[GET_CASES[case](lambda v, d: np.asarray(v, dtype=d))]
        assert t[GET_CASES[case](nc_T)].dtype.name == dtype
        np.testing.assert_array_equal(t[GET_CASES[case](nc_T)].numpy(), want)


@pytest.mark.parametrize("case", sorted(GET_CASES))
def test_getitem_basic_is_a_view_advanced_is_a_copy(case):
    x = np.arange(60.0).reshape(X_SHAPE)
    t = nc.tensor(x)
    r = t[GET_CASES[case](nc_T)]
    v0 = t._version
    r.fill_(-1.0)
    expected = torch.from_numpy(x.copy())
    if case in BASIC:
        expected[GET_CASES[case](torch_T)] = -1.0  # the write lands in x
        assert t._version > v0
    np.testing.assert_array_equal(t.numpy(), expected.numpy())


def test_getitem_grads(rng):
    cases = ["int", "slice_step", "none", "ellipsis_mid", "list", "tensor_2d", "two_separated", "broadcast_idx",
             "three", "mask_full", "mask_2d", "int_and_tensor", "tensor_0d"]
    for case in cases:
        idx = GET_CASES[case](nc_T)
        check_grads(lambda x, idx=idx: x[idx] ** 2, [f64(rng, X_SHAPE)], rng)


def test_getitem_on_view_of_requires_grad_tensor(rng):
    x = f64(rng, (3, 4))
    check_grads(lambda x: x.t()[1:, [0, 2]] * x[0, :2], [x], rng)


# ---------------------------------------------------------------- __setitem__

@pytest.mark.parametrize("case", sorted(GET_CASES))
def test_setitem_matches_torch(rng, case):
    x = np.arange(60.0).reshape(X_SHAPE)
    shape = torch.from_numpy(x)[GET_CASES[case](torch_T)].shape
    for value in ("scalar", "full", "broadcast"):
        if value == "scalar":
            val_nc, val_t = -5, -5
        else:
            if case in DUPLICATES:
                continue  # repeated targets with different values: torch leaves the winner unspecified
            vshape = tuple(shape) if value == "full" else tuple(shape)[-1:]
            v = rng.standard_normal(vshape)
            val_nc, val_t = nc.tensor(v), torch.from_numpy(v)
        ref = torch.from_numpy(x.copy())
        ref[GET_CASES[case](torch_T)] = val_t
        for layout in range(3):
            base = nc.tensor(x.copy()) if layout == 0 else None
            if layout == 1:  # transposed view: writes land in its base
                base = nc.tensor(np.ascontiguousarray(x.transpose(2, 1, 0)))
                t = base.permute(2, 1, 0)
            elif layout == 2:  # strided slice of a bigger tensor
                base = nc.tensor(np.repeat(x, 2, axis=-1))
                t = _C._slice(base, -1, 0, 6, 2)
            else:
                t = base
            v0 = base._version
            t[GET_CASES[case](nc_T)] = val_nc
            np.testing.assert_array_equal(t.numpy(), ref.numpy())
            assert base._version > v0


@pytest.mark.parametrize("case", ["rows", "cols", "pairs", "mask"])
def test_setitem_getitem_large_match_numpy(rng, threads, case):
    x = rng.standard_normal((2000, 300))
    rows, cols = rng.integers(0, 2000, 5000), rng.integers(0, 300, 5000)  # with repeats
    index = {"rows": rows, "cols": (slice(None), cols), "pairs": (rows, cols), "mask": x > 0.5}[case]
    nc_index = {"rows": nc.tensor(rows), "cols": (slice(None), nc.tensor(cols)),
                "pairs": (nc.tensor(rows), nc.tensor(cols)), "mask": nc.tensor(x > 0.5)}[case]
    t = nc.tensor(x.copy())
    np.testing.assert_array_equal(t[nc_index].numpy(), x[index])
    value = rng.standard_normal(x[index].shape[-1:])
    t[nc_index] = nc.tensor(value)
    x[index] = value  # repeated positions: the last value wins, in NumPy and here
    np.testing.assert_array_equal(t.numpy(), x)
    t[nc_index] = -1.0
    x[index] = -1.0
    np.testing.assert_array_equal(t.numpy(), x)


def test_setitem_duplicates_last_wins_like_numpy():
    x = np.zeros(5)
    t = nc.tensor(x)
    t[[1, 3, 1]] = nc.tensor([7.0, 8.0, 9.0])
    x[[1, 3, 1]] = [7.0, 8.0, 9.0]
    np.testing.assert_array_equal(t.numpy(), x)
    t2 = nc.zeros(3, 3, dtype=nc.float64)
    t2[nc.tensor([0, 0]), nc.tensor([2, 2])] = nc.tensor([1.0, 2.0])
    assert t2[0, 2].item() == 2.0


@pytest.mark.parametrize("dtype", ALL)
def test_setitem_dtypes_and_casting(rng, dtype):
    x = values(rng, X_SHAPE, dtype)
    t = make(x, dtype)
    v = FILL[dtype]
    t[1, ::2] = v
    t[MASK_2D] = v
    t[[0, 3], :, [2, 1]] = v
    x[1, ::2] = v
    x[MASK_2D] = v
    x[[0, 3], :, [2, 1]] = v
    np.testing.assert_array_equal(t.numpy(), x)
    f = nc.zeros(3, dtype=nc.int64)
    f[0] = 2.7  # cast to the tensor's dtype (truncation, as NumPy and torch)
    f[nc.tensor([1, 2])] = nc.tensor([1.9, -1.9])
    assert f.tolist() == [2, 1, -1]


def test_setitem_value_forms():
    t = nc.zeros(3, 4)
    t[0] = nc.ones(1, 1, 4)  # leading size-1 dims are dropped, as torch
    t[1:, 1] = nc.tensor([5.0, 6.0])
    t[2, nc.tensor([True, False, False, True])] = nc.tensor(9.0)
    assert t.tolist() == [[1, 1, 1, 1], [0, 5, 0, 0], [9, 6, 0, 9]]
    s = nc.arange(5.0)
    s[1:] = s[:-1].clone()
    s2 = nc.arange(5.0)
    s2[1:] = s2[:-1]  # overlapping source and destination: reads before writing
    assert s.tolist() == s2.tolist() == [0, 0, 1, 2, 3]
    z = nc.tensor(1.5)
    z[...] = 4.0
    z[()] = z + 1
    assert z.item() == 5.0


SET_GRAD_CASES = ["int", "slice_step", "ellipsis_mid", "list_neg", "two_separated", "broadcast_idx", "mask_2d",
                  "mask_full", "tensor_0d"]


@pytest.mark.parametrize("case", SET_GRAD_CASES)
def test_setitem_autograd_on_non_leaf(rng, case):
    idx = GET_CASES[case](nc_T)
    shape = nc.zeros(*X_SHAPE)[idx].shape

    def fn(x, v):
        h = x * 2.0
        h[idx] = v
        return h * x

    check_grads(fn, [f64(rng, X_SHAPE), f64(rng, shape[-1:])], rng)
    check_grads(lambda x, v: _set_scalar_tensor(x, idx, v), [f64(rng, X_SHAPE), f64(rng, ())], rng)


def _set_scalar_tensor(x, idx, v):
    h = x * 1.0
    h[idx] = v
    return h * h


def test_setitem_autograd_errors_and_no_grad(rng):
    leaf = f64(rng, (3, 4))
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        leaf[0] = 1.0
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        leaf[nc.tensor([0, 2])] = 1.0
    with nc.no_grad():
        leaf[0, 1:3] = 7.0
        leaf[leaf > 100] = 0.0
    assert leaf.tolist()[0][1:3] == [7.0, 7.0] and leaf.is_leaf
    view = (leaf * 1.0)[1:]
    with pytest.raises(RuntimeError, match="view"):
        view[0] = 1.0
    # a plain tensor receiving a value that requires grad starts requiring grad
    plain = nc.zeros(3, dtype=nc.float64)
    v = nc.tensor(2.0, dtype=nc.float64, requires_grad=True)
    plain[1] = v
    assert plain.requires_grad
    (plain * 3).sum().backward()
    assert v.grad.item() == 3.0


# ---------------------------------------------------------------- bad inputs

X = nc.zeros(3, 4)
I2 = nc.tensor([0, 2])
BAD = [
    # (call, exception, every fragment the message must contain)
    (lambda: nc.index_select(X, 0, nc.tensor([0.0, 1.0])), TypeError, ["index_select", "index", "float32"]),
    (lambda: nc.index_select(X, 0, nc.tensor([0, 3])), IndexError, ["index", "3", "dimension 0", "size 3"]),
    (lambda: nc.index_select(X, 1, nc.tensor([-1])), IndexError, ["-1", "dimension 1", "size 4", "negative"]),
    (lambda: nc.index_select(X, 0, nc.tensor([[0]])), ValueError, ["index", "0-d or 1-D", "[1, 1]"]),
    (lambda: nc.index_select(X, 2, I2), IndexError, ["dim", "2"]),
    (lambda: nc.index_select(X, -3, I2), IndexError, ["dim", "-3"]),
    (lambda: nc.index_select(X, 0, [0, 1]), TypeError, ["index", "list"]),
    (lambda: nc.gather(X, 1, nc.tensor([[0.5]])), TypeError, ["gather", "index", "float32"]),
    (lambda: nc.gather(X, 1, nc.tensor([[0, 4]])), IndexError, ["gather", "4", "dimension 1", "size 4"]),
    (lambda: nc.gather(X, 1, nc.tensor([[-2]])), IndexError, ["-2", "negative"]),
    (lambda: nc.gather(X, 1, nc.tensor([0, 1])), ValueError, ["index", "dims", "2", "[2]"]),
    (lambda: nc.gather(X, 1, nc.zeros(4, 1, dtype=nc.int64)), ValueError, ["index.size(0) = 4", "self.size(0) = 3"]),
    (lambda: nc.scatter(X, 1, nc.tensor([[0, 4]]), nc.ones(1, 2)), IndexError, ["scatter", "4", "size 4"]),
    (lambda: nc.scatter(X, 1, nc.tensor([[0, 1]]), nc.ones(1, 1)), ValueError, ["index.size(1) = 2", "src.size(1) = 1"]),
    (lambda: nc.scatter(X, 1, nc.tensor([[0, 1]]), nc.ones(2)), ValueError, ["src", "dims", "[2]"]),
    (lambda: nc.scatter(X, 1, nc.tensor([[0.0]]), nc.ones(1, 1)), TypeError, ["scatter", "index", "float32"]),
    (lambda: nc.scatter(X, 1, nc.tensor([[0]]), nc.ones(1, 1, dtype=nc.float64)), TypeError, ["src", "float64", "float32"]),
    (lambda: nc.scatter(X, 1, nc.tensor([[0]])), TypeError, ["src", "value"]),
    (lambda: nc.scatter(X, 1, nc.tensor([[0]]), "a"), TypeError, ["src", "str"]),
    (lambda: nc.scatter_add(X, 0, nc.tensor([[3]]), nc.ones(1, 1)), IndexError, ["scatter_add", "3", "size 3"]),
    (lambda: nc.scatter_add(X.bool(), 0, nc.tensor([[0]]), nc.ones(1, 1, dtype=nc.bool)), TypeError, ["scatter_add", "bool"]),
    (lambda: nc.index_add(X, 0, I2, nc.ones(3, 4)), ValueError, ["source", "[2, 4]", "[3, 4]"]),
    (lambda: nc.index_add(X, 0, I2, nc.ones(2, 4, dtype=nc.float64)), TypeError, ["source", "float64", "float32"]),
    (lambda: nc.index_add(X, 0, nc.tensor([5, 0]), nc.ones(2, 4)), IndexError, ["index_add", "5", "size 3"]),
    (lambda: nc.index_add(X, 0, nc.tensor([0.0, 1.0]), nc.ones(2, 4)), TypeError, ["index_add", "index", "float32"]),
    (lambda: nc.index_add(X.long(), 0, I2, nc.ones(2, 4, dtype=nc.int64), alpha=1.5), ValueError, ["alpha", "1.5"]),
    (lambda: nc.index_add(X.bool(), 0, I2, nc.ones(2, 4, dtype=nc.bool)), TypeError, ["index_add", "bool"]),
    (lambda: nc.index_copy(X, 1, nc.tensor([4]), nc.ones(3, 1)), IndexError, ["index_copy", "4", "dimension 1"]),
    (lambda: nc.index_copy(X, 1, nc.tensor([-1]), nc.ones(3, 1)), IndexError, ["-1", "negative"]),
    (lambda: nc.index_copy(X, 1, I2, nc.ones(3, 3)), ValueError, ["source", "[3, 2]", "[3, 3]"]),
    (lambda: X.index_add_(0, nc.tensor([3]), nc.ones(1, 4)), IndexError, ["index_add", "3", "size 3"]),
    (lambda: X.scatter_(0, nc.tensor([[-1]]), 1.0), IndexError, ["scatter", "-1"]),
    (lambda: nc.masked_fill(X, nc.ones(3, 4), 1.0), TypeError, ["masked_fill", "mask", "bool", "float32"]),
    (lambda: nc.masked_fill(X, nc.ones(2, 4, dtype=nc.bool), 1.0), ValueError, ["masked_fill", "[3, 4]", "[2, 4]"]),
    (lambda: nc.masked_fill(X.long(), nc.ones(3, 4, dtype=nc.bool), float("nan")), ValueError, ["value", "nan", "int64"]),
    (lambda: nc.masked_fill(X, nc.ones(3, 4, dtype=nc.bool), nc.ones(2)), ValueError, ["value", "0-d", "[2]"]),
    (lambda: nc.masked_fill(X, nc.ones(3, 4, dtype=nc.bool), "x"), TypeError, ["value", "str"]),
    (lambda: X.masked_fill_(nc.ones(2, 3, 4, dtype=nc.bool), 1.0), ValueError, ["[2, 3, 4]", "[3, 4]"]),
    (lambda: nc.masked_select(X, nc.ones(3, 4, dtype=nc.int64)), TypeError, ["masked_select", "mask", "int64"]),
    (lambda: nc.masked_select(X, nc.ones(2, 4, dtype=nc.bool)), ValueError, ["masked_select", "[3, 4]", "[2, 4]"]),
    (lambda: nc.embedding(X, nc.tensor([0.0])), TypeError, ["embedding", "indices", "float32"]),
    (lambda: nc.embedding(X, nc.tensor([[1, 3]])), IndexError, ["embedding", "indices", "3", "size 3"]),
    (lambda: nc.embedding(X, nc.tensor([-1])), IndexError, ["embedding", "-1", "negative"]),
    (lambda: nc.embedding(nc.zeros(3), I2), ValueError, ["weight", "2-D", "[3]"]),
    (lambda: _C._embedding_sparse_grad(nc.ones(2, 3), nc.tensor([0, 5]), 5), IndexError, ["5", "num_rows = 5"]),
    (lambda: _C._embedding_sparse_grad(nc.ones(2, 3), nc.tensor([0.0, 1.0]), 5), TypeError, ["indices", "float32"]),
    (lambda: _C._embedding_sparse_grad(nc.ones(3, 3), I2, 5), ValueError, ["grad_out", "[2]", "[3, 3]"]),
    (lambda: _C._embedding_sparse_grad(nc.ones(2, 3, dtype=nc.int64), I2, 5), TypeError, ["grad_out", "int64"]),
    (lambda: _C._embedding_sparse_grad(nc.ones(2, 3), I2, -1), ValueError, ["num_rows", "-1"]),
    # __getitem__
    (lambda: X[3], IndexError, ["index 3", "dimension 0", "size 3"]),
    (lambda: X[0, -5], IndexError, ["index -5", "dimension 1", "size 4"]),
    (lambda: X[:, :, 0], IndexError, ["too many indices", "dimension 2", "got 3"]),
    (lambda: X[1.5], TypeError, ["indices", "float"]),
    (lambda: X["a"], TypeError, ["indices", "str"]),
    (lambda: X[nc.tensor([0.0])], TypeError, ["int32, int64 or bool", "float32"]),
    (lambda: X[nc.tensor([0], dtype=nc.uint8)], TypeError, ["int32, int64 or bool", "uint8"]),
    (lambda: X[[0.5, 1.0]], TypeError, ["ints or bools", "float64"]),
    (lambda: X[[0, 3]], IndexError, ["index 3", "dimension 0", "size 3"]),
    (lambda: X[:, nc.tensor([-5])], IndexError, ["index -5", "dimension 1", "size 4"]),
    (lambda: X[::-1], ValueError, ["step must be greater than zero", "-1"]),
    (lambda: X[::0], ValueError, ["step", "zero"]),
    (lambda: X[..., ...], IndexError, ["single ellipsis"]),
    (lambda: X[nc.ones(2, 4, dtype=nc.bool)], IndexError, ["mask", "[2, 4]", "[3, 4]"]),
    (lambda: X[nc.tensor([0, 1]), nc.tensor([0, 1, 2])], IndexError, ["shape mismatch", "[2]", "[3]"]),
    (lambda: X[[[0, 1], [2]]], TypeError, ["list", "index"]),
]


def _setitem(target, index, value):
    target[index] = value


BAD += [
    (lambda: _setitem(X, 0, nc.ones(3)), ValueError, ["shape mismatch", "[3]", "[4]"]),
    (lambda: _setitem(X, nc.tensor([0, 1]), nc.ones(3, 4)), ValueError, ["shape mismatch", "[3, 4]", "[2, 4]"]),
    (lambda: _setitem(X, X > 0, nc.ones(2)), ValueError, ["shape mismatch", "[2]"]),
    (lambda: _setitem(X, 0, "a"), TypeError, ["value", "str"]),
    (lambda: _setitem(X, 5, 1.0), IndexError, ["index 5", "size 3"]),
    (lambda: _setitem(X, nc.tensor([3]), 1.0), IndexError, ["index 3", "size 3"]),
    (lambda: _setitem(X, [0.5], 1.0), TypeError, ["ints or bools"]),
]


@pytest.mark.parametrize("k", range(len(BAD)))
def test_bad_input_raises_named_error(k):
    call, exc, fragments = BAD[k]
    before = X.numpy().copy()
    with pytest.raises(exc) as info:
        call()
    for frag in fragments:
        assert frag in str(info.value), f"{frag!r} not in {str(info.value)!r}"
    np.testing.assert_array_equal(X.numpy(), before)  # nothing was written


# ---------------------------------------------------------------- docs

@pytest.mark.parametrize("fn", [nc.index_select, nc.gather, nc.scatter, nc.scatter_add, nc.index_add, nc.index_copy,
                                nc.masked_fill, nc.masked_select, nc.nonzero, nc.embedding,
                                _C._embedding_sparse_grad], ids=lambda f: f.__name__)
def test_docstring_example_runs(fn):
    test = doctest.DocTestParser().get_doctest(fn.__doc__, {}, fn.__name__, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert test.examples and runner.failures == 0
