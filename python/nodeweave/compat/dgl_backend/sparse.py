"""Sparse matrices (PyTorch only: nodeweave.core has no sparse tensors): DGL's
``get_preferred_sparse_format``, ``sparse_matrix`` and ``sparse_matrix_indices``.

>>> import torch
>>> from nodeweave.compat import dgl_backend as F
>>> m, _ = F.sparse_matrix(torch.tensor([1.0, 2.0]), ("coo", torch.tensor([[0, 1], [1, 0]])), (2, 2))
>>> m.to_dense().tolist()
[[0.0, 1.0], [2.0, 0.0]]
>>> fmt, coord = F.sparse_matrix_indices(m)
>>> fmt, coord.tolist()
('coo', [[0, 1], [1, 0]])
"""

from __future__ import annotations

from typing import Any, Sequence

from nodeweave import errors as nwerr
from nodeweave.compat.dgl_backend import _library

__all__ = ["get_preferred_sparse_format", "sparse_matrix", "sparse_matrix_indices"]


def get_preferred_sparse_format() -> str:
    """``'coo'``: the format :func:`sparse_matrix` builds without conversion work."""
    _library.torch_only("get_preferred_sparse_format", _library.active())
    return "coo"


def sparse_matrix(data: Any, index: Sequence[Any], shape: Sequence[int],
                  force_format: bool = False) -> tuple[Any, None]:
    """``(matrix, None)``: a torch sparse matrix of ``shape`` with values ``data`` at ``index`` —
    ``('coo', coord)`` with ``coord`` of shape (2, nnz), or ``('csr', indices, indptr)`` as in
    ``scipy.sparse.csr_matrix``. The matrix keeps the format it is given, so ``force_format`` changes
    nothing and no value reordering is returned (the second item). Indices outside ``shape`` raise.
    """
    lib = _library.of(data)
    _library.torch_only("sparse_matrix", lib)
    fmt = index[0] if index else None
    if fmt == "coo" and len(index) == 2:
        return lib.sparse_coo_tensor(index[1], data, tuple(shape), check_invariants=True), None
    if fmt == "csr" and len(index) == 3:
        return lib.sparse_csr_tensor(index[2], index[1], data, size=tuple(shape), check_invariants=True), None
    raise nwerr.ValueError(f"index must be ('coo', coord) or ('csr', indices, indptr), got format {fmt!r} "
                           f"with {len(index)} items")


def sparse_matrix_indices(spmat: Any) -> tuple[Any, ...]:
    """The index of a matrix from :func:`sparse_matrix`: ``('coo', coord)`` or
    ``('csr', indices, indptr)``."""
    lib = _library.of(spmat)
    _library.torch_only("sparse_matrix_indices", lib)
    if spmat.layout == lib.sparse_coo:
        return "coo", spmat._indices()  # as built: coalescing would reorder the entries
    if spmat.layout == lib.sparse_csr:
        return "csr", spmat.col_indices(), spmat.crow_indices()
    raise nwerr.ValueError(f"spmat must be a COO or CSR sparse tensor, got layout {spmat.layout}")
