"""nodeweave.core.optim against torch.optim: the same model, initial weights and data must follow the
same parameter trajectory step by step, for every optimizer and option; schedules must produce
torch's learning-rate sequences; row-sparse paths must equal the dense updates."""


import numpy as np
import pytest
import torch

import nodeweave.core as nc
from nodeweave import _C

DTYPES = {"float64": (np.float64, torch.float64, 1e-10, 1e-12), "float32": (np.float32, torch.float32, 2e-5, 2e-6)}


def _problem(np_dtype, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "w1": rng.standard_normal((5, 4)).astype(np_dtype),
        "b1": rng.standard_normal(5).astype(np_dtype),
        "w2": rng.standard_normal((3, 5)).astype(np_dtype),
        "x": rng.standard_normal((7, 4)).astype(np_dtype),
        "y": rng.standard_normal((7, 3)).astype(np_dtype),
    }


def _nc_trajectory(opt_cls, kwargs, dtype, steps=6, groups=None):
    data = _problem(DTYPES[dtype][0])
    params = {k: nc.nn.Parameter(nc.tensor(data[k])) for k in ("w1", "b1", "w2")}
    x, y = nc.tensor(data["x"]), nc.tensor(data["y"])
    opt = opt_cls(groups(params) if groups else list(params.values()), **kwargs)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        h = (x @ params["w1"].t() + params["b1"]).tanh()
        loss = ((h @ params["w2"].t() - y) ** 2).mean()
        loss.backward()
        opt.step()
        out.append({k: p.detach().numpy().copy() for k, p in params.items()})
    return out, opt, params


def _torch_trajectory(opt_cls, kwargs, dtype, steps=6, groups=None):
    data = _problem(DTYPES[dtype][0])
    params = {k: torch.nn.Parameter(torch.tensor(data[k])) for k in ("w1", "b1", "w2")}
    x, y = torch.tensor(data["x"]), torch.tensor(data["y"])
    opt = opt_cls(groups(params) if groups else list(params.values()), **kwargs)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        h = torch.tanh(x @ params["w1"].t() + params["b1"])
        loss = ((h @ params["w2"].t() - y) ** 2).mean()
        loss.backward()
        opt.step()
        out.append({k: p.detach().numpy().copy() for k, p in params.items()})
    return out


def _assert_same(ours, ref, dtype):
    _, _, rtol, atol = DTYPES[dtype]
    assert len(ours) == len(ref)
    for step, (a, b) in enumerate(zip(ours, ref)):
        for k in a:
            np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=atol, err_msg=f"step {step + 1}, {k}")


CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, weight_decay=0.01, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.05, betas=(0.5, 0.9), eps=1e-3, maximize=True)),
    ("Adam", dict(lr=0.05, betas=(0.3, 0.6))),  # 1 - beta1 >= 0.5: the other branch of lerp
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, eps=1e-3, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.5, eps=1e-4)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, alpha=0.3, centered=True)),  # 1 - alpha >= 0.5 in the grad_avg lerp
    ("RMSprop", dict(lr=0.01, maximize=True)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{sorted(k.items())}" for n, k in CASES])
def test_trajectory_matches_torch(name, kwargs, dtype):
    ours, _, _ = _nc_trajectory(getattr(nc.optim, name), kwargs, dtype)
    ref = _torch_trajectory(getattr(torch.optim, name), kwargs, dtype)
    _assert_same(ours, ref, dtype)


@pytest.mark.parametrize("name", ["SGD", "Adam", "Adagrad", "RMSprop"])
def test_param_groups_with_their_own_options(name):
    def groups(p):
        return [{"params": [p["w1"], p["b1"]]}, {"params": [p["w2"]], "lr": 0.003, "weight_decay": 0.2}]

    kw = dict(lr=0.02, momentum=0.9) if name == "SGD" else dict(lr=0.02)
    ours, opt, _ = _nc_trajectory(getattr(nc.optim, name), kw, "float64", groups=groups)
    ref = _torch_trajectory(getattr(torch.optim, name), kw, "float64", groups=groups)
    _assert_same(ours, ref, "float64")
    assert [g["lr"] for g in opt.param_groups] == [0.02, 0.003]


def test_add_param_group_later_matches_torch():
    data = _problem(np.float64)

    def run(lib, Param, tensor):
        a, b = Param(tensor(data["w1"])), Param(tensor(data["w2"]))
        opt = lib.optim.Adam([a], lr=0.1)
        for step in range(4):
            if step == 2:
                opt.add_param_group({"params": [b], "lr": 0.05})
            opt.zero_grad()
            ((a * a).sum() + (b * b * b).sum()).backward()
            opt.step()
        return a.detach().numpy(), b.detach().numpy()

    ours = run(nc, nc.nn.Parameter, nc.tensor)
    ref = run(torch, torch.nn.Parameter, torch.tensor)
    for x, y in zip(ours, ref):
        np.testing.assert_allclose(x, y, rtol=1e-12)


def test_parameters_without_grad_are_skipped_and_get_no_state():
    a, b = nc.nn.Parameter(nc.ones(2)), nc.nn.Parameter(nc.ones(2))
    opt = nc.optim.Adam([a, b], lr=0.1)
    (a * 2.0).sum().backward()
    opt.step()
    assert b.tolist() == [1.0, 1.0] and len(opt.state[b]) == 0
    assert opt.state[a]["step"] == 1 and a.tolist() != [1.0, 1.0]


def test_step_writes_in_place_bumps_versions_and_records_no_history():
    w = nc.nn.Parameter(nc.ones(3))
    opt = nc.optim.SGD([w], lr=0.1, momentum=0.9)
    ptr, version = w.data_ptr(), w._version
    (w * w).sum().backward()
    opt.step()
    assert w.data_ptr() == ptr and w._version == version + 1
    assert w.is_leaf and w.grad_fn is None
    buf = opt.state[w]["momentum_buffer"]
    assert not buf.requires_grad
    np.testing.assert_allclose(buf.numpy(), [2.0, 2.0, 2.0])


def test_closure_is_evaluated_with_grad_enabled():
    w = nc.nn.Parameter(nc.tensor([3.0]))
    opt = nc.optim.SGD([w], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with nc.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0 and w.item() == 0.0


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    a = nc.nn.Parameter(nc.ones(2))
    b = nc.nn.Parameter(nc.ones(2))
    opt = nc.optim.SGD([a, b], lr=0.1)
    (a + b).sum().backward()  # the engine may hand a and b one shared gradient tensor
    other = b.grad
    opt.zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert a.grad is None and b.grad is None
    else:
        assert a.grad.tolist() == [0.0, 0.0] and b.grad.tolist() == [0.0, 0.0]
    assert other.tolist() == [1.0, 1.0]  # a gradient someone still holds is not overwritten


# ---------------------------------------------------------------- state_dict
@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.05, amsgrad=True)),
                                         ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
                                         ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True))])
def test_state_dict_resume_equals_uninterrupted_run(name, kwargs, tmp_path):
    full, _, _ = _nc_trajectory(getattr(nc.optim, name), kwargs, "float64", steps=6)

    data = _problem(np.float64)
    params = {k: nc.nn.Parameter(nc.tensor(data[k])) for k in ("w1", "b1", "w2")}
    x, y = nc.tensor(data["x"]), nc.tensor(data["y"])

    def train(opt, n):
        for _ in range(n):
            opt.zero_grad()
            h = (x @ params["w1"].t() + params["b1"]).tanh()
            ((h @ params["w2"].t() - y) ** 2).mean().backward()
            opt.step()

    opt = getattr(nc.optim, name)(list(params.values()), **kwargs)
    train(opt, 3)
    nc.save(opt.state_dict(), tmp_path / "opt.nw")
    # A fresh optimizer with other hyperparameters takes the saved ones and the saved state.
    resumed = getattr(nc.optim, name)(list(params.values()), lr=123.0)
    resumed.load_state_dict(nc.load(tmp_path / "opt.nw"))
    assert resumed.param_groups[0]["lr"] == kwargs["lr"]
    train(resumed, 3)
    for k, p in params.items():
        np.testing.assert_allclose(p.detach().numpy(), full[-1][k], rtol=1e-13)


def test_state_dict_layout_matches_torch():
    data = _problem(np.float64)
    ours = [nc.nn.Parameter(nc.tensor(data[k])) for k in ("w1", "b1")]
    ref = [torch.nn.Parameter(torch.tensor(data[k])) for k in ("w1", "b1")]
    o1 = nc.optim.Adam([{"params": [ours[0]]}, {"params": [ours[1]], "lr": 0.5}], lr=0.1)
    o2 = torch.optim.Adam([{"params": [ref[0]]}, {"params": [ref[1]], "lr": 0.5}], lr=0.1)
    for o, ps, lib in ((o1, ours, nc), (o2, ref, torch)):
        (ps[0].sum() + ps[1].sum()).backward()
        o.step()
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert [g["params"] for g in s1["param_groups"]] == [g["params"] for g in s2["param_groups"]]
    assert sorted(s1["state"]) == sorted(s2["state"])
    for k in s2["state"]:
        assert set(s1["state"][k]) == set(s2["state"][k])
        assert s1["state"][k]["step"] == int(s2["state"][k]["step"])
        np.testing.assert_allclose(s1["state"][k]["exp_avg_sq"].numpy(), s2["state"][k]["exp_avg_sq"].numpy())


def test_load_state_dict_rejects_mismatches():
    a, b = nc.nn.Parameter(nc.ones(2)), nc.nn.Parameter(nc.ones(3))
    opt = nc.optim.Adam([a, b], lr=0.1)
    (a.sum() + b.sum()).backward()
    opt.step()
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="has 1 parameter groups, but the optimizer has 2"):
        nc.optim.Adam([{"params": [a]}, {"params": [b]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="has 2 parameters"):
        nc.optim.Adam([a]).load_state_dict(sd)
    with pytest.raises(ValueError, match="missing the 'state' entry"):
        nc.optim.Adam([a, b]).load_state_dict({"param_groups": sd["param_groups"]})
    swapped = nc.optim.Adam([b, a])  # same count, but the shapes of the saved state don't fit
    with pytest.raises(ValueError, match=r"\['exp_avg'\] has shape \(2,\), but the parameter has shape \(3,\)"):
        swapped.load_state_dict(sd)
    bad = {"state": {7: {}}, "param_groups": sd["param_groups"]}
    with pytest.raises(ValueError, match="parameter 7"):
        nc.optim.Adam([a, b]).load_state_dict(bad)


def test_loaded_state_is_cast_to_the_parameter_dtype():
    a = nc.nn.Parameter(nc.ones(2, dtype=nc.float64))
    opt = nc.optim.Adam([a], lr=0.1)
    a.sum().backward()
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["exp_avg"] = sd["state"][0]["exp_avg"].float()
    fresh = nc.optim.Adam([a], lr=0.1)
    fresh.load_state_dict(sd)
    assert fresh.state[a]["exp_avg"].dtype == nc.float64
    # Copied, not shared: stepping the new optimizer leaves the dict it was loaded from alone.
    before = sd["state"][0]["exp_avg_sq"].numpy().copy()
    a.sum().backward()
    fresh.step()
    np.testing.assert_array_equal(sd["state"][0]["exp_avg_sq"].numpy(), before)


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize("make,match", [
    (lambda p: nc.optim.SGD(p, lr=-0.1), "learning rate value: -0.1"),
    (lambda p: nc.optim.SGD(p, lr=0.1, momentum=-1), "momentum value: -1"),
    (lambda p: nc.optim.SGD(p, lr=0.1, nesterov=True), "Nesterov momentum requires"),
    (lambda p: nc.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "dampening=0.1"),
    (lambda p: nc.optim.Adam(p, lr=float("nan")), "learning rate value: nan"),
    (lambda p: nc.optim.Adam(p, betas=(1.0, 0.9)), "beta parameter at index 0 value: 1.0"),
    (lambda p: nc.optim.Adam(p, betas=(0.9, -0.1)), "beta parameter at index 1 value: -0.1"),
    (lambda p: nc.optim.AdamW(p, eps=-1e-8), "epsilon value: -1e-08"),
    (lambda p: nc.optim.Adagrad(p, lr_decay=-0.5), "lr_decay value: -0.5"),
    (lambda p: nc.optim.Adagrad(p, initial_accumulator_value=-1.0), "initial_accumulator_value value: -1.0"),
    (lambda p: nc.optim.RMSprop(p, alpha=-0.2), "alpha value: -0.2"),
    (lambda p: nc.optim.RMSprop(p, weight_decay=-0.2), "weight_decay value: -0.2"),
    (lambda p: nc.optim.SparseAdam(p, betas=(0.9, 1.5)), "index 1 value: 1.5"),
    (lambda p: nc.optim.SGD([], lr=0.1), "empty parameter list"),
    (lambda p: nc.optim.SGD(p + p, lr=0.1), "appears twice"),
    (lambda p: nc.optim.SGD([{"params": p}, {"params": p}], lr=0.1), "more than one parameter group"),
])
def test_bad_options_raise_value_error(make, match):
    with pytest.raises(ValueError, match=match):
        make([nc.nn.Parameter(nc.ones(2))])


def test_bad_params_raise():
    with pytest.raises(TypeError, match="wrap it in a list"):
        nc.optim.SGD(nc.nn.Parameter(nc.ones(2)), lr=0.1)
    with pytest.raises(TypeError, match=r"\[0\] has dtype int64"):
        nc.optim.SGD([nc.ones(2, dtype=nc.int64)], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        nc.optim.SGD([nc.nn.Parameter(nc.ones(2)) * 2.0], lr=0.1)
    with pytest.raises(TypeError, match=r"\[1\] must be a Tensor, got str"):
        nc.optim.SGD([nc.nn.Parameter(nc.ones(2)), "w"], lr=0.1)
    with pytest.raises(TypeError, match="not a set"):
        nc.optim.SGD([{"params": {nc.nn.Parameter(nc.ones(2))}}], lr=0.1)


def test_hyperparameter_changed_after_construction_is_checked_at_step():
    w = nc.nn.Parameter(nc.ones(2))
    opt = nc.optim.Adam([w])
    opt.param_groups[0]["lr"] = -1.0
    w.sum().backward()
    with pytest.raises(ValueError, match="lr must be a finite non-negative number, got -1"):
        opt.step()
    assert w.tolist() == [1.0, 1.0]


def _numbers(*values, dtype=nc.float64):
    return nc.tensor(list(values), dtype=dtype)


def test_fused_kernels_validate_their_lists():
    p = nc.ones(2, 3)
    adam_hyper = _numbers(0.1, 0.9, 0.999, 1e-8, 0.0)
    sgd_hyper = _numbers(0.1, 0.0, 0.0, 0.0)
    one_step = _numbers(1, dtype=nc.int64)
    with pytest.raises(ValueError, match=r"grads\[0\] has shape \[3, 2\] but params\[0\] has shape \[2, 3\]"):
        _C._adam_update([p], [nc.zeros(2, 3)], [nc.zeros(2, 3)], [], [nc.ones(3, 2)], adam_hyper, one_step,
                        False, False, False)
    with pytest.raises(TypeError, match=r"grads\[0\] has dtype float64 but params\[0\] has dtype float32"):
        _C._sgd_update([p], [], [nc.ones(2, 3, dtype=nc.float64)], sgd_hyper, _numbers(0, dtype=nc.int64),
                       False, False)
    with pytest.raises(ValueError, match="exp_avgs has 0 tensors, expected 1"):
        _C._adam_update([p], [], [nc.zeros(2, 3)], [], [p], adam_hyper, one_step, False, False, False)
    with pytest.raises(TypeError, match=r"params\[0\] has dtype int64"):
        _C._adagrad_update([nc.ones(2, dtype=nc.int64)], [nc.ones(2, dtype=nc.int64)],
                           [nc.ones(2, dtype=nc.int64)], _numbers(0.1, 0.0, 0.0, 1e-10), one_step, False)
    with pytest.raises(ValueError, match=r"params\[0\] of shape \[3, 2\] is not contiguous"):
        _C._sgd_update([p.t()], [], [p.t()], sgd_hyper, _numbers(0, dtype=nc.int64), False, False)
    with pytest.raises(ValueError, match=r"steps\[0\] must be >= 1"):
        _C._adam_update([p], [nc.zeros(2, 3)], [nc.zeros(2, 3)], [], [p], adam_hyper,
                        _numbers(0, dtype=nc.int64), False, False, False)
    with pytest.raises(ValueError, match="shares memory"):
        _C._rmsprop_update([p], [p], [], [], [p], _numbers(0.1, 0.9, 1e-8, 0.0, 0.0), False)
    # The numbers: a float64 vector of the op's length, and one count per parameter.
    with pytest.raises(ValueError, match=r"adam_update: hyper must be a CPU float64 vector of 5, got float32\[5\]"):
        _C._adam_update([p], [nc.zeros(2, 3)], [nc.zeros(2, 3)], [], [p], adam_hyper.float(), one_step,
                        False, False, False)
    with pytest.raises(ValueError, match=r"adam_update: counts must be a CPU int64 vector of 1, got int64\[2\]"):
        _C._adam_update([p], [nc.zeros(2, 3)], [nc.zeros(2, 3)], [], [p], adam_hyper,
                        _numbers(1, 1, dtype=nc.int64), False, False, False)
    with pytest.raises(ValueError, match="sgd_update: momentum buffers are given exactly when the momentum is not 0"):
        _C._sgd_update([p], [], [p], _numbers(0.1, 0.9, 0.0, 0.0), _numbers(0, dtype=nc.int64), False, False)
    with pytest.raises(ValueError, match="total_norm: norm_type must be positive"):
        _C._total_norm([p], -1.0)


def test_noncontiguous_gradient_is_read_correctly():
    w = nc.nn.Parameter(nc.zeros(2, 3))
    g = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    w.grad = nc.tensor(g).t()  # a transposed, non-contiguous gradient
    nc.optim.SGD([w], lr=1.0).step()
    np.testing.assert_array_equal(w.detach().numpy(), -g.T)


def test_large_tensors_use_the_parallel_path_and_match_torch():
    rng = np.random.default_rng(3)
    p0, g = rng.standard_normal(300_001), rng.standard_normal(300_001)  # > the parallel grain
    ours, ref = nc.nn.Parameter(nc.tensor(p0)), torch.nn.Parameter(torch.tensor(p0))
    o1, o2 = nc.optim.Adam([ours], lr=0.01, amsgrad=True), torch.optim.Adam([ref], lr=0.01, amsgrad=True)
    for k in range(3):
        ours.grad, ref.grad = nc.tensor(g * (k + 1)), torch.tensor(g * (k + 1))
        o1.step()
        o2.step()
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- schedulers
SCHEDULES = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=7)),
    ("CosineAnnealingLR", dict(T_max=5, eta_min=0.01)),
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e / (1 + e))),
]


@pytest.mark.parametrize("name,kwargs", SCHEDULES, ids=[n + str(i) for i, (n, _) in enumerate(SCHEDULES)])
def test_lr_sequence_matches_torch(name, kwargs):
    def run(lib, Param):
        p = Param(lib.zeros(1))
        opt = lib.optim.SGD([{"params": [p]}, {"params": [Param(lib.zeros(1))], "lr": 0.3}], lr=0.1)
        sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
        seq = [sched.get_last_lr()]
        for _ in range(25):
            opt.step()
            sched.step()
            seq.append(sched.get_last_lr())
            assert seq[-1] == [g["lr"] for g in opt.param_groups]
        return seq

    ours, ref = run(nc, nc.nn.Parameter), run(torch, torch.nn.Parameter)
    np.testing.assert_allclose(np.array(ours), np.array(ref), rtol=1e-14, atol=1e-16)


def test_scheduler_state_dict_resumes_the_sequence():
    def make():
        p = nc.nn.Parameter(nc.zeros(1))
        opt = nc.optim.SGD([p], lr=1.0)
        return opt, nc.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6)

    opt, sched = make()
    for _ in range(4):
        opt.step()
        sched.step()
    saved_sched, saved_opt = sched.state_dict(), opt.state_dict()
    expected = []
    for _ in range(5):
        opt.step()
        sched.step()
        expected.append(sched.get_last_lr()[0])
    opt2, sched2 = make()
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    got = []
    for _ in range(5):
        opt2.step()
        sched2.step()
        got.append(sched2.get_last_lr()[0])
    assert got == expected


def test_scheduler_argument_checks():
    opt = nc.optim.SGD([nc.nn.Parameter(nc.zeros(1))], lr=1.0)
    with pytest.raises(ValueError, match="step_size must be a positive int, got 0"):
        nc.optim.lr_scheduler.StepLR(opt, step_size=0)
    with pytest.raises(ValueError, match="T_max must be a positive int, got -3"):
        nc.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=-3)
    with pytest.raises(TypeError, match="Optimizer"):
        nc.optim.lr_scheduler.StepLR(object(), step_size=2)
    with pytest.raises(ValueError, match="initial_lr"):
        nc.optim.lr_scheduler.StepLR(opt, step_size=2, last_epoch=4)
    with pytest.raises(ValueError, match="expected 1 lr_lambdas"):
        nc.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0, lambda e: 2.0])


# ---------------------------------------------------------------- row-sparse paths
def _emb_run(lib, opt_name, kwargs, sparse, weight, batches, padding_idx=None, clip=None):
    emb = lib.nn.Embedding(weight.shape[0], weight.shape[1], padding_idx=padding_idx, sparse=sparse,
                           dtype=lib.float64)
    with lib.no_grad():
        emb.weight.copy_(lib.tensor(weight))
    opt = getattr(lib.optim, opt_name)(emb.parameters(), **kwargs)
    for idx, target in batches:
        opt.zero_grad()
        out = emb(lib.tensor(idx))
        ((out - lib.tensor(target)) ** 2).sum().backward()
        opt.step()
    return emb.weight.detach().numpy().copy()


def _emb_data(rows=20, dim=3, steps=4, seed=1):
    rng = np.random.default_rng(seed)
    weight = rng.standard_normal((rows, dim))
    batches = []
    for _ in range(steps):
        idx = rng.integers(0, rows // 2, size=(3, 4))  # repeats, and rows >= rows/2 never touched
        batches.append((idx, rng.standard_normal((3, 4, dim))))
    return weight, batches


@pytest.mark.parametrize("opt_name,kwargs", [("SGD", dict(lr=0.1)), ("Adagrad", dict(lr=0.3)),
                                             ("Adagrad", dict(lr=0.3, lr_decay=0.2, initial_accumulator_value=0.1)),
                                             ("SGD", dict(lr=0.1, maximize=True))])
def test_sparse_path_equals_dense_and_torch(opt_name, kwargs, monkeypatch):
    weight, batches = _emb_data()
    calls = []
    fn_name = "_sgd_sparse_step" if opt_name == "SGD" else "_adagrad_sparse_step"
    real = getattr(_C, fn_name)
    monkeypatch.setattr(_C, fn_name, lambda *a: (calls.append(1), real(*a))[1])
    sparse = _emb_run(nc, opt_name, kwargs, True, weight, batches)
    assert len(calls) == len(batches)  # the row-sparse kernel did the updates
    dense = _emb_run(nc, opt_name, kwargs, False, weight, batches)
    ref = _emb_run(torch, opt_name, kwargs, True, weight, batches)
    np.testing.assert_allclose(sparse, dense, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(sparse, ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(sparse[10:], weight[10:])  # untouched rows are bit-identical


def test_sparse_adam_matches_torch_and_leaves_untouched_rows():
    weight, batches = _emb_data(steps=5)
    ours = _emb_run(nc, "SparseAdam", dict(lr=0.05, betas=(0.8, 0.95)), True, weight, batches)
    ref = _emb_run(torch, "SparseAdam", dict(lr=0.05, betas=(0.8, 0.95)), True, weight, batches)
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(ours[10:], weight[10:])


def test_sparse_path_with_padding_idx_matches_torch():
    weight, batches = _emb_data()
    batches = [(np.where(idx == 3, 0, idx), t) for idx, t in batches]
    batches[0][0][0, 0] = 0
    for name, kw in (("SGD", dict(lr=0.1)), ("Adagrad", dict(lr=0.2)), ("SparseAdam", dict(lr=0.05))):
        ours = _emb_run(nc, name, kw, True, weight, batches, padding_idx=0)
        ref = _emb_run(torch, name, kw, True, weight, batches, padding_idx=0)
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-14, err_msg=name)
        np.testing.assert_array_equal(ours[0], weight[0])  # the padding row never moves


def test_sparse_records_accumulate_over_lookups_and_backward_calls():
    weight, _ = _emb_data()
    rng = np.random.default_rng(5)
    i1, i2, i3 = (rng.integers(0, 20, size=6) for _ in range(3))

    def run(lib, sparse):
        emb = lib.nn.Embedding(20, 3, sparse=sparse, dtype=lib.float64)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(weight))
        opt = lib.optim.Adagrad(emb.parameters(), lr=0.5)
        # two lookups in one backward, then a second backward without zero_grad
        (emb(lib.tensor(i1)).sum() + (emb(lib.tensor(i2)) ** 2).sum()).backward()
        (emb(lib.tensor(i3)) ** 3).sum().backward()
        opt.step()
        opt.zero_grad()
        (emb(lib.tensor(i2)) * 2.0).sum().backward()
        opt.step()
        return emb.weight.detach().numpy()

    ours = run(nc, True)
    np.testing.assert_allclose(ours, run(nc, False), rtol=1e-13)
    np.testing.assert_allclose(ours, run(torch, True), rtol=1e-12)


def test_dense_use_of_a_sparse_weight_falls_back_to_the_dense_gradient(monkeypatch):
    emb = nc.nn.Embedding(6, 2, sparse=True)
    opt = nc.optim.SGD(emb.parameters(), lr=0.1)
    calls = []
    monkeypatch.setattr(_C, "_sgd_sparse_step", lambda *a: calls.append(1))
    before = emb.weight.detach().numpy().copy()
    emb(nc.tensor([1])).sum().backward()
    opt.zero_grad()
    (emb.weight * emb.weight).sum().backward()  # dense use only: no lookup in this pass
    opt.step()
    assert calls == []
    np.testing.assert_allclose(emb.weight.detach().numpy(), before - 0.1 * 2 * before, rtol=1e-6)


def test_manual_grad_reset_drops_stale_records():
    emb = nc.nn.Embedding(6, 2, sparse=True)
    opt = nc.optim.SGD(emb.parameters(), lr=1.0)
    emb(nc.tensor([1])).sum().backward()
    emb.weight.grad = None  # reset without zero_grad
    emb(nc.tensor([4])).sum().backward()
    before = emb.weight.detach().numpy().copy()
    opt.step()
    after = emb.weight.detach().numpy()
    np.testing.assert_allclose(after[4], before[4] - 1.0)
    np.testing.assert_array_equal(after[1], before[1])


def test_empty_parameters_and_all_padding_lookups_match_torch():
    def run(lib):
        lin = lib.nn.Linear(0, 3, dtype=lib.float64)  # a weight with no elements
        emb = lib.nn.Embedding(4, 2, padding_idx=0, sparse=True, dtype=lib.float64)
        with lib.no_grad():
            lin.bias.copy_(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
            emb.weight.copy_(lib.tensor(np.arange(8.0).reshape(4, 2)))
        opt = lib.optim.Adagrad(list(lin.parameters()) + list(emb.parameters()), lr=0.5)
        for idx in ([[0, 0]], [[0, 2]]):  # the first batch looks up nothing but padding
            opt.zero_grad()
            ((lin(lib.zeros(2, 0, dtype=lib.float64)) ** 2).sum() + (emb(lib.tensor(idx)) ** 2).sum()).backward()
            opt.step()
        return lin.bias.detach().numpy(), emb.weight.detach().numpy()

    for a, b in zip(run(nc), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("clip", ["norm", "value"])
def test_gradient_clipping_keeps_the_sparse_path_exact(clip, monkeypatch):
    weight, batches = _emb_data(steps=3)
    calls = []
    real = _C._adagrad_sparse_step
    monkeypatch.setattr(_C, "_adagrad_sparse_step", lambda *a: (calls.append(1), real(*a))[1])

    def run(sparse):
        emb = nc.nn.Embedding(20, 3, sparse=sparse, dtype=nc.float64)
        emb.load_state_dict({"weight": nc.tensor(weight)})
        opt = nc.optim.Adagrad(emb.parameters(), lr=0.3)
        for idx, target in batches:
            opt.zero_grad()
            ((emb(nc.tensor(idx)) - nc.tensor(target)) ** 2).sum().backward()
            if clip == "norm":
                nc.nn.utils.clip_grad_norm_(emb.parameters(), 0.5)
            else:
                nc.nn.utils.clip_grad_value_(emb.parameters(), 0.3)  # clamps rows summed over repeats
            opt.step()
        return emb.weight.detach().numpy()

    sparse = run(True)
    assert len(calls) == len(batches)
    np.testing.assert_allclose(sparse, run(False), rtol=1e-13, atol=1e-15)


def test_sparse_adam_rejects_dense_gradients():
    w = nc.nn.Parameter(nc.ones(3, 2))
    opt = nc.optim.SparseAdam([w])
    w.sum().backward()
    with pytest.raises(ValueError, match="parameter 0 of shape \\(3, 2\\) has a dense gradient"):
        opt.step()


def test_coalesce_rows():
    vals1 = nc.tensor(np.arange(12.0).reshape(2, 2, 3))
    vals2 = nc.tensor(np.ones((3, 3)))
    ids, rows = _C._coalesce_rows([nc.tensor([[4, 1], [4, 0]]), nc.tensor([1, 7, 0])], [vals1, vals2], [9, 3], [-1, 0])
    # lookup 1: rows 4, 1, 4, 0; lookup 2: rows 1, 7 and a padding 0 that is dropped
    assert ids.tolist() == [0, 1, 4, 7]
    np.testing.assert_array_equal(rows.numpy(), [[9, 10, 11], [3 + 1, 4 + 1, 5 + 1], [0 + 6, 1 + 7, 2 + 8], [1, 1, 1]])
    with pytest.raises(IndexError, match=r"indices\[0\] holds row 9, out of range for a parameter with 9 rows"):
        _C._coalesce_rows([nc.tensor([9])], [nc.ones(1, 3)], [9, 3], [-1])
    with pytest.raises(ValueError, match=r"values\[0\] has shape \[2, 3\], expected \[1, 3\]"):
        _C._coalesce_rows([nc.tensor([1])], [nc.ones(2, 3)], [9, 3], [-1])
    with pytest.raises(ValueError, match="strictly increasing"):
        _C._sgd_sparse_step(nc.ones(4, 2), nc.tensor([2, 2]), nc.ones(2, 2), 0.1, False)
