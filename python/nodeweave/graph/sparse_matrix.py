"""The sparse matrix ``g.adj()`` returns, with the interface of DGL 2.x's ``dgl.sparse.SparseMatrix``.

A :class:`SparseMatrix` holds ``nnz`` entries ``(row[i], col[i], val[i])`` of a ``shape[0] x
shape[1]`` matrix; entries may repeat a position (a multigraph's adjacency), and such entries add up
wherever the matrix is used as a matrix (:meth:`to_dense`, ``A @ X``, :meth:`coalesce`). The values
are a tensor of either backend and keep their gradient through :meth:`to_dense` and ``A @ X``, which
run on the gSpMM kernel; the coordinates are id tensors of the graph's id type.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([0, 1, 1], [1, 2, 2]))
>>> A = g.adj()
>>> A.shape, A.nnz, A.indices().tolist(), A.val.tolist()
((3, 3), 3, [[0, 1, 1], [1, 2, 2]], [1.0, 1.0, 1.0])
>>> A.to_dense().tolist()                        # the multi-edge 1 -> 2 counts twice
[[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
>>> (A @ nc.tensor([[1.0], [10.0], [100.0]])).tolist()
[[10.0], [200.0], [0.0]]
>>> [t.tolist() for t in A.csr()]
[[0, 1, 3, 3], [1, 2, 2], [0, 1, 2]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C, backend
from nodeweave import errors as nwerr

__all__ = ["SparseMatrix"]


class SparseMatrix:
    """A sparse matrix in coordinate form (see the module docstring).

    Parameters
    ----------
    row, col : int arrays or id tensors, one entry per non-zero
    val : tensor with ``nnz`` rows (extra dimensions make a matrix of vectors)
    shape : (rows, columns)
    idtype : ``'int32'`` or ``'int64'``, the dtype of the coordinate tensors it returns
    """

    def __init__(self, row: Any, col: Any, val: Any, shape: tuple, idtype: str = "int64") -> None:
        B = backend.of(val)
        if B is None:
            raise nwerr.TypeError(f"SparseMatrix: val must be a tensor, got {type(val).__name__}")
        self._B, self._val = B, val
        self._row = _host_ids(row, "row")
        self._col = _host_ids(col, "col")
        if not (isinstance(shape, tuple) and len(shape) == 2 and all(isinstance(s, (int, np.integer))
                                                                   and s >= 0 for s in shape)):
            raise nwerr.ValueError(f"SparseMatrix: shape must be (rows, columns) of non-negative ints, got {shape!r}")
        self._shape = (int(shape[0]), int(shape[1]))
        n = len(self._row)
        if len(self._col) != n or (len(B.shape(val)) == 0 or B.shape(val)[0] != n):
            raise nwerr.ValueError(f"SparseMatrix: row, col and val must have one entry per non-zero, got "
                                   f"{n}, {len(self._col)} and {B.shape(val)[:1]}")
        for name, ids, bound in (("row", self._row, self._shape[0]), ("col", self._col, self._shape[1])):
            if ids.size and (ids.min() < 0 or ids.max() >= bound):
                raise nwerr.IndexError(f"SparseMatrix: {name} ids must be in [0, {bound}), got "
                                       f"{ids.min()}..{ids.max()}")
        self._idtype = idtype
        self._rel = None  # the gSpMM relation col -> row, built on first use

    # ------------------------------------------------------------------ attributes
    @property
    def val(self) -> Any:
        """The values, one row per non-zero."""
        return self._val

    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def nnz(self) -> int:
        """The number of stored entries (repeated positions count separately)."""
        return len(self._row)

    @property
    def dtype(self) -> Any:
        """The dtype of the values."""
        return self._B.dtype_of(self._val)

    @property
    def device(self) -> Any:
        return self._B.device_object(self._B.device_str(self._val))

    def _ids(self, arr: np.ndarray) -> Any:
        return self._B.int_tensor(arr, self._B.device_str(self._val), self._idtype)

    @property
    def row(self) -> Any:
        """Row coordinates."""
        return self._ids(self._row)

    @property
    def col(self) -> Any:
        """Column coordinates."""
        return self._ids(self._col)

    def coo(self) -> tuple:
        """``(row, col)``."""
        return self.row, self.col

    def indices(self) -> Any:
        """``row`` over ``col`` in one ``(2, nnz)`` tensor."""
        return self._ids(np.stack([self._row, self._col]))

    def _compressed(self, major: np.ndarray, minor: np.ndarray, n: int) -> tuple:
        order = np.lexsort((np.arange(len(major)), minor, major))
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(major, minlength=n), out=indptr[1:])
        return self._ids(indptr), self._ids(minor[order]), self._ids(order)

    def csr(self) -> tuple:
        """``(indptr, column indices, value indices)``: rows compressed, each row's entries by
        column; ``val[value_indices]`` lists the values in that order."""
        return self._compressed(self._row, self._col, self._shape[0])

    def csc(self) -> tuple:
        """``(indptr, row indices, value indices)``, columns compressed."""
        return self._compressed(self._col, self._row, self._shape[1])

    def has_duplicate(self) -> bool:
        """Whether two entries share a position."""
        keys = self._row * max(self._shape[1], 1) + self._col
        return bool(len(np.unique(keys)) != len(keys))

    # ------------------------------------------------------------------ new matrices
    def _like(self, row: np.ndarray, col: np.ndarray, val: Any, shape: tuple) -> "SparseMatrix":
        return SparseMatrix(row, col, val, shape, self._idtype)

    def transpose(self) -> "SparseMatrix":
        """The transpose (same values, rows and columns swapped)."""
        return self._like(self._col, self._row, self._val, self._shape[::-1])

    def t(self) -> "SparseMatrix":
        return self.transpose()

    @property
    def T(self) -> "SparseMatrix":  # noqa: N802 (DGL's name)
        return self.transpose()

    def to(self, device: Any = None, dtype: Any = None) -> "SparseMatrix":
        """This matrix with its values (and coordinates) on ``device`` and/or of ``dtype``; itself
        when nothing changes."""
        B, val = self._B, self._val
        if device is not None:
            val = B.to_device(val, device)
        if dtype is not None:
            val = val.to(B.dtype_from_name(dtype) if isinstance(dtype, str) else dtype)
        return self if val is self._val else self._like(self._row, self._col, val, self._shape)

    def float(self) -> "SparseMatrix":
        return self.to(dtype="float32")

    def double(self) -> "SparseMatrix":
        return self.to(dtype="float64")

    def cpu(self) -> "SparseMatrix":
        return self.to(device="cpu")

    def coalesce(self) -> "SparseMatrix":
        """One entry per position, in row-major order, the values of repeated positions summed."""
        keys = self._row * max(self._shape[1], 1) + self._col
        uniq, inverse = np.unique(keys, return_inverse=True)
        val = self._sum_into(inverse, len(uniq))
        cols = max(self._shape[1], 1)
        return self._like(uniq // cols, uniq % cols, val, self._shape)

    # ------------------------------------------------------------------ as a matrix
    def _sum_into(self, target: np.ndarray, n: int) -> Any:
        """``out[t] = sum of val[i] with target[i] == t`` for ``n`` targets: a gSpMM from the
        entries to the targets when the values are floating (so gradients flow), NumPy otherwise."""
        B, val = self._B, self._val
        if B.dtype_name(val).startswith(("float", "bfloat")):
            from nodeweave.ops import gspmm

            rel = _C.RelationGraph.from_coo(self.nnz, n, np.arange(self.nnz, dtype=np.int64),
                                            np.ascontiguousarray(target, np.int64), "int64")
            dev = B.device_str(val)
            return gspmm(rel if dev == "cpu" else rel.to(dev), "copy_rhs", "sum", None, val)
        host = B.to_numpy(val)
        out = np.zeros((n,) + host.shape[1:], host.dtype)
        np.add.at(out, target, host)
        return B.from_numpy(out, B.device_str(val))

    def to_dense(self) -> Any:
        """The dense matrix ``(rows, columns, *val.shape[1:])``; entries at one position add up."""
        rows, cols = self._shape
        flat = self._sum_into(self._row * cols + self._col, rows * cols)
        return flat.reshape((rows, cols) + tuple(self._B.shape(self._val)[1:]))

    def __matmul__(self, x: Any) -> Any:
        """``A @ X`` for a dense matrix ``X`` (columns x d) or vector (columns,): one gSpMM,
        differentiable in ``X`` and in the values."""
        from nodeweave.ops import gspmm

        B = backend.of(x)
        if B is None or len(B.shape(x)) not in (1, 2):
            raise nwerr.TypeError("SparseMatrix @ x: x must be a 1-D or 2-D tensor, got "
                                  f"{type(x).__name__ if B is None else B.shape(x)}")
        if B.shape(x)[0] != self._shape[1]:
            raise nwerr.ValueError(f"SparseMatrix @ x: the matrix has {self._shape[1]} columns but x has "
                                   f"{B.shape(x)[0]} rows")
        if len(self._B.shape(self._val)) != 1:
            raise nwerr.ValueError("SparseMatrix @ x needs one value per entry (val of shape (nnz,)), got "
                                   f"{self._B.shape(self._val)}")
        if self._rel is None:
            rel = _C.RelationGraph.from_coo(self._shape[1], self._shape[0], self._col, self._row, "int64")
            dev = self._B.device_str(self._val)
            self._rel = rel if dev == "cpu" else rel.to(dev)
        vector = len(B.shape(x)) == 1
        out = gspmm(self._rel, "mul", "sum", x.reshape((-1, 1)) if vector else x,
                    self._val.reshape((-1, 1)))
        return out.reshape((-1,)) if vector else out

    def __repr__(self) -> str:
        return (f"SparseMatrix(indices={self.indices()!r},\n             values={self._val!r},\n"
                f"             shape={self._shape}, nnz={self.nnz})")


def _host_ids(x: Any, name: str) -> np.ndarray:
    B = backend.of(x)
    arr = np.asarray(B.to_numpy(x) if B is not None else x)
    if arr.size == 0:
        return np.zeros(0, np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise nwerr.TypeError(f"SparseMatrix: {name} must be a 1-D array of integer ids, got shape {arr.shape} "
                              f"and dtype {arr.dtype}")
    return np.ascontiguousarray(arr, np.int64)
