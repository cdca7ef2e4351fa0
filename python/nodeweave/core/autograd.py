"""Autograd entry points: ``backward``, ``grad``, grad-mode context managers and ``gradcheck``.

>>> import nodeweave.core as nc
>>> x = nc.tensor([1.0, 2.0], dtype=nc.float64, requires_grad=True)
>>> (g,) = nc.autograd.grad((x ** 3).sum(), x, create_graph=True)
>>> (gg,) = nc.autograd.grad(g.sum(), x)
>>> gg.tolist()
[6.0, 12.0]
"""

from __future__ import annotations

import contextlib
import functools
from typing import Callable, Sequence

import numpy as np

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave import errors as nwerr


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False) -> None:
    """Accumulates gradients of ``tensors`` into the ``.grad`` of the leaves."""
    if retain_graph is None:
        retain_graph = create_graph
    _C._backward(tensors, grad_tensors, retain_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """Returns the gradients of ``outputs`` with respect to ``inputs`` as a tuple."""
    if retain_graph is None:
        retain_graph = create_graph
    return _C._grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused)


class _GradMode(contextlib.ContextDecorator):
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.prev = True

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C.set_grad_enabled(self.enabled)
        return self

    def __exit__(self, *exc) -> None:
        _C.set_grad_enabled(self.prev)

    def __call__(self, fn: Callable):  # usable as @no_grad() and @no_grad
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)(self.enabled) if type(self) is _GradMode else type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Context manager / decorator that disables gradient recording."""

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(_GradMode):
    """Context manager / decorator that enables gradient recording."""

    def __init__(self) -> None:
        super().__init__(True)


class set_grad_enabled(_GradMode):
    """``with set_grad_enabled(False): ...`` or a plain call to set the mode."""

    def __init__(self, mode: bool) -> None:
        super().__init__(mode)
        self.prev = _C.is_grad_enabled()
        _C.set_grad_enabled(mode)

    def __enter__(self):
        return self

    def __call__(self, fn):
        mode = self.enabled
        _C.set_grad_enabled(self.prev)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


def gradcheck(fn: Callable[..., Tensor], inputs: Sequence[Tensor], eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """Compares analytic gradients with central finite differences (use float64 inputs).

    Every output element is checked against every input element that requires grad.
    """
    inputs = tuple(inputs)
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    for i in diff:
        if inputs[i].dtype.name != "float64":
            raise nwerr.TypeError(f"gradcheck: input {i} is {inputs[i].dtype.name}; use float64 for finite differences")

    def run(args) -> np.ndarray:
        # Grad mode stays on: fn may itself differentiate (gradcheck of a gradient).
        out = fn(*args)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return np.concatenate([np.asarray(o.detach().numpy(), dtype=np.float64).ravel() for o in outs])

    out = fn(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    n_out = sum(o.numel() for o in outs)
    analytic = {i: np.zeros((n_out, inputs[i].numel())) for i in diff}
    row = 0
    for o in outs:
        if not o.requires_grad:  # output independent of every input: analytic rows stay zero
            row += o.numel()
            continue
        for k in range(o.numel()):
            seed = np.zeros(o.numel())
            seed[k] = 1.0
            gseed = _C.from_numpy(seed.reshape(o.shape).astype(o.dtype.name))
            grads = grad(o, [inputs[i] for i in diff], gseed, retain_graph=True, allow_unused=True)
            for i, g in zip(diff, grads):
                if g is not None:
                    analytic[i][row] = g.detach().numpy().ravel()
            row += 1
    for i in diff:
        x = inputs[i]
        base = x.detach().numpy().copy()
        numeric = np.zeros_like(analytic[i])
        for j in range(base.size):
            for sign in (1.0, -1.0):
                pert = base.copy().ravel()
                pert[j] += sign * eps
                args = list(inputs)
                args[i] = _C.from_numpy(pert.reshape(base.shape)).requires_grad_(True)
                numeric[:, j] += sign * run(args)
            numeric[:, j] /= 2 * eps
        if not np.allclose(analytic[i], numeric, atol=atol, rtol=rtol):
            if raise_exception:
                worst = np.max(np.abs(analytic[i] - numeric))
                raise nwerr.RuntimeError(
                    f"gradcheck failed for input {i}: max abs difference {worst:.3g}\n"
                    f"analytic:\n{analytic[i]}\nnumeric:\n{numeric}")
            return False
    return True
