"""Feature frames: the columns of per-node or per-edge tensors of one node/edge type.

A :class:`Frame` maps names to tensors (of either backend) whose first dimension is the number of rows (nodes or
edges). It checks that dimension (and the device) when a column is set, so a wrong-sized feature fails
where it is assigned, not deep inside a kernel.

>>> import nodeweave.core as nc
>>> f = Frame(3, name="ndata", row_name="node")
>>> f["h"] = nc.zeros((3, 2))
>>> f.schemes
{'h': Scheme(shape=(2,), dtype=nodeweave.core.float32)}
>>> f["x"] = nc.zeros((4,))
Traceback (most recent call last):
...
nodeweave.errors.ValueError: ndata['x']: expected 3 rows (one per node), got 4
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Callable, Iterator, NamedTuple

import numpy as np

from nodeweave import backend
from nodeweave import errors as nwerr


class Scheme(NamedTuple):
    """The shape of one row of a feature column, and its dtype."""

    shape: tuple
    dtype: Any


class _LazyRows:
    """Rows ``idx`` of the tensor ``source``, gathered the first time the column is read. A sampled
    block carries every feature of the graph it came from this way, as in DGL, and only the
    features a model reads cost a copy."""

    __slots__ = ("source", "idx")

    def __init__(self, source: Any, idx: np.ndarray) -> None:
        self.source, self.idx = source, idx

    def gather(self, device: str | None) -> Any:
        B = backend.of(self.source)
        out = B.index_select(self.source, self.idx)
        return out if device is None or B.device_str(out) == device else B.to_device(out, device)


class Frame(MutableMapping):
    """Named feature columns, each a tensor with ``num_rows`` rows.

    Parameters
    ----------
    num_rows : int
        Rows every column must have (the number of nodes or edges).
    data : mapping of str to tensor, optional
        Initial columns (validated).
    name : str
        Used in error messages, e.g. ``"ndata"`` gives ``ndata['h']: expected ...``.
    row_name : str
        What a row is (``"node"``, ``"edge"``), for error messages.
    device : str, optional
        When set, every column must live on this device.

    Notes
    -----
    Frames are shallow: :meth:`clone_shallow` copies the name -> tensor table but shares the tensors.
    Setting or deleting a column of the clone leaves the original untouched (copy-on-write at the
    column level), while writing into a tensor in place shows through both, as in DGL's
    ``local_scope``.
    """

    __slots__ = ("_num_rows", "_columns", "name", "row_name", "device", "_initializers",
                 "_default_initializer")

    def __init__(self, num_rows: int, data: dict | None = None, *, name: str = "data",
                 row_name: str = "row", device: str | None = None) -> None:
        if not isinstance(num_rows, (int, np.integer)) or isinstance(num_rows, bool) or num_rows < 0:
            raise nwerr.ValueError(f"Frame: num_rows must be a non-negative int, got {num_rows!r}")
        self._num_rows = int(num_rows)
        self._columns: dict[str, Any] = {}
        self.name = name
        self.row_name = row_name
        self.device = device
        self._initializers: dict[str, Callable] = {}
        self._default_initializer: Callable | None = None
        if data:
            for k, v in data.items():
                self[k] = v

    @property
    def num_rows(self) -> int:
        """Rows every column has."""
        return self._num_rows

    def _check(self, key: Any, value: Any) -> None:
        if not isinstance(key, str):
            raise nwerr.TypeError(f"{self.name}: feature names must be strings, got {type(key).__name__}")
        B = backend.of(value)  # a column may hold a tensor of either backend
        if B is None:
            raise nwerr.TypeError(f"{self.name}[{key!r}]: expected a tensor, got {type(value).__name__}")
        shape = B.shape(value)
        if len(shape) == 0:
            raise nwerr.ValueError(f"{self.name}[{key!r}]: expected {self._num_rows} rows "
                                   f"(one per {self.row_name}), got a 0-dimensional tensor")
        if shape[0] != self._num_rows:
            raise nwerr.ValueError(f"{self.name}[{key!r}]: expected {self._num_rows} rows "
                                   f"(one per {self.row_name}), got {shape[0]}")
        if self.device is not None and B.device_str(value) != self.device:
            raise nwerr.ValueError(f"{self.name}[{key!r}]: the tensor is on {B.device_str(value)} but the "
                                   f"graph is on {self.device}; move one of them with .to()")

    def __setitem__(self, key: str, value: Any) -> None:
        self._check(key, value)
        self._columns[key] = value

    def __getitem__(self, key: str) -> Any:
        try:
            col = self._columns[key]
        except KeyError:
            raise nwerr.KeyError(f"{self.name} has no feature {key!r} (it has: "
                                 f"{', '.join(map(repr, self._columns)) or 'none'})") from None
        if isinstance(col, _LazyRows):
            col = self._columns[key] = col.gather(self.device)
        return col

    def set_lazy(self, key: str, source: Any, idx: Any) -> None:
        """Makes column ``key`` rows ``idx`` of tensor ``source``, gathered (and moved to this
        frame's device) only when the column is first read.

        >>> import nodeweave.core as nc
        >>> f = Frame(2, name="srcdata")
        >>> f.set_lazy("h", nc.tensor([[1.0], [2.0], [3.0]]), [2, 0])
        >>> f.schemes["h"].shape, f["h"].tolist()
        ((1,), [[3.0], [1.0]])
        """
        if not isinstance(key, str):
            raise nwerr.TypeError(f"{self.name}: feature names must be strings, got {type(key).__name__}")
        B = backend.of(source)
        if B is None:
            raise nwerr.TypeError(f"{self.name}[{key!r}]: expected a tensor, got {type(source).__name__}")
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        rows = B.shape(source)[0] if len(B.shape(source)) else 0
        if len(idx) != self._num_rows:
            raise nwerr.ValueError(f"{self.name}[{key!r}]: expected {self._num_rows} row ids "
                                   f"(one per {self.row_name}), got {len(idx)}")
        if idx.size and (idx.min() < 0 or idx.max() >= rows):
            raise nwerr.IndexError(f"{self.name}[{key!r}]: row ids must lie in [0, {rows}) of the source tensor")
        self._columns[key] = _LazyRows(source, idx)

    def __delitem__(self, key: str) -> None:
        try:
            del self._columns[key]
        except KeyError:
            raise nwerr.KeyError(f"{self.name} has no feature {key!r}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def __contains__(self, key: object) -> bool:
        return key in self._columns

    def __repr__(self) -> str:
        return f"Frame(num_rows={self._num_rows}, schemes={self.schemes})"

    @property
    def schemes(self) -> dict[str, Scheme]:
        """``{name: Scheme(row shape, dtype)}`` of every column."""
        return {k: Scheme(tuple((v.source if isinstance(v, _LazyRows) else v).shape[1:]),
                          (v.source if isinstance(v, _LazyRows) else v).dtype) for k, v in self._columns.items()}

    # ------------------------------------------------------------------ initializers

    def set_initializer(self, initializer: Callable, field: str | None = None) -> None:
        """Makes ``initializer`` fill the unwritten rows of feature ``field`` (of every feature
        without one of its own when ``field`` is None); see :mod:`nodeweave.init`."""
        if not callable(initializer):
            raise nwerr.TypeError(f"initializer must be callable as fn(shape, dtype, ctx, id_range), got "
                                  f"{type(initializer).__name__}")
        if field is None:
            self._default_initializer = initializer
        elif not isinstance(field, str):
            raise nwerr.TypeError(f"field must be a feature name (str) or None, got {type(field).__name__}")
        else:
            self._initializers[field] = initializer

    def initial_rows(self, name: str, like: Any, start: int, stop: int) -> Any:
        """Rows ``start .. stop-1`` of feature ``name`` as its initializer makes them (zeros without
        one), shaped, typed and placed like the rows of tensor ``like``."""
        B = backend.of(like)
        shape = (stop - start,) + tuple(B.shape(like)[1:])
        init = self._initializers.get(name, self._default_initializer)
        if init is None:
            return B.zeros(shape, B.dtype_of(like), B.device_str(like))
        out = init(shape, B.dtype_of(like), B.device_object(B.device_str(like)), slice(start, stop))
        Bo = backend.of(out)
        if Bo is None or tuple(Bo.shape(out)) != shape:
            got = type(out).__name__ if Bo is None else f"shape {tuple(Bo.shape(out))}"
            raise nwerr.ValueError(f"{self.name}[{name!r}]: the initializer {init!r} must return a tensor of "
                                   f"shape {shape}, got {got}")
        if Bo is not B or Bo.dtype_name(out) != B.dtype_name(like):
            raise nwerr.TypeError(f"{self.name}[{name!r}]: the initializer {init!r} returned a {Bo.name} "
                                  f"{Bo.dtype_name(out)} tensor for a {B.name} {B.dtype_name(like)} feature")
        return Bo.to_device(out, B.device_str(like))

    def _copy_settings(self, f: "Frame") -> "Frame":
        """``f`` with this frame's initializers (a copy of the table: setting one on either frame
        later leaves the other alone)."""
        f._initializers = dict(self._initializers)
        f._default_initializer = self._default_initializer
        return f

    def clone_shallow(self) -> "Frame":
        """A new frame sharing this frame's tensors; adding/removing columns of either leaves the
        other unchanged."""
        f = Frame.__new__(Frame)
        f._num_rows = self._num_rows
        f._columns = dict(self._columns)
        f.name, f.row_name, f.device = self.name, self.row_name, self.device
        return self._copy_settings(f)

    def subframe(self, idx: Any) -> "Frame":
        """A new frame of rows ``idx`` (int array, any order, repeats allowed) of every column."""
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self._num_rows):
            bad = int(idx[(idx < 0) | (idx >= self._num_rows)][0])
            raise nwerr.IndexError(f"{self.name}: row {bad} is out of range for {self._num_rows} rows")
        f = Frame(len(idx), name=self.name, row_name=self.row_name, device=self.device)
        for k, v in self._columns.items():
            # a lazy column stays lazy: its rows are picked from its own row ids
            f._columns[k] = (_LazyRows(v.source, v.idx[idx]) if isinstance(v, _LazyRows)
                             else backend.of(v).index_select(v, idx))
        return self._copy_settings(f)

    def to(self, device: str) -> "Frame":
        """A new frame with every column moved to ``device``."""
        f = Frame(self._num_rows, name=self.name, row_name=self.row_name, device=device)
        for k, v in self._columns.items():
            # a lazy column is gathered where it is read, then moved to the frame's device
            f._columns[k] = v if isinstance(v, _LazyRows) else backend.of(v).to_device(v, device)
        return self._copy_settings(f)

    def __getstate__(self) -> dict:
        # Pickled with lazy columns gathered: a pickle holds the frame's rows, not its source tensors.
        state = {k: getattr(self, k) for k in self.__slots__}
        state["_columns"] = {k: self[k] for k in self._columns}
        return state

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple):  # the default slots state (None, {slot: value}) of older pickles
            state = state[1]
        for k, v in state.items():
            setattr(self, k, v)

    def update(self, other: Any = (), **kw: Any) -> None:  # type: ignore[override]
        """Sets several columns; all are validated before any is stored."""
        items = dict(other, **kw)
        for k, v in items.items():
            self._check(k, v)
        self._columns.update(items)
