"""Small helpers DGL scripts use from ``dgl.utils``: applying a function through nested batch
structures, checking whether an edge list is sorted, and filtering ids by membership in a set.

>>> import nodeweave as nw, nodeweave.core as nc
>>> nw.utils.recursive_apply({"a": [nc.tensor([1, 2])], "b": nc.tensor([3])}, lambda t: t * 2)
{'a': [tensor([2, 4])], 'b': tensor([6])}
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from nodeweave import backend
from nodeweave.graph.heterograph import as_int_array
from nodeweave import errors as nwerr

__all__ = ["recursive_apply", "is_sorted_srcdst", "Filter"]


def recursive_apply(data: Any, fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``fn(x, *args, **kwargs)`` for every leaf ``x`` of ``data``, keeping the dicts, lists and
    tuples around them (DGL's ``recursive_apply``: a batch's ``{ntype: ids}`` dicts, lists of
    blocks ...). Strings are leaves."""
    if isinstance(data, dict):
        return {k: recursive_apply(v, fn, *args, **kwargs) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(recursive_apply(v, fn, *args, **kwargs) for v in data)
    return fn(data, *args, **kwargs)


def is_sorted_srcdst(src: Any, dst: Any, num_src: int | None = None, num_dst: int | None = None
                     ) -> tuple[bool, bool]:
    """Whether the edges ``src[i] -> dst[i]`` are sorted by source (``row_sorted``), and also by
    destination within each source (``col_sorted``), as DGL's ``is_sorted_srcdst`` reports (what
    ``row_sorted=`` / ``col_sorted=`` of :func:`nodeweave.graph` promise). ``num_src`` /
    ``num_dst`` are accepted for DGL's signature; ids are not range-checked here.

    >>> import nodeweave as nw
    >>> nw.utils.is_sorted_srcdst([0, 0, 1], [2, 1, 0])
    (True, False)
    """
    s, _ = as_int_array(src, "src")
    d, _ = as_int_array(dst, "dst")
    if len(s) != len(d):
        raise nwerr.ValueError(f"src and dst must have the same length, got {len(s)} and {len(d)}")
    row = bool(np.all(s[1:] >= s[:-1]))
    same_row = s[1:] == s[:-1]
    col = row and bool(np.all(d[1:][same_row] >= d[:-1][same_row]))
    return row, col


class Filter:
    """Membership in a fixed set of ids (DGL's ``dgl.utils.Filter``): :meth:`find_included_indices`
    gives the positions of a query's ids that are in the set, :meth:`find_excluded_indices` those
    that are not; both in increasing position order, as tensors of the query's dtype and device.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> f = nw.utils.Filter(nc.tensor([0, 1, 9, 4]))
    >>> f.find_included_indices(nc.tensor([0, 3, 9, 11])).tolist()
    [0, 2]
    """

    def __init__(self, ids: Any) -> None:
        arr, _ = as_int_array(ids, "ids")
        self._set = np.unique(arr)

    def _positions(self, x: Any, included: bool) -> Any:
        B = backend.of(x)
        q, _ = as_int_array(x, "x")
        pos = np.flatnonzero(np.isin(q, self._set, assume_unique=False) == included)
        if B is None:
            return pos
        return B.from_numpy(pos.astype(np.dtype(B.dtype_name(x))), B.device_str(x))

    def find_included_indices(self, x: Any) -> Any:
        """Positions ``i`` with ``x[i]`` in the set."""
        return self._positions(x, True)

    def find_excluded_indices(self, x: Any) -> Any:
        """Positions ``i`` with ``x[i]`` not in the set."""
        return self._positions(x, False)
