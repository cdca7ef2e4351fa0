"""gather_mm / segment_mm on float16 and bfloat16 inputs (storage types: computed in float32, the
result rounded once), on both backends: outputs and both gradients against float64 references
computed from the half-rounded inputs, within one rounding of the result; the result keeps the
input dtype; mixed dtypes raise TypeError naming the operands."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
import nodeweave.ops as ops

HALF = {"bfloat16": (nc.bfloat16, torch.bfloat16, 2.0**-8), "float16": (nc.float16, torch.float16, 2.0**-11)}


@pytest.fixture(params=["native", "pytorch"])
def backend(request):
    nw.set_backend(request.param)
    yield request.param
    nw.set_backend("native")


def _data(seed=0, n=40, na=25, k=6, m=5, r=3):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((na, k)).astype(np.float32)
    b = rng.standard_normal((r, k, m)).astype(np.float32)
    idx_a = rng.integers(0, na, n)
    idx_b = rng.integers(0, r, n)
    g = rng.standard_normal((n, m)).astype(np.float32)
    return a, b, idx_a, idx_b, g


def _leaf(x, dtype_name, backend):
    nw_dt, torch_dt, _ = HALF[dtype_name]
    if backend == "pytorch":
        return torch.tensor(x).to(torch_dt).requires_grad_(True)
    t = nc.tensor(x).to(nw_dt)
    t.requires_grad_(True)
    return t


def _np64(t):
    t = t.detach()
    return (t.float().numpy() if isinstance(t, torch.Tensor) else t.float().numpy()).astype(np.float64)


def _close_to_one_rounding(got, want, eps):
    # Each output is rounded once from a float32 sum: |got - want| <= eps * |want| plus the float32
    # accumulation error, tiny next to eps.
    np.testing.assert_allclose(got, want, rtol=2 * eps, atol=4 * eps)


def _tensor(x, backend):
    return torch.tensor(x) if backend == "pytorch" else nc.tensor(x)


@pytest.mark.parametrize("dtype_name", list(HALF))
def test_gather_mm_half_forward_and_gradients(backend, dtype_name):
    a, b, idx_a, idx_b, g = _data()
    eps = HALF[dtype_name][2]
    A, B = _leaf(a, dtype_name, backend), _leaf(b, dtype_name, backend)
    out = ops.gather_mm(A, B, idx_a=_tensor(idx_a, backend), idx_b=_tensor(idx_b, backend))
    assert str(out.dtype).endswith(dtype_name)
    a64, b64 = _np64(A), _np64(B)  # the half-rounded inputs
    want = np.einsum("ik,ikn->in", a64[idx_a], b64[idx_b])
    _close_to_one_rounding(_np64(out), want, eps)

    G = _tensor(g, backend).to(out.dtype)
    (out * G).sum().backward()
    g64 = _np64(G)
    want_ga = np.zeros_like(a64)
    np.add.at(want_ga, idx_a, np.einsum("in,ikn->ik", g64, b64[idx_b]))
    want_gb = np.zeros_like(b64)
    np.add.at(want_gb, idx_b, np.einsum("ik,in->ikn", a64[idx_a], g64))
    assert str(A.grad.dtype).endswith(dtype_name) and str(B.grad.dtype).endswith(dtype_name)
    # The a-gradient sums rows after rounding each gathered row once: allow a few roundings.
    scale_a = np.abs(want_ga).max()
    np.testing.assert_allclose(_np64(A.grad), want_ga, atol=8 * eps * scale_a)
    np.testing.assert_allclose(_np64(B.grad), want_gb, rtol=2 * eps, atol=4 * eps * np.abs(want_gb).max())


@pytest.mark.parametrize("dtype_name", list(HALF))
def test_segment_mm_half_forward_and_gradients(backend, dtype_name):
    a, b, _, _, _ = _data(seed=1, na=30)
    eps = HALF[dtype_name][2]
    seglen = [12, 0, 18]
    g = np.random.default_rng(2).standard_normal((30, b.shape[2])).astype(np.float32)
    A, B = _leaf(a, dtype_name, backend), _leaf(b, dtype_name, backend)
    out = ops.segment_mm(A, B, seglen)
    assert str(out.dtype).endswith(dtype_name)
    a64, b64 = _np64(A), _np64(B)
    types = np.repeat(np.arange(3), seglen)
    want = np.einsum("ik,ikn->in", a64, b64[types])
    _close_to_one_rounding(_np64(out), want, eps)

    G = _tensor(g, backend).to(out.dtype)
    (out * G).sum().backward()
    g64 = _np64(G)
    want_ga = np.einsum("in,ikn->ik", g64, b64[types])
    want_gb = np.stack([a64[types == r].T @ g64[types == r] for r in range(3)])
    _close_to_one_rounding(_np64(A.grad), want_ga, eps)
    np.testing.assert_allclose(_np64(B.grad), want_gb, rtol=2 * eps, atol=4 * eps * np.abs(want_gb).max())
    assert not _np64(B.grad)[1].any()  # the empty segment's weight gets a zero gradient


def test_half_matches_float32_computed_then_rounded(backend):
    """The half result is the float32 result rounded once (not a sum of rounded products)."""
    a, b, idx_a, idx_b, _ = _data(seed=3)
    dt = HALF["bfloat16"][1] if backend == "pytorch" else HALF["bfloat16"][0]
    A = _tensor(a, backend).to(dt)
    B = _tensor(b, backend).to(dt)
    ia, ib = _tensor(idx_a, backend), _tensor(idx_b, backend)
    half = ops.gather_mm(A, B, idx_a=ia, idx_b=ib)
    f32 = ops.gather_mm(A.float(), B.float(), idx_a=ia, idx_b=ib)
    np.testing.assert_array_equal(_np64(half), _np64(f32.to(dt)))


def test_mixed_half_and_float_raise_type_error(backend):
    a, b, _, idx_b, _ = _data()
    half = torch.bfloat16 if backend == "pytorch" else nc.bfloat16
    A = _tensor(a, backend).to(half)
    with pytest.raises(TypeError, match="dtype"):
        ops.gather_mm(A, _tensor(b, backend), idx_b=_tensor(idx_b, backend))
    with pytest.raises(TypeError, match="dtype"):
        ops.segment_mm(A, _tensor(b, backend), [10, 10, 5])


@pytest.mark.parametrize("dtype_name", list(HALF))
def test_empty_half_operands(backend, dtype_name):
    """Zero rows, zero segments' rows and zero inner size (empty torch tensors carry no data
    pointer): the result has the right shape, zeros where k == 0."""
    nw_dt, torch_dt, _ = HALF[dtype_name]
    dt = torch_dt if backend == "pytorch" else nw_dt

    def z(*shape):
        return _tensor(np.zeros(shape, np.float32), backend).to(dt)

    out = ops.segment_mm(z(0, 4), z(3, 4, 2), [0, 0, 0])
    assert tuple(out.shape) == (0, 2)
    out = ops.gather_mm(z(5, 0), z(2, 0, 3), idx_b=_tensor(np.array([0, 1, 1, 0, 1]), backend))
    assert tuple(out.shape) == (5, 3) and not _np64(out).any()
    out = ops.gather_mm(z(0, 4), z(2, 4, 3), idx_b=_tensor(np.zeros(0, np.int64), backend))
    assert tuple(out.shape) == (0, 3)
