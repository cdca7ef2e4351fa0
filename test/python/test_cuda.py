"""CUDA: the caching allocator, host<->device copies, every op with a CUDA kernel checked against the
CPU result, a training step's gradients, and DLPack with PyTorch CUDA tensors. GPU tests skip with
the reason "no CUDA device" where none is visible; the nodeweave.core.cuda queries are checked on
every machine."""

import gc

import numpy as np
import pytest
import torch

import nodeweave.core as nc

HAS_GPU = nc.cuda_device_count() > 0
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA device")
needs_torch_cuda = pytest.mark.skipif(not (HAS_GPU and torch.cuda.is_available()),
                                      reason="no CUDA device (or PyTorch without CUDA)")
GPU = "cuda:0"


def to_gpu(a: np.ndarray, dtype=None) -> "nc.Tensor":
    return nc.tensor(a, dtype=dtype).to(GPU)


def assert_same(gpu_result, cpu_result, rtol=1e-6, atol=1e-6):
    """Same dtype, shape and values; the GPU result comes back through a device-to-host copy."""
    assert gpu_result.device == nc.device(GPU)
    assert gpu_result.dtype == cpu_result.dtype and gpu_result.shape == cpu_result.shape
    got = gpu_result.cpu()._cast("float64").numpy() if gpu_result.dtype.name == "bfloat16" else gpu_result.cpu().numpy()
    want = cpu_result._cast("float64").numpy() if cpu_result.dtype.name == "bfloat16" else cpu_result.numpy()
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


# ---------------------------------------------------------------------------------------------
# Queries that work everywhere.


def test_cuda_queries_are_consistent_on_every_machine():
    n = nc.cuda.device_count()
    assert n == nc.cuda_device_count() >= 0
    assert nc.cuda.is_available() == (n > 0)
    assert nc.cuda.is_built() == nc.cuda_is_built()
    if n == 0:
        assert nc.cuda.memory_allocated() == 0 and nc.cuda.memory_reserved() == 0
    nc.cuda.empty_cache()  # never fails, with or without devices
    with pytest.raises(ValueError, match=f"cuda:{n} is not available"):
        nc.cuda.memory_allocated(n)
    with pytest.raises(ValueError, match="expected a CUDA device, got 'cpu'"):
        nc.cuda.memory_allocated("cpu")
    with pytest.raises(TypeError, match="device must be None, an int"):
        nc.cuda.memory_reserved(1.5)
    with pytest.raises(Exception, match=f"cuda:{n}"):
        nc.zeros(2, device=f"cuda:{n}")


# ---------------------------------------------------------------------------------------------
# Allocator and copies.


@needs_gpu
def test_caching_allocator_reuses_freed_blocks():
    gc.collect()
    nc.cuda.empty_cache()
    base = nc.cuda.memory_allocated()
    assert nc.cuda.memory_reserved() == base  # nothing cached after empty_cache
    t = nc.empty(1000, device=GPU)  # 4000 bytes, served as a 4096-byte block
    ptr = t.data_ptr()
    assert nc.cuda.memory_allocated() == base + 4096
    del t
    assert nc.cuda.memory_allocated() == base
    assert nc.cuda.memory_reserved() == base + 4096  # kept for reuse
    u = nc.empty(1020, device=GPU)  # rounds to the same bucket: the same block comes back
    assert u.data_ptr() == ptr
    v = nc.empty(5000, device=GPU)  # another bucket: a new block
    assert v.data_ptr() != ptr
    del u, v
    nc.cuda.empty_cache()
    assert nc.cuda.memory_reserved() == nc.cuda.memory_allocated() == base


@needs_gpu
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16",
                                   "float32", "float64"])
def test_copies_host_to_device_to_host(dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 5 - 2).astype(np.float64)
    cpu = nc.tensor(a)._cast(dtype)
    g = cpu.to(GPU)
    assert g.device == nc.device(GPU) and g.dtype == cpu.dtype
    assert_same(g, cpu)
    assert_same(g.clone(), cpu)  # device-to-device
    assert_same(g.transpose(0, 2).contiguous(), cpu.transpose(0, 2).contiguous())


@needs_gpu
def test_fill_cast_and_copy_kernels():
    for dtype in ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]:
        assert_same(nc.full((3, 5), 2.75, dtype=dtype, device=GPU), nc.full((3, 5), 2.75, dtype=dtype))
    src = np.array([[-2.5, -1.0, 0.0, 0.4, 1.5, 300.0]])
    for a in ["float64", "float32", "float16", "bfloat16", "int32", "uint8", "bool"]:
        for b in ["float64", "float32", "float16", "bfloat16", "int64", "int8", "bool"]:
            cpu = nc.tensor(src)._cast(a)
            assert_same(cpu.to(GPU)._cast(b), cpu._cast(b))
    # copy_ broadcasts the source, converts its dtype, and accepts a CPU source.
    dst_gpu, dst_cpu = nc.zeros(4, 6, dtype="float32", device=GPU), nc.zeros(4, 6, dtype="float32")
    row = nc.tensor(src)._cast("float64")
    dst_gpu.copy_(row.to(GPU))
    dst_cpu.copy_(row)
    assert_same(dst_gpu, dst_cpu)
    dst_gpu.copy_(row)  # from the CPU
    assert_same(dst_gpu, dst_cpu)
    strided = nc.zeros(6, 4, device=GPU).t()
    strided.copy_(row.t().t())
    assert_same(strided, dst_cpu)


# ---------------------------------------------------------------------------------------------
# Elementwise ops, sum, mm: CUDA against CPU.

UNARY = {
    "neg": nc.neg, "abs": nc.abs, "sign": nc.sign, "exp": nc.exp, "log": nc.log, "sqrt": nc.sqrt,
    "rsqrt": nc.rsqrt, "reciprocal": nc.reciprocal, "sin": nc.sin, "cos": nc.cos, "tanh": nc.tanh,
    "sigmoid": nc.sigmoid, "erf": nc.erf, "relu": nc.relu, "logsigmoid": nc.logsigmoid,
    "square": nc.square, "leaky_relu": lambda x: nc.leaky_relu(x, 0.1), "elu": lambda x: nc.elu(x, 0.7),
    "gelu": nc.gelu, "gelu_tanh": lambda x: nc.gelu(x, "tanh"),
    "softplus": lambda x: nc.softplus(x, 2.0, 3.0), "clamp": lambda x: nc.clamp(x, -0.5, 1.25),
    "clamp_min": lambda x: nc.clamp(x, min=0.25), "logical_not": nc.logical_not,
}
# Integer inputs: the ops that keep integer types, and a few float ops (integers promote to float32;
# every float op shares that promotion code).
INT_UNARY = ["neg", "abs", "sign", "relu", "clamp", "clamp_min", "logical_not", "square", "exp", "sigmoid", "sin"]
UNARY_CASES = [(name, dtype) for name in UNARY for dtype in ("float32", "float64", "float16", "bfloat16")]
UNARY_CASES += [(name, dtype) for name in INT_UNARY for dtype in ("int32", "int64")]


@needs_gpu
@pytest.mark.parametrize("name, dtype", UNARY_CASES)
def test_unary_ops_match_cpu(name, dtype):
    a = np.linspace(-3, 3, 37).reshape(37, 1) * np.ones((1, 3))
    if name in ("log", "sqrt", "rsqrt"):
        a = np.abs(a) + 0.1
    if name == "reciprocal":
        a = a + 0.05
    cpu = nc.tensor(a)._cast(dtype)
    if dtype.startswith("int"):
        cpu = nc.tensor(np.round(a))._cast(dtype)
    fn = UNARY[name]
    half = dtype in ("float16", "bfloat16")
    tol = 1e-2 if half else (1e-5 if dtype == "float32" else 1e-12)
    assert_same(fn(cpu.to(GPU)), fn(cpu), rtol=tol, atol=tol)
    # A strided (transposed) input goes through the same kernel.
    assert_same(fn(cpu.to(GPU).t()), fn(cpu.t()), rtol=tol, atol=tol)


BINARY = {
    "add": nc.add, "sub": nc.sub, "mul": nc.mul, "div": nc.div, "pow": nc.pow, "maximum": nc.maximum,
    "minimum": nc.minimum, "eq": nc.eq, "ne": nc.ne, "lt": nc.lt, "le": nc.le, "gt": nc.gt, "ge": nc.ge,
    "logical_and": nc.logical_and, "logical_or": nc.logical_or, "logical_xor": nc.logical_xor,
}


# Bool subtraction is an error on every device (checked in test_binary_edge_cases_match_cpu).
BINARY_CASES = [(name, dtypes) for name in BINARY
                for dtypes in (("float32", "float32"), ("float64", "int32"), ("int64", "int64"),
                               ("int32", "uint8"), ("float16", "float16"), ("bfloat16", "float32"),
                               ("bool", "bool"))
                if not (name == "sub" and dtypes == ("bool", "bool"))]


@needs_gpu
@pytest.mark.parametrize("name, dtypes", BINARY_CASES, ids=lambda v: v if isinstance(v, str) else "-".join(v))
def test_binary_ops_broadcast_and_match_cpu(name, dtypes):
    rng = np.random.default_rng(1)
    a = np.round(rng.uniform(-3, 3, size=(3, 1, 4)), 1)
    b = np.round(rng.uniform(0.5, 2.5, size=(5, 4)), 1)  # positive: pow and div stay finite
    if name == "pow":
        a = np.abs(a) + 0.5
    x, y = nc.tensor(a)._cast(dtypes[0]), nc.tensor(b)._cast(dtypes[1])
    fn = BINARY[name]
    half = "float16" in dtypes or "bfloat16" in dtypes
    tol = 2e-2 if half else 1e-5
    assert_same(fn(x.to(GPU), y.to(GPU)), fn(x, y), rtol=tol, atol=tol)
    # Python scalars are 0-d CPU tensors that mix with CUDA tensors.
    assert_same(fn(x.to(GPU), 2), fn(x, 2), rtol=tol, atol=tol)


@needs_gpu
def test_binary_edge_cases_match_cpu():
    nan = float("nan")
    a = nc.tensor([1.0, nan, 3.0, -0.0])
    b = nc.tensor([nan, 2.0, 1.0, 0.0])
    for fn in (nc.maximum, nc.minimum, nc.eq, nc.lt):
        assert_same(fn(a.to(GPU), b.to(GPU)), fn(a, b))
    ints = nc.tensor([2, -3, 1, -1, 0, 5])
    exps = nc.tensor([3, 2, -2, -3, 0, -1])
    assert_same(nc.pow(ints.to(GPU), exps.to(GPU)), nc.pow(ints, exps))
    assert_same(nc.div(ints.to(GPU), 4), nc.div(ints, 4))  # true division gives float32
    with pytest.raises(TypeError, match="bool"):
        nc.sub(nc.tensor([True]).to(GPU), nc.tensor([False]).to(GPU))


@needs_gpu
def test_where_matches_cpu():
    c = nc.tensor([[True], [False], [True]])
    a = nc.tensor(np.arange(12.0).reshape(3, 4))._cast("float32")
    b = nc.tensor([-1, -2, -3, -4])._cast("int32")
    assert_same(nc.where(c.to(GPU), a.to(GPU), b.to(GPU)), nc.where(c, a, b))
    assert_same(nc.where(c.to(GPU), a.to(GPU), 0.5), nc.where(c, a, 0.5))


@needs_gpu
@pytest.mark.parametrize("dims, keepdim", [(None, False), (0, False), (1, True), ((0, 2), False),
                                           ((2, 1), True), (-1, False)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "bool", "float16"])
def test_sum_matches_cpu(dims, keepdim, dtype):
    a = (np.arange(2 * 3 * 5).reshape(2, 3, 5) % 7).astype(np.float64) * 0.5
    cpu = nc.tensor(a)._cast(dtype)
    tol = 1e-2 if dtype == "float16" else 1e-6
    assert_same(nc.sum(cpu.to(GPU), dims, keepdim), nc.sum(cpu, dims, keepdim), rtol=tol, atol=tol)
    assert_same(nc.sum(cpu.to(GPU).transpose(0, 2), dims, keepdim), nc.sum(cpu.transpose(0, 2), dims, keepdim),
                rtol=tol, atol=tol)


@needs_gpu
def test_sum_of_long_rows_and_empty_reductions():
    big = nc.tensor(np.arange(1_000_003, dtype=np.float64) % 13)  # long rows take the two-pass path
    assert_same(nc.sum(big.to(GPU)), nc.sum(big), rtol=1e-12)
    rows = nc.tensor((np.arange(3 * 200_001) % 11).reshape(3, 200_001))  # int64, few long rows
    assert_same(nc.sum(rows.to(GPU), 1), nc.sum(rows, 1))
    empty = nc.zeros(4, 0)
    assert_same(nc.sum(empty.to(GPU), 1), nc.sum(empty, 1))
    assert_same(nc.sum(nc.zeros(0, 3).to(GPU), 1), nc.sum(nc.zeros(0, 3), 1))
    assert_same(nc.mean(big.to(GPU)), nc.mean(big), rtol=1e-12)


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_mm_matches_cpu(dtype):
    rng = np.random.default_rng(2)
    a = nc.tensor(np.round(rng.uniform(-2, 2, size=(37, 19)), 1))._cast(dtype)
    b = nc.tensor(np.round(rng.uniform(-2, 2, size=(19, 23)), 1))._cast(dtype)
    tol = 1e-4 if dtype == "float32" else 1e-10
    ag, bg = a.to(GPU), b.to(GPU)
    assert_same(nc.mm(ag, bg), nc.mm(a, b), rtol=tol, atol=tol)
    # Transposed and sliced operands (passed to cuBLAS as transposes or copied when needed).
    assert_same(nc.mm(bg.t(), ag.t()), nc.mm(b.t(), a.t()), rtol=tol, atol=tol)
    assert_same(nc.mm(ag[::2], bg[:, 1:]), nc.mm(a[::2], b[:, 1:]), rtol=tol, atol=tol)
    assert_same(nc.mm(ag[:, :0], bg[:0]), nc.mm(a[:, :0], b[:0]))  # K = 0 gives zeros
    assert_same(nc.matmul(ag[0], bg), nc.matmul(a[0], b), rtol=tol, atol=tol)


@needs_gpu
def test_training_step_gradients_match_cpu():
    rng = np.random.default_rng(3)
    x, w, target = (rng.standard_normal(s) for s in ((16, 8), (8, 4), (16, 4)))
    grads = {}
    for device in ("cpu", GPU):
        xt = nc.tensor(x, dtype="float32").to(device)
        wt = nc.tensor(w, dtype="float32").to(device).requires_grad_()
        tt = nc.tensor(target, dtype="float32").to(device)
        loss = ((nc.tanh(xt @ wt) - tt) ** 2).mean()
        loss.backward()
        grads[device] = (loss.detach(), wt.grad)
    assert_same(grads[GPU][0], grads["cpu"][0], rtol=1e-5)
    assert_same(grads[GPU][1], grads["cpu"][1], rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# DLPack with CUDA tensors.


@needs_gpu
def test_dlpack_device_of_cuda_tensors():
    t = nc.arange(4.0).to(GPU)
    assert t.__dlpack_device__() == (2, 0)
    with pytest.raises(BufferError, match=r"dl_device=\(1, 0\) \(cpu\).*on cuda:0"):
        t.__dlpack__(dl_device=(1, 0))
    with pytest.raises(ValueError, match="stream=0 is ambiguous"):
        t.__dlpack__(stream=0)
    for stream in (None, -1, 1, 2):
        cap = nc.from_dlpack(t.__dlpack__(stream=stream, max_version=(1, 0)))
        assert cap.data_ptr() == t.data_ptr() and cap.device == nc.device(GPU)


@needs_torch_cuda
def test_torch_cuda_round_trip_shares_memory():
    x = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    t = nc.from_dlpack(x)
    assert t.device == nc.device(GPU) and t.data_ptr() == x.data_ptr() and t.stride() == x.stride()
    y = torch.from_dlpack(t)
    assert y.device.type == "cuda" and y.data_ptr() == x.data_ptr()
    x.add_(1.0)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(1, 13, dtype=np.float32).reshape(3, 4))
    # nodeweave writes, torch reads (both on the legacy default stream unless told otherwise).
    t.fill_(5.0)
    assert float(y.sum()) == 60.0
    for dtype in (torch.bool, torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float64):
        z = torch.ones(5, dtype=dtype, device="cuda")
        u = nc.from_dlpack(z)
        assert u.data_ptr() == z.data_ptr() and u.device == nc.device(GPU)
        assert torch.equal(torch.from_dlpack(u), z)


@needs_torch_cuda
def test_torch_side_stream_waits_for_nodeweave_work():
    t = nc.zeros(1 << 22, device=GPU)
    side = torch.cuda.Stream()
    t.fill_(3.0)  # queued on nodeweave's (legacy default) stream
    with torch.cuda.stream(side):
        x = torch.from_dlpack(t)  # passes side.cuda_stream: nodeweave makes it wait with an event
        total = x.sum()
    side.synchronize()
    assert float(total) == 3.0 * (1 << 22)


@needs_torch_cuda
def test_torch_cuda_tensor_kept_alive():
    import weakref

    x = torch.arange(100, dtype=torch.float64, device="cuda")
    alive = weakref.ref(x)
    t = nc.from_dlpack(x)
    del x
    gc.collect()
    assert alive() is not None
    assert nc.sum(t).item() == 4950.0
    del t
    gc.collect()
    assert alive() is None
