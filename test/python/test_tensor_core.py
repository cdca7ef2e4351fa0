"""Tensor basics and autograd semantics: creation, views and memory sharing, copies and casts,
gradient accumulation, hooks, grad modes, retain_graph, version counters and error messages."""

import numpy as np
import pytest

import nodeweave.core as nc


def test_creation_functions(rng):
    assert nc.zeros(2, 3).shape == (2, 3)
    assert nc.zeros((2, 3)).numpy().sum() == 0
    assert nc.ones(4, dtype=nc.int32).dtype == nc.int32
    np.testing.assert_array_equal(nc.full((2, 2), 7.5).numpy(), np.full((2, 2), 7.5, np.float32))
    np.testing.assert_array_equal(nc.arange(5).numpy(), np.arange(5))
    np.testing.assert_allclose(nc.arange(0, 1, 0.25).numpy(), np.arange(0, 1, 0.25))
    np.testing.assert_allclose(nc.linspace(-1, 1, 5).numpy(), np.linspace(-1, 1, 5))
    assert nc.linspace(0, 1, 7, dtype=nc.float64).numpy()[-1] == 1.0
    np.testing.assert_array_equal(nc.eye(3, 4).numpy(), np.eye(3, 4))
    assert nc.tensor(3.5).shape == ()
    assert nc.tensor([[1, 2], [3, 4]]).dtype == nc.int64
    assert nc.tensor(np.zeros(3, np.float64)).dtype == nc.float64
    assert nc.tensor([True, False]).dtype == nc.bool
    assert sorted(nc.randperm(10).tolist()) == list(range(10))


def test_random_is_seeded_and_well_distributed():
    nc.manual_seed(123)
    a = nc.randn(100_000).numpy()
    nc.manual_seed(123)
    b = nc.randn(100_000).numpy()
    np.testing.assert_array_equal(a, b)
    assert abs(a.mean()) < 0.02 and abs(a.std() - 1) < 0.02
    u = nc.rand(100_000, dtype=nc.float64).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    r = nc.randint(3, 9, (50_000,)).numpy()
    assert r.min() == 3 and r.max() == 8
    assert np.all(np.abs(np.bincount(r - 3) / r.size - 1 / 6) < 0.01)


def test_views_share_memory():
    x = nc.arange(12, dtype=nc.float32).reshape(3, 4)
    t = x.t()
    assert not t.is_contiguous() and t.shape == (4, 3) and t.stride() == (1, 4)
    assert t.data_ptr() == x.data_ptr()
    v = x.view(2, 6)
    v.fill_(1.0) if False else None
    p = x.permute(1, 0).contiguous()
    assert p.is_contiguous() and p.data_ptr() != x.data_ptr()
    np.testing.assert_array_equal(p.numpy(), np.arange(12).reshape(3, 4).T)
    e = nc.tensor([1.0, 2.0]).reshape(2, 1).expand(2, 3)
    assert e.stride() == (1, 0)
    np.testing.assert_array_equal(e.numpy(), [[1, 1, 1], [2, 2, 2]])
    s = x.narrow(1, 1, 2)
    assert s.storage_offset() == 1
    np.testing.assert_array_equal(s.numpy(), np.arange(12).reshape(3, 4)[:, 1:3])
    np.testing.assert_array_equal(x.select(0, -1).numpy(), [8, 9, 10, 11])
    assert x.unsqueeze(0).shape == (1, 3, 4) and x.unsqueeze(-1).shape == (3, 4, 1)
    assert nc.zeros(1, 3, 1).squeeze().shape == (3,)
    assert x.flatten().shape == (12,)
    # writes through a view are seen by the base and bump the shared version counter
    v0 = x._version
    x.narrow(0, 0, 1).zero_()
    assert x.numpy()[0].tolist() == [0, 0, 0, 0] and x._version == v0 + 1


def test_view_errors_name_shapes():
    x = nc.ones(3, 4)
    with pytest.raises(ValueError, match=r"\[5, -1\] is invalid for input of size 12"):
        x.view(5, -1)
    with pytest.raises(RuntimeError, match="reshape"):
        x.t().view(12)
    np.testing.assert_array_equal(x.t().reshape(12).numpy(), np.ones(12))
    with pytest.raises(ValueError, match="expanded size"):
        x.expand(3, 5)
    with pytest.raises(IndexError, match=r"dim1 out of range.*got 2"):
        x.transpose(0, 2)
    with pytest.raises(ValueError, match="repeated dim"):
        x.permute(0, 0)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x.select(0, 3)
    with pytest.raises(ValueError, match="non-negative"):
        nc.zeros(-1, 2)


def test_casts_and_numpy_round_trip(rng):
    a = rng.standard_normal((3, 5)).astype(np.float32)
    t = nc.from_numpy(a)
    assert t.data_ptr() == a.__array_interface__["data"][0]
    a[0, 0] = 42.0
    assert t.numpy()[0, 0] == 42.0
    n = t.numpy()
    assert n.__array_interface__["data"][0] == t.data_ptr()
    for name in ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]:
        c = t.to(name)
        assert c.dtype.name == name
        back = c.float().numpy()
        if name in ("float32", "float64"):
            np.testing.assert_allclose(back, a, rtol=1e-7)
        elif name == "bool":
            np.testing.assert_array_equal(back, (a != 0).astype(np.float32))
    np.testing.assert_array_equal(nc.tensor([3.7, -3.7]).to(nc.int32).numpy(), [3, -3])
    assert nc.tensor([1.0]).to(nc.float32) is not None
    with pytest.raises(RuntimeError, match="detach"):
        nc.ones(2, requires_grad=True).numpy()
    with pytest.raises(TypeError, match="unsupported NumPy dtype"):
        nc.from_numpy(np.zeros(2, np.complex64))
    with pytest.raises(TypeError, match="dtype"):
        nc.zeros(2, dtype="complex64")


def test_accumulation_and_zeroing():
    w = nc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (w * 2).sum().backward()
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 + 2 * np.array([1, 2, 3]))
    w.grad = None
    (w * 3).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [3, 3, 3])


def test_grad_of_shared_subexpression_and_multiple_roots():
    x = nc.tensor([0.5, -1.0], dtype=nc.float64, requires_grad=True)
    y = nc.exp(x)
    z = y * y + y  # y feeds two ops: the input buffer sums both contributions
    z.backward(nc.ones(2, dtype=nc.float64))
    e = np.exp([0.5, -1.0])
    np.testing.assert_allclose(x.grad.numpy(), 2 * e * e + e)
    a = nc.tensor([1.0], requires_grad=True)
    nc.autograd.backward([a * 2, a * 3], [nc.ones(1), nc.ones(1)])
    assert a.grad.item() == 5.0


def test_grad_function_does_not_touch_dot_grad():
    x = nc.tensor([1.0, 2.0], dtype=nc.float64, requires_grad=True)
    y = nc.tensor([3.0], dtype=nc.float64, requires_grad=True)
    (gx,) = nc.autograd.grad((x * x).sum(), x)
    assert x.grad is None
    np.testing.assert_allclose(gx.numpy(), [2, 4])
    with pytest.raises(RuntimeError, match="allow_unused"):
        nc.autograd.grad((x * 2).sum(), [x, y])
    gx, gy = nc.autograd.grad((x * 2).sum(), [x, y], allow_unused=True)
    assert gy is None


def test_third_order_gradient():
    x = nc.tensor([1.5], dtype=nc.float64, requires_grad=True)
    y = x ** 4
    (g1,) = nc.autograd.grad(y, x, create_graph=True)
    (g2,) = nc.autograd.grad(g1, x, create_graph=True)
    (g3,) = nc.autograd.grad(g2, x)
    assert g1.item() == pytest.approx(4 * 1.5**3)
    assert g2.item() == pytest.approx(12 * 1.5**2)
    assert g3.item() == pytest.approx(24 * 1.5)


def test_matmul_second_order():
    rng = np.random.default_rng(1)
    a = nc.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = nc.tensor(rng.standard_normal((4, 2)), requires_grad=True)

    def f(a, b):
        (ga,) = nc.autograd.grad(((a @ b) ** 2).sum(), a, create_graph=True)
        return ga

    assert nc.autograd.gradcheck(f, [a, b])


def test_no_grad_enable_grad_and_detach():
    x = nc.ones(2, requires_grad=True)
    with nc.no_grad():
        y = x * 2
        with nc.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn.name() == "MulBackward"

    @nc.no_grad()
    def f(t):
        return t * 3

    assert not f(x).requires_grad
    d = (x * 2).detach()
    assert not d.requires_grad and d.is_leaf
    assert nc.is_grad_enabled()


def test_hooks_and_retain_grad():
    x = nc.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    y = x * 3
    y.retain_grad()
    y.register_hook(lambda g: g + 1)
    y.sum().backward()
    assert seen == [[6.0, 6.0]]  # (1 + 1) * 3 reaches x before its hook scales by 10
    np.testing.assert_allclose(x.grad.numpy(), [60, 60])
    np.testing.assert_allclose(y.grad.numpy(), [2, 2])  # retained after y's own hook ran
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3, 3])


def test_backward_twice_requires_retain_graph():
    x = nc.tensor([1.0, 2.0], requires_grad=True)
    y = (nc.exp(x) * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (np.exp([1, 2]) * np.array([2, 3])), rtol=1e-6)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_inplace_on_saved_tensor_is_detected():
    x = nc.tensor([1.0, 2.0], requires_grad=True)
    e = nc.exp(x)  # exp saves its output
    loss = (e * 2).sum()
    e.mul_(2)
    with pytest.raises(RuntimeError, match=r"modified by an in-place operation.*version 1; expected version 0"):
        nc.exp(x).sum().backward() or loss.backward()


def test_inplace_with_autograd_and_leaf_error():
    x = nc.tensor([1.0, 2.0], dtype=nc.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x.mul_(2)
    y = x * 1.0
    y.mul_(y)  # in-place square of a non-leaf: grad flows through the pre-write value
    y.add_(1.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    with nc.no_grad():
        x.mul_(2)
    np.testing.assert_allclose(x.detach().numpy(), [2.0, 4.0])


def test_backward_errors():
    with pytest.raises(RuntimeError, match="does not require grad"):
        nc.ones(2).sum().backward()
    x = nc.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"scalar outputs.*\[2\]"):
        (x * 2).backward()
    with pytest.raises(ValueError, match=r"gradient has shape \[3\]"):
        (x * 2).backward(nc.ones(3))
    with pytest.raises(TypeError, match="floating-point"):
        nc.ones(2, dtype=nc.int64).requires_grad_(True)
    with pytest.raises(RuntimeError, match="leaf"):
        (x * 2).requires_grad = False


def test_matmul_forms_and_errors(rng):
    a = rng.standard_normal((2, 3, 4))
    b = rng.standard_normal((4, 5))
    np.testing.assert_allclose((nc.tensor(a) @ nc.tensor(b)).numpy(), a @ b, rtol=1e-12)
    c = rng.standard_normal((2, 4, 5))
    np.testing.assert_allclose(nc.matmul(nc.tensor(a), nc.tensor(c)).numpy(), a @ c, rtol=1e-12)
    v = rng.standard_normal(4)
    np.testing.assert_allclose(nc.matmul(nc.tensor(a), nc.tensor(v)).numpy(), a @ v, rtol=1e-12)
    np.testing.assert_allclose(nc.matmul(nc.tensor(v), nc.tensor(v)).numpy(), v @ v, rtol=1e-12)
    m = rng.standard_normal((5, 3))
    np.testing.assert_allclose(nc.mm(nc.tensor(m).t(), nc.tensor(m)).numpy(), m.T @ m, rtol=1e-12)
    i = rng.integers(-5, 5, size=(3, 4))
    np.testing.assert_array_equal(nc.mm(nc.tensor(i), nc.tensor(i.T.copy())).numpy(), i @ i.T)
    np.testing.assert_allclose(nc.addmm(nc.tensor(np.ones(5)), nc.tensor(m), nc.tensor(m.T.copy()), beta=0.5, alpha=2)
                               .numpy()[:2], (0.5 + 2 * m @ m.T)[:2], rtol=1e-12)
    with pytest.raises(ValueError, match=r"\[2, 3\] and \[4, 5\] cannot be multiplied \(3 != 4\)"):
        nc.mm(nc.ones(2, 3), nc.ones(4, 5))
    with pytest.raises(TypeError, match="same dtype"):
        nc.mm(nc.ones(2, 2), nc.ones(2, 2, dtype=nc.float64))
    with pytest.raises(ValueError, match="linear"):
        nc.linear(nc.ones(2, 3), nc.ones(4, 5))
    w = nc.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    bias = nc.tensor(rng.standard_normal(4), requires_grad=True)
    x = nc.tensor(rng.standard_normal((2, 5, 3)), requires_grad=True)
    assert nc.autograd.gradcheck(lambda x, w, b: nc.linear(x, w, b), [x, w, bias])
    assert nc.autograd.gradcheck(lambda a, b: nc.bmm(a, b),
                                 [nc.tensor(rng.standard_normal((2, 2, 3)), requires_grad=True),
                                  nc.tensor(rng.standard_normal((2, 3, 2)), requires_grad=True)])


def test_sum_mean_and_sum_to(rng):
    a = rng.standard_normal((4, 5, 6))
    t = nc.tensor(a)
    for dims in [None, 0, 1, 2, -1, (0, 2), (0, 1), (1, 2), (0, 1, 2)]:
        for keep in (False, True):
            np.testing.assert_allclose(t.sum(dims, keep).numpy(), a.sum(axis=dims, keepdims=keep), rtol=1e-12)
            np.testing.assert_allclose(t.mean(dims, keep).numpy(), a.mean(axis=dims, keepdims=keep), rtol=1e-12)
    nt = t.permute(2, 0, 1)
    np.testing.assert_allclose(nt.sum((0, 2)).numpy(), a.transpose(2, 0, 1).sum(axis=(0, 2)), rtol=1e-12)
    big = rng.standard_normal(3_000_001).astype(np.float32)
    assert nc.tensor(big).sum().item() == pytest.approx(float(big.astype(np.float64).sum()), abs=1e-2)
    assert nc.tensor([1, 2, 3], dtype=nc.int32).sum().dtype == nc.int64
    assert nc.zeros(0, 3).sum(0).tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(nc.sum_to(t, (5, 1)).numpy(), a.sum(axis=(0, 2), keepdims=True)[0], rtol=1e-12)
    x = nc.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert nc.autograd.gradcheck(lambda x: x.sum(1) * x.mean(0).sum(), [x])
    with pytest.raises(IndexError, match=r"sum: dim out of range.*got 3"):
        t.sum(3)
    with pytest.raises(ValueError, match="more than once"):
        t.sum((1, 1))
    with pytest.raises(TypeError, match="mean"):
        nc.ones(2, dtype=nc.int64).mean()


def test_deepcopy_of_tensors_and_state_dicts():
    import copy

    x = nc.tensor([[1.0, 2.0]], requires_grad=True)
    (x * 3).sum().backward()
    y = copy.deepcopy(x)
    assert y.requires_grad and y.is_leaf and y.grad.tolist() == [[3.0, 3.0]]
    with nc.no_grad():
        y.fill_(0.0)
    assert x.tolist() == [[1.0, 2.0]]  # its own storage
    state = {"a": nc.arange(3), "b": nc.ones(2)}
    twin = copy.deepcopy(state)
    twin["a"].fill_(7)
    assert state["a"].tolist() == [0, 1, 2] and twin["b"].tolist() == [1.0, 1.0]
    pair = [x, x]
    c = copy.deepcopy(pair)
    assert c[0] is c[1]  # memo keeps shared tensors shared
    with pytest.raises(RuntimeError, match="only leaf tensors"):
        copy.deepcopy(x * 2)
