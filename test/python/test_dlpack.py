"""DLPack exchange: nodeweave <-> NumPy and nodeweave <-> PyTorch share memory (same addresses, writes
seen on both sides), every dtype, strided and empty tensors, versioned and legacy capsules, lifetime
(producers kept alive, capsules freed exactly once) and the errors bad inputs raise. Capsules built
by hand with ctypes cover what NumPy and PyTorch never export (byte_offset, NULL strides, read-only
flags, newer versions, other devices)."""

import ctypes
import gc
import weakref

import numpy as np
import pytest
import torch

import nodeweave.core as nc

# ---------------------------------------------------------------------------------------------
# The DLPack ABI, declared for ctypes.


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


LEGACY_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", LEGACY_DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


VERSIONED_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                                     ("deleter", VERSIONED_DELETER), ("flags", ctypes.c_uint64),
                                     ("dl_tensor", DLTensor)]

READ_ONLY, IS_COPIED = 1, 2
KDL_CPU, KDL_CUDA, KDL_VULKAN = 1, 2, 7

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_get_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_get_name.restype = ctypes.c_char_p
_capsule_get_name.argtypes = [ctypes.py_object]

# PyCapsule keeps the name pointer, not a copy: these bytes objects live as long as the module.
_NAMES = {name: name.encode() for name in ("dltensor", "dltensor_versioned", "not_a_tensor")}


def capsule_name(cap) -> str:
    return _capsule_get_name(cap).decode()


class HandMadeCapsule:
    """A DLPack capsule over a NumPy buffer, built field by field; counts deleter calls."""

    def __init__(self, buffer: np.ndarray, *, shape, strides=None, byte_offset=0, code=2, bits=64, lanes=1,
                 device=(KDL_CPU, 0), versioned=False, version=(1, 0), flags=0, name=None):
        self.buffer = buffer  # the memory stays ours; the deleter only records that it ran
        self.deleted = 0
        self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(*strides)
        managed_type = DLManagedTensorVersioned if versioned else DLManagedTensor
        self.managed = managed_type()
        dl = self.managed.dl_tensor
        dl.data = buffer.ctypes.data
        dl.device = DLDevice(*device)
        dl.ndim = len(shape)
        dl.dtype = DLDataType(code, bits, lanes)
        dl.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        dl.strides = None if strides is None else ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        dl.byte_offset = byte_offset

        def deleter(_ptr):
            self.deleted += 1

        self.deleter = (VERSIONED_DELETER if versioned else LEGACY_DELETER)(deleter)
        self.managed.deleter = self.deleter
        if versioned:
            self.managed.version = DLPackVersion(*version)
            self.managed.flags = flags
        default = "dltensor_versioned" if versioned else "dltensor"
        self.capsule = _capsule_new(ctypes.addressof(self.managed), _NAMES[name or default], None)


def exported_struct(capsule):
    """The DLManagedTensor(Versioned) a capsule holds, read without consuming it (valid while the
    capsule lives)."""
    name = capsule_name(capsule)
    ptr = _capsule_get_pointer(capsule, _NAMES[name])
    kind = DLManagedTensorVersioned if name == "dltensor_versioned" else DLManagedTensor
    return ctypes.cast(ptr, ctypes.POINTER(kind)).contents


def np_address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


NP_DTYPES = [np.bool_, np.uint8, np.int8, np.int32, np.int64, np.float16, np.float32, np.float64]
TORCH_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16,
                torch.float32, torch.float64]
NC_NAME = {torch.bool: "bool", torch.uint8: "uint8", torch.int8: "int8", torch.int32: "int32",
           torch.int64: "int64", torch.float16: "float16", torch.bfloat16: "bfloat16",
           torch.float32: "float32", torch.float64: "float64"}
# (type code, bits) each nodeweave dtype is exported with.
DL_CODES = {"bool": (6, 8), "uint8": (1, 8), "int8": (0, 8), "int32": (0, 32), "int64": (0, 64),
            "float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32), "float64": (2, 64)}


def sample(dtype, shape=(3, 4)) -> np.ndarray:
    n = int(np.prod(shape))
    values = np.arange(n) % 7 - 3
    if np.dtype(dtype) == np.bool_:
        return (values > 0).reshape(shape)
    if np.dtype(dtype).kind == "u":
        values = values + 3
    return values.astype(dtype).reshape(shape)


def torch_sample(dtype, shape=(3, 4)) -> torch.Tensor:
    base = torch.arange(int(np.prod(shape))).reshape(shape) % 7 - 3
    if dtype == torch.bool:
        return base > 0
    if dtype == torch.uint8:
        return (base + 3).to(dtype)
    return (base.to(torch.float64) * 0.5).to(dtype) if dtype.is_floating_point else base.to(dtype)


# ---------------------------------------------------------------------------------------------
# NumPy.


@pytest.mark.parametrize("dtype", NP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_round_trip_shares_memory(dtype):
    a = sample(dtype)
    t = nc.from_dlpack(a)
    assert t.dtype.name == np.dtype(dtype).name
    assert t.shape == a.shape and t.stride() == (4, 1)
    assert t.data_ptr() == np_address(a)
    back = np.from_dlpack(t)
    assert back.dtype == a.dtype and np_address(back) == np_address(a)
    np.testing.assert_array_equal(back, a)
    # Writes through nodeweave show up in NumPy, and the other way round.
    t[0] = True if dtype is np.bool_ else 9
    assert a[0, 0] == (True if dtype is np.bool_ else 9) and back[0, 3] == a[0, 3]
    a[2, 1] = 0 if dtype is np.bool_ else 5
    assert t.tolist()[2][1] == (False if dtype is np.bool_ else 5)


@pytest.mark.parametrize("make", [
    lambda a: a.T,
    lambda a: a[::2, 1:],
    lambda a: a[:, ::-1],
    lambda a: a[1:, 2],
], ids=["transposed", "stepped", "reversed", "column"])
def test_numpy_non_contiguous_views(make):
    base = np.arange(30, dtype=np.float64).reshape(5, 6)
    view = make(base)
    t = nc.from_dlpack(view)
    assert t.data_ptr() == np_address(view)
    assert t.stride() == tuple(s // 8 for s in view.strides)
    np.testing.assert_array_equal(t.numpy(), view)
    base += 100.0  # still the same memory
    np.testing.assert_array_equal(t.numpy(), view)


def test_numpy_zero_size_and_zero_dim():
    empty = np.zeros((0, 3), np.float32)
    t = nc.from_dlpack(empty)
    assert t.shape == (0, 3) and t.numel() == 0 and t.dtype == nc.float32
    assert np.from_dlpack(t).shape == (0, 3)
    scalar = np.array(3.5)
    s = nc.from_dlpack(scalar)
    assert s.shape == () and s.item() == 3.5 and s.data_ptr() == np_address(scalar)
    s.fill_(-1.0)
    assert scalar == -1.0
    back = np.from_dlpack(nc.tensor(7, dtype=nc.int32))
    assert back.shape == () and back.dtype == np.int32 and back == 7


def test_numpy_producer_outlives_its_name():
    a = np.arange(1000, dtype=np.float64)
    alive = weakref.ref(a)
    t = nc.from_dlpack(a)
    del a
    gc.collect()
    assert alive() is not None  # the tensor holds the producer
    assert t.tolist()[999] == 999.0
    del t
    gc.collect()
    assert alive() is None  # ... and lets go of it exactly when it dies


def test_numpy_read_only_arrays_are_copied_or_refused():
    a = np.arange(4.0)
    a.flags.writeable = False
    t = nc.from_dlpack(a)  # documented: read-only memory is copied
    assert t.data_ptr() != np_address(a)
    np.testing.assert_array_equal(t.numpy(), a)
    t[0] = 42.0
    assert a[0] == 0.0
    with pytest.raises(BufferError, match="read-only.*copy=False"):
        nc.from_dlpack(a, copy=False)


def test_copy_argument_of_from_dlpack():
    a = np.arange(5, dtype=np.int64)
    c = nc.from_dlpack(a, copy=True)
    assert c.data_ptr() != np_address(a) and c.tolist() == [0, 1, 2, 3, 4]
    a[0] = 10
    assert c.tolist()[0] == 0
    shared = nc.from_dlpack(a, copy=False)
    assert shared.data_ptr() == np_address(a)
    with pytest.raises(TypeError, match="copy must be None, True or False, got 'yes'"):
        nc.from_dlpack(a, copy="yes")


# ---------------------------------------------------------------------------------------------
# PyTorch.


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=lambda d: str(d).replace("torch.", ""))
def test_torch_round_trip_shares_memory(dtype):
    x = torch_sample(dtype)
    t = nc.from_dlpack(x)
    assert t.dtype.name == NC_NAME[dtype]
    assert t.data_ptr() == x.data_ptr()
    assert t.shape == tuple(x.shape) and t.stride() == x.stride()
    y = torch.from_dlpack(t)
    assert y.dtype == dtype and y.data_ptr() == x.data_ptr()
    assert torch.equal(y, x)
    # Values as nodeweave sees them (bfloat16 through float32, which is exact).
    expect = x.to(torch.float32).numpy() if dtype == torch.bfloat16 else x.numpy()
    got = t._cast("float32").numpy() if dtype == torch.bfloat16 else t.numpy()
    np.testing.assert_array_equal(got, expect)
    # Writes through torch are seen by nodeweave.
    x[1, 2] = True if dtype == torch.bool else 2
    assert t._cast("float64").tolist()[1][2] == 1.0 * (1 if dtype == torch.bool else 2)


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=lambda d: str(d).replace("torch.", ""))
def test_nodeweave_to_torch_to_nodeweave(dtype):
    t = nc.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))._cast(NC_NAME[dtype])
    x = torch.from_dlpack(t)
    assert x.dtype == dtype and x.data_ptr() == t.data_ptr() and x.stride() == t.stride()
    back = nc.from_dlpack(x)
    assert back.data_ptr() == t.data_ptr() and back.dtype == t.dtype
    x.zero_()
    assert not back._cast("float64").numpy().any() and not t._cast("float64").numpy().any()


def test_torch_non_contiguous_views_both_ways():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    for view in (base.t(), base[1:, ::2], base[:, 3], base.narrow(1, 2, 3)):
        t = nc.from_dlpack(view)
        assert t.data_ptr() == view.data_ptr() and t.stride() == view.stride()
        np.testing.assert_array_equal(t.numpy(), view.numpy())
    src = nc.from_numpy(np.arange(12, dtype=np.float64).reshape(3, 4))
    for view in (src.t(), src[:, 1::2], src[2]):
        x = torch.from_dlpack(view)
        assert x.data_ptr() == view.data_ptr() and x.stride() == view.stride()
        np.testing.assert_array_equal(x.numpy(), view.numpy())


def test_torch_zero_size_and_zero_dim():
    e = nc.from_dlpack(torch.empty(0, 4))
    assert e.shape == (0, 4) and e.numel() == 0
    assert torch.from_dlpack(nc.zeros(2, 0)).shape == (2, 0)
    s = nc.from_dlpack(torch.tensor(7, dtype=torch.int64))
    assert s.shape == () and s.item() == 7
    x = torch.from_dlpack(nc.tensor(2.5))
    assert x.shape == () and x.item() == 2.5


def test_torch_producer_kept_alive_and_released():
    x = torch.arange(100, dtype=torch.float64)
    alive = weakref.ref(x)
    t = nc.from_dlpack(x)
    del x
    gc.collect()
    assert alive() is not None and t.tolist()[99] == 99.0
    del t
    gc.collect()
    assert alive() is None


def test_exported_memory_lives_until_the_consumer_lets_go():
    gc.collect()
    before = nc._C._allocator_bytes_in_use("cpu")
    t = nc.zeros(1 << 16, dtype=nc.float64)  # 512 KiB
    held = nc._C._allocator_bytes_in_use("cpu") - before
    assert held >= 8 << 16
    x = torch.from_dlpack(t)
    del t
    gc.collect()
    assert nc._C._allocator_bytes_in_use("cpu") - before == held
    x += 1.0
    assert float(x.sum()) == float(1 << 16)
    del x
    gc.collect()
    assert nc._C._allocator_bytes_in_use("cpu") == before


def test_unconsumed_capsule_frees_its_tensor_and_consumed_one_does_not():
    gc.collect()
    before = nc._C._allocator_bytes_in_use("cpu")
    for max_version in (None, (1, 0)):
        t = nc.ones(1 << 15, dtype=nc.float64)
        cap = t.__dlpack__(max_version=max_version)
        del t
        gc.collect()
        assert nc._C._allocator_bytes_in_use("cpu") > before  # the capsule owns it now
        del cap
        gc.collect()
        assert nc._C._allocator_bytes_in_use("cpu") == before
        t = nc.ones(1 << 15, dtype=nc.float64)
        cap = t.__dlpack__(max_version=max_version)
        x = torch.from_dlpack(cap)
        assert capsule_name(cap).startswith("used_")
        del t, cap
        gc.collect()
        assert float(x.sum()) == float(1 << 15)  # not freed by the consumed capsule
        del x
        gc.collect()
        assert nc._C._allocator_bytes_in_use("cpu") == before


# ---------------------------------------------------------------------------------------------
# Capsules: versions, fields, flags.


def test_legacy_and_versioned_capsules():
    t = nc.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert capsule_name(t.__dlpack__()) == "dltensor"
    assert capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert capsule_name(t.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    # A consumer that knows a newer major version gets our 1.0 capsule and must check its version.
    cap = t.__dlpack__(max_version=(2, 0))
    assert capsule_name(cap) == "dltensor_versioned"
    m = exported_struct(cap)
    assert (m.version.major, m.version.minor) == (1, 0) and m.flags == 0
    for cap in (t.__dlpack__(), t.__dlpack__(max_version=(1, 0))):
        x = torch.from_dlpack(cap)
        assert x.data_ptr() == t.data_ptr() and x.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_consumers_read_legacy_capsules_from_old_producers():
    class LegacyProducer:
        """A producer written before DLPack 1.0: __dlpack__ has no max_version."""

        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    t = nc.from_numpy(np.arange(4, dtype=np.int32))
    a = np.from_dlpack(LegacyProducer(t))
    assert np_address(a) == t.data_ptr() and a.tolist() == [0, 1, 2, 3]
    u = nc.from_dlpack(LegacyProducer(t))
    assert u.data_ptr() == t.data_ptr() and u.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("name", list(DL_CODES))
def test_exported_fields(name):
    t = nc.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))._cast(name).t()
    cap = t.__dlpack__(max_version=(1, 0))  # the struct lives as long as the capsule
    dl = exported_struct(cap).dl_tensor
    assert dl.data == t.data_ptr() and dl.byte_offset == 0
    assert (dl.device.device_type, dl.device.device_id) == (KDL_CPU, 0) == t.__dlpack_device__()
    assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == (*DL_CODES[name], 1)
    assert dl.ndim == 2 and [dl.shape[i] for i in range(2)] == [4, 3]
    assert [dl.strides[i] for i in range(2)] == [1, 4]


def test_export_copy_sets_is_copied_and_detaches_memory():
    t = nc.from_numpy(np.arange(4, dtype=np.float64))
    cap = t.__dlpack__(max_version=(1, 0), copy=True)
    m = exported_struct(cap)
    assert m.flags & IS_COPIED
    assert m.dl_tensor.data != t.data_ptr()
    x = torch.from_dlpack(cap)
    x.fill_(8.0)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    cap = t.__dlpack__(max_version=(1, 0), copy=False)
    assert not exported_struct(cap).flags & IS_COPIED and exported_struct(cap).dl_tensor.data == t.data_ptr()


def test_hand_made_capsule_with_byte_offset_and_null_strides():
    buf = np.arange(20, dtype=np.float64)
    h = HandMadeCapsule(buf, shape=(2, 3), byte_offset=5 * 8)  # NULL strides: compact row-major
    t = nc.from_dlpack(h.capsule)
    assert capsule_name(h.capsule) == "used_dltensor"
    assert t.data_ptr() == np_address(buf) + 40
    assert t.stride() == (3, 1) and t.tolist() == [[5, 6, 7], [8, 9, 10]]
    buf[5] = -1
    assert t.tolist()[0][0] == -1
    assert h.deleted == 0
    del t
    gc.collect()
    assert h.deleted == 1  # called exactly once, when the last view died


def test_hand_made_versioned_capsule_with_strides_and_bool():
    buf = np.array([1, 0, 0, 1, 1, 0, 1, 1], dtype=np.uint8)
    h = HandMadeCapsule(buf, shape=(2, 2), strides=(1, 4), byte_offset=2, code=6, bits=8, versioned=True)
    t = nc.from_dlpack(h.capsule)
    assert capsule_name(h.capsule) == "used_dltensor_versioned"
    assert t.dtype == nc.bool and t.data_ptr() == np_address(buf) + 2
    assert t.tolist() == [[False, True], [True, True]]
    del t
    gc.collect()
    assert h.deleted == 1


def test_hand_made_read_only_versioned_capsule_is_copied():
    buf = np.arange(3, dtype=np.float32)
    h = HandMadeCapsule(buf, shape=(3,), code=2, bits=32, versioned=True, flags=READ_ONLY)
    t = nc.from_dlpack(h.capsule)
    assert t.data_ptr() != np_address(buf) and t.tolist() == [0.0, 1.0, 2.0]
    gc.collect()
    assert h.deleted == 1  # the borrowed view was only needed for the copy


def test_capsule_consumed_twice_is_an_error():
    t = nc.arange(3.0)
    cap = t.__dlpack__()
    torch.from_dlpack(cap)
    with pytest.raises(ValueError, match="already consumed.*used_dltensor"):
        nc.from_dlpack(cap)
    cap = t.__dlpack__(max_version=(1, 0))
    nc.from_dlpack(cap)
    with pytest.raises(ValueError, match="already consumed.*used_dltensor_versioned"):
        nc.from_dlpack(cap)


# ---------------------------------------------------------------------------------------------
# Bad inputs.


@pytest.mark.parametrize("x, name", [
    (torch.zeros(2, dtype=torch.complex64), "complex64"),
    (torch.zeros(2, dtype=torch.uint16), "uint16"),
    (torch.zeros(2, dtype=torch.int16), "int16"),
    (np.zeros(2, dtype=np.complex128), "complex128"),
    (np.zeros(2, dtype=np.uint32), "uint32"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_unsupported_dtypes_raise_type_error_naming_them(x, name):
    with pytest.raises(TypeError, match=f"unsupported dtype {name} "):
        nc.from_dlpack(x)


def test_vector_lanes_and_unknown_codes_are_rejected():
    buf = np.zeros(8, np.float32)
    h = HandMadeCapsule(buf, shape=(2,), code=2, bits=32, lanes=4)
    with pytest.raises(TypeError, match="float32 x 4 lanes"):
        nc.from_dlpack(h.capsule)
    h2 = HandMadeCapsule(buf, shape=(2,), code=9, bits=8)
    with pytest.raises(TypeError, match="DLPack type code 9"):
        nc.from_dlpack(h2.capsule)
    # Rejected capsules are not consumed: their owner still frees them.
    assert capsule_name(h.capsule) == "dltensor" and h.deleted == 0


def test_unsupported_devices_raise_buffer_error_naming_them():
    with pytest.raises(BufferError, match="meta"):
        nc.from_dlpack(torch.empty(3, device="meta"))
    buf = np.zeros(4)
    vk = HandMadeCapsule(buf, shape=(4,), device=(KDL_VULKAN, 0))
    with pytest.raises(BufferError, match="vulkan:0"):
        nc.from_dlpack(vk.capsule)
    missing = nc.cuda_device_count()  # one past the last visible CUDA device (cuda:0 without any)
    cu = HandMadeCapsule(buf, shape=(4,), device=(KDL_CUDA, missing))
    with pytest.raises(BufferError, match=f"cuda:{missing}"):
        nc.from_dlpack(cu.capsule)
    assert capsule_name(cu.capsule) == "dltensor" and cu.deleted == 0


def test_newer_major_version_is_refused_without_consuming():
    buf = np.zeros(4)
    h = HandMadeCapsule(buf, shape=(4,), versioned=True, version=(2, 1))
    with pytest.raises(BufferError, match="DLPack 2.1"):
        nc.from_dlpack(h.capsule)
    assert capsule_name(h.capsule) == "dltensor_versioned" and h.deleted == 0


def test_wrong_objects_and_capsule_names():
    with pytest.raises(TypeError, match="got int"):
        nc.from_dlpack(42)
    with pytest.raises(TypeError, match="got list"):
        nc.from_dlpack([1.0, 2.0])
    h = HandMadeCapsule(np.zeros(2), shape=(2,), name="not_a_tensor")
    with pytest.raises(TypeError, match="named 'not_a_tensor'"):
        nc.from_dlpack(h.capsule)


def test_dunder_dlpack_argument_errors():
    t = nc.arange(4.0)
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match=r"dl_device=\(2, 0\) \(cuda:0\).*on cpu"):
        t.__dlpack__(dl_device=(2, 0))
    assert capsule_name(t.__dlpack__(dl_device=(1, 0))) == "dltensor"
    with pytest.raises(TypeError, match="dl_device must be a"):
        t.__dlpack__(dl_device="cpu")
    with pytest.raises(TypeError, match=r"max_version must be a \(major, minor\).*\(1,\)"):
        t.__dlpack__(max_version=(1,))
    with pytest.raises(TypeError, match="max_version must be a"):
        t.__dlpack__(max_version="1.0")
    with pytest.raises(ValueError, match="stream must be None for a CPU tensor, got 5"):
        t.__dlpack__(stream=5)
    with pytest.raises(TypeError, match="stream must be None or an int, got str"):
        t.__dlpack__(stream="default")
    with pytest.raises(TypeError, match="copy must be None, True or False"):
        t.__dlpack__(copy=1)
    with pytest.raises(TypeError):
        t.__dlpack__(1)  # keyword-only, as the standard specifies


def test_tensors_that_require_grad_are_not_exported():
    w = nc.ones(3, requires_grad=True)
    with pytest.raises(BufferError, match="requires grad.*detach"):
        w.__dlpack__()
    x = torch.from_dlpack(w.detach())
    assert x.data_ptr() == w.data_ptr()
