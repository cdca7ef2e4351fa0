"""cat / stack / split / chunk and sort / argsort / topk checked against PyTorch: dtype promotion,
negative dims, non-contiguous inputs, ties and NaN, float64 gradcheck (second order for sort and
topk, whose backward is a differentiable scatter), and the errors bad inputs raise."""

import numpy as np
import pytest
import torch

import nodeweave.core as nc
from nodeweave.core.autograd import gradcheck
from torch_ref import nw, arr, th

RNG = np.random.default_rng(2)


def same(got, want, rtol=0, atol=0):
    want = want.detach()
    assert got.shape == tuple(want.shape)
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    np.testing.assert_allclose(arr(got).astype(np.float64), want.numpy().astype(np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)


def sample(shape, dtype):
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    if dtype in ("uint8", "int8", "int32", "int64"):
        return RNG.integers(0 if dtype == "uint8" else -5, 6, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def gradgradcheck(fn, x):
    w = nc.tensor(RNG.standard_normal(fn(x).shape), dtype=nc.float64)

    def first(xx):
        (g,) = nc.autograd.grad((fn(xx) * w).sum(), xx, create_graph=True)
        return g

    assert gradcheck(first, [x])


DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]


# ---------------------------------------------------------------- cat / stack

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1, -3])
def test_cat_matches_torch(dtype, dim):
    parts = [sample((2, 3, 4), dtype) for _ in range(3)]
    shape = [2, 3, 4]
    shape[dim] = 5
    parts.append(sample(tuple(shape), dtype))
    same(nc.cat([nw(p) for p in parts], dim), torch.cat([th(p) for p in parts], dim))


def test_cat_promotes_like_torch():
    # (uint8, int8 gives int32 here: the engine has no int16.)
    combos = [("int32", "float32"), ("bool", "int64"), ("int8", "int32"), ("float16", "float32"),
              ("int64", "float64"), ("float16", "bfloat16")]
    for da, db in combos:
        a = sample((2, 3), da if da != "bfloat16" else "float32")
        b = sample((1, 3), db if db != "bfloat16" else "float32")
        ta, tb = th(a), th(b)
        na, nb = nw(a), nw(b)
        if da == "bfloat16":
            ta, na = ta.bfloat16(), na.bfloat16()
        if db == "bfloat16":
            tb, nb = tb.bfloat16(), nb.bfloat16()
        want = torch.cat([ta, tb])
        got = nc.cat([na, nb])
        assert got.dtype.name == str(want.dtype).replace("torch.", "")
        np.testing.assert_array_equal(arr(got.float()), want.float().numpy())


def test_cat_noncontiguous_legacy_empty_and_many_inputs():
    a = sample((4, 3), "float32")
    t = nw(a.T.copy()).transpose(0, 1)
    sl = nc._C._slice(nw(sample((4, 8), "float32")), 1, 1, 8, 3)
    assert not t.is_contiguous() and not sl.is_contiguous()
    same(nc.cat([t, sl, t], 1), torch.cat([th(a), th(arr(sl)), th(a)], 1))
    same(nc.concat([t, nc.tensor([], dtype=nc.float32)], 0), torch.cat([th(a), torch.tensor([])], 0))
    same(nc.cat([nc.tensor([]), nc.tensor([])]), torch.cat([torch.tensor([]), torch.tensor([])]))
    parts = [sample((i % 3 + 1, 2), "int64") for i in range(75)]  # more inputs than one op holds
    same(nc.concatenate([nw(p) for p in parts]), torch.cat([th(p) for p in parts]))
    same(nc.cat((nw(a),)), torch.cat((th(a),)))


def test_cat_gradients():
    xs = [nw(RNG.standard_normal(s), requires_grad=True) for s in ((2, 3), (2, 1), (2, 2))]
    assert gradcheck(lambda *ts: nc.cat(list(ts), 1), xs)
    gradgradcheck(lambda t: nc.cat([t * t, t], 0), xs[0])
    many = [nw(RNG.standard_normal(2), requires_grad=True) for _ in range(40)]
    out = nc.cat(many)
    (out * nc.arange(80).double()).sum().backward()
    for k, m in enumerate(many):
        np.testing.assert_array_equal(arr(m.grad), [2 * k, 2 * k + 1])
    # Mixed dtypes: gradients come back in each input's own dtype.
    f32 = nw(np.ones(2, np.float32), requires_grad=True)
    f64 = nw(np.ones(3), requires_grad=True)
    nc.cat([f32, f64]).sum().backward()
    assert f32.grad.dtype == nc.float32 and f64.grad.dtype == nc.float64


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_stack_matches_torch(dim, dtype):
    parts = [sample((3, 4), dtype) for _ in range(5)]
    same(nc.stack([nw(p) for p in parts], dim), torch.stack([th(p) for p in parts], dim))
    xs = [nw(RNG.standard_normal((2, 2)), requires_grad=True) for _ in range(2)]
    assert gradcheck(lambda a, b: nc.stack([a, b], dim), xs)


def test_cat_stack_errors():
    a, b = nw(np.zeros((2, 3))), nw(np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"cat: sizes must match except in dimension 0, but tensor 1 has shape "
                                         r"\[2, 4\] and tensor 0 has shape \[2, 3\] \(mismatch at dimension 1\)"):
        nc.cat([a, b])
    with pytest.raises(ValueError, match=r"cat: tensor 2 has 1 dims \(shape \[3\]\) but tensor 0 has 2"):
        nc.cat([a, a, nw(np.zeros(3))], 1)
    with pytest.raises(ValueError, match="cat: expected a non-empty list of tensors"):
        nc.cat([])
    with pytest.raises(ValueError, match=r"cat: zero-dimensional tensor \(at position 1\) cannot be concatenated"):
        nc.cat([a, nc.tensor(1.0)])
    with pytest.raises(TypeError, match="cat: tensors\\[1\\] must be a Tensor, got int"):
        nc.cat([a, 3])
    with pytest.raises(TypeError, match="cat: tensors must be a list or tuple of Tensors, got Tensor"):
        nc.cat(a)
    with pytest.raises(IndexError, match="dim"):
        nc.cat([a, a], 2)
    with pytest.raises(ValueError, match=r"stack: expects each tensor to be equal size, but got \[2, 3\] at entry 0 "
                                         r"and \[2, 4\] at entry 1"):
        nc.stack([a, b])
    with pytest.raises(IndexError, match="dim"):
        nc.stack([a, a], 3)


# ---------------------------------------------------------------- split / chunk

@pytest.mark.parametrize("arg", [1, 2, 3, 7, [1, 4, 2], [0, 7], [7]])
@pytest.mark.parametrize("dim", [1, -1])
def test_split_matches_torch(arg, dim):
    a = sample((3, 7), "float32")
    got = nw(a).split(arg, dim)
    want = torch.split(th(a), arg, dim)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)
    for g, w in zip(nc.split(nw(a), arg, dim=dim), want):
        same(g, w)


@pytest.mark.parametrize("chunks", [1, 2, 3, 4, 6, 9])
def test_chunk_matches_torch(chunks):
    a = sample((6, 2), "int64")
    for dim in (0, -2):
        got, want = nw(a).chunk(chunks, dim), torch.chunk(th(a), chunks, dim)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    got, want = nc.chunk(nw(np.zeros((0, 2))), 3), torch.chunk(torch.zeros(0, 2, dtype=torch.float64), 3)
    assert [g.shape for g in got] == [tuple(w.shape) for w in want]


def test_split_views_and_gradients():
    base = nw(np.arange(12.0).reshape(3, 4))
    parts = base.split(2, 1)
    assert parts[1].data_ptr() == base.data_ptr() + 2 * 8  # views, no copies
    x = nw(RNG.standard_normal((4, 3)), requires_grad=True)
    assert gradcheck(lambda t: t.split([1, 3], 0), [x])
    assert gradcheck(lambda t: nc.chunk(t, 2, 1), [x])
    t = nw(RNG.standard_normal((5, 4)).T.copy()).transpose(0, 1)
    for g, w in zip(t.split(2), torch.split(th(arr(t)), 2)):
        same(g, w)


def test_split_chunk_errors():
    x = nw(np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"split: split_sizes \[1, 2\] sum to 3 but dimension 1 has size 4"):
        x.split([1, 2], 1)
    with pytest.raises(ValueError, match=r"split: split_sizes must be non-negative, got \[5, -1\]"):
        x.split([5, -1], 1)
    with pytest.raises(ValueError, match="split: split_size must be positive .* got 0 for dimension 0 of size 3"):
        x.split(0)
    with pytest.raises(ValueError, match="chunk: chunks must be positive, got 0"):
        x.chunk(0)
    with pytest.raises(ValueError, match="split: expected a tensor with at least one dimension"):
        nc.split(nc.tensor(1.0), 1)
    with pytest.raises(IndexError, match="dim"):
        x.chunk(2, 2)


# ---------------------------------------------------------------- sort / argsort

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_torch_stable(dtype, dim, descending):
    a = sample((5, 6, 7), dtype) if dtype != "float16" else sample((5, 6, 7), "float32").astype(np.float16)
    if dtype.startswith("float"):
        a[0, 0, :3] = a[0, 0, 3]  # ties keep their order
    got = nc.sort(nw(a), dim, descending)
    want = torch.sort(th(a), dim=dim, descending=descending, stable=True)
    same(got.values, want.values)
    np.testing.assert_array_equal(arr(got.indices), want.indices.numpy())
    np.testing.assert_array_equal(arr(nw(a).argsort(dim, descending)),
                                  torch.argsort(th(a), dim=dim, descending=descending, stable=True).numpy())


def test_sort_nan_noncontiguous_scalar_and_large():
    a = RNG.standard_normal((4, 9))
    a[1, [2, 5]] = np.nan
    a[2, 0] = np.inf
    a[2, 1] = -np.inf
    for desc in (False, True):
        got, want = nc.sort(nw(a), 1, desc), torch.sort(th(a), dim=1, descending=desc, stable=True)
        same(got.values, want.values)
        np.testing.assert_array_equal(arr(got.indices), want.indices.numpy())
    t = nw(a.T.copy()).transpose(0, 1)
    got, want = t.sort(0), torch.sort(th(a), dim=0, stable=True)
    same(got.values, want.values)
    np.testing.assert_array_equal(arr(got.indices), want.indices.numpy())
    s = nc.sort(nc.tensor(4.0))
    assert s.values.item() == 4.0 and s.indices.item() == 0 and s.values.shape == ()
    big = RNG.integers(0, 50, (3, 20000))
    got, want = nc.sort(nw(big), 1), torch.sort(th(big), dim=1, stable=True)
    np.testing.assert_array_equal(arr(got.indices), want.indices.numpy())
    many = RNG.standard_normal((5000, 8))
    got, want = nc.sort(nw(many), 1, True), torch.sort(th(many), dim=1, descending=True, stable=True)
    np.testing.assert_array_equal(arr(got.indices), want.indices.numpy())


def test_sort_gradients():
    a = RNG.standard_normal((3, 5))
    x = nw(a, requires_grad=True)
    assert gradcheck(lambda t: nc.sort(t, 1).values, [x])
    assert gradcheck(lambda t: nc.sort(t, 0, True).values, [x])
    gradgradcheck(lambda t: nc.sort(t, 1).values ** 2, x)
    g = RNG.standard_normal((3, 5))
    xt = th(a).requires_grad_()
    (nc.sort(x, 1, True).values * nw(g)).sum().backward()
    (torch.sort(xt, 1, True).values * th(g)).sum().backward()
    np.testing.assert_allclose(arr(x.grad), xt.grad.numpy())
    assert not nc.argsort(x).requires_grad


def test_sort_and_topk_gradients_on_wide_tensors_match_torch():
    # Sorting along dim 0 of a wide tensor scatters gradients column-parallel.
    a = RNG.standard_normal((5, 700))
    g = RNG.standard_normal((5, 700))
    x, xt = nw(a, requires_grad=True), th(a).requires_grad_()
    (nc.sort(x, 0).values * nw(g)).sum().backward()
    (torch.sort(xt, 0).values * th(g)).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), xt.grad.numpy())
    x, xt = nw(a, requires_grad=True), th(a).requires_grad_()
    (nc.topk(x, 3, 0).values * nw(g[:3])).sum().backward()
    (torch.topk(xt, 3, 0).values * th(g[:3])).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), xt.grad.numpy())


# ---------------------------------------------------------------- topk

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int8", "uint8", "float16"])
@pytest.mark.parametrize("k", [0, 1, 3, 8])
@pytest.mark.parametrize("dim", [1, -1, 0])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_torch(dtype, k, dim, largest):
    a = sample((8, 8, 3), "float64")
    a = (np.argsort(np.argsort(a, axis=None)).reshape(a.shape) % 200).astype(dtype)  # distinct per line
    k = min(k, a.shape[dim])
    got = nc.topk(nw(a), k, dim, largest)
    want = torch.topk(th(a), k, dim, largest)
    same(got.values, want.values)
    np.testing.assert_array_equal(arr(got.indices), want.indices.numpy())


def test_topk_ties_noncontiguous_and_nan():
    a = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [np.nan, 0.0, 5.0, np.nan, 1.0]])
    got = nc.topk(nw(a), 3)
    want = torch.topk(th(a), 3)
    same(got.values, want.values)
    # Among equal values the lower index comes first.
    np.testing.assert_array_equal(arr(got.indices)[0], [1, 2, 4])
    np.testing.assert_array_equal(arr(got.indices)[1], [0, 3, 2])
    t = nw(a.T.copy()).transpose(0, 1)
    same(t.topk(2, largest=False).values, torch.topk(th(a), 2, largest=False).values)
    big = RNG.standard_normal((4, 10000))
    got, want = nc.topk(nw(big), 50, 1), torch.topk(th(big), 50, 1)
    same(got.values, want.values)
    np.testing.assert_array_equal(arr(got.indices), want.indices.numpy())


def test_topk_gradients_and_errors():
    a = RNG.standard_normal((3, 6))
    x = nw(a, requires_grad=True)
    assert gradcheck(lambda t: nc.topk(t, 2, 1).values, [x])
    assert gradcheck(lambda t: nc.topk(t, 2, 0, largest=False).values, [x])
    gradgradcheck(lambda t: nc.topk(t, 3).values ** 2, x)
    xt = th(a).requires_grad_()
    nc.topk(x, 4).values.sum().backward()
    torch.topk(xt, 4).values.sum().backward()
    np.testing.assert_array_equal(arr(x.grad), xt.grad.numpy())
    with pytest.raises(ValueError, match=r"topk: k \(7\) must be in \[0, 6\] for dimension 1 of size 6 "
                                         r"\(input shape \[3, 6\]\)"):
        nc.topk(x, 7)
    with pytest.raises(ValueError, match=r"topk: k \(-1\) must be in \[0, 3\]"):
        x.topk(-1, 0)
    with pytest.raises(IndexError, match="dim"):
        x.topk(1, 2)
    with pytest.raises(IndexError, match="dim"):
        nc.sort(x, -3)
