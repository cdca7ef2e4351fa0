"""Reductions and softmax over consecutive segments of rows, and the typed matmuls.

>>> import nodeweave as nw, nodeweave.core as nc
>>> x = nc.tensor([[1.0], [2.0], [3.0], [4.0]])
>>> nw.ops.segment_reduce(nc.tensor([1, 0, 3]), x, "sum").tolist()
[[1.0], [0.0], [9.0]]
>>> nw.ops.segment_softmax(nc.tensor([2, 2]), nc.tensor([[0.0], [0.0], [1.0], [1.0]])).tolist()
[[0.5], [0.5], [0.5], [0.5]]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave.ops._graph import kernels
from nodeweave import errors as nwerr

__all__ = ["segment_reduce", "segment_softmax", "gather_mm", "segment_mm"]


def _offsets(seglen: Any, like: Any):
    """Segment lengths (tensor, array or list) -> int64 offsets tensor on ``like``'s device."""
    b = kernels(like)
    sb = kernels(seglen)
    if hasattr(sb, "segment_offsets") and sb.is_tensor(seglen) and b is sb and \
            sb.device_str(seglen) == "cpu" == b.device_str(like):
        # Counted by an op, which a jit trace sees: a program traced on one batch of graphs
        # recounts the next batch's offsets.
        return sb.segment_offsets(seglen)
    lengths = np.asarray(sb.to_numpy(seglen) if sb.is_tensor(seglen) else seglen)
    if lengths.ndim != 1:
        raise nwerr.ValueError(f"seglen must be 1-D, got shape {lengths.shape}")
    if lengths.size and not np.issubdtype(lengths.dtype, np.integer):
        raise nwerr.TypeError(f"seglen must hold integers, got dtype {lengths.dtype}")
    if (lengths < 0).any():
        raise nwerr.ValueError(f"seglen must be non-negative, got {lengths.min()}")
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return b.int_tensor(offsets, b.device_str(like))


def segment_reduce(seglen: Any, value: Any, reducer: str = "sum"):
    """Reduce ``value`` (sum(seglen), ...) over consecutive segments of ``seglen[i]`` rows with
    ``sum``, ``mean``, ``max`` or ``min``; empty segments give 0."""
    if reducer not in ("sum", "mean", "max", "min"):
        raise nwerr.ValueError(f"segment_reduce: reducer must be sum, mean, max or min, got {reducer!r}")
    offsets = _offsets(seglen, value)
    return kernels(value).segment_reduce(reducer, value, offsets)


def segment_softmax(seglen: Any, value: Any):
    """Softmax of ``value`` within each segment of consecutive rows."""
    return kernels(value).segment_softmax(value, _offsets(seglen, value))


def gather_mm(a: Any, b: Any, *, idx_a: Any = None, idx_b: Any):
    """``out[i] = a[idx_a[i]] @ b[idx_b[i]]`` with ``b`` of shape (num_types, in, out)."""
    return kernels(a, b).gather_mm(a, b, idx_a, idx_b)


def segment_mm(a: Any, b: Any, seglen_a: Sequence[int]):
    """Rows of ``a`` in consecutive segments of ``seglen_a[r]`` rows, each times ``b[r]``."""
    sb = kernels(seglen_a)
    lengths = sb.to_numpy(seglen_a) if sb.is_tensor(seglen_a) else seglen_a
    return kernels(a, b).segment_mm(a, b, [int(s) for s in lengths])
