"""Row-segment reductions and typed matrix products on plain tensors: DGL's backend
``segment_reduce``, ``gather_mm`` and ``segment_mm``, in DGL's argument order, computed by nodeweave's
kernels (:mod:`nodeweave.ops`; differentiable on both backends).

>>> import torch
>>> from nodeweave.compat import dgl_backend as F
>>> x = torch.tensor([[1.0], [2.0], [3.0], [4.0]])
>>> F.segment_reduce("sum", x, torch.tensor([0, 1, 1, 4])).tolist()   # an empty segment gives 0
[[1.0], [0.0], [9.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave import errors as nwerr
from nodeweave import ops
from nodeweave.compat.dgl_backend import _library

__all__ = ["segment_reduce", "gather_mm", "segment_mm"]


def segment_reduce(op: str, x: Any, offsets: Any) -> Any:
    """``out[i]`` = ``op`` (``sum``, ``mean``, ``max`` or ``min``) of rows ``offsets[i]`` to
    ``offsets[i + 1] - 1`` of ``x``; ``len(offsets) - 1`` segments, an empty one gives 0."""
    src = backend.of(offsets)
    offs = np.asarray(src.to_numpy(offsets) if src is not None else offsets)
    if offs.ndim != 1 or offs.size == 0 or not np.issubdtype(offs.dtype, np.integer):
        raise nwerr.ValueError(f"offsets must be a non-empty 1-D integer sequence, got {offs!r}")
    n = int(x.shape[0])
    lo, hi = int(offs[0]), int(offs[-1])
    if not 0 <= lo <= hi <= n:
        raise nwerr.ValueError(f"offsets must lie in [0, {n}] (x's rows) and not decrease, got {lo}..{hi}")
    rows = x if (lo, hi) == (0, n) else x[lo:hi]
    return ops.segment_reduce(np.diff(offs), rows, op)


def gather_mm(A: Any, B: Any, idx_a: Any = None, idx_b: Any = None) -> Any:
    """``out[i] = A[idx_a[i]] @ B[idx_b[i]]`` (an omitted index is ``arange``): ``A`` (N, D1), ``B``
    (R, D1, D2). Without ``idx_b``, ``B`` holds one matrix per output row."""
    if idx_b is not None:
        return ops.gather_mm(A, B, idx_a=idx_a, idx_b=idx_b)
    rows = A if idx_a is None else A.index_select(0, _library.index_tensor(A, idx_a, "idx_a").reshape(-1))
    if int(rows.shape[0]) != int(B.shape[0]):
        raise nwerr.ValueError(f"gather_mm without idx_b needs one matrix in B per row ({rows.shape[0]}), "
                               f"got {B.shape[0]}")
    return _library.of(A).bmm(rows.unsqueeze(1), B).squeeze(1)


def segment_mm(A: Any, B: Any, seglen_A: Any) -> Any:
    """Rows of ``A`` in consecutive segments of ``seglen_A[r]`` rows, segment ``r`` times ``B[r]``."""
    return ops.segment_mm(A, B, seglen_A)
