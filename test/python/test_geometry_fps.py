"""``nodeweave.geometry.farthest_point_sampler`` against a brute-force NumPy reference that, at each
step, recomputes every point's distance to the whole sampled set (float64, coordinate by coordinate)
and takes the farthest unsampled point, the lowest index among equals; on both backends, float32,
float64 and the half types, batches of clouds, given and random (seeded) starts, lattice ties,
coincident points, empty shapes; bad input raising by name."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
from conftest import np_of
from nodeweave.geometry import farthest_point_sampler


def reference(cloud: np.ndarray, npoints: int, start: int) -> list:
    """The samples of one (N, C) cloud, by definition."""
    x = cloud.astype(np.float64)
    picked = [start]
    while len(picked) < npoints:
        best, arg = -1.0, -1
        for j in range(len(x)):
            if j in picked:
                continue
            nearest = np.inf
            for p in picked:
                s = 0.0
                for c in range(x.shape[1]):
                    t = x[j, c] - x[p, c]
                    s += t * t
                nearest = min(nearest, s)
            if nearest > best:
                best, arg = nearest, j
        picked.append(arg)
    return picked


def tensor(arr: np.ndarray):
    return nwb.current().from_numpy(np.ascontiguousarray(arr))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_brute_force_on_random_batches(backend_name, dtype):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 40, 3)).astype(dtype)
    for npoints in (1, 9, 40):
        got = farthest_point_sampler(tensor(x), npoints, start_idx=6)
        B = nwb.current()
        assert B.is_tensor(got) and B.dtype_name(got) == "int64" and tuple(B.shape(got)) == (4, npoints)
        for b in range(4):
            assert np_of(got)[b].tolist() == reference(x[b], npoints, 6), (npoints, b)


def test_ties_go_to_the_lowest_index(backend_name):
    # A 4 x 4 lattice of integer points (exact distances, many ties), from a corner.
    xs, ys = np.meshgrid(np.arange(4.0), np.arange(4.0), indexing="ij")
    grid = np.stack([xs.ravel(), ys.ravel()], axis=1)[None]
    got = np_of(farthest_point_sampler(tensor(grid), 16, start_idx=5))[0].tolist()
    assert got == reference(grid[0], 16, 5)
    assert got[:3] == [5, 15, 3]   # from (1, 1): (3, 3), then (0, 3) = 3, tied with (3, 0) = 12
    assert sorted(got) == list(range(16))


def test_coincident_points_are_never_sampled_twice(backend_name):
    x = np.zeros((2, 6, 3))
    x[1, 4] = 1.0                                  # cloud 1: one point apart from five equal ones
    got = np_of(farthest_point_sampler(tensor(x), 6, start_idx=2)).tolist()
    assert got == [[2, 0, 1, 3, 4, 5], [2, 4, 0, 1, 3, 5]]


def test_start_index_and_random_starts(backend_name):
    rng = np.random.default_rng(5)
    x = rng.uniform(size=(6, 30, 3))
    got = np_of(farthest_point_sampler(tensor(x), 5, start_idx=29))
    assert (got[:, 0] == 29).all()
    assert nw.geometry.farthest_point_sampler(tensor(x), 5, start_idx=np.int64(3)).shape[1] == 5
    # Random starts: one per cloud from nodeweave's generator, the rest as from that start.
    nw.seed(11)
    a = np_of(farthest_point_sampler(tensor(x), 5))
    nw.seed(11)
    b = np_of(farthest_point_sampler(tensor(x), 5))
    np.testing.assert_array_equal(a, b)
    for k in range(6):
        assert a[k].tolist() == reference(x[k], 5, int(a[k, 0]))
    starts = set()
    for s in range(8):
        nw.seed(s)
        starts.update(np_of(farthest_point_sampler(tensor(x), 1))[:, 0].tolist())
    assert len(starts) > 10 and min(starts) >= 0 and max(starts) < 30


def test_clouds_are_independent(backend_name):
    rng = np.random.default_rng(8)
    x = rng.normal(size=(3, 25, 2))
    whole = np_of(farthest_point_sampler(tensor(x), 7, start_idx=4))
    for b in range(3):
        np.testing.assert_array_equal(whole[b], np_of(farthest_point_sampler(tensor(x[b:b + 1]), 7, start_idx=4))[0])


def test_half_types_and_non_contiguous_input(backend_name):
    rng = np.random.default_rng(9)
    x = rng.integers(-8, 8, size=(2, 20, 3)).astype(np.float32)   # exact in float16 and bfloat16
    want = np_of(farthest_point_sampler(tensor(x), 10, start_idx=1))
    B = nwb.current()
    for half in ("float16", "bfloat16"):
        t = B.tensor(x, dtype=half)
        assert B.dtype_name(t) == half
        np.testing.assert_array_equal(np_of(farthest_point_sampler(t, 10, start_idx=1)), want)
    swapped = tensor(np.swapaxes(x, 0, 1)).transpose(0, 1)          # a (2, 20, 3) view, not contiguous
    assert not swapped.is_contiguous()
    np.testing.assert_array_equal(np_of(farthest_point_sampler(swapped, 10, start_idx=1)), want)


def test_empty_shapes(backend_name):
    B = nwb.current()
    assert tuple(B.shape(farthest_point_sampler(tensor(np.zeros((3, 4, 2))), 0))) == (3, 0)
    assert tuple(B.shape(farthest_point_sampler(tensor(np.zeros((0, 4, 2))), 2))) == (0, 2)
    assert tuple(B.shape(farthest_point_sampler(tensor(np.zeros((2, 0, 2))), 0))) == (2, 0)
    # No coordinates: every point is at distance 0, taken in index order after the start.
    assert np_of(farthest_point_sampler(tensor(np.zeros((1, 4, 0))), 4, start_idx=2)).tolist() == [[2, 0, 1, 3]]


def test_bad_input_raises_naming_the_argument(backend_name):
    x = tensor(np.zeros((2, 5, 3)))
    B = nwb.current()
    cases = [
        (([[0.0, 1.0]], 1), TypeError, "pos must be a tensor"),
        ((B.tensor(np.zeros((2, 5, 3), dtype=np.int64)), 1), TypeError, "pos must hold floating point"),
        ((tensor(np.zeros((5, 3))), 1), ValueError, r"pos must have shape \(B, N, C\)"),
        ((x, 6), ValueError, "npoints must be in"),
        ((x, -1), ValueError, "npoints must be in"),
        ((x, 2.0), TypeError, "npoints must be an int"),
        ((x, True), TypeError, "npoints must be an int"),
        ((x, 2, 5), IndexError, r"start_idx must be in \[0, N\)"),
        ((x, 2, -1), IndexError, "start_idx"),
        ((x, 2, 1.5), TypeError, "start_idx"),
        ((x, 2, [0, 1]), ValueError, "start_idx must be one point index"),
        ((tensor(np.full((1, 3, 2), np.nan)), 2, 0), ValueError, "NaN or infinite"),
    ]
    for args, exc, msg in cases:
        with pytest.raises(exc, match=msg) as info:
            farthest_point_sampler(*args)
        assert isinstance(info.value, nw.NodeweaveError) and "farthest_point_sampler" in str(info.value)
