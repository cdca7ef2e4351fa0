"""Row-sparse gradients for ``Embedding(sparse=True)``.

The weight still receives its ordinary dense ``.grad`` (so every optimizer and ``clip_grad_norm_``
work unchanged). In addition, each lookup's output gradient is recorded with its indices, so that
optimizers with a row-sparse path (SGD without momentum or weight decay, Adagrad without weight decay,
SparseAdam) touch only the looked-up rows. The records follow the dense gradient's life:

* a hook on each lookup's output appends ``(indices, grad_output, padding_idx)`` to ``pending``;
* a hook on the weight itself runs when backward accumulates the weight's gradient: if ``.grad`` was
  None, the pending records replace the committed ones, otherwise they are added to them;
* ``zero_grad`` (module or optimizer) clears everything, and gradient clipping rewrites the records
  the way it rewrites ``.grad`` (:func:`transform`).

A backward pass that reaches the weight without any recorded lookup (the weight was also used
densely, e.g. tied to an output layer) marks the records invalid and optimizers fall back to the dense
gradient. As in PyTorch, mixing a sparse lookup with dense use of the same weight *in one pass* is
not supported: the dense contribution would be missed by the row-sparse path.
"""

from __future__ import annotations

import weakref
from typing import Callable, List, Optional, Tuple

from nodeweave import _C
from nodeweave._C import Tensor

_ATTR = "_sparse_grad"

Record = Tuple[Tensor, Tensor, int]


class RowSparseGradState:
    """The records of one weight (stored as ``weight._sparse_grad``)."""

    __slots__ = ("pending", "committed", "valid", "__weakref__")

    def __init__(self) -> None:
        self.pending: List[Record] = []
        self.committed: List[Record] = []
        self.valid = False


def _state(weight: Tensor) -> Optional[RowSparseGradState]:
    return getattr(weight, _ATTR, None)


def attach(weight: Tensor) -> RowSparseGradState:
    """Gives ``weight`` a record state and its accumulation hook (once)."""
    st = _state(weight)
    if st is not None:
        return st
    st = RowSparseGradState()
    setattr(weight, _ATTR, st)
    # The hook lives in the weight's native impl; a strong reference to the Python weight from it
    # would keep the weight alive forever.
    wref = weakref.ref(weight)

    def on_accumulate(grad: Tensor) -> None:
        w = wref()
        if w is None:
            return None
        fresh = w.grad is None
        if fresh:
            st.committed, st.valid = st.pending, bool(st.pending)
        else:
            st.committed = st.committed + st.pending
            st.valid = st.valid and bool(st.pending)
        st.pending = []
        return None

    weight.register_hook(on_accumulate)
    return st


def record(st: RowSparseGradState, indices: Tensor, grad_output: Tensor, skip_row: int) -> None:
    st.pending.append((indices, grad_output, skip_row))


def clear(weight: Tensor) -> None:
    """Drops the records (called wherever the dense gradient is reset)."""
    st = _state(weight)
    if st is not None:
        st.pending, st.committed, st.valid = [], [], False


def transform(weight: Tensor, fn: Callable[[Tensor], Tensor]) -> None:
    """Keeps the records in step with an elementwise rewrite of the dense gradient (clipping).

    ``fn`` must map 0 to 0, so that rows outside the records stay zero: the records are coalesced
    first (a row looked up twice holds the sum, as in the dense gradient) and ``fn`` is applied to
    the summed rows.
    """
    st = _state(weight)
    coalesced = rows(weight)
    if st is not None and coalesced is not None:
        st.committed = [(coalesced[0], fn(coalesced[1]), -1)]


def rows(weight: Tensor) -> Optional[Tuple[Tensor, Tensor]]:
    """``(ids, values)``: the weight's gradient as sorted unique row ids and their summed rows, or None
    when the gradient is not known to be row-sparse (use the dense ``.grad`` then)."""
    st = _state(weight)
    if st is None or not st.valid or not st.committed or weight.grad is None:
        return None
    idx = [r[0] for r in st.committed]
    vals = [r[1] for r in st.committed]
    skips = [r[2] for r in st.committed]
    return _C._coalesce_rows(idx, vals, list(weight.shape), skips)
