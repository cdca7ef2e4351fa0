"""DGL's tensor API (`dgl.backend`, nodeweave.compat.dgl_backend), `nodeweave.base` (`dgl.base`),
`nodeweave.backend.backend_name` and the library's warning class.

Every function runs on both backends (the `backend_name` fixture makes each active in turn) on real
values and is checked against NumPy; the gradients of the differentiable ones against float64
central differences. The PyTorch-only functions raise on native tensors, naming themselves."""

import types
import warnings

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
from nodeweave import backend
from nodeweave import base
from nodeweave import errors as nwerr
from nodeweave.compat import dgl as compat
from nodeweave.compat import dgl_backend as F
from nodeweave.compat.dgl_backend import _library
from nodeweave.compat.dgl_backend import pytorch as TF

from conftest import np_of


def owner(t):
    return backend.of(t).name


def assert_active(t, backend_name):
    assert owner(t) == backend_name, f"{type(t)} is not a {backend_name} tensor"


def T(a):
    """A NumPy array as a tensor of the active backend (a copy)."""
    return F.tensor(np.asarray(a))


# ------------------------------------------------------------------------------ names and dtypes


def test_backend_name_follows_set_backend():
    assert backend.backend_name == "native" and F.backend_name == "native"
    nw.set_backend("pytorch")
    assert backend.backend_name == "pytorch" and F.backend_name == "pytorch"
    nw.set_backend("native")
    assert backend.backend_name == "native"
    with pytest.raises(AttributeError, match="no attribute 'backend_nam'"):
        backend.backend_nam  # noqa: B018
    from nodeweave.backend import pytorch  # submodules still import through the module __getattr__

    assert pytorch.name == "pytorch"


def test_dtype_names_follow_the_active_backend(backend_name):
    lib = torch if backend_name == "pytorch" else nc
    want = ["bfloat16", "float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool"]
    if backend_name == "native":
        want.remove("int16")  # nodeweave.core has no int16
        with pytest.raises(AttributeError, match="native backend has no int16"):
            F.int16  # noqa: B018
    assert list(F.data_type_dict) == want
    for name in want:
        d = getattr(F, name)
        assert d is getattr(lib, name) and F.data_type_dict[name] is d
        assert F.reverse_data_type_dict[d] == name
        assert F.zeros((2,), d, F.cpu()).dtype == d
    assert F.backend_name == backend_name


def test_dtype_spellings_and_bad_dtypes(backend_name):
    for spelling in ("float64", np.float64, np.dtype("float64")):  # no library: the active backend's
        t = F.ones(3, spelling, None)
        assert_active(t, backend_name)
        assert F.dtype(t) == F.float64
    for spelling, lib in ((torch.float64, "pytorch"), (nc.float64, "native")):  # the dtype's library
        t = F.ones(3, spelling, "cpu")
        assert owner(t) == lib and t.dtype == spelling
    with pytest.raises(nw.NodeweaveError, match="has no dtype 'complex64'"):
        F.zeros(2, "complex64", "cpu")
    with pytest.raises(TypeError, match="cannot read 3.5 as a dtype"):
        F.zeros(2, 3.5, "cpu")
    with pytest.raises(TypeError, match="shape must be an int or a sequence of ints"):
        F.zeros(None, "float32", "cpu")


def test_a_library_dtype_or_device_decides_where_a_tensor_is_created():
    assert owner(F.zeros(2, torch.float32, "cpu")) == "pytorch"  # native is active
    assert owner(F.arange(0, 3, None, torch.device("cpu"))) == "pytorch"
    nw.set_backend("pytorch")
    assert owner(F.zeros(2, nc.float32, None)) == "native"
    assert owner(F.ones(2, "float32", nc.device("cpu"))) == "native"
    assert owner(F.tensor([1, 2])) == "pytorch"


# ------------------------------------------------------------------------------ creation


def test_tensor(backend_name):
    t = F.tensor([1.5, 2.5])
    assert_active(t, backend_name)
    assert F.dtype(t) == F.float32 and np_of(t).tolist() == [1.5, 2.5]
    assert F.dtype(F.tensor([1, 2])) == F.int64
    a = np.array([[1, 2]], dtype=np.int32)
    t = F.tensor(a)
    assert F.dtype(t) == F.int32 and F.shape(t) == (1, 2)
    a[0, 0] = 9
    assert np_of(t)[0, 0] == 1  # copied
    one = F.tensor(7, F.float64)
    assert F.shape(one) == (1,) and np_of(one).tolist() == [7.0]  # a number: one element, 1-D
    assert F.tensor(one) is one and F.tensor(one, F.float64) is one
    assert F.dtype(F.tensor(one, "float32")) == F.float32
    stacked = F.tensor([F.tensor(1.0)[0], F.tensor(2.0)[0]])
    assert F.shape(stacked) == (2,) and np_of(stacked).tolist() == [1.0, 2.0]
    assert F.dtype(F.tensor([1, 2], np.int32)) == F.int32


def test_filled_and_range_tensors(backend_name):
    for fn, value in ((F.zeros, 0), (F.ones, 1)):
        t = fn((2, 3), F.int32, F.cpu())
        assert_active(t, backend_name)
        assert F.shape(t) == (2, 3) and F.dtype(t) == F.int32 and (np_of(t) == value).all()
    e = F.empty([4], F.float64, "cpu")
    assert F.shape(e) == (4,) and F.dtype(e) == F.float64
    f = F.full_1d(3, 2.5, F.float32, F.cpu())
    assert np_of(f).tolist() == [2.5, 2.5, 2.5] and F.dtype(f) == F.float32
    r = F.arange(2, 6)
    assert np_of(r).tolist() == [2, 3, 4, 5] and F.dtype(r) == F.int64
    assert F.dtype(F.arange(0, 3, F.int32, F.cpu())) == F.int32
    z = F.zeros_like(F.tensor(np.ones((2, 2), np.float64)))
    assert F.dtype(z) == F.float64 and (np_of(z) == 0).all()


def test_random_tensors(backend_name):
    u = F.uniform((2000,), F.float64, F.cpu(), -3.0, 5.0)
    x = np_of(u)
    assert_active(u, backend_name)
    assert F.dtype(u) == F.float64 and x.min() >= -3.0 and x.max() < 5.0
    assert x.min() < -2.5 and x.max() > 4.5 and abs(x.mean() - 1.0) < 0.3  # spread over the range
    r = F.randint((2000,), F.int32, F.cpu(), 3, 7)
    assert F.dtype(r) == F.int32 and set(np_of(r).tolist()) == {3, 4, 5, 6}
    rows = T(np.arange(12).reshape(6, 2))
    shuffled = np_of(F.rand_shuffle(rows))
    assert sorted(map(tuple, shuffled)) == sorted(map(tuple, np_of(rows)))


# ------------------------------------------------------------------------------ tensor facts, devices


def test_tensor_info(backend_name):
    t = T(np.zeros((2, 3), np.float32))
    assert F.is_tensor(t) and not F.is_tensor(np.zeros(2)) and not F.is_tensor([1])
    assert F.is_tensor(torch.ones(1)) and F.is_tensor(nc.ones(1))  # either backend's tensor
    assert F.shape(t) == (2, 3) and type(F.shape(t)) is tuple and F.ndim(t) == 2
    assert F.dtype(t) == F.float32
    assert F.context(t) == F.cpu() and F.device_type(F.context(t)) == "cpu"
    assert F.as_scalar(F.tensor([4.5])) == 4.5
    assert F.is_pinned(t) is False


def test_devices(backend_name):
    dev_cls = torch.device if backend_name == "pytorch" else nc.device
    assert isinstance(F.cpu(), dev_cls) and str(F.cpu()) == "cpu"
    assert (F.device_type("cuda:2"), F.device_id("cuda:2")) == ("cuda", 2)
    assert (F.device_type(torch.device("cpu")), F.device_id(nc.device("cpu"))) == ("cpu", 0)
    assert F.device_id("cuda") == 0
    cpu_ctx = types.SimpleNamespace(device_type=1, device_id=0)   # DGL's DGLContext fields
    gpu_ctx = types.SimpleNamespace(device_type=2, device_id=3)
    assert F.to_backend_ctx(cpu_ctx) == F.cpu()
    assert isinstance(F.to_backend_ctx(gpu_ctx), dev_cls) and str(F.to_backend_ctx(gpu_ctx)) == "cuda:3"
    assert F.to_backend_ctx("cpu") == F.cpu()
    with pytest.raises(ValueError, match="device_type must be 1 .CPU. or 2 .CUDA., got 7"):
        F.to_backend_ctx(types.SimpleNamespace(device_type=7, device_id=0))
    t = T([1.0, 2.0])
    moved = F.copy_to(t, F.cpu())
    assert np_of(moved).tolist() == [1.0, 2.0] and F.context(moved) == F.cpu()
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda"):
        F.copy_to(t, "tpu")


# ------------------------------------------------------------------------------ NumPy / DLPack


def test_astype_and_asnumpy(backend_name):
    t = T(np.array([1.7, -2.2, 3.0]))
    i = F.astype(t, F.int64)
    assert F.dtype(i) == F.int64 and np_of(i).tolist() == [1, -2, 3]
    assert F.astype(t, F.float64) is t or F.dtype(F.astype(t, F.float64)) == F.float64
    a = F.asnumpy(t)
    assert isinstance(a, np.ndarray) and a.tolist() == [1.7, -2.2, 3.0]
    a[0] = 100.0
    assert np_of(t)[0] == 1.7  # asnumpy copies
    assert F.asnumpy(F.astype(t, F.bfloat16)).dtype == np.float32  # NumPy has no bfloat16


def test_zero_copy_exchange(backend_name):
    t = T(np.zeros(3, np.float32))
    view = F.zerocopy_to_numpy(t)
    view[1] = 5.0
    assert np_of(t)[1] == 5.0
    a = np.arange(4, dtype=np.float64)
    s = F.zerocopy_from_numpy(a)
    assert_active(s, backend_name)
    a[2] = -1.0
    assert np_of(s)[2] == -1.0
    capsule = F.zerocopy_to_dlpack(t)
    back = F.zerocopy_from_dlpack(capsule)
    view[0] = 7.0
    assert_active(back, backend_name)
    assert np_of(back)[0] == 7.0
    other = torch.arange(3.0) if backend_name == "native" else nc.arange(3).float()
    assert np_of(F.zerocopy_from_dlpack(other)).tolist() == [0.0, 1.0, 2.0]  # across libraries
    strided = F.tensor(np.arange(6.0).reshape(2, 3))
    cols = F.swapaxes(strided, 0, 1)
    assert np_of(F.zerocopy_from_dlpack(F.zerocopy_to_dlpack(cols))).tolist() == [[0, 3], [1, 4], [2, 5]]
    with pytest.raises(TypeError, match="np_array must be a numpy.ndarray"):
        F.zerocopy_from_numpy([1, 2])
    with pytest.raises(TypeError, match="input must be a tensor"):
        F.zerocopy_to_numpy([1, 2])


# ------------------------------------------------------------------------------ math


def test_reductions(backend_name, rng):
    a = rng.standard_normal((3, 4))
    t = T(a)
    np.testing.assert_allclose(np_of(F.sum(t, 1)), a.sum(1))
    assert F.shape(F.sum(t, 0, keepdims=True)) == (1, 4)
    np.testing.assert_allclose(np_of(F.sum(t, 0, True)), a.sum(0, keepdims=True))
    np.testing.assert_allclose(np_of(F.mean(t, 0)), a.mean(0))
    np.testing.assert_allclose(np_of(F.max(t, 1)), a.max(1))
    np.testing.assert_allclose(np_of(F.min(t, 0)), a.min(0))
    for fn, ref in ((F.reduce_sum, a.sum()), (F.reduce_mean, a.mean()), (F.reduce_max, a.max()),
                    (F.reduce_min, a.min())):
        r = fn(t)
        assert F.shape(r) == () and np.isclose(F.as_scalar(r), ref)
    assert F.count_nonzero(T(np.array([0, 3, 0, -1]))) == 2
    if backend_name == "pytorch":
        np.testing.assert_allclose(np_of(F.cumsum(t, 1)), a.cumsum(1))
    else:
        with pytest.raises(nw.NodeweaveError, match="dgl.backend.cumsum: the native backend"):
            F.cumsum(t, 1)


def test_elementwise(backend_name, rng):
    a = rng.uniform(0.5, 2.0, (3, 4))
    t = T(a)
    np.testing.assert_allclose(np_of(F.exp(t)), np.exp(a))
    np.testing.assert_allclose(np_of(F.sqrt(t)), np.sqrt(a))
    np.testing.assert_allclose(np_of(F.clamp(t, 0.8, 1.5)), np.clip(a, 0.8, 1.5))
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(np_of(F.softmax(t, 1)), e / e.sum(1, keepdims=True))
    np.testing.assert_allclose(np_of(F.softmax(t)), e / e.sum(1, keepdims=True))  # dim=-1
    inf = T(np.array([1.0, np.inf, -np.inf, np.nan]))
    out = np_of(F.replace_inf_with_zero(inf))
    assert out[:3].tolist() == [1.0, 0.0, 0.0] and np.isnan(out[3])
    x, y = T(np.array([1, 2, 3])), T(np.array([1, 0, 3]))
    assert np_of(F.equal(x, y)).tolist() == [True, False, True]
    assert F.allclose(T(np.array([1.0, 2.0])), T(np.array([1.00005, 2.0])))
    assert not F.allclose(T(np.array([1.0, 2.0])), T(np.array([1.01, 2.0])))
    assert F.allclose(T(np.array([1.0])), T(np.array([1.5])), rtol=0.0, atol=0.6)
    assert F.allclose(T(np.array([np.inf])), T(np.array([np.inf])))
    assert not F.allclose(T(np.array([np.nan])), T(np.array([np.nan])))
    assert np_of(F.logical_not(T(np.array([0, 2, 0])))).tolist() == [True, False, True]
    b1, b2 = T(np.array([True, True, False])), T(np.array([True, False, False]))
    assert np_of(F.logical_and(b1, b2)).tolist() == [True, False, False]
    c = F.clone(t)
    F.scatter_row_inplace(c, [0], 0.0)
    assert np_of(t)[0, 0] == a[0, 0] and np_of(c)[0].tolist() == [0.0] * 4
    m = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    q, d = T(np.array([7, -7, 6])), T(np.array([2, 2, -4]))
    if backend_name == "pytorch":
        np.testing.assert_allclose(np_of(F.inverse(T(m))), np.linalg.inv(m))
        assert np_of(F.floor_div(q, d)).tolist() == [3, -4, -2]  # Python's //
        assert np_of(F.floor_div(q, 2)).tolist() == [3, -4, 3]
    else:
        with pytest.raises(nw.NodeweaveError, match="dgl.backend.inverse.*matrix inverse"):
            F.inverse(T(m))
        with pytest.raises(nw.NodeweaveError, match="dgl.backend.floor_div.*floor division"):
            F.floor_div(q, d)


def test_sorting(backend_name):
    a = np.array([[0.3, -1.0, 2.5, 0.1], [4.0, 3.0, -2.0, 1.0]])
    t = T(a)
    assert np_of(F.argsort(t, 1, False)).tolist() == np.argsort(a, 1).tolist()
    assert np_of(F.argsort(t, 1, True)).tolist() == np.argsort(-a, 1).tolist()
    assert np_of(F.topk(t, 2, 1)).tolist() == [[2.5, 0.3], [4.0, 3.0]]
    assert np_of(F.topk(t, 2, 1, descending=False)).tolist() == [[-1.0, 0.1], [-2.0, 1.0]]
    assert np_of(F.argtopk(t, 1, 0)).tolist() == [[1, 1, 0, 1]]
    v = np.array([5, 1, 4, 1, 5, 9])
    vals, idx = F.sort_1d(T(v))
    assert np_of(vals).tolist() == sorted(v.tolist()) and (v[np_of(idx)] == np.sort(v)).all()
    u, inv, counts = F.unique(T(v), return_inverse=True, return_counts=True)
    ru, rinv, rcounts = np.unique(v, return_inverse=True, return_counts=True)
    assert np_of(u).tolist() == ru.tolist() and np_of(inv).tolist() == rinv.tolist()
    assert np_of(counts).tolist() == rcounts.tolist() and F.dtype(inv) == F.int64
    assert np_of(F.unique(T(v))).tolist() == ru.tolist()
    ub = F.unique(T(np.array([True, False, True])))
    assert F.dtype(ub) == F.int8 and np_of(ub).tolist() == [0, 1]  # bools come back as int8, as in DGL
    assert np_of(F.nonzero_1d(T(np.array([0, 3, 0, 2])))).tolist() == [1, 3]
    assert np_of(F.nonzero_1d(T(np.array([0, 3])))).tolist() == [1]  # one hit: still 1-D
    with pytest.raises(ValueError, match="sort_1d: input must be 1-D"):
        F.sort_1d(t)
    with pytest.raises(ValueError, match="unique: input must be 1-D"):
        F.unique(t)


def test_shaping(backend_name):
    a = np.arange(12.0).reshape(3, 4)
    t = T(a)
    np.testing.assert_array_equal(np_of(F.cat([t, t], 1)), np.concatenate([a, a], 1))
    np.testing.assert_array_equal(np_of(F.stack([t, t], 0)), np.stack([a, a], 0))
    pieces = F.split(t, 2, 1)
    assert isinstance(pieces, list) and [F.shape(p) for p in pieces] == [(3, 2), (3, 2)]
    pieces = F.split(t, [1, 2], 0)
    assert [np_of(p).tolist() for p in pieces] == [a[:1].tolist(), a[1:].tolist()]
    assert [F.shape(p) for p in F.split(t, T(np.array([3, 1])), 1)] == [(3, 3), (3, 1)]
    np.testing.assert_array_equal(np_of(F.repeat(t, 2, 0)), np.repeat(a, 2, 0))
    counts = np.array([0, 2, 1, 3])
    np.testing.assert_array_equal(np_of(F.repeat(t, T(counts), 1)), np.repeat(a, counts, 1))
    assert F.shape(F.unsqueeze(t, 1)) == (3, 1, 4) and F.shape(F.squeeze(F.unsqueeze(t, 0), 0)) == (3, 4)
    np.testing.assert_array_equal(np_of(F.reshape(t, (4, 3))), a.reshape(4, 3))
    np.testing.assert_array_equal(np_of(F.swapaxes(t, 0, 1)), a.T)
    np.testing.assert_array_equal(np_of(F.slice_axis(t, 1, 1, 3)), a[:, 1:3])
    np.testing.assert_array_equal(np_of(F.narrow_row(t, 1, 3)), a[1:3])
    if backend_name == "native":
        with pytest.raises(ValueError, match="repeats must be an int or hold one count per slice"):
            F.repeat(t, [1, 2], 1)


def test_pad_and_pack_variable_length_batches(backend_name, rng):
    lengths = [2, 0, 3, 1]
    packed = rng.standard_normal((6, 2))
    for l_min, width in ((None, 3), (5, 5)):
        want = np.full((4, width, 2), -9.0)
        start = 0
        for i, n in enumerate(lengths):
            want[i, :n] = packed[start:start + n]
            start += n
        padded = F.pad_packed_tensor(T(packed), lengths, -9.0, l_min)
        np.testing.assert_array_equal(np_of(padded), want)
        np.testing.assert_array_equal(np_of(F.pack_padded_tensor(padded, T(np.array(lengths)))), packed)
    with pytest.raises(ValueError, match="lengths must add up to input's 6 rows, got 5"):
        F.pad_packed_tensor(T(packed), [2, 3], 0.0)
    with pytest.raises(ValueError, match="lengths must be non-negative"):
        F.pad_packed_tensor(T(packed), [7, -1], 0.0)
    with pytest.raises(ValueError, match="lengths must hold 4 lengths of at most 3"):
        F.pack_padded_tensor(F.pad_packed_tensor(T(packed), lengths, 0.0), [2, 0, 4, 0])
    with pytest.raises(TypeError, match="lengths must hold integers"):
        F.pad_packed_tensor(T(packed), [2.5, 3.5], 0.0)


def test_indexing(backend_name, rng):
    a = rng.standard_normal((5, 3))
    t = T(a)
    for idx in ([4, 0, 4], np.array([4, 0, 4]), T(np.array([4, 0, 4], np.int32)), torch.tensor([4, 0, 4])):
        np.testing.assert_array_equal(np_of(F.gather_row(t, idx)), a[[4, 0, 4]])
    idx2 = np.array([[0, 2], [1, 1]])
    np.testing.assert_array_equal(np_of(F.take(t, T(idx2), 1)), np.take(a, idx2, 1))
    np.testing.assert_array_equal(np_of(F.take(t, T(idx2), -1)), np.take(a, idx2, 1))
    mask = np.array([True, False, True, False, True])
    np.testing.assert_array_equal(np_of(F.boolean_mask(t, T(mask))), a[mask])
    np.testing.assert_array_equal(np_of(F.boolean_mask(t, mask.astype(int).tolist())), a[mask])
    with pytest.raises(ValueError, match="mask must be 1-D with one entry per row of input .5."):
        F.boolean_mask(t, [True, False])
    new = rng.standard_normal((2, 3))
    out = F.scatter_row(t, T(np.array([3, 1])), T(new))
    want = a.copy()
    want[[3, 1]] = new
    np.testing.assert_array_equal(np_of(out), want)
    np.testing.assert_array_equal(np_of(t), a)  # out of place
    F.scatter_row_inplace(t, [3, 1], T(new))
    np.testing.assert_array_equal(np_of(t), want)
    acc = T(np.zeros((3, 2)))
    rows = rng.standard_normal((4, 2))
    assert F.index_add_inplace(acc, [2, 0, 2, 2], T(rows)) is None
    ref = np.zeros((3, 2))
    np.add.at(ref, [2, 0, 2, 2], rows)
    np.testing.assert_allclose(np_of(acc), ref)
    np.testing.assert_allclose(np_of(F.scatter_add(T(rows), T(np.array([2, 0, 2, 2])), 3)), ref)
    with pytest.raises(TypeError, match="row_index must hold integers"):
        F.gather_row(t, [0.5])
    with pytest.raises(TypeError, match="row_index must hold integers"):
        F.gather_row(t, T(np.array([0.0])))


def test_kernels(backend_name, rng):
    x = rng.standard_normal((7, 2))
    t = T(x)
    offsets = [1, 3, 3, 6]  # rows 1-2, an empty segment, rows 3-5 (row 0 and 6 unused)
    for op, ref in (("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min)):
        want = np.stack([ref(x[1:3], 0), np.zeros(2), ref(x[3:6], 0)])
        np.testing.assert_allclose(np_of(F.segment_reduce(op, t, T(np.array(offsets)))), want)
    with pytest.raises(ValueError, match="offsets must lie in .0, 7. .x's rows. and not decrease"):
        F.segment_reduce("sum", t, [0, 9])
    with pytest.raises(ValueError, match="seglen must be non-negative"):
        F.segment_reduce("sum", t, [0, 4, 2, 5])
    with pytest.raises(ValueError, match="reducer must be sum, mean, max or min"):
        F.segment_reduce("prod", t, [0, 7])
    A, B = rng.standard_normal((4, 3)), rng.standard_normal((2, 3, 5))
    ia, ib = np.array([3, 0, 0]), np.array([1, 0, 1])
    want = np.einsum("ni,nio->no", A[ia], B[ib])
    np.testing.assert_allclose(np_of(F.gather_mm(T(A), T(B), T(ia), T(ib))), want, rtol=1e-10)
    per_row = rng.standard_normal((3, 3, 5))
    np.testing.assert_allclose(np_of(F.gather_mm(T(A), T(per_row), T(ia))),
                               np.einsum("ni,nio->no", A[ia], per_row), rtol=1e-10)
    with pytest.raises(ValueError, match="one matrix in B per row .4., got 3"):
        F.gather_mm(T(A), T(per_row))
    seg = np.vstack([A[:1] @ B[0], A[1:] @ B[1]])
    np.testing.assert_allclose(np_of(F.segment_mm(T(A), T(B), T(np.array([1, 3])))), seg, rtol=1e-10)


# ------------------------------------------------------------------------------ gradients


def _fd_check(fn, x):
    """The gradient of sum(w * fn(x)) through F.attach_grad / F.backward / F.grad against float64
    central differences."""
    w = np.random.default_rng(1).standard_normal(np.asarray(np_of(fn(T(x)))).shape)
    xt = F.attach_grad(T(x))
    F.backward(F.reduce_sum(fn(xt) * T(w)))
    got = np_of(F.grad(xt))
    num = np.zeros_like(x)
    eps = 1e-6
    for i in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += eps
        lo[i] -= eps
        num[i] = ((np_of(fn(T(hi))) * w).sum() - (np_of(fn(T(lo))) * w).sum()) / (2 * eps)
    np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", ["gather_row", "take", "scatter_row", "boolean_mask", "repeat",
                                  "pad_packed", "pack_padded", "scatter_add", "segment_reduce",
                                  "replace_inf", "softmax", "max", "cat", "slice_axis"])
def test_gradients_match_finite_differences(backend_name, case, rng):
    x = rng.standard_normal((4, 3))
    fns = {
        "gather_row": lambda t: F.gather_row(t, [3, 0, 3]),
        "take": lambda t: F.take(t, T(np.array([[2, 0], [1, 1]])), 1),
        "scatter_row": lambda t: F.scatter_row(t, [1], F.exp(F.narrow_row(t, 0, 1))),
        "boolean_mask": lambda t: F.boolean_mask(t, [True, False, False, True]),
        "repeat": lambda t: F.repeat(t, T(np.array([2, 0, 1, 3])), 0),
        "pad_packed": lambda t: F.pad_packed_tensor(t, [1, 3], 0.5, 4),
        "pack_padded": lambda t: F.pack_padded_tensor(F.reshape(t, (2, 2, 3)), [2, 1]),
        "scatter_add": lambda t: F.scatter_add(t, [1, 1, 0, 2], 3),
        "segment_reduce": lambda t: F.segment_reduce("sum", t, [0, 1, 4]),
        "replace_inf": lambda t: F.replace_inf_with_zero(t * 2.0),
        "softmax": lambda t: F.softmax(t, 0),
        "max": lambda t: F.max(t, 1),
        "cat": lambda t: F.cat([t, F.sqrt(t * t + 1.0)], 0),
        "slice_axis": lambda t: F.slice_axis(t, 1, 1, 3),
    }
    _fd_check(fns[case], x)


def test_autograd_helpers(backend_name):
    lib = torch if backend_name == "pytorch" else nc
    x = F.attach_grad(T(np.array([1.0, -2.0, 3.0])))
    assert x.requires_grad and F.is_no_grad(x)
    F.backward(F.reduce_sum(x * x))
    assert np_of(F.grad(x)).tolist() == [2.0, -4.0, 6.0] and not F.is_no_grad(x)
    F.attach_grad(x)  # a gradient already there is zeroed
    assert F.is_no_grad(x) and F.grad(x) is not None
    y = x * 3.0
    F.backward(F.reduce_sum(y), T(np.array([2.0])))  # a (1,) head gradient for a scalar
    assert np_of(F.grad(x)).tolist() == [6.0, 6.0, 6.0]
    z = F.attach_grad(T(np.array([1.0, 2.0])))
    mid = z * 2.0
    F.grad(mid)  # a non-leaf: keeps its gradient from the next backward on
    F.backward(mid, T(np.array([1.0, 1.0])))
    assert np_of(F.grad(mid)).tolist() == [1.0, 1.0]
    assert F.is_recording()
    with F.no_grad():
        assert not F.is_recording() and not nc.is_grad_enabled() and not torch.is_grad_enabled()
        assert not (x * 2.0).requires_grad
        with F.record_grad():
            assert F.is_recording() and (x * 2.0).requires_grad
        assert not lib.is_grad_enabled()
    assert nc.is_grad_enabled() and torch.is_grad_enabled()

    @F.no_grad()
    def doubled(t):
        return t * 2.0

    assert not doubled(x).requires_grad and (x * 2.0).requires_grad
    F.sync()


# ------------------------------------------------------------------------------ sparse, availability


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_sparse_matrices_on_torch_and_native_refusal(backend_name):
    if backend_name == "native":
        for call in (lambda: F.get_preferred_sparse_format(),
                     lambda: F.sparse_matrix(T(np.ones(2)), ("coo", T(np.array([[0, 1], [1, 0]]))), (2, 2)),
                     lambda: F.sparse_matrix_indices(T(np.ones(2)))):
            with pytest.raises(nw.NodeweaveError, match="the native backend cannot run it .nodeweave.core "
                                                        "has no sparse tensors"):
                call()
        return
    assert F.get_preferred_sparse_format() == "coo"
    coord = torch.tensor([[0, 2, 1], [1, 0, 2]])
    data = torch.tensor([1.0, 2.0, 3.0])
    dense = np.zeros((3, 3))
    dense[[0, 2, 1], [1, 0, 2]] = [1.0, 2.0, 3.0]
    m, extra = F.sparse_matrix(data, ("coo", coord), (3, 3))
    assert extra is None and np.array_equal(m.to_dense().numpy(), dense)
    assert np.array_equal(F.asnumpy(m), dense)  # asnumpy densifies
    fmt, got = F.sparse_matrix_indices(m)
    assert fmt == "coo" and got.tolist() == coord.tolist()
    indptr, indices = torch.tensor([0, 1, 2, 3]), torch.tensor([1, 2, 0])
    m, _ = F.sparse_matrix(torch.tensor([1.0, 3.0, 2.0]), ("csr", indices, indptr), (3, 3), force_format=True)
    assert np.array_equal(m.to_dense().numpy(), dense)
    fmt, got_indices, got_indptr = F.sparse_matrix_indices(m)
    assert fmt == "csr" and got_indices.tolist() == [1, 2, 0] and got_indptr.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="index must be .'coo', coord. or .'csr', indices, indptr."):
        F.sparse_matrix(data, ("csc", indices, indptr), (3, 3))
    with pytest.raises(RuntimeError):
        F.sparse_matrix(data, ("coo", torch.tensor([[0, 5, 1], [1, 0, 2]])), (3, 3))  # outside (3, 3)
    with pytest.raises(ValueError, match="spmat must be a COO or CSR sparse tensor"):
        F.sparse_matrix_indices(torch.ones(2))


def test_is_enabled_matches_what_runs(backend_name):
    assert not F.is_enabled("not_a_function")
    for name in F.FUNCTIONS:
        assert callable(getattr(F, name))
        on_native = name not in _library.TORCH_ONLY
        assert F.is_enabled(name) == (backend_name == "pytorch" or on_native), name


def test_graph_index_functions_name_their_replacement():
    with pytest.raises(AttributeError, match=r"gspmm is not provided by nodeweave.*nodeweave.ops.gspmm"):
        F.gspmm  # noqa: B018
    with pytest.raises(AttributeError, match="nodeweave.ops.edge_softmax"):
        F.edge_softmax  # noqa: B018
    with pytest.raises(AttributeError, match="zerocopy_to_dlpack"):
        F.zerocopy_to_dgl_ndarray  # noqa: B018
    with pytest.raises(AttributeError, match="nodeweave.set_backend"):
        TF.load_backend  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'frobnicate'"):
        F.frobnicate  # noqa: B018
    assert F.set_backend is nw.set_backend and F.current is backend.current  # nodeweave.backend's own


def test_pytorch_module_is_pinned_to_torch():
    assert backend.current().name == "native"
    t = TF.tensor([1, 2])
    assert isinstance(t, torch.Tensor) and TF.cpu() == torch.device("cpu")
    assert isinstance(TF.zerocopy_from_numpy(np.ones(2)), torch.Tensor)
    assert isinstance(TF.arange(0, 3), torch.Tensor)
    assert isinstance(TF.zeros(2, "float32", None), torch.Tensor)
    assert TF.is_tensor(t) and not TF.is_tensor(nc.ones(1))
    assert TF.data_type_dict()["int16"] is torch.int16
    assert TF.cumsum(t, 0).tolist() == [1, 3] and TF.is_enabled("cumsum")
    assert _library.active() is nc  # the pin ends with the call
    with pytest.raises(TypeError):
        TF.zeros(2, "complex64", None)
    assert _library.active() is nc  # ... and when the call raises
    from nodeweave.compat.dgl_backend.pytorch import gather_row  # the import DGL code does

    assert gather_row(torch.arange(3), [2, 0]).tolist() == [2, 0]
    assert "gather_row" in TF.__all__ and "data_type_dict" in TF.__all__


# ------------------------------------------------------------------------------ under `import dgl`


@pytest.fixture
def alias():
    compat.install()
    yield
    compat.uninstall()
    nw.set_backend("native")


def test_star_import_of_dgl_backend(alias):
    ns: dict = {}
    exec("from dgl.backend import *", ns)
    for name in (*F.FUNCTIONS, "backend_name", "data_type_dict", "float32", "int64", "bool", "int16"):
        assert name in ns, name
    assert ns["backend_name"] == "pytorch" and ns["float32"] is torch.float32
    assert ns["tensor"] is F.tensor and ns["copy_to"] is F.copy_to
    t = ns["copy_to"](ns["tensor"]([1.0, 2.0]), ns["cpu"]())
    assert isinstance(t, torch.Tensor) and ns["asnumpy"](ns["gather_row"](t, [1])).tolist() == [2.0]
    nw.set_backend("native")
    ns = {}
    exec("from dgl.backend import *", ns)
    assert ns["backend_name"] == "native" and ns["float32"] is nc.float32 and "int16" not in ns


def test_dgl_backend_resolves_to_the_compat_module(alias):
    import dgl

    assert dgl.backend is F  # attribute access alone, without importing dgl.backend
    import dgl.backend as F2
    from dgl.backend import pytorch as TF2

    assert F2 is F and TF2 is TF and dgl.backend.pytorch is TF
    assert dgl.backend.backend_name == "pytorch"
    nw.set_backend("native")
    assert dgl.backend.backend_name == "native" and dgl.backend.float32 is nc.float32
    with pytest.raises(ModuleNotFoundError, match="dgl.backend.pytorch.sparse"):
        import dgl.backend.pytorch.sparse  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match="dgl.backend.mxnet"):
        import dgl.backend.mxnet  # noqa: F401


def test_dgl_base_resolves_to_nodeweave_base(alias):
    import dgl
    from dgl.base import ALL, DGLError, DGLWarning, EID, ETYPE, NID, NTYPE, dgl_warning, is_internal_column

    assert (ALL, NID, EID, NTYPE, ETYPE) == (nw.ALL, nw.NID, nw.EID, nw.NTYPE, nw.ETYPE)
    assert DGLError is nw.NodeweaveError and DGLWarning is nw.NodeweaveWarning
    assert dgl.DGLWarning is nw.NodeweaveWarning and dgl.base.is_all is base.is_all
    assert dgl_warning is nwerr.warn and is_internal_column("_TYPE")
    ns: dict = {}
    exec("from dgl.base import *", ns)
    assert {"ALL", "NID", "DGLWarning", "dgl_warning", "is_internal_column"} <= set(ns)
    assert "DGLWarning" in dir(dgl.base)
    with pytest.raises(AttributeError, match="module 'dgl.base' .aliased to nodeweave.base.*'SLICE_FUL'"):
        dgl.base.SLICE_FUL  # noqa: B018


# ------------------------------------------------------------------------------ nodeweave.base, warnings


def test_base_gathers_the_library_wide_names():
    assert base.ALL is nw.ALL and base.NID is nw.NID and base.EID is nw.EID
    assert base.NTYPE is nw.NTYPE and base.ETYPE is nw.ETYPE
    assert base.NodeweaveError is nw.NodeweaveError and base.NodeweaveWarning is nw.NodeweaveWarning
    assert base.is_all(nw.ALL) and not base.is_all("feat")
    assert base.INTERNAL_COLUMNS == {"_ID", "_TYPE"}
    assert [base.is_internal_column(n) for n in ("_ID", "_TYPE", "h", "_N", None)] == [True, True, False,
                                                                                     False, False]
    g = nw.to_homogeneous(nw.heterograph({("a", "r", "b"): ([0, 1], [1, 0])}))
    g.ndata["h"] = nc.ones(g.num_nodes())
    assert sorted(k for k in g.ndata if not base.is_internal_column(k)) == ["h"]


def _library_function_that_warns():
    nwerr.warn("something odd")


def test_warn_emits_the_library_warning_at_the_callers_line():
    with pytest.warns(nw.NodeweaveWarning, match="something odd") as caught:
        _library_function_that_warns()
    assert issubclass(nw.NodeweaveWarning, UserWarning)
    assert caught[0].filename == __file__  # attributed to this test, the library function's caller
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nwerr.warn("direct", stacklevel=1)
        nwerr.warn("other kind", category=DeprecationWarning)
    assert caught[0].filename == __file__ and caught[1].category is DeprecationWarning
    with pytest.raises(TypeError, match="category must be a Warning subclass"):
        nwerr.warn("x", category=ValueError)
    with pytest.raises(ValueError, match="stacklevel must be a positive int"):
        nwerr.warn("x", stacklevel=0)


def test_library_warnings_are_nodeweave_warnings():
    from nodeweave.nn import ChebConv

    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    with pytest.warns(nw.NodeweaveWarning, match="lambda_max"):
        ChebConv(2, 2, 2)(g, nc.ones((3, 2)))
