"""Farthest point sampling of a batch of point clouds (DGL's
``dgl.geometry.farthest_point_sampler``, PointNet++'s down-sampling), by the C++ kernel of
``graph/farthest_point_sampler.h``.

Five points on a line, from the first: the far end comes next, then the middle, then the lower of
the two points tied at distance 1 from what is picked.

>>> import nodeweave as nw, nodeweave.core as nc
>>> x = nc.tensor([[[0.0], [1.0], [2.0], [3.0], [4.0]]])    # 1 cloud, 5 points, 1 coordinate
>>> nw.geometry.farthest_point_sampler(x, 4, start_idx=0).tolist()
[[0, 4, 2, 1]]
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.heterograph import as_int_array
from nodeweave.sampling._seed import numpy_generator
from nodeweave import errors as nwerr

__all__ = ["farthest_point_sampler"]

_FN = "farthest_point_sampler"
# Half types are widened to float32 on the host (exactly); the kernel reads float32 or float64.
_FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


def farthest_point_sampler(pos: Any, npoints: int, start_idx: int | None = None) -> Any:
    """Samples ``npoints`` points of each point cloud of ``pos``, each one the farthest from those
    sampled before it.

    In each cloud the first sample is ``start_idx``; then every point keeps its squared Euclidean
    distance to the nearest sample so far, and the point with the largest such distance is the next
    sample. No pairwise distance matrix is built: O(npoints * N * C) time per cloud, O(N) memory.

    Parameters
    ----------
    pos : tensor
        Shape ``(B, N, C)``: ``B`` clouds of ``N`` points with ``C`` coordinates, floating point
        (float16 and bfloat16 are widened to float32), a tensor of either backend, on any device.
    npoints : int
        Samples per cloud, ``0 <= npoints <= N``.
    start_idx : int, optional
        The first sample of every cloud. When None, each cloud starts at a random point drawn from
        nodeweave's generator (so :func:`nodeweave.seed` makes the result repeatable).

    Returns
    -------
    int64 tensor of shape ``(B, npoints)``
        The indices (within each cloud) of the samples, in the order they were taken, on the device
        and of the backend of ``pos``.

    Distances are accumulated in float64, and of several points equally far the lowest index is
    taken, so the result is exact and the same at any thread count. No point is sampled twice: when
    all remaining points coincide with samples, the lowest-indexed remaining point comes next (DGL
    may repeat an index then).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> square = nc.tensor([[[0.5, 0.5], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])
    >>> nw.geometry.farthest_point_sampler(square, 5, start_idx=1).tolist()
    [[1, 4, 2, 3, 0]]
    >>> nw.seed(7)
    >>> a = nw.geometry.farthest_point_sampler(nc.rand(3, 50, 3), 8)    # random starts
    >>> tuple(a.shape), a.dtype
    ((3, 8), nodeweave.core.int64)
    >>> nw.geometry.farthest_point_sampler(square, 6)
    Traceback (most recent call last):
    ...
    nodeweave.errors.ValueError: farthest_point_sampler: npoints must be in [0, N] where N = 5 points per cloud, got 6
    """
    B = backend.of(pos)
    if B is None:
        raise nwerr.TypeError(f"{_FN}: pos must be a tensor of shape (B, N, C), got {type(pos).__name__}")
    dtype = B.dtype_name(pos)
    if dtype not in _FLOAT_DTYPES:
        raise nwerr.TypeError(f"{_FN}: pos must hold floating point coordinates ({', '.join(_FLOAT_DTYPES)}), "
                              f"got dtype {dtype}")
    shape = tuple(B.shape(pos))
    if len(shape) != 3:
        raise nwerr.ValueError(f"{_FN}: pos must have shape (B, N, C) (clouds, points, coordinates), "
                               f"got shape {shape}")
    if isinstance(npoints, (bool, np.bool_)) or not isinstance(npoints, numbers.Integral):
        raise nwerr.TypeError(f"{_FN}: npoints must be an int, got {npoints!r}")
    b, n, _ = shape
    starts = _starts(start_idx, b, n)
    arr = B.to_numpy(pos)
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float32)
    out = _C.farthest_point_sample(np.ascontiguousarray(arr), int(npoints), starts)
    return B.int_tensor(out, B.device_str(pos), "int64")


def _starts(start_idx: Any, b: int, n: int) -> np.ndarray:
    """The first sample of each of the ``b`` clouds of ``n`` points: ``start_idx`` checked, or random."""
    if start_idx is None:
        if n == 0:  # nothing to start from; npoints must then be 0, which the kernel checks
            return np.zeros(b, dtype=np.int64)
        return numpy_generator(None).integers(0, n, size=b, dtype=np.int64)
    arr, _ = as_int_array(start_idx, f"{_FN}: start_idx")
    if arr.size != 1:
        raise nwerr.ValueError(f"{_FN}: start_idx must be one point index (the start of every cloud), "
                               f"got {arr.size} values")
    s = int(arr[0])
    if not 0 <= s < n:
        raise nwerr.IndexError(f"{_FN}: start_idx must be in [0, N) where N = {n} points per cloud, got {s}")
    return np.full(b, s, dtype=np.int64)
