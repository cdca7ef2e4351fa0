"""Reductions (prod, max/min, amax/amin, argmax/argmin, var/std, logsumexp, norm, any/all) checked
against PyTorch on random data: every supported dtype, keepdim, negative dims, non-contiguous
inputs, float64 gradcheck (and second order where the backward is differentiable), bad inputs."""

import math

import numpy as np
import pytest
import torch

import nodeweave.core as nc
from nodeweave.core.autograd import gradcheck
from torch_ref import nw, arr, th, same

RNG = np.random.default_rng(0)


def sample(shape, dtype):
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    if dtype in ("uint8", "int8", "int32", "int64"):
        lo = 0 if dtype == "uint8" else -4
        return RNG.integers(lo, 5, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def noncontig(a):
    """A transposed nodeweave view of `a` (and the numpy array it equals)."""
    t = nw(np.ascontiguousarray(np.swapaxes(a, 0, 1))).transpose(0, 1)
    assert not t.is_contiguous()
    return t


def gradgradcheck(fn, x):
    """Second-order check: gradcheck of x -> d<fn(x), w>/dx built with create_graph."""
    w = nc.tensor(RNG.standard_normal(fn(x).shape), dtype=nc.float64)

    def first(xx):
        (g,) = nc.autograd.grad((fn(xx) * w).sum(), xx, create_graph=True)
        return g

    assert gradcheck(first, [x])


ALL = ["bool", "uint8", "int8", "int32", "int64", "float32", "float64"]


# ---------------------------------------------------------------- prod

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim,keepdim", [(None, False), (None, True), (0, False), (-1, True), (1, False)])
def test_prod_matches_torch(dtype, dim, keepdim):
    a = sample((3, 4, 2), dtype)
    got = nc.prod(nw(a), dim, keepdim) if dim is not None else nw(a).prod(keepdim=keepdim)
    if dim is None:
        want = torch.prod(th(a))
        if keepdim:
            want = want.reshape(1, 1, 1)
    else:
        want = torch.prod(th(a), dim, keepdim)
    same(got, want, rtol=1e-5)


def test_prod_noncontiguous_half_and_dtype_arg():
    a = RNG.uniform(0.5, 1.5, (5, 3)).astype(np.float32)
    same(noncontig(a).prod(1), torch.prod(th(a), 1), rtol=1e-5)
    same(nw(a).half().prod(0), torch.prod(th(a).half(), 0), rtol=1e-2)
    same(nc.prod(nw(a), 0, dtype=nc.float64), torch.prod(th(a), 0, dtype=torch.float64), rtol=1e-6)
    same(nc.prod(nw(np.zeros((2, 0))), 1), torch.prod(torch.zeros(2, 0, dtype=torch.float64), 1))
    # int64 products wrap around like PyTorch's.
    big = np.full(5, 1 << 20, dtype=np.int64)
    same(nw(big).prod(), torch.prod(th(big)))


@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_prod_gradcheck_with_zeros(zeros):
    a = RNG.uniform(0.5, 1.5, (3, 4))
    a[1, :zeros] = 0.0
    a[2, 1:1 + zeros] = 0.0
    x = nw(a, requires_grad=True)
    assert gradcheck(lambda t: nc.prod(t, 1), [x])
    assert gradcheck(lambda t: nc.prod(t, 0, True), [x])
    assert gradcheck(lambda t: t.prod(), [x])
    xt = th(a).requires_grad_()
    torch.prod(xt, 1).sum().backward()
    nc.prod(x, 1).sum().backward()
    np.testing.assert_allclose(arr(x.grad), xt.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("zeros", [0, 1])
def test_prod_second_order(zeros):
    a = RNG.uniform(0.5, 1.5, (2, 4))
    a[0, :zeros] = 0.0
    gradgradcheck(lambda t: nc.prod(t, 1), nw(a, requires_grad=True))


# ---------------------------------------------------------------- max / min with dim

@pytest.mark.parametrize("dtype", ALL + ["float16"])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dim,keepdim", [(0, False), (1, True), (-1, False), (-3, True)])
def test_max_min_dim_matches_torch(dtype, op, dim, keepdim):
    a = sample((4, 5, 6), dtype) if dtype != "float16" else sample((4, 5, 6), "float32").astype(np.float16)
    got = getattr(nw(a), op)(dim, keepdim)
    want = getattr(torch, op)(th(a), dim, keepdim)
    same(got.values, want.values)
    # Integer inputs have many ties: the first index wins, as in PyTorch.
    np.testing.assert_array_equal(arr(got.indices), want.indices.numpy())
    v, i = got  # unpacks like a tuple
    assert v.shape == i.shape and i.dtype == nc.int64


def test_max_min_noncontiguous_scalar_and_nan():
    a = sample((6, 7), "float32")
    for op in ("max", "min"):
        got = getattr(nc, op)(noncontig(a), 0)
        want = getattr(torch, op)(th(a), 0)
        same(got.values, want.values)
        np.testing.assert_array_equal(arr(got.indices), want.indices.numpy())
    # Column-wise (inner > 256) path, NaN propagation and its index.
    b = sample((3, 300), "float64")
    b[1, 7] = np.nan
    b[2, 7] = np.nan
    got, want = nc.max(nw(b), 0), torch.max(th(b), 0)
    same(got.values, want.values)
    np.testing.assert_array_equal(arr(got.indices), want.indices.numpy())
    c = b.T.copy()
    got, want = nc.min(nw(c), 1), torch.min(th(c), 1)
    same(got.values, want.values)
    np.testing.assert_array_equal(arr(got.indices), want.indices.numpy())
    s = nc.tensor(3.5).max(0)
    assert s.values.item() == 3.5 and s.indices.item() == 0 and s.values.shape == ()


def test_long_rows_and_wide_columns_use_the_parallel_paths():
    # One long row: split among threads, pieces combined so the first maximum still wins.
    a = RNG.integers(0, 5, 300_000).astype(np.float32)
    for op in ("max", "min"):
        got, want = getattr(nc, op)(nw(a), 0), getattr(torch, op)(th(a), 0)
        same(got.values, want.values)
        assert got.indices.item() == want.indices.item() == (np.argmax(a) if op == "max" else np.argmin(a))
    a[150_001] = np.nan
    a[250_000] = np.nan
    assert nc.argmax(nw(a)).item() == 150_001 and np.isnan(nc.amin(nw(a)).item())
    ints = RNG.integers(-1000, 1000, (2, 100_000))
    np.testing.assert_array_equal(arr(nc.argmin(nw(ints), 1)), torch.argmin(th(ints), 1).numpy())
    # Few rows, many columns: split over the inner dimension.
    w = RNG.uniform(0.9, 1.1, (2, 4, 1000))
    same(nc.prod(nw(w), 1), torch.prod(th(w), 1), rtol=1e-12)
    got, want = nc.min(nw(w), 1), torch.min(th(w), 1)
    same(got.values, want.values)
    np.testing.assert_array_equal(arr(got.indices), want.indices.numpy())


def test_max_gradient_goes_to_the_index():
    a = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    x = nw(a, requires_grad=True)
    xt = th(a).requires_grad_()
    nc.max(x, 1).values.sum().backward()
    torch.max(xt, 1).values.sum().backward()
    np.testing.assert_array_equal(arr(x.grad), xt.grad.numpy())
    r = RNG.standard_normal((3, 4))
    for op in (nc.max, nc.min):
        assert gradcheck(lambda t: op(t, 1).values, [nw(r, requires_grad=True)])
        assert gradcheck(lambda t: op(t, 0, True).values, [nw(r, requires_grad=True)])
        gradgradcheck(lambda t: op(t, 1).values * t.sum(1), nw(r, requires_grad=True))


def test_max_with_tensor_is_maximum():
    a, b = sample((3, 4), "float32"), sample((3, 4), "float32")
    same(nw(a).max(nw(b)), torch.max(th(a), th(b)))
    same(nc.min(nw(a), nw(b)), torch.min(th(a), th(b)))


# ---------------------------------------------------------------- amax / amin / full max

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dims", [None, 0, (0, 2), (-1, 1), (0, 1, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_amax_amin_match_torch(dtype, dims, keepdim):
    a = sample((3, 4, 5), dtype)
    tdims = () if dims is None else dims
    same(nc.amax(nw(a), dims, keepdim), torch.amax(th(a), tdims, keepdim))
    same(noncontig(a).amin(dims, keepdim), torch.amin(th(a), tdims, keepdim))


def test_full_max_min_and_tie_splitting_gradient():
    a = np.array([[1.0, 4.0, 4.0], [4.0, 0.0, -2.0]])
    for dims in (None, (0, 1), 1):
        for op, top in (("amax", torch.amax), ("amin", torch.amin)):
            x = nw(a, requires_grad=True)
            xt = th(a).requires_grad_()
            getattr(nc, op)(x, dims).sum().backward()
            top(xt, () if dims is None else dims).sum().backward()
            np.testing.assert_allclose(arr(x.grad), xt.grad.numpy())
    x = nw(a, requires_grad=True)
    xt = th(a).requires_grad_()
    (x.max() * 2 + x.min()).backward()
    (xt.max() * 2 + xt.min()).backward()
    np.testing.assert_allclose(arr(x.grad), xt.grad.numpy())
    assert nw(a).max().shape == () and nw(a).min().item() == -2.0
    r = RNG.standard_normal((3, 4))
    assert gradcheck(lambda t: nc.amax(t, (0, 1)), [nw(r, requires_grad=True)])
    assert gradcheck(lambda t: nc.amin(t, 1, True), [nw(r, requires_grad=True)])


# ---------------------------------------------------------------- argmax / argmin

@pytest.mark.parametrize("dtype", ALL + ["float16"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (None, True), (1, False), (-1, True)])
def test_argmax_argmin_match_torch(dtype, dim, keepdim):
    a = sample((4, 6), dtype) if dtype != "float16" else sample((4, 6), "float32").astype(np.float16)
    ta = th(a) if dtype != "bool" else th(a).to(torch.uint8)  # torch has no bool argmax
    got = nc.argmax(nw(a), dim, keepdim)
    want = torch.argmax(ta, dim, keepdim)
    np.testing.assert_array_equal(arr(got), want.numpy())
    assert got.shape == tuple(want.shape) and got.dtype == nc.int64
    np.testing.assert_array_equal(arr(nw(a).argmin(dim, keepdim)), torch.argmin(ta, dim, keepdim).numpy())


def test_argmax_does_not_record_history():
    x = nw(RNG.standard_normal((3, 4)), requires_grad=True)
    i = x.argmax(1)
    assert not i.requires_grad and i.grad_fn is None


# ---------------------------------------------------------------- var / std

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dims", [None, 0, (0, 2), -1])
@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_var_std_match_torch(dtype, dims, correction, keepdim):
    a = sample((4, 3, 5), dtype) * 3 + 10  # an offset mean tests the two-pass formula
    tol = 1e-5 if dtype == "float32" else 1e-12
    same(nc.var(nw(a), dims, correction=correction, keepdim=keepdim),
         torch.var(th(a), dims, correction=correction, keepdim=keepdim), rtol=tol, atol=tol)
    same(nw(a).std(dims, correction=correction, keepdim=keepdim),
         torch.std(th(a), dims, correction=correction, keepdim=keepdim), rtol=tol, atol=tol)


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is")
def test_var_legacy_unbiased_noncontig_half_and_small_samples():
    a = sample((5, 4), "float64")
    same(nc.var(nw(a), 1, False), torch.var(th(a), 1, False), rtol=1e-12)
    same(nw(a).std(unbiased=False), torch.std(th(a), unbiased=False), rtol=1e-12)
    same(nw(a).var(True), torch.var(th(a), True), rtol=1e-12)
    same(noncontig(a).var(0), torch.var(th(a), 0), rtol=1e-12)
    same(nw(a).half().var(1), torch.var(th(a).half(), 1), rtol=1e-2, atol=1e-2)
    one = np.array([2.0])
    same(nc.var(nw(one)), torch.var(th(one)))  # 0 / 0 -> nan, as in PyTorch
    same(nc.var(nw(np.array([1.0, 2.0])), correction=2), torch.var(th(np.array([1.0, 2.0])), correction=2))


def test_var_std_gradients():
    x = nw(RNG.standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda t: nc.var(t, 1), [x])
    assert gradcheck(lambda t: nc.std(t, (0, 1), correction=0), [x])
    gradgradcheck(lambda t: nc.var(t, 0, keepdim=True), x)
    gradgradcheck(lambda t: nc.std(t, 1), x)


# ---------------------------------------------------------------- logsumexp

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dims,keepdim", [(0, False), (-1, True), ((0, 2), False), ((0, 1, 2), True)])
def test_logsumexp_matches_torch(dtype, dims, keepdim):
    a = sample((3, 4, 5), dtype) * 5
    tol = 1e-5 if dtype == "float32" else 1e-12
    same(nc.logsumexp(nw(a), dims, keepdim), torch.logsumexp(th(a), dims, keepdim), rtol=tol, atol=tol)
    same(noncontig(a).logsumexp(dims, keepdim), torch.logsumexp(th(a), dims, keepdim), rtol=tol, atol=tol)


def test_logsumexp_is_stable_and_handles_infinities():
    a = np.array([[1000.0, 1000.0, -1000.0], [-np.inf, -np.inf, -np.inf], [np.inf, 1.0, 2.0],
                  [-np.inf, 0.0, -np.inf]])
    same(nc.logsumexp(nw(a), 1), torch.logsumexp(th(a), 1), rtol=1e-12)
    ints = np.array([[1, 2], [3, 4]], dtype=np.int64)
    same(nc.logsumexp(nw(ints), 1), torch.logsumexp(th(ints), 1), rtol=1e-6)
    same(nc.logsumexp(nw(np.zeros((2, 0))), 1), torch.logsumexp(torch.zeros(2, 0, dtype=torch.float64), 1))


def test_logsumexp_gradients():
    x = nw(RNG.standard_normal((3, 4)) * 3, requires_grad=True)
    assert gradcheck(lambda t: nc.logsumexp(t, 1), [x])
    assert gradcheck(lambda t: nc.logsumexp(t, (0, 1), True), [x])
    gradgradcheck(lambda t: nc.logsumexp(t, 1), x)
    gradgradcheck(lambda t: nc.logsumexp(t, 0, True), x)


# ---------------------------------------------------------------- norm

@pytest.mark.parametrize("p", [2, 1, 3, 0.5, math.inf, -math.inf, 0, "fro"])
@pytest.mark.parametrize("dims,keepdim", [(None, False), (1, True), ((0, 2), False), (-1, False)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_norm_matches_torch(p, dims, keepdim, dtype):
    a = sample((3, 4, 5), dtype)
    a[0, 0, :2] = 0
    tp = 2 if p == "fro" else p
    want = torch.linalg.vector_norm(th(a), tp, dims, keepdim)
    tol = 1e-5 if dtype == "float32" else 1e-12
    same(nc.norm(nw(a), p, dims, keepdim), want, rtol=tol, atol=tol)
    same(noncontig(a).norm(p, dims, keepdim), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("p", [2, 1, 3, 1.5, math.inf])
def test_norm_gradients(p):
    a = RNG.standard_normal((3, 4))
    a[0] = [0.5, -2.0, 2.0, 1.0]  # ties for inf-norm split the gradient
    x = nw(a, requires_grad=True)
    assert gradcheck(lambda t: nc.norm(t, p, 1), [x])
    assert gradcheck(lambda t: nc.norm(t, p), [x])
    if p != math.inf:
        gradgradcheck(lambda t: nc.norm(t, p, 1), x)
    xt = th(a).requires_grad_()
    torch.linalg.vector_norm(xt, p, 1).sum().backward()
    nc.norm(x, p, 1).sum().backward()
    np.testing.assert_allclose(arr(x.grad), xt.grad.numpy(), rtol=1e-10)


def test_norm_gradient_at_zero_vector_is_zero():
    x = nw(np.zeros((2, 3)), requires_grad=True)
    nc.norm(x, 2, 1).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), np.zeros((2, 3)))


# ---------------------------------------------------------------- any / all

@pytest.mark.parametrize("dtype", ["bool", "int64", "float32", "uint8"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), ((0, 1), False)])
def test_any_all_match_numpy(dtype, dim, keepdim):
    a = (RNG.random((4, 5)) < 0.3).astype(dtype)
    a[2] = 1 if dtype != "bool" else True
    got_any, got_all = nc.any(nw(a), dim, keepdim), nw(a).all(dim, keepdim)
    ndim = None if dim is None else dim
    np.testing.assert_array_equal(arr(got_any), np.any(a, axis=ndim, keepdims=keepdim))
    np.testing.assert_array_equal(arr(got_all), np.all(a, axis=ndim, keepdims=keepdim))
    assert got_any.dtype == nc.bool and got_all.dtype == nc.bool


# ---------------------------------------------------------------- bad inputs

def test_reduction_errors_name_the_argument():
    x = nw(np.zeros((2, 0, 3), dtype=np.float32))
    with pytest.raises(IndexError, match=r"max: cannot reduce over dimension 1 of size 0 .*\[2, 0, 3\]"):
        x.max(1)
    with pytest.raises(IndexError, match=r"amin: cannot reduce over dims \[0, 1\] with zero elements"):
        nc.amin(x, (0, 1))
    with pytest.raises(IndexError, match="dim"):
        nw(np.ones((2, 3))).max(5)
    with pytest.raises(IndexError, match="dim"):
        nc.argmin(nw(np.ones((2, 3))), -3)
    with pytest.raises(TypeError, match="var: expected a floating-point input, got int64"):
        nc.var(nc.tensor([1, 2, 3]))
    with pytest.raises(TypeError, match="std: expected a floating-point input, got int32"):
        nc.tensor([1, 2, 3], dtype=nc.int32).std()
    with pytest.raises(TypeError, match="norm: expected a floating-point input, got int64"):
        nc.norm(nc.tensor([1, 2]))
    with pytest.raises(ValueError, match="norm: p must be a number or 'fro', got 'nuc'"):
        nc.norm(nc.tensor([1.0]), "nuc")
    with pytest.raises(TypeError, match="norm: p must be a number or 'fro', got list"):
        nc.norm(nc.tensor([1.0]), [2])
    with pytest.raises(ValueError, match="var: pass either unbiased or correction, not both"):
        nc.var(nc.tensor([1.0, 2.0]), 0, True, correction=0)
    with pytest.raises(TypeError, match="max: dim must be an int, got tuple"):
        nc.tensor([1.0]).max((0,))
    with pytest.raises(TypeError, match="prod: dim must be an int, got float"):
        nc.prod(nc.tensor([1.0]), 0.5)
    with pytest.raises(ValueError, match="dim appears more than once"):
        nc.amax(nw(np.ones((2, 3))), (1, -1))


# ---------------------------------------------------------------- documentation

DOCUMENTED = ["max", "min", "amax", "amin", "argmax", "argmin", "prod", "var", "std", "logsumexp", "norm",
              "any", "all", "softmax", "log_softmax", "cat", "stack", "split", "chunk", "sort", "argsort",
              "topk", "one_hot", "dropout", "cross_entropy", "nll_loss", "binary_cross_entropy_with_logits",
              "mse_loss", "l1_loss", "margin_ranking_loss"]


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring_examples_run(name):
    import doctest

    fn = getattr(nc, name)
    assert ">>>" in fn.__doc__
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(fn, name, globs={"nc": nc}):
        runner.run(test)
    assert runner.failures == 0 and runner.tries > 0
