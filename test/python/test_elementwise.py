"""Every unary and binary elementwise op against NumPy: dtypes, broadcasting, non-contiguous views,
float64 gradcheck (and second order), type promotion and bad-input errors."""

import math

import numpy as np
import pytest

import nodeweave.core as nc
from conftest import noncontig

try:
    from scipy.special import erf as np_erf
except ImportError:  # pragma: no cover - scipy is installed by the scripts
    np_erf = np.vectorize(math.erf)

FLOATS = ["float32", "float64"]


def np_gelu(x):
    return 0.5 * x * (1 + np_erf(x / math.sqrt(2)))


def np_gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def np_softplus(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


# name -> (nodeweave fn, numpy reference, input domain)
UNARY = {
    "neg": (nc.neg, np.negative, "any"),
    "abs": (nc.abs, np.abs, "any"),
    "exp": (nc.exp, np.exp, "any"),
    "expm1": (nc.expm1, np.expm1, "any"),
    "log": (nc.log, np.log, "pos"),
    "log1p": (nc.log1p, np.log1p, "pos"),
    "sqrt": (nc.sqrt, np.sqrt, "pos"),
    "rsqrt": (nc.rsqrt, lambda x: 1 / np.sqrt(x), "pos"),
    "reciprocal": (nc.reciprocal, np.reciprocal, "pos"),
    "sin": (nc.sin, np.sin, "any"),
    "cos": (nc.cos, np.cos, "any"),
    "tanh": (nc.tanh, np.tanh, "any"),
    "sigmoid": (nc.sigmoid, lambda x: 1 / (1 + np.exp(-x)), "any"),
    "erf": (nc.erf, np_erf, "any"),
    "relu": (nc.relu, lambda x: np.maximum(x, 0), "nonzero"),
    "leaky_relu": (lambda x: nc.leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x), "nonzero"),
    "elu": (lambda x: nc.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)), "nonzero"),
    "gelu": (nc.gelu, np_gelu, "any"),
    "gelu_tanh": (lambda x: nc.gelu(x, approximate="tanh"), np_gelu_tanh, "any"),
    "softplus": (lambda x: nc.softplus(x, 2.0, 3.0), lambda x: np_softplus(x, 2.0, 3.0), "nonzero"),
    "logsigmoid": (nc.logsigmoid, lambda x: -np.logaddexp(0, -x), "any"),
    "clamp": (lambda x: nc.clamp(x, -0.5, 0.6), lambda x: np.clip(x, -0.5, 0.6), "nonzero"),
    "square": (nc.square, np.square, "any"),
}


def sample(rng, shape, domain, dtype="float64"):
    x = rng.standard_normal(shape)
    if domain == "pos":
        x = np.abs(x) + 0.5
    elif domain == "nonzero":
        # keep away from kinks so finite differences are valid
        x = np.where(np.abs(x) < 0.05, 0.3, x)
        x = np.where(np.abs(x + 0.5) < 0.05, -0.7, x)
        x = np.where(np.abs(x - 0.6) < 0.05, 0.8, x)
        x = np.where(np.abs(2 * x - 3.0) < 0.1, 1.0, x)
    return x.astype(dtype)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_matches_numpy(name, dtype, rng):
    fn, ref, domain = UNARY[name]
    x = sample(rng, (37, 65), domain, dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    got = fn(nc.tensor(x)).numpy()
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=tol, atol=tol)
    # non-contiguous input gives the same values
    np.testing.assert_allclose(fn(noncontig(x)).numpy(), ref(x.astype(np.float64)), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradcheck(name, rng):
    fn, _, domain = UNARY[name]
    x = nc.tensor(sample(rng, (3, 4), domain), requires_grad=True)
    assert nc.autograd.gradcheck(fn, [x])


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid", "sin", "gelu", "softplus",
                                  "reciprocal", "rsqrt", "erf", "elu"])
def test_unary_second_order(name, rng):
    fn, _, domain = UNARY[name]
    x = nc.tensor(sample(rng, (2, 3), domain), requires_grad=True)

    def first(x):
        (g,) = nc.autograd.grad(fn(x).sum(), x, create_graph=True)
        return g

    assert nc.autograd.gradcheck(first, [x])


def test_large_unary_runs_in_parallel_chunks(rng):
    x = rng.standard_normal(1_000_003).astype(np.float32)
    np.testing.assert_allclose(nc.exp(nc.tensor(x)).numpy(), np.exp(x), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_integer_unary(dtype, rng):
    x = rng.integers(-50 if dtype != "uint8" else 0, 50, size=(5, 7)).astype(dtype)
    t = nc.tensor(x)
    np.testing.assert_array_equal(nc.abs(t).numpy(), np.abs(x))
    np.testing.assert_array_equal(nc.relu(t).numpy(), np.maximum(x, 0))
    assert nc.relu(t).dtype.name == dtype
    # math functions promote integers to float32, as PyTorch does
    e = nc.exp(nc.tensor(x[:2, :2].astype(dtype) % 5))
    assert e.dtype == nc.float32
    np.testing.assert_allclose(e.numpy(), np.exp((x[:2, :2] % 5).astype(np.float64)), rtol=1e-6)


BINARY = {
    "add": (nc.add, np.add),
    "sub": (nc.sub, np.subtract),
    "mul": (nc.mul, np.multiply),
    "div": (nc.div, np.true_divide),
    "maximum": (nc.maximum, np.maximum),
    "minimum": (nc.minimum, np.minimum),
}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal}
BROADCASTS = [((4, 5), (4, 5)), ((4, 5), (5,)), ((4, 1), (1, 5)), ((2, 1, 3), (4, 1)), ((3,), ()),
              ((), (2, 3)), ((0, 3), (3,))]


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", BROADCASTS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "int8", "uint8"])
def test_binary_matches_numpy(name, shapes, dtype, rng):
    fn, ref = BINARY[name]
    a = (rng.standard_normal(shapes[0]) * 10).astype(dtype)
    b = (rng.standard_normal(shapes[1]) * 10).astype(dtype)
    if name == "div":
        b = np.where(b == 0, 3, b).astype(dtype)
    if dtype == "uint8" and name == "sub":
        a, b = np.maximum(a, b), np.minimum(a, b)
    got = fn(nc.tensor(a), nc.tensor(b)).numpy()
    want = ref(a, b)
    if name == "div" and dtype not in FLOATS:
        want = want.astype(np.float32)  # true division of integers gives float32 here, as in PyTorch
    assert got.shape == want.shape
    assert got.dtype == want.dtype or (name == "div" and got.dtype == np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparisons(name, rng):
    a = rng.integers(0, 4, size=(6, 5)).astype(np.float32)
    b = rng.integers(0, 4, size=(5,)).astype(np.float32)
    got = getattr(nc, name)(nc.tensor(a), nc.tensor(b)).numpy()
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, COMPARE[name](a, b))


def test_logical_ops(rng):
    a = rng.integers(0, 2, size=(4, 6)).astype(bool)
    b = rng.integers(0, 2, size=(6,)).astype(bool)
    ta, tb = nc.tensor(a), nc.tensor(b)
    np.testing.assert_array_equal((ta & tb).numpy(), a & b)
    np.testing.assert_array_equal((ta | tb).numpy(), a | b)
    np.testing.assert_array_equal((ta ^ tb).numpy(), a ^ b)
    np.testing.assert_array_equal((~ta).numpy(), ~a)
    np.testing.assert_array_equal(nc.logical_not(nc.tensor([0.0, 2.0])).numpy(), [True, False])


def test_pow_and_where(rng):
    a = np.abs(rng.standard_normal((3, 4))) + 0.1
    b = rng.standard_normal((4,))
    np.testing.assert_allclose(nc.pow(nc.tensor(a), nc.tensor(b)).numpy(), a**b, rtol=1e-12)
    np.testing.assert_allclose((nc.tensor(a) ** 2).numpy(), a**2, rtol=1e-12)
    np.testing.assert_allclose((2.0 ** nc.tensor(a)).numpy(), 2.0**a, rtol=1e-12)
    np.testing.assert_array_equal((nc.tensor([2, 3]) ** 3).numpy(), [8, 27])
    c = a > 0.8
    np.testing.assert_allclose(nc.where(nc.tensor(c), nc.tensor(a), 0.0).numpy(), np.where(c, a, 0.0))


@pytest.mark.parametrize("name", sorted(BINARY) + ["pow"])
def test_binary_gradcheck_with_broadcast(name, rng):
    fn = BINARY[name][0] if name in BINARY else nc.pow
    a = nc.tensor(np.abs(rng.standard_normal((3, 4))) + 0.5, requires_grad=True)
    b = nc.tensor(np.abs(rng.standard_normal((4,))) + 1.5, requires_grad=True)
    assert nc.autograd.gradcheck(fn, [a, b])
    assert nc.autograd.gradcheck(lambda a, b: fn(a, b) * fn(b, a), [a, b])  # second use of each input


def test_binary_second_order(rng):
    a = nc.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = nc.tensor(np.abs(rng.standard_normal((3,))) + 1, requires_grad=True)

    def g(a, b):
        ga, gb = nc.autograd.grad((a * a / b).sum(), [a, b], create_graph=True)
        return ga.sum() * gb.sum()

    assert nc.autograd.gradcheck(g, [a, b])


def test_where_gradcheck(rng):
    cond = nc.tensor(rng.standard_normal((3, 4)) > 0)
    a = nc.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = nc.tensor(rng.standard_normal((4,)), requires_grad=True)
    assert nc.autograd.gradcheck(lambda a, b: nc.where(cond, a, b), [a, b])


def test_scalar_promotion_like_pytorch():
    i32 = nc.tensor([1, 2], dtype=nc.int32)
    f32 = nc.tensor([1.0, 2.0])
    f16 = nc.tensor([1.0, 2.0], dtype=nc.float16)
    assert (i32 + 1).dtype == nc.int32
    assert (i32 + 1.5).dtype == nc.float32
    assert (f32 * 2.0).dtype == nc.float32
    assert (f16 * 2.0).dtype == nc.float16
    assert (nc.tensor([True]) + 1).dtype == nc.int64
    assert (i32 / 2).dtype == nc.float32
    assert (i32 + nc.tensor([1.0], dtype=nc.float64)).dtype == nc.float64
    assert (nc.tensor([1], dtype=nc.uint8) + nc.tensor([1], dtype=nc.int8)).dtype == nc.int32
    np.testing.assert_allclose((f16 * 2.5).float().numpy(), [2.5, 5.0])


def test_half_types_compute_in_float32():
    x = np.array([0.1, 1.5, -2.25, 65504.0], dtype=np.float32)
    h = nc.tensor(x, dtype=nc.float16)
    np.testing.assert_array_equal(h.float().numpy(), x.astype(np.float16).astype(np.float32))
    np.testing.assert_allclose(nc.exp(nc._C._slice(h, 0, 0, 3, 1)).float().numpy(),
                               np.exp(x[:3].astype(np.float16).astype(np.float32)), rtol=1e-3)
    b = nc.tensor(x, dtype=nc.bfloat16)
    assert b.dtype == nc.bfloat16
    np.testing.assert_allclose(b.float().numpy(), x, rtol=1e-2)
    np.testing.assert_allclose((b + b).float().numpy(), 2 * b.float().numpy(), rtol=1e-2)


def test_inplace_ops_write_through_and_bump_version(rng):
    a = nc.tensor(rng.standard_normal((3, 4)))
    ref = a.numpy().copy()
    v = a._version
    a += 1.0
    a.mul_(2.0)
    a.relu_()
    np.testing.assert_allclose(a.numpy(), np.maximum((ref + 1) * 2, 0), rtol=1e-6)
    assert a._version == v + 3
    i = nc.tensor([1, 2], dtype=nc.int32)
    with pytest.raises(TypeError, match="can't be cast"):
        i += 1.5


def test_broadcast_mismatch_names_shapes():
    with pytest.raises(ValueError, match=r"\[3, 4\] and \[5\]"):
        nc.ones(3, 4) + nc.ones(5)
    with pytest.raises(ValueError, match=r"in-place.*\[1, 4\]"):
        x = nc.ones(1, 4)
        x += nc.ones(3, 4)


def test_bad_operand_types():
    with pytest.raises(TypeError, match="other"):
        nc.add(nc.ones(2), "a")
    with pytest.raises(TypeError, match="ndarray"):
        nc.add(nc.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="bool"):
        nc.tensor([True]) - nc.tensor([False])
    with pytest.raises(ValueError, match="clamp"):
        nc.clamp(nc.ones(2))
    with pytest.raises(ValueError, match="approximate"):
        nc.gelu(nc.ones(2), approximate="fast")


@pytest.mark.parametrize("shape", [(8, 8), (33, 70), (3, 65, 40), (2, 3, 31, 97)])
def test_transposed_operands_take_the_tiled_path_correctly(shape, rng):
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape[-1:]).astype(np.float32)  # broadcast along the tiled dims too
    x = nc.tensor(a)
    perm = list(range(len(shape) - 2)) + [len(shape) - 1, len(shape) - 2]
    xt = x.permute(*perm)
    at = a.transpose(perm)
    np.testing.assert_array_equal(xt.contiguous().numpy(), at)
    np.testing.assert_allclose((xt * 2.0 + nc.tensor(b[: at.shape[-1]] if at.shape[-1] <= b.size else
                                                      np.resize(b, at.shape[-1]))).numpy(),
                               at * 2.0 + np.resize(b, at.shape[-1]), rtol=1e-6)
    # output written through a transposed view
    out = nc.zeros(*at.shape).permute(*perm)
    out.copy_(x)
    np.testing.assert_array_equal(out.numpy(), a)
