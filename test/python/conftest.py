"""Shared pytest fixtures: a seeded NumPy generator, the active backend reset after every test, a
test run once per backend (`backend_name`), and helpers for non-contiguous views and for reading
any backend's tensor as NumPy (`np_of`)."""

import os

import numpy as np
import pytest

import nodeweave.core as nc


@pytest.fixture(autouse=True)
def _native_backend_after_each_test():
    """A test that switches to the pytorch backend must not change what the next test sees."""
    import nodeweave.backend as backend

    yield
    backend.set_backend("native")


@pytest.fixture(params=["native", "pytorch"])
def backend_name(request):
    """Runs the test on each backend, that backend active."""
    import nodeweave.backend as backend

    backend.set_backend(request.param)
    yield request.param
    backend.set_backend("native")


def np_of(t) -> np.ndarray:
    """Any backend's tensor as a NumPy array."""
    import nodeweave.backend as backend

    return backend.of(t).to_numpy(t)


@pytest.fixture
def rng() -> np.random.Generator:
    nc.manual_seed(0)
    return np.random.default_rng(0)


def noncontig(arr: np.ndarray) -> "nc.Tensor":
    """A nodeweave tensor with the values of `arr` whose memory is not contiguous.

    2-D and larger: a transposed view of a copy; 1-D: every other element of a doubled array.
    """
    if arr.ndim >= 2:
        view = nc.tensor(np.ascontiguousarray(np.swapaxes(arr, 0, -1))).transpose(0, -1)
    else:
        view = nc._C._slice(nc.tensor(np.repeat(arr, 2)), 0, 0, 2 * arr.size, 2)
    assert arr.size <= 1 or not view.is_contiguous()
    np.testing.assert_array_equal(view.numpy(), arr)
    return view


def pytest_report_header(config):
    """Say where the dataset tests read from: without a data directory they try to download."""
    d = os.environ.get("NODEWEAVE_DATA_DIR")
    return (f"NODEWEAVE_DATA_DIR={d}" if d else
            "NODEWEAVE_DATA_DIR is unset: dataset tests and examples will try to download into "
            "~/.nodeweave/data (scripts/setup.sh sets it to ../shared/data when that exists)")
