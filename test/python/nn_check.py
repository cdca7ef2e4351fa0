"""The layer-test harness shared by the nn test files: random float64 parameters, then a layer's
forward values and the gradients of every input and parameter against a reference written in
torch float64 (:func:`check`), or its autograd gradients against central finite differences
(:func:`fd_check`)."""

import numpy as np
import torch

import nodeweave.core as nc


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def randomize(module, rng, scale=1.0):
    """float64 and random values for every parameter (biases start at zero otherwise)."""
    module.double()
    with nc.no_grad():
        for p in module.parameters():
            p.copy_(nc.tensor(rng.uniform(-scale, scale, tuple(p.shape))))
    return module


def check(module, run, ref, inputs, rng, rtol=1e-9, atol=1e-11):
    """Forward values and gradients (inputs and parameters) of ``run`` against ``ref``.

    ``inputs`` maps names to float64 arrays; both sides get them as leaves requiring grad.
    ``run(module, **nodeweave_inputs)``; ``ref(params, **torch_inputs)``, params being torch
    copies of ``module.named_parameters()``.
    """
    module.zero_grad()
    nw_in = {k: nc.tensor(np.ascontiguousarray(v), requires_grad=True) for k, v in inputs.items()}
    th_in = {k: torch.tensor(v, requires_grad=True) for k, v in inputs.items()}
    params = {k: p for k, p in module.named_parameters() if p.requires_grad}
    th_params = {k: torch.tensor(p.detach().numpy(), requires_grad=True) for k, p in params.items()}
    got, want = _tuple(run(module, **nw_in)), _tuple(ref(th_params, **th_in))
    assert len(got) == len(want)
    for o, w in zip(got, want):
        assert tuple(o.shape) == tuple(w.shape)
        np.testing.assert_allclose(o.detach().numpy(), w.detach().numpy(), rtol=rtol, atol=atol)
    upstream = [rng.standard_normal(tuple(w.shape)) for w in want]
    sum((o * nc.tensor(r)).sum() for o, r in zip(got, upstream)).backward()
    sum((w * torch.tensor(r)).sum() for w, r in zip(want, upstream)).backward()

    def same_grad(g_nw, g_th, shape, what):
        a = np.zeros(shape) if g_nw is None else g_nw.numpy()
        b = np.zeros(shape) if g_th is None else g_th.numpy()
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10, err_msg=f"gradient of {what}")

    for k in inputs:
        same_grad(nw_in[k].grad, th_in[k].grad, inputs[k].shape, k)
    for k, p in params.items():
        same_grad(p.grad, th_params[k].grad, tuple(p.shape), k)
    return got


def fd_check(module, run, inputs, rng, eps=1e-6, per_tensor=12):
    """Autograd gradients of sum(out * R) against central differences, for up to
    ``per_tensor`` random elements of every input and parameter."""
    module.zero_grad()
    nw_in = {k: nc.tensor(np.ascontiguousarray(v), requires_grad=True) for k, v in inputs.items()}
    outs = _tuple(run(module, **nw_in))
    upstream = [nc.tensor(rng.standard_normal(tuple(o.shape))) for o in outs]

    def loss():
        with nc.no_grad():
            return sum(float((o * r).sum().item())
                       for o, r in zip(_tuple(run(module, **nw_in)), upstream))

    sum((o * r).sum() for o, r in zip(outs, upstream)).backward()
    # A frozen parameter (requires_grad=False, e.g. AtomicConv's atom types) has no gradient to check.
    tensors = list(nw_in.items()) + [(k, p) for k, p in module.named_parameters() if p.requires_grad]
    assert tensors
    for name, t in tensors:
        grad = np.zeros(tuple(t.shape)) if t.grad is None else t.grad.numpy().copy()
        base = t.detach().numpy().copy()
        flat = rng.permutation(base.size)[:per_tensor]
        for f in flat:
            idx = np.unravel_index(f, base.shape)
            vals = []
            for sign in (1, -1):
                pert = base.copy()
                pert[idx] += sign * eps
                with nc.no_grad():
                    t.copy_(nc.tensor(pert))
                vals.append(loss())
            with nc.no_grad():
                t.copy_(nc.tensor(base))
            numeric = (vals[0] - vals[1]) / (2 * eps)
            assert abs(numeric - grad[idx]) <= 1e-5 * max(1.0, abs(numeric)), \
                f"d/d {name}{idx}: finite difference {numeric}, autograd {grad[idx]}"
