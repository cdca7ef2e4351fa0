"""softmax / log_softmax, dropout, one_hot and the losses, checked against PyTorch: dtypes, dims,
non-contiguous inputs, numerical stability, float64 gradcheck (second order for softmax,
log_softmax and cross_entropy), and the errors bad inputs raise."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import nodeweave.core as nc
from nodeweave.core.autograd import gradcheck
from torch_ref import nw, arr, th, same

RNG = np.random.default_rng(1)


def gradgradcheck(fn, *xs):
    w = nc.tensor(RNG.standard_normal(fn(*xs).shape), dtype=nc.float64)

    def first(*args):
        return nc.autograd.grad((fn(*args) * w).sum(), list(args), create_graph=True)

    assert gradcheck(first, list(xs))


TOL = {"float32": 1e-5, "float64": 1e-13}


# ---------------------------------------------------------------- softmax / log_softmax

@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((4, 9), 1), ((4, 9), 0), ((3, 5, 6), 1),
                                       ((3, 5, 6), -1), ((3, 5, 6), -3), ((2, 3, 300), 1)])
def test_softmax_matches_torch(name, dtype, shape, dim):
    a = (RNG.standard_normal(shape) * 4).astype(dtype)
    want = getattr(torch, name)(th(a), dim)
    tol = TOL[dtype]
    same(getattr(nc, name)(nw(a), dim), want, rtol=tol, atol=tol)
    same(getattr(nw(a), name)(dim), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_large_parallel_shapes(name):
    # Enough rows / columns for the multi-threaded row and column-block paths.
    for shape, dim in (((700, 130), 1), ((50, 3000), 0), ((2, 70, 600), 1)):
        a = RNG.standard_normal(shape) * 10
        same(getattr(nc, name)(nw(a), dim), getattr(torch, name)(th(a), dim), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_noncontiguous_half_and_dtype_arg(name):
    a = RNG.standard_normal((6, 5)).astype(np.float32)
    t = nw(a.T.copy()).transpose(0, 1)
    assert not t.is_contiguous()
    fn = getattr(nc, name)
    same(fn(t, 1), getattr(torch, name)(th(a), 1), rtol=1e-5, atol=1e-6)
    same(fn(t, 0), getattr(torch, name)(th(a), 0), rtol=1e-5, atol=1e-6)
    sl = nc._C._slice(nw(a), 1, 0, 5, 2)  # stepped columns
    same(fn(sl, 1), getattr(torch, name)(th(a)[:, ::2], 1), rtol=1e-5, atol=1e-6)
    same(fn(nw(a).half(), 1), getattr(torch, name)(th(a).half(), 1), rtol=1e-2, atol=2e-3)
    same(fn(nw(a), 1, dtype=nc.float64), getattr(torch, name)(th(a), 1, dtype=torch.float64), rtol=1e-6)
    same(fn(nc.tensor(2.5), 0), getattr(torch, name)(torch.tensor(2.5), 0))
    same(fn(nw(np.zeros((0, 3))), 1), getattr(torch, name)(torch.zeros(0, 3, dtype=torch.float64), 1))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_extreme_values(name, dtype):
    inf = np.inf
    a = np.array([[1e4, 1e4 - 1, -1e4], [-inf, 0.0, 1.0], [-inf, -inf, -inf], [np.nan, 1.0, 2.0],
                  [-800.0, -750.0, -700.0], [88.0, -88.0, 0.0]], dtype=dtype)
    for dim in (1, 0):
        b = np.ascontiguousarray(a if dim == 1 else a.T)
        same(getattr(nc, name)(nw(b), dim), getattr(torch, name)(th(b), dim), rtol=TOL[dtype], atol=1e-30)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_gradients_first_and_second_order(name):
    fn = getattr(nc, name)
    for shape, dim in (((3, 4), 1), ((3, 4), 0), ((2, 3, 2), 1)):
        x = nw(RNG.standard_normal(shape), requires_grad=True)
        assert gradcheck(lambda t: fn(t, dim), [x])
        gradgradcheck(lambda t: fn(t, dim), x)
    a = RNG.standard_normal((4, 5))
    g = RNG.standard_normal((4, 5))
    x, xt = nw(a, requires_grad=True), th(a).requires_grad_()
    (fn(x, 1) * nw(g)).sum().backward()
    (getattr(torch, name)(xt, 1) * th(g)).sum().backward()
    np.testing.assert_allclose(arr(x.grad), xt.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_softmax_errors():
    with pytest.raises(TypeError, match="softmax: expected a floating-point input, got int64"):
        nc.softmax(nc.tensor([1, 2]), 0)
    with pytest.raises(TypeError, match="log_softmax: expected a floating-point input, got bool"):
        nc.tensor([True]).log_softmax(0)
    with pytest.raises(IndexError, match="dim"):
        nc.softmax(nc.tensor([[1.0]]), 2)
    with pytest.raises(IndexError, match="dim"):
        nc.log_softmax(nc.tensor(1.0), 1)


# ---------------------------------------------------------------- dropout

def test_dropout_identity_cases_and_p_one():
    x = nw(RNG.standard_normal((5, 4)).astype(np.float32), requires_grad=True)
    same_tensor = nc.dropout(x, 0.5, training=False)
    assert same_tensor.data_ptr() == x.data_ptr() and same_tensor.grad_fn is None and same_tensor.requires_grad
    np.testing.assert_array_equal(arr(nc.dropout(x, 0.0)), arr(x))
    y = nc.dropout(x, 1.0)
    np.testing.assert_array_equal(arr(y), np.zeros((5, 4), np.float32))
    y.sum().backward()
    np.testing.assert_array_equal(arr(x.grad), np.zeros((5, 4), np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("p", [0.1, 0.3, 0.75])
def test_dropout_statistics_scale_and_gradient(dtype, p):
    n = 200_000
    x = nc.ones(n).to(dtype)
    x.requires_grad_(True)
    y = nc.dropout(x, p)
    v = arr(y).astype(np.float64)
    kept = v != 0
    # Binomial(n, 1-p): 5 standard deviations of slack.
    assert abs(kept.mean() - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n)
    np.testing.assert_allclose(v[kept], np.float64(np.asarray(1 / (1 - p), dtype=dtype)), rtol=1e-6)
    y.sum().backward()
    np.testing.assert_array_equal(arr(x.grad), arr(y))  # d(x * mask)/dx = mask


def test_dropout_reproducible_with_seed_and_fresh_per_call():
    x = nc.ones(1000)
    nc.manual_seed(7)
    a = arr(nc.dropout(x, 0.5))
    b = arr(nc.dropout(x, 0.5))
    nc.manual_seed(7)
    c = arr(nc.dropout(x, 0.5))
    np.testing.assert_array_equal(a, c)
    assert (a != b).any()


def test_dropout_gradcheck_with_fixed_seed():
    x = nw(RNG.standard_normal((3, 4)), requires_grad=True)

    def fn(t):
        nc.manual_seed(3)  # the same mask for every finite-difference evaluation
        return nc.dropout(t, 0.4)

    assert gradcheck(fn, [x])


def test_dropout_errors():
    x = nc.ones(3)
    for p in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="dropout: p must be in \\[0, 1\\], got"):
            nc.dropout(x, p)
    with pytest.raises(TypeError, match="dropout: expected a floating-point input, got int64"):
        nc.dropout(nc.tensor([1, 2]), 0.5)


# ---------------------------------------------------------------- one_hot

@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8"])
def test_one_hot_matches_torch(dtype):
    labels = RNG.integers(0, 6, size=(4, 5)).astype(dtype)
    want = F.one_hot(th(labels.astype(np.int64)), 8)
    same(nc.one_hot(nw(labels), 8), want)
    inferred = F.one_hot(th(labels.astype(np.int64)))
    same(nc.one_hot(nw(labels)), inferred)
    t = nw(labels.T.copy()).transpose(0, 1)
    same(nc.one_hot(t, 7), F.one_hot(th(labels.astype(np.int64)), 7))
    same(nc.one_hot(nc.tensor([], dtype=nc.int64), 3), F.one_hot(torch.zeros(0, dtype=torch.int64), 3))


def test_one_hot_errors():
    with pytest.raises(IndexError, match=r"one_hot: label 5 \(at flat position 2\) is out of range \[0, 4\)"):
        nc.one_hot(nc.tensor([0, 1, 5, 7]), 4)
    with pytest.raises(IndexError, match=r"one_hot: label -1 \(at flat position 1\) is out of range \[0, 3\)"):
        nc.one_hot(nc.tensor([2, -1, 0]))
    with pytest.raises(TypeError, match="one_hot: labels must be an integer tensor, got float32"):
        nc.one_hot(nc.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="one_hot: can't infer num_classes from an empty tensor"):
        nc.one_hot(nc.tensor([], dtype=nc.int64))
    with pytest.raises(ValueError, match="one_hot: num_classes must be -1 .* got -3"):
        nc.one_hot(nc.tensor([0]), -3)


# ---------------------------------------------------------------- nll_loss / cross_entropy

def class_problem(shape=(6, 5), extra=(), dtype="float64", ignore=False):
    n, c = shape
    logits = RNG.standard_normal((n, c) + extra).astype(dtype)
    target = RNG.integers(0, c, size=(n,) + extra).astype(np.int64)
    if ignore:
        target.reshape(-1)[::3] = -100
    weight = RNG.uniform(0.2, 2.0, c).astype(dtype)
    return logits, target, weight


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("use_weight", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
@pytest.mark.parametrize("extra", [(), (3,), (2, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nll_and_cross_entropy_match_torch(reduction, use_weight, ignore, extra, dtype):
    logits, target, weight = class_problem(extra=extra, dtype=dtype, ignore=ignore)
    w_nc, w_t = (nw(weight), th(weight)) if use_weight else (None, None)
    tol = TOL[dtype] * 10
    same(nc.cross_entropy(nw(logits), nw(target), w_nc, reduction=reduction),
         F.cross_entropy(th(logits), th(target), w_t, reduction=reduction), rtol=tol, atol=tol)
    logp = F.log_softmax(th(logits), 1).numpy()
    same(nc.nll_loss(nw(logp), nw(target), w_nc, reduction=reduction),
         F.nll_loss(th(logp), th(target), w_t, reduction=reduction), rtol=tol, atol=tol)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("use_weight", [False, True])
@pytest.mark.parametrize("smoothing", [0.1, 0.45, 1.0])
def test_cross_entropy_label_smoothing_matches_torch(reduction, use_weight, smoothing):
    logits, target, weight = class_problem(extra=(2,), ignore=True)
    w_nc, w_t = (nw(weight), th(weight)) if use_weight else (None, None)
    same(nc.cross_entropy(nw(logits), nw(target), w_nc, reduction=reduction, label_smoothing=smoothing,
                          ignore_index=-100),
         F.cross_entropy(th(logits), th(target), w_t, reduction=reduction, label_smoothing=smoothing),
         rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("use_weight", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_probability_targets_match_torch(reduction, use_weight, smoothing):
    logits = RNG.standard_normal((5, 4, 3))
    probs = torch.softmax(torch.from_numpy(RNG.standard_normal((5, 4, 3))), 1).numpy()
    weight = RNG.uniform(0.5, 1.5, 4)
    w_nc, w_t = (nw(weight), th(weight)) if use_weight else (None, None)
    same(nc.cross_entropy(nw(logits), nw(probs), w_nc, reduction=reduction, label_smoothing=smoothing),
         F.cross_entropy(th(logits), th(probs), w_t, reduction=reduction, label_smoothing=smoothing),
         rtol=1e-12, atol=1e-12)


def test_unbatched_and_int32_targets_and_noncontiguous_logits():
    logits = RNG.standard_normal(5)
    same(nc.cross_entropy(nw(logits), nc.tensor(3)), F.cross_entropy(th(logits), torch.tensor(3)), rtol=1e-12)
    same(nc.nll_loss(nw(logits), nc.tensor(1), reduction="none"),
         F.nll_loss(th(logits), torch.tensor(1), reduction="none"), rtol=1e-12)
    logits, target, _ = class_problem()
    t32 = nc.tensor(target, dtype=nc.int32)
    same(nc.cross_entropy(nw(logits), t32), F.cross_entropy(th(logits), th(target)), rtol=1e-12)
    lt = nw(logits.T.copy()).transpose(0, 1)
    same(nc.cross_entropy(lt, nw(target)), F.cross_entropy(th(logits), th(target)), rtol=1e-12)
    same(nc.cross_entropy(nw(logits), nw(target), ignore_index=2),
         F.cross_entropy(th(logits), th(target), ignore_index=2), rtol=1e-12)


def test_cross_entropy_large_batch_matches_torch():
    n, c = 100_000, 100
    logits = RNG.standard_normal((n, c)).astype(np.float32)
    target = RNG.integers(0, c, n)
    x, xt = nw(logits, requires_grad=True), th(logits).requires_grad_()
    loss = nc.cross_entropy(x, nw(target), label_smoothing=0.1)
    want = F.cross_entropy(xt, th(target), label_smoothing=0.1)
    same(loss, want, rtol=1e-5)
    loss.backward()
    want.backward()
    np.testing.assert_allclose(arr(x.grad), xt.grad.numpy(), rtol=1e-4, atol=1e-9)


def test_class_loss_gradients():
    logits, target, weight = class_problem(shape=(4, 3), ignore=True)
    x = nw(logits, requires_grad=True)
    w = nw(weight, requires_grad=True)
    t = nw(target)
    for reduction in ("mean", "sum", "none"):
        assert gradcheck(lambda a, b: nc.nll_loss(a, t, b, reduction=reduction), [x, w])
        assert gradcheck(lambda a, b: nc.cross_entropy(a, t, b, reduction=reduction, label_smoothing=0.2), [x, w])
    probs = nw(torch.softmax(torch.from_numpy(RNG.standard_normal((4, 3))), 1).numpy(), requires_grad=True)
    assert gradcheck(lambda a, p: nc.cross_entropy(a, p, label_smoothing=0.1), [x, probs])
    gradgradcheck(lambda a: nc.cross_entropy(a, t, label_smoothing=0.1), x)
    gradgradcheck(lambda a: nc.nll_loss(nc.log_softmax(a, 1), t, reduction="sum"), x)
    xk = nw(RNG.standard_normal((2, 3, 2)), requires_grad=True)
    tk = nw(RNG.integers(0, 3, (2, 2)))
    assert gradcheck(lambda a: nc.cross_entropy(a, tk), [xk])


def test_class_loss_errors():
    logits = nw(RNG.standard_normal((3, 4)))
    with pytest.raises(IndexError, match=r"nll_loss: target 4 \(at flat position 1\) is out of bounds for 4 classes"):
        nc.nll_loss(logits, nc.tensor([0, 4, 1]))
    with pytest.raises(IndexError, match=r"cross_entropy: target -1 \(at flat position 2\) is out of bounds"):
        nc.cross_entropy(logits, nc.tensor([0, 1, -1]))
    with pytest.raises(TypeError, match="nll_loss: target must hold int64 class indices, got uint8"):
        nc.nll_loss(logits, nc.tensor([0, 1, 1], dtype=nc.uint8))
    with pytest.raises(ValueError, match=r"cross_entropy: target of shape \[2\] does not match input of shape "
                                         r"\[3, 4\] \(expected target shape \[3\]\)"):
        nc.cross_entropy(logits, nc.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"cross_entropy: probability target of shape \[3, 3\] must match"):
        nc.cross_entropy(logits, nw(np.zeros((3, 3))))
    with pytest.raises(ValueError, match=r"nll_loss: weight must be a 1-D tensor with one entry per class \(4\), "
                                         r"got shape \[3\]"):
        nc.nll_loss(logits, nc.tensor([0, 1, 2]), nw(np.ones(3)))
    with pytest.raises(ValueError, match="cross_entropy: reduction must be 'mean', 'sum' or 'none', got 'avg'"):
        nc.cross_entropy(logits, nc.tensor([0, 1, 2]), reduction="avg")
    with pytest.raises(ValueError, match="cross_entropy: label_smoothing must be in \\[0, 1\\], got 1.5"):
        nc.cross_entropy(logits, nc.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(TypeError, match="cross_entropy: input must be a floating-point tensor, got int64"):
        nc.cross_entropy(nc.tensor([[1, 2]]), nc.tensor([0]))
    with pytest.raises(ValueError, match="cross_entropy: input must have at least 1 dimension"):
        nc.cross_entropy(nc.tensor(1.0), nc.tensor(0))
    with pytest.raises(TypeError, match="weight: expected a Tensor, got list"):
        nc.nll_loss(logits, nc.tensor([0, 1, 2]), [1.0, 2.0])


# ---------------------------------------------------------------- binary cross entropy with logits

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("use_pos,use_weight", [(False, False), (True, False), (False, True), (True, True)])
def test_bce_with_logits_matches_torch(reduction, dtype, use_pos, use_weight):
    x = (RNG.standard_normal((6, 4)) * 5).astype(dtype)
    x[0] = [-100.0, 100.0, -30.0, 30.0]  # stable far from zero
    y = RNG.random((6, 4)).astype(dtype)
    y[1] = [0, 1, 0, 1]
    pw = RNG.uniform(0.5, 3.0, 4).astype(dtype)
    w = RNG.uniform(0.5, 1.5, (6, 1)).astype(dtype)
    kw_nc = {"reduction": reduction}
    kw_t = {"reduction": reduction}
    if use_pos:
        kw_nc["pos_weight"], kw_t["pos_weight"] = nw(pw), th(pw)
    if use_weight:
        kw_nc["weight"], kw_t["weight"] = nw(w), th(w)
    got = nc.binary_cross_entropy_with_logits(nw(x), nw(y), **kw_nc)
    want = F.binary_cross_entropy_with_logits(th(x), th(y), **kw_t)
    assert np.isfinite(arr(got)).all()
    # softplus switches to its linear branch past 20, an e^-20 relative difference.
    same(got, want, rtol=1e-5 if dtype == "float32" else 1e-9, atol=1e-9)


def test_bce_with_logits_gradients_and_errors():
    x = nw(RNG.standard_normal((3, 4)), requires_grad=True)
    y = nw(RNG.random((3, 4)), requires_grad=True)
    pw = nw(RNG.uniform(0.5, 2.0, 4), requires_grad=True)
    assert gradcheck(lambda a, b, p: nc.binary_cross_entropy_with_logits(a, b, pos_weight=p), [x, y, pw])
    assert gradcheck(lambda a: nc.binary_cross_entropy_with_logits(a, y, reduction="none"), [x])
    zero = nw(np.zeros(3), requires_grad=True)  # logits of exactly 0: d/dx = sigmoid(0) - y
    nc.binary_cross_entropy_with_logits(zero, nw(np.array([0.0, 1.0, 0.25])), reduction="sum").backward()
    np.testing.assert_allclose(arr(zero.grad), [0.5, -0.5, 0.25])
    with pytest.raises(ValueError, match=r"binary_cross_entropy_with_logits: target of shape \[3\] must match "
                                         r"input of shape \[3, 4\]"):
        nc.binary_cross_entropy_with_logits(x, nw(np.zeros(3)))
    with pytest.raises(TypeError, match="binary_cross_entropy_with_logits: target must be a floating-point"):
        nc.binary_cross_entropy_with_logits(x, nc.zeros(3, 4, dtype=nc.int64))
    with pytest.raises(ValueError, match="binary_cross_entropy_with_logits: reduction must be"):
        nc.binary_cross_entropy_with_logits(x, y, reduction="max")
    with pytest.raises(ValueError, match="pos_weight.*cannot be broadcast"):
        nc.binary_cross_entropy_with_logits(x, y, pos_weight=nw(np.ones(3)))


# ---------------------------------------------------------------- mse / l1 / margin ranking

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_regression_losses_match_torch(reduction, dtype):
    a = RNG.standard_normal((4, 5)).astype(dtype)
    b = RNG.standard_normal((4, 5)).astype(dtype)
    tol = TOL[dtype] * 10
    same(nc.mse_loss(nw(a), nw(b), reduction=reduction), F.mse_loss(th(a), th(b), reduction=reduction), tol, tol)
    same(nc.l1_loss(nw(a), nw(b), reduction=reduction), F.l1_loss(th(a), th(b), reduction=reduction), tol, tol)
    y = np.where(RNG.random((4, 5)) < 0.5, -1.0, 1.0).astype(dtype)
    same(nc.margin_ranking_loss(nw(a), nw(b), nw(y), 0.3, reduction=reduction),
         F.margin_ranking_loss(th(a), th(b), th(y), 0.3, reduction=reduction), tol, tol)
    at = nw(a.T.copy()).transpose(0, 1)
    same(nc.mse_loss(at, nw(b), reduction=reduction), F.mse_loss(th(a), th(b), reduction=reduction), tol, tol)


def test_regression_losses_gradients_and_errors():
    a = nw(RNG.standard_normal((3, 4)), requires_grad=True)
    b = nw(RNG.standard_normal((3, 4)), requires_grad=True)
    y = nw(np.where(RNG.random((3, 4)) < 0.5, -1.0, 1.0))
    assert gradcheck(lambda p, q: nc.mse_loss(p, q), [a, b])
    assert gradcheck(lambda p, q: nc.l1_loss(p, q, reduction="sum"), [a, b])
    assert gradcheck(lambda p, q: nc.margin_ranking_loss(p, q, y, 0.1, reduction="none"), [a, b])
    gradgradcheck(lambda p: nc.mse_loss(p, b), a)
    with pytest.raises(ValueError, match=r"mse_loss: shapes \[3, 4\] and \[2\] cannot be broadcast"):
        nc.mse_loss(a, nw(np.zeros(2)))
    with pytest.raises(TypeError, match="l1_loss: target must be a floating-point tensor, got int64"):
        nc.l1_loss(a, nc.tensor([1, 2, 3, 4]))
    with pytest.raises(ValueError, match="mse_loss: reduction must be 'mean', 'sum' or 'none', got 'MEAN'"):
        nc.mse_loss(a, b, reduction="MEAN")
    with pytest.raises(ValueError, match="margin_ranking_loss: shapes"):
        nc.margin_ranking_loss(a, b, nw(np.ones(5)))


def test_logsigmoid_matches_torch():
    x = np.array([-100.0, -20.0, -1.0, 0.0, 1.0, 20.0, 100.0])
    same(nc.logsigmoid(nw(x)), F.logsigmoid(th(x)), rtol=1e-8, atol=1e-12)
