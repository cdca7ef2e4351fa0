"""Helpers for tests that compare nodeweave results with PyTorch on the same NumPy data."""

import numpy as np
import torch

import nodeweave.core as nc


def nw(a, requires_grad=False):
    """A nodeweave tensor copied from array-like `a`."""
    return nc.tensor(np.ascontiguousarray(a), requires_grad=requires_grad)


def arr(t):
    """The values of a nodeweave tensor as a NumPy array."""
    return t.detach().numpy()


def th(a):
    """A torch tensor viewing array-like `a`."""
    return torch.from_numpy(np.ascontiguousarray(a))


def same(got, want, rtol=1e-6, atol=1e-6):
    """Values, shape and dtype of a nodeweave result against a torch result."""
    want = want.detach()
    assert got.shape == tuple(want.shape)
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    np.testing.assert_allclose(arr(got).astype(np.float64), want.numpy().astype(np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)
