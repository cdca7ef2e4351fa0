"""nodeweave.core.nn against torch.nn: every layer's forward and backward on identical weights and
inputs, train/eval behaviour, registration and traversal, state_dict round trips, initializers'
distributions and gradient clipping."""

import math
from collections import OrderedDict

import numpy as np
import pytest
import torch

import nodeweave.core as nc
import nodeweave.core.nn.functional as F

RTOL = {"float64": 1e-10, "float32": 1e-5}
ATOL = {"float64": 1e-12, "float32": 1e-6}


def _np(t):
    return t.detach().numpy()


def _copy_weights(ours, ref):
    """Copies torch module ``ref``'s parameters and buffers into ``ours`` by state_dict name."""
    missing, unexpected = ours.load_state_dict({k: nc.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    assert missing == [] and unexpected == []


def _check_module(ours, ref, inputs, dtype="float64", grad_inputs=True, seed=0):
    """Runs both modules on the same inputs, backprops the same random cotangent, and compares
    outputs, input gradients and parameter gradients."""
    rng = np.random.default_rng(seed)
    nc_in = [nc.tensor(x, requires_grad=grad_inputs and x.dtype.kind == "f") for x in inputs]
    th_in = [torch.tensor(x, requires_grad=grad_inputs and x.dtype.kind == "f") for x in inputs]
    out_nc, out_th = ours(*nc_in), ref(*th_in)
    np.testing.assert_allclose(_np(out_nc), _np(out_th), rtol=RTOL[dtype], atol=ATOL[dtype])
    cot = rng.standard_normal(tuple(out_th.shape)).astype(_np(out_th).dtype)
    (out_nc * nc.tensor(cot)).sum().backward()
    (out_th * torch.tensor(cot)).sum().backward()
    for a, b in zip(nc_in, th_in):
        if b.requires_grad:
            np.testing.assert_allclose(_np(a.grad), b.grad.numpy(), rtol=RTOL[dtype], atol=ATOL[dtype])
    ours_p = dict(ours.named_parameters())
    for name, p in ref.named_parameters():
        if p.grad is None:
            assert ours_p[name].grad is None, name
        else:
            np.testing.assert_allclose(_np(ours_p[name].grad), p.grad.numpy(), rtol=RTOL[dtype], atol=ATOL[dtype],
                                       err_msg=name)
    return out_nc


# ---------------------------------------------------------------- Parameter and registration
def test_parameter_shares_memory_but_not_autograd_identity():
    data = nc.zeros(3)
    p = nc.nn.Parameter(data)
    assert p.requires_grad and p.is_leaf and not data.requires_grad
    assert p.data_ptr() == data.data_ptr()
    with nc.no_grad():
        p.fill_(2.0)
    assert data.tolist() == [2.0, 2.0, 2.0]
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert not nc.nn.Parameter(nc.zeros(2), requires_grad=False).requires_grad
    with pytest.raises(TypeError, match="only floating point tensors can require gradients, got dtype int64"):
        nc.nn.Parameter(nc.zeros(2, dtype=nc.int64))
    with pytest.raises(TypeError, match="data must be a Tensor, got list"):
        nc.nn.Parameter([1.0])


class _Net(nc.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nc.nn.Linear(3, 4)
        self.shared = self.fc  # the same module twice: listed once
        self.scale = nc.nn.Parameter(nc.ones(1))
        self.register_buffer("steps", nc.zeros(1, dtype=nc.int64))
        self.register_buffer("cache", nc.zeros(2), persistent=False)
        self.blocks = nc.nn.ModuleList([nc.nn.Linear(4, 4), nc.nn.ReLU()])
        self.plain = 5

    def forward(self, x):
        x = self.fc(x) * self.scale
        for b in self.blocks:
            x = b(x)
        return x


def test_registration_and_traversal():
    net = _Net()
    assert [n for n, _ in net.named_parameters()] == ["scale", "fc.weight", "fc.bias", "blocks.0.weight",
                                                      "blocks.0.bias"]
    assert len(list(net.named_parameters(remove_duplicate=False))) == 7
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "cache"]
    assert [n for n, _ in net.named_children()] == ["fc", "blocks"]
    assert [n for n, _ in net.named_modules()] == ["", "fc", "blocks", "blocks.0", "blocks.1"]
    assert net.get_submodule("blocks.0") is net.blocks[0]
    assert net.get_parameter("blocks.0.bias") is net.blocks[0].bias
    assert list(net.state_dict()) == ["scale", "steps", "fc.weight", "fc.bias", "shared.weight", "shared.bias",
                                      "blocks.0.weight", "blocks.0.bias"]
    assert net.plain == 5 and "plain" not in net._parameters
    del net.scale
    assert "scale" not in [n for n, _ in net.named_parameters()]
    net.fc = None
    assert net.fc is None and "fc.weight" not in dict(net.named_parameters())


def test_torch_reports_the_same_state_dict_keys():
    class TorchNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 4)
            self.shared = self.fc
            self.scale = torch.nn.Parameter(torch.ones(1))
            self.register_buffer("steps", torch.zeros(1, dtype=torch.int64))
            self.register_buffer("cache", torch.zeros(2), persistent=False)
            self.blocks = torch.nn.ModuleList([torch.nn.Linear(4, 4), torch.nn.ReLU()])

    ours, ref = _Net(), TorchNet()
    assert list(ours.state_dict()) == list(ref.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in ref.named_parameters()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in ref.named_modules()]


def test_registration_errors():
    m = nc.nn.Module()
    with pytest.raises(TypeError, match=r"cannot assign 'Tensor' object to parameter 'w' \(nodeweave.core.nn"):
        m.register_parameter("w", nc.zeros(2))
    m.w = nc.nn.Parameter(nc.zeros(2))
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'w'"):
        m.w = nc.zeros(2)
    with pytest.raises(ValueError, match="can't contain"):
        m.register_buffer("a.b", nc.zeros(1))
    with pytest.raises(ValueError, match="empty string"):
        m.register_parameter("", None)
    with pytest.raises(KeyError, match="attribute 'w' already exists"):
        m.register_buffer("w", nc.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'list' object to buffer 'b'"):
        m.register_buffer("b", [1.0])
    m.sub = nc.nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'sub'"):
        m.sub = 3
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(TypeError, match="cannot assign 'Tensor' object to parameter 'z'"):
        m.register_parameter("z", nc.nn.Parameter(nc.zeros(2)) * 2.0)  # an op's result is no Parameter
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = m.nope

    class Early(nc.nn.Module):
        def __init__(self):
            self.w = nc.nn.Parameter(nc.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nc.nn.Module()(1)


def test_train_eval_apply_and_hooks():
    net = nc.nn.Sequential(nc.nn.Linear(2, 2), nc.nn.Sequential(nc.nn.Dropout(), nc.nn.BatchNorm1d(2)))
    assert all(m.training for m in net.modules())
    assert net.eval() is net and not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(TypeError, match="training mode is expected to be a bool"):
        net.train("no")
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "Dropout", "BatchNorm1d", "Sequential", "Sequential"]

    lin = nc.nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 2.0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(args[0].tolist()) or out * 0.0)
    out = lin(nc.ones(1, 2))
    assert calls == [[[2.0, 2.0]]] and out.tolist() == [[0.0, 0.0]]
    h1.remove()
    h2.remove()
    assert lin(nc.ones(1, 2)).tolist() != [[0.0, 0.0]]


def test_repr_matches_torch():
    def build(nn):
        return nn.Sequential(
            nn.Linear(3, 4), nn.ReLU(), nn.LeakyReLU(0.2), nn.Dropout(0.25), nn.LayerNorm(4), nn.BatchNorm1d(4),
            nn.LayerNorm(4, elementwise_affine=False), nn.BatchNorm1d(4, affine=False), nn.BatchNorm1d(4, bias=False),
            nn.Sequential(nn.ELU(), nn.GELU(approximate="tanh"), nn.Softplus(beta=2.0), nn.Sigmoid(), nn.Tanh()),
            nn.Embedding(10, 3, padding_idx=0), nn.Softmax(dim=1), nn.LogSoftmax(dim=-1), nn.Identity(),
            nn.Linear(4, 2, bias=False), nn.MSELoss(), nn.CrossEntropyLoss(), nn.ModuleDict({"a": nn.L1Loss()}))

    assert repr(build(nc.nn)) == repr(build(torch.nn))


def test_deepcopy_gives_an_independent_module():
    import copy

    net = nc.nn.Sequential(nc.nn.Linear(3, 4), nc.nn.BatchNorm1d(4), nc.nn.Embedding(5, 4))
    net[1](nc.randn(6, 4))  # move the running statistics
    net[0](nc.ones(2, 3)).sum().backward()
    twin = copy.deepcopy(net)
    for (n1, a), (n2, b) in zip(net.state_dict().items(), twin.state_dict().items()):
        assert n1 == n2
        np.testing.assert_array_equal(_np(a), _np(b))
        assert a.numel() == 0 or a.data_ptr() != b.data_ptr()
    assert isinstance(twin[0].weight, nc.nn.Parameter) and twin[0].weight.requires_grad
    np.testing.assert_array_equal(_np(twin[0].weight.grad), _np(net[0].weight.grad))
    with nc.no_grad():
        twin[0].weight.fill_(0.0)
        twin[1].running_mean.fill_(7.0)
    assert np.any(_np(net[0].weight) != 0) and np.all(_np(net[1].running_mean) != 7.0)


def test_zero_grad_and_requires_grad():
    lin = nc.nn.Linear(2, 2)
    lin(nc.ones(1, 2)).sum().backward()
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias.grad is None
    lin.requires_grad_(False)
    assert not any(p.requires_grad for p in lin.parameters())


# ---------------------------------------------------------------- state_dict
def test_state_dict_round_trip_through_torch_and_disk(tmp_path):
    def build(nn):
        return nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.LayerNorm(6), nn.Linear(6, 3))

    torch.manual_seed(0)
    ref = build(torch.nn).double()
    ref.train()
    ref(torch.randn(8, 4, dtype=torch.float64))  # non-trivial running stats
    ref.eval()
    ours = build(nc.nn).double().eval()
    assert list(ours.state_dict()) == list(ref.state_dict())
    _copy_weights(ours, ref)
    x = np.random.default_rng(0).standard_normal((5, 4))
    np.testing.assert_allclose(_np(ours(nc.tensor(x))), _np(ref(torch.tensor(x))), rtol=1e-12)
    assert int(ours.state_dict()["1.num_batches_tracked"].item()) == 1

    nc.save(ours.state_dict(), tmp_path / "m.nw")
    fresh = build(nc.nn).double().eval()
    result = fresh.load_state_dict(nc.load(tmp_path / "m.nw"))
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(_np(fresh(nc.tensor(x))), _np(ours(nc.tensor(x))))


def test_state_dict_tensors_are_detached_views_and_load_copies():
    lin = nc.nn.Linear(2, 2)
    sd = lin.state_dict()
    assert not sd["weight"].requires_grad and sd["weight"].data_ptr() == lin.weight.data_ptr()
    assert lin.state_dict(keep_vars=True)["weight"] is lin.weight
    other = nc.nn.Linear(2, 2)
    ptr = other.weight.data_ptr()
    other.load_state_dict(sd)
    assert other.weight.data_ptr() == ptr  # copied into the existing parameter
    np.testing.assert_array_equal(_np(other.weight), _np(lin.weight))


def test_load_state_dict_strictness():
    lin = nc.nn.Linear(2, 3)
    sd = dict(lin.state_dict())
    with pytest.raises(ValueError, match='Missing key\\(s\\) in state_dict: "bias"'):
        nc.nn.Linear(2, 3).load_state_dict({"weight": sd["weight"]})
    with pytest.raises(ValueError, match='Unexpected key\\(s\\) in state_dict: "extra"'):
        nc.nn.Linear(2, 3).load_state_dict({**sd, "extra": nc.zeros(1)})
    with pytest.raises(ValueError, match=r"size mismatch for weight: copying a param with shape \(3, 2\) from "
                                         r"checkpoint, the shape in current model is \(4, 2\)"):
        nc.nn.Linear(2, 4).load_state_dict(sd, strict=False)
    with pytest.raises(ValueError, match='expected a Tensor from the checkpoint but received float'):
        nc.nn.Linear(2, 3).load_state_dict({**sd, "bias": 1.0})
    with pytest.raises(TypeError, match="expected a dict-like state_dict, got list"):
        lin.load_state_dict([1, 2])
    target = nc.nn.Linear(2, 3)
    res = target.load_state_dict({"weight": sd["weight"], "junk.x": nc.zeros(1)}, strict=False)
    assert res.missing_keys == ["bias"] and res.unexpected_keys == ["junk.x"]
    np.testing.assert_array_equal(_np(target.weight), _np(lin.weight))
    # The same semantics as torch's non-strict load.
    tl = torch.nn.Linear(2, 3)
    tres = tl.load_state_dict({"weight": torch.tensor(_np(sd["weight"])), "junk.x": torch.zeros(1)}, strict=False)
    assert (tres.missing_keys, tres.unexpected_keys) == (res.missing_keys, res.unexpected_keys)


def test_to_converts_parameters_buffers_and_grads():
    bn = nc.nn.BatchNorm1d(3)
    bn(nc.randn(4, 3)).sum().backward()
    bn.to(nc.float64)
    assert bn.weight.dtype == nc.float64 and isinstance(bn.weight, nc.nn.Parameter) and bn.weight.requires_grad
    assert bn.weight.grad.dtype == nc.float64
    assert bn.running_mean.dtype == nc.float64
    assert bn.num_batches_tracked.dtype == nc.int64  # integer buffers keep their type
    same = bn.weight
    bn.to("cpu")
    assert bn.weight is same  # nothing to convert: the parameter is kept
    assert nc.nn.Linear(2, 2).to(nc.float64, "cpu").weight.dtype == nc.float64
    with pytest.raises(TypeError, match="floating point dtypes, but got desired dtype=nodeweave.core.int64"):
        bn.to(nc.int64)
    with pytest.raises(TypeError, match="expected a device, dtype or tensor, got int"):
        bn.to(3)


# ---------------------------------------------------------------- layers vs torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 3), (3,)])
def test_linear(dtype, bias, shape):
    ref = torch.nn.Linear(3, 4, bias=bias, dtype=getattr(torch, dtype))
    ours = nc.nn.Linear(3, 4, bias=bias, dtype=getattr(nc, dtype))
    _copy_weights(ours, ref)
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    _check_module(ours, ref, [x], dtype)


def test_linear_rejects_wrong_input_width():
    lin = nc.nn.Linear(3, 2)
    with pytest.raises(ValueError, match=r"input of shape \(4, 5\) must have in_features=3"):
        lin(nc.ones(4, 5))
    with pytest.raises(TypeError, match="input must be a Tensor, got list"):
        lin([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="in_features must be a non-negative int, got -1"):
        nc.nn.Linear(-1, 2)


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding(padding_idx):
    ref = torch.nn.Embedding(6, 3, padding_idx=padding_idx, dtype=torch.float64)
    ours = nc.nn.Embedding(6, 3, padding_idx=padding_idx, dtype=nc.float64)
    _copy_weights(ours, ref)
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    _check_module(ours, ref, [idx])
    if padding_idx is not None:
        assert ours.padding_idx == padding_idx % 6
        assert np.all(_np(ours.weight.grad)[padding_idx] == 0)


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_embedding_max_norm_matches_torch(norm_type):
    ref = torch.nn.Embedding(6, 3, max_norm=1.2, norm_type=norm_type, dtype=torch.float64)
    ours = nc.nn.Embedding(6, 3, max_norm=1.2, norm_type=norm_type, dtype=nc.float64)
    with torch.no_grad():
        ref.weight.mul_(2.0)  # most rows start above the limit
    _copy_weights(ours, ref)
    assert repr(ours) == repr(ref)
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    _check_module(ours, ref, [idx])
    # Looked-up rows were renormed in place; rows 3 and 4 were not looked up and keep their norm.
    np.testing.assert_allclose(_np(ours.weight), _np(ref.weight), rtol=1e-12)
    with pytest.raises(ValueError, match="max_norm must be positive, got -1"):
        nc.nn.Embedding(6, 3, max_norm=-1)
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq"):
        nc.nn.Embedding(6, 3, scale_grad_by_freq=True)


def test_embedding_padding_row_starts_at_zero_and_sparse_grad_is_dense_shaped():
    emb = nc.nn.Embedding(5, 4, padding_idx=3, sparse=True)
    assert _np(emb.weight)[3].tolist() == [0.0] * 4
    dense = nc.nn.Embedding(5, 4, padding_idx=3)
    dense.load_state_dict(emb.state_dict())
    idx = nc.tensor([[3, 1], [1, 4]])
    (emb(idx) ** 2).sum().backward()
    (dense(idx) ** 2).sum().backward()
    assert tuple(emb.weight.grad.shape) == (5, 4)
    np.testing.assert_array_equal(_np(emb.weight.grad), _np(dense.weight.grad))
    with pytest.raises(ValueError, match=r"padding_idx must be within num_embeddings \(5\), got 5"):
        nc.nn.Embedding(5, 4, padding_idx=5)
    with pytest.raises(ValueError, match=r"_weight must have shape \(5, 4\), got \(4, 5\)"):
        nc.nn.Embedding(5, 4, _weight=nc.zeros(4, 5))
    frozen = nc.nn.Embedding.from_pretrained(nc.ones(3, 2))
    assert not frozen.weight.requires_grad and frozen(nc.tensor([2])).tolist() == [[1.0, 1.0]]


def test_dropout_train_and_eval():
    nc.manual_seed(0)
    d = nc.nn.Dropout(0.3)
    x = nc.ones(200_000, requires_grad=True)
    y = d(x)
    vals = _np(y)
    zero_frac = np.mean(vals == 0)
    assert abs(zero_frac - 0.3) < 4 * math.sqrt(0.3 * 0.7 / vals.size)  # a 4-sigma binomial bound
    np.testing.assert_allclose(vals[vals != 0], 1 / 0.7, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_array_equal(_np(x.grad), vals)  # gradient = mask / (1 - p)
    d.eval()
    assert d(nc.tensor([1.0, 2.0])).tolist() == [1.0, 2.0]
    assert nc.nn.Dropout(0.0)(nc.tensor([1.0, 2.0])).tolist() == [1.0, 2.0]
    assert nc.nn.Dropout(1.0)(nc.tensor([1.0, 2.0])).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        nc.nn.Dropout(1.5)
    with pytest.raises(ValueError, match="between 0 and 1, but got -0.1"):
        F.dropout(nc.ones(2), -0.1)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape,norm", [((4, 5), 5), ((2, 3, 4), (3, 4)), ((3, 6), [6])])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(shape, norm, affine, dtype):
    ref = torch.nn.LayerNorm(norm, elementwise_affine=affine, dtype=getattr(torch, dtype))
    ours = nc.nn.LayerNorm(norm, elementwise_affine=affine, dtype=getattr(nc, dtype))
    if affine:
        with torch.no_grad():
            ref.weight.normal_()
            ref.bias.normal_()
        _copy_weights(ours, ref)
    x = (np.random.default_rng(2).standard_normal(shape) * 3 + 1).astype(dtype)
    _check_module(ours, ref, [x], dtype)


def test_layer_norm_rejects_mismatched_shape():
    with pytest.raises(ValueError, match=r"input of shape \(2, 3\) does not end with normalized_shape \(4,\)"):
        nc.nn.LayerNorm(4)(nc.ones(2, 3))


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_normalize(p, dim):
    """Against the formula in NumPy, with an all-zero row (the eps clamp keeps it zero), then the
    gradient against finite differences (away from the zero row, where |x|^p has no derivative
    for p = 1)."""
    x = np.random.default_rng(3).standard_normal((4, 3, 5))
    x[1] = 0.0
    norm = np.maximum((np.abs(x) ** p).sum(axis=dim, keepdims=True) ** (1 / p), 1e-12)
    got = F.normalize(nc.tensor(x), p=p, dim=dim)
    np.testing.assert_allclose(_np(got), x / norm, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(_np(F.normalize(nc.tensor(x), p=p, dim=dim, eps=2.0)), x / np.maximum(norm, 2.0),
                               rtol=1e-12, atol=1e-15)
    y = nc.tensor(np.random.default_rng(4).uniform(0.5, 2.0, (3, 4)) * np.array([1, -1, 1, -1]), requires_grad=True)
    assert nc.autograd.gradcheck(lambda t: F.normalize(t, p=p, dim=min(dim, 1)), [y])


def test_normalize_rejects_non_tensors():
    with pytest.raises(TypeError, match="normalize"):
        F.normalize([[1.0, 2.0]])


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5)])
@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_then_eval(shape, momentum, affine):
    ref = torch.nn.BatchNorm1d(3, momentum=momentum, affine=affine, dtype=torch.float64)
    ours = nc.nn.BatchNorm1d(3, momentum=momentum, affine=affine, dtype=nc.float64)
    if affine:
        with torch.no_grad():
            ref.weight.normal_()
            ref.bias.normal_()
        _copy_weights(ours, ref)
    rng = np.random.default_rng(3)
    for seed in range(3):  # several batches: running statistics must follow torch's
        x = rng.standard_normal(shape) * 2 + 0.5
        _check_module(ours, ref, [x], seed=seed)
        ours.zero_grad()
        ref.zero_grad()
        for name in ("running_mean", "running_var"):
            np.testing.assert_allclose(_np(getattr(ours, name)), _np(getattr(ref, name)), rtol=1e-12)
        assert int(ours.num_batches_tracked.item()) == int(ref.num_batches_tracked.item())
    ours.eval()
    ref.eval()
    _check_module(ours, ref, [rng.standard_normal(shape)])
    assert int(ours.num_batches_tracked.item()) == 3


def test_batch_norm_without_running_stats_and_bad_inputs():
    ref = torch.nn.BatchNorm1d(2, track_running_stats=False, dtype=torch.float64)
    ours = nc.nn.BatchNorm1d(2, track_running_stats=False, dtype=nc.float64)
    assert list(ours.state_dict()) == list(ref.state_dict())
    ours.eval()
    ref.eval()
    _check_module(ours, ref, [np.random.default_rng(4).standard_normal((5, 2))])
    no_shift = nc.nn.BatchNorm1d(2, bias=False, dtype=nc.float64)
    no_shift_ref = torch.nn.BatchNorm1d(2, bias=False, dtype=torch.float64)
    assert list(no_shift.state_dict()) == list(no_shift_ref.state_dict())
    with torch.no_grad():
        no_shift_ref.weight.normal_()
    _copy_weights(no_shift, no_shift_ref)
    _check_module(no_shift, no_shift_ref, [np.random.default_rng(5).standard_normal((5, 2))])
    bn = nc.nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match=r"expected input of shape \(N, 3\) or \(N, 3, L\), got \(4, 2\)"):
        bn(nc.ones(4, 2))
    with pytest.raises(ValueError, match="more than 1 value per channel when training"):
        bn(nc.ones(1, 3))


ACTIVATIONS = [
    ("ReLU", {}), ("LeakyReLU", {"negative_slope": 0.2}), ("ELU", {"alpha": 0.7}), ("GELU", {}),
    ("GELU", {"approximate": "tanh"}), ("Sigmoid", {}), ("SiLU", {}), ("Tanh", {}), ("Softplus", {"beta": 2.0, "threshold": 1.5}),
    ("Softmax", {"dim": 1}), ("LogSoftmax", {"dim": -1}), ("Identity", {}),
]


@pytest.mark.parametrize("name,kwargs", ACTIVATIONS, ids=[n + str(k) for n, k in ACTIVATIONS])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_activations(name, kwargs, dtype):
    x = (np.random.default_rng(5).standard_normal((4, 6)) * 3).astype(dtype)
    _check_module(getattr(nc.nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs), [x], dtype)


def test_inplace_activations_write_their_input():
    x = nc.tensor([-1.0, 2.0])
    assert nc.nn.ReLU(inplace=True)(x) is x and x.tolist() == [0.0, 2.0]
    y = nc.tensor([-1.0, 2.0])
    nc.nn.LeakyReLU(0.5, inplace=True)(y)
    assert y.tolist() == [-0.5, 2.0]


def _loss_inputs(rng, kind):
    logits = rng.standard_normal((6, 4))
    if kind == "class":
        return [logits, rng.integers(0, 4, size=6)]
    if kind == "logp":
        return [logits - np.log(np.exp(logits).sum(1, keepdims=True)), rng.integers(0, 4, size=6)]
    if kind == "binary":
        return [logits, (rng.random((6, 4)) > 0.5).astype(np.float64)]
    if kind == "ranking":
        return [rng.standard_normal(8), rng.standard_normal(8), np.where(rng.random(8) > 0.5, 1.0, -1.0)]
    return [logits, rng.standard_normal((6, 4))]


LOSSES = [
    ("CrossEntropyLoss", {}, "class"), ("CrossEntropyLoss", {"reduction": "sum", "label_smoothing": 0.1}, "class"),
    ("CrossEntropyLoss", {"ignore_index": 2, "weight": [1.0, 2.0, 0.5, 1.5]}, "class"),
    ("NLLLoss", {}, "logp"), ("NLLLoss", {"reduction": "none", "weight": [0.3, 1.0, 2.0, 1.0]}, "logp"),
    ("MSELoss", {}, "real"), ("MSELoss", {"reduction": "sum"}, "real"), ("L1Loss", {}, "real"),
    ("L1Loss", {"reduction": "none"}, "real"), ("BCEWithLogitsLoss", {}, "binary"),
    ("BCEWithLogitsLoss", {"pos_weight": [1.0, 2.0, 3.0, 0.5], "reduction": "sum"}, "binary"),
    ("MarginRankingLoss", {"margin": 0.3}, "ranking"), ("MarginRankingLoss", {"reduction": "none"}, "ranking"),
]


@pytest.mark.parametrize("name,kwargs,kind", LOSSES, ids=[n + str(k) for n, k, _ in LOSSES])
def test_losses(name, kwargs, kind):
    def build(lib):
        kw = {k: (lib.tensor(v, dtype=lib.float64) if isinstance(v, list) else v) for k, v in kwargs.items()}
        return getattr(lib.nn, name)(**kw)

    inputs = _loss_inputs(np.random.default_rng(6), kind)
    _check_module(build(nc), build(torch), inputs)


def test_loss_reduction_is_validated():
    with pytest.raises(ValueError, match="reduction must be one of \\('none', 'mean', 'sum'\\), got 'avg'"):
        nc.nn.MSELoss(reduction="avg")


def test_deep_model_forward_backward_matches_torch():
    def build(nn, dtype):
        return nn.Sequential(nn.Linear(5, 8, dtype=dtype), nn.LayerNorm(8, dtype=dtype), nn.GELU(),
                             nn.Linear(8, 8, dtype=dtype), nn.BatchNorm1d(8, dtype=dtype), nn.Tanh(),
                             nn.Linear(8, 3, dtype=dtype), nn.LogSoftmax(dim=1))

    ref, ours = build(torch.nn, torch.float64), build(nc.nn, nc.float64)
    _copy_weights(ours, ref)
    _check_module(ours, ref, [np.random.default_rng(7).standard_normal((10, 5))])


# ---------------------------------------------------------------- containers
def test_containers():
    seq = nc.nn.Sequential(nc.nn.Linear(2, 3), nc.nn.ReLU(), nc.nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nc.nn.Linear) and isinstance(seq[1:], nc.nn.Sequential)
    assert [type(m).__name__ for m in seq[1:]] == ["ReLU", "Linear"]
    del seq[1]
    assert [n for n, _ in seq.named_children()] == ["0", "1"]
    seq.append(nc.nn.Sigmoid())
    assert len(seq) == 3
    with pytest.raises(IndexError, match="index 5 is out of range for Sequential of length 3"):
        seq[5]
    ordered = nc.nn.Sequential(OrderedDict([("enc", nc.nn.Linear(2, 2)), ("act", nc.nn.Tanh())]))
    assert [n for n, _ in ordered.named_children()] == ["enc", "act"]

    ml = nc.nn.ModuleList([nc.nn.Linear(2, 2)])
    ml.append(nc.nn.ReLU())
    ml += [nc.nn.Tanh()]
    ml.insert(0, nc.nn.Identity())
    assert [type(m).__name__ for m in ml] == ["Identity", "Linear", "ReLU", "Tanh"]
    assert len(list(ml.parameters())) == 2
    with pytest.raises(TypeError, match="indices must be integers or slices, not str"):
        ml["a"]

    md = nc.nn.ModuleDict([("a", nc.nn.Linear(2, 2))])
    md["b"] = nc.nn.ReLU()
    assert list(md) == ["a", "b"] and [n for n, _ in md.named_parameters()] == ["a.weight", "a.bias"]
    assert isinstance(md.pop("b"), nc.nn.ReLU) and "b" not in md
    with pytest.raises(ValueError, match="element #0 should be a \\(key, module\\) pair"):
        md.update([nc.nn.ReLU()])


def test_parameter_list_matches_torch_layout():
    rng = np.random.default_rng(8)
    values = [rng.standard_normal(3), rng.standard_normal((2, 2))]
    ours = nc.nn.ParameterList([nc.nn.Parameter(nc.tensor(v)) for v in values])
    ref = torch.nn.ParameterList([torch.nn.Parameter(torch.tensor(v)) for v in values])
    ours.append(nc.zeros(4))                      # a plain tensor becomes a Parameter
    ref.append(torch.zeros(4))
    assert list(ours.state_dict()) == list(ref.state_dict()) == ["0", "1", "2"]
    assert isinstance(ours[2], nc.nn.Parameter) and ours[2].requires_grad
    assert ours[-1] is ours[2] and len(ours[1:]) == 2 and len(list(ours)) == 3
    ours[0] = nc.ones(3, dtype=nc.float64)
    np.testing.assert_array_equal(ours[0].detach().numpy(), np.ones(3))
    ours.load_state_dict({k: nc.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    np.testing.assert_array_equal(ours[0].detach().numpy(), values[0])
    assert [p.dtype for p in nc.nn.ParameterList([nc.tensor([1, 2])])] == [nc.int64]  # integers: no grad
    assert not nc.nn.ParameterList([nc.tensor([1, 2])])[0].requires_grad
    with pytest.raises(IndexError, match="out of range for ParameterList of length 3"):
        ours[3]
    with pytest.raises(TypeError, match="ParameterList holds tensors, got list"):
        ours.append([1.0])
    with pytest.raises(TypeError, match="iterable of tensors, got a Tensor"):
        ours.extend(nc.ones(2))


# ---------------------------------------------------------------- init
def test_calculate_gain_matches_torch():
    for nl in ["linear", "conv2d", "sigmoid", "tanh", "relu", "selu"]:
        assert nc.nn.init.calculate_gain(nl) == torch.nn.init.calculate_gain(nl)
    for slope in [None, 0.2, 1]:
        assert nc.nn.init.calculate_gain("leaky_relu", slope) == torch.nn.init.calculate_gain("leaky_relu", slope)
    with pytest.raises(ValueError, match="Unsupported nonlinearity 'swish'"):
        nc.nn.init.calculate_gain("swish")


def _uniform_ok(vals, lo, hi):
    n = vals.size
    assert vals.min() >= lo and vals.max() <= hi
    width = hi - lo
    assert abs(vals.mean() - (lo + hi) / 2) < 5 * width / math.sqrt(12 * n)
    assert abs(vals.std() - width / math.sqrt(12)) < 0.02 * width / math.sqrt(12)
    # Both ends are reached: samples come from the whole interval, not a narrower one.
    assert vals.min() < lo + 0.01 * width and vals.max() > hi - 0.01 * width


def _normal_ok(vals, mean, std):
    n = vals.size
    assert abs(vals.mean() - mean) < 5 * std / math.sqrt(n)
    assert abs(vals.std() - std) < 0.02 * std
    assert abs(np.mean(np.abs(vals - mean) < std) - 0.6827) < 0.01  # the shape is Gaussian


@pytest.mark.parametrize("shape", [(400, 300), (50, 40, 3, 5)])
def test_initializers_follow_torch_formulas(shape):
    fan_in = shape[1] * int(np.prod(shape[2:]))
    fan_out = shape[0] * int(np.prod(shape[2:]))
    t = nc.empty(*shape, dtype=nc.float64)
    init = nc.nn.init
    a = math.sqrt(6 / (fan_in + fan_out))
    _uniform_ok(_np(init.xavier_uniform_(t)), -a, a)
    _uniform_ok(_np(init.xavier_uniform_(t, gain=2.0)), -2 * a, 2 * a)
    _normal_ok(_np(init.xavier_normal_(t, gain=0.5)), 0.0, 0.5 * math.sqrt(2 / (fan_in + fan_out)))
    b = math.sqrt(3) * math.sqrt(2) / math.sqrt(fan_in)
    _uniform_ok(_np(init.kaiming_uniform_(t, nonlinearity="relu")), -b, b)
    b = math.sqrt(3) * torch.nn.init.calculate_gain("leaky_relu", 0.3) / math.sqrt(fan_out)
    _uniform_ok(_np(init.kaiming_uniform_(t, a=0.3, mode="fan_out")), -b, b)
    _normal_ok(_np(init.kaiming_normal_(t, mode="fan_out", nonlinearity="tanh")), 0.0, (5 / 3) / math.sqrt(fan_out))
    _uniform_ok(_np(init.uniform_(t, -2.0, 5.0)), -2.0, 5.0)
    _normal_ok(_np(init.normal_(t, 3.0, 0.5)), 3.0, 0.5)
    assert np.all(_np(init.constant_(t, 0.25)) == 0.25)
    assert np.all(_np(init.zeros_(t)) == 0) and np.all(_np(init.ones_(t)) == 1)


def test_initializers_write_in_place_without_history():
    p = nc.nn.Parameter(nc.zeros(30, 20))
    ptr, version = p.data_ptr(), p._version
    out = nc.nn.init.kaiming_normal_(p)
    assert out is p and p.data_ptr() == ptr and p._version > version
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    assert np.std(_np(p)) > 0
    with pytest.raises(ValueError, match=r"fewer than 2 dimensions \(got shape \(5,\)\)"):
        nc.nn.init.xavier_uniform_(nc.zeros(5))
    with pytest.raises(ValueError, match="Mode 'fan_avg' not supported"):
        nc.nn.init.kaiming_uniform_(p, mode="fan_avg")
    with pytest.raises(TypeError, match="expected a floating point tensor, got dtype int64"):
        nc.nn.init.normal_(nc.zeros(3, dtype=nc.int64))


def test_default_initialization_matches_torch_distributions():
    nc.manual_seed(1)
    lin = nc.nn.Linear(256, 300)
    bound = 1 / math.sqrt(256)
    _uniform_ok(_np(lin.weight).ravel(), -bound, bound)
    _uniform_ok(np.concatenate([_np(nc.nn.Linear(256, 300).bias) for _ in range(20)]), -bound, bound)
    emb = nc.nn.Embedding(500, 200)
    _normal_ok(_np(emb.weight).ravel(), 0.0, 1.0)
    ln = nc.nn.LayerNorm(7)
    assert _np(ln.weight).tolist() == [1.0] * 7 and _np(ln.bias).tolist() == [0.0] * 7


# ---------------------------------------------------------------- gradient clipping
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    rng = np.random.default_rng(8)
    grads = [rng.standard_normal((4, 3)), rng.standard_normal(5), rng.standard_normal((2, 2, 2))]
    ours = [nc.nn.Parameter(nc.zeros(*g.shape, dtype=nc.float64)) for g in grads]
    ref = [torch.nn.Parameter(torch.zeros(*g.shape, dtype=torch.float64)) for g in grads]
    for p, q, g in zip(ours, ref, grads):
        p.grad, q.grad = nc.tensor(g), torch.tensor(g)
    extra = nc.nn.Parameter(nc.zeros(2))  # no grad: ignored
    total = nc.nn.utils.clip_grad_norm_(ours + [extra], max_norm, norm_type)
    total_ref = torch.nn.utils.clip_grad_norm_(ref, max_norm, norm_type)
    assert total.dtype == nc.float64
    np.testing.assert_allclose(total.item(), total_ref.item(), rtol=1e-12)
    for p, q in zip(ours, ref):
        np.testing.assert_allclose(_np(p.grad), q.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_handles_shared_gradients_and_bad_input():
    a, b = nc.nn.Parameter(nc.zeros(3)), nc.nn.Parameter(nc.zeros(3))
    (a + b).sum().backward()  # a and b may receive one shared gradient tensor
    total = nc.nn.utils.clip_grad_norm_([a, b], 1.0)
    np.testing.assert_allclose(total.item(), math.sqrt(6), rtol=1e-6)
    np.testing.assert_allclose(_np(a.grad), np.full(3, 1 / math.sqrt(6)), rtol=1e-5)  # scaled exactly once
    np.testing.assert_allclose(_np(b.grad), np.full(3, 1 / math.sqrt(6)), rtol=1e-5)
    a.grad = nc.tensor([float("nan"), 1.0, 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nc.nn.utils.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)
    with pytest.raises(ValueError, match="norm_type must be a positive number or inf, got -2"):
        nc.nn.utils.clip_grad_norm_([a], 1.0, norm_type=-2)
    with pytest.raises(ValueError, match="max_norm must be a non-negative number, got -1"):
        nc.nn.utils.clip_grad_norm_([a], -1)


def test_clip_grad_value_matches_torch():
    g = np.random.default_rng(9).standard_normal((5, 4)) * 3
    p, q = nc.nn.Parameter(nc.zeros(5, 4, dtype=nc.float64)), torch.nn.Parameter(torch.zeros(5, 4, dtype=torch.float64))
    p.grad, q.grad = nc.tensor(g), torch.tensor(g)
    nc.nn.utils.clip_grad_value_([p], 1.5)
    torch.nn.utils.clip_grad_value_([q], 1.5)
    np.testing.assert_array_equal(_np(p.grad), q.grad.numpy())
    with pytest.raises(ValueError, match="clip_value must be a non-negative number, got -1"):
        nc.nn.utils.clip_grad_value_([p], -1)
