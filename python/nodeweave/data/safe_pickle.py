"""Loading pickled data files without letting them run code.

A pickle names Python callables ("globals") that the loader calls to rebuild objects; a crafted file
can name ``os.system``. :class:`RestrictedUnpickler` resolves only the globals of an explicit
whitelist and refuses every other one with :class:`pickle.UnpicklingError` naming it, before anything
is called.

:data:`PLANETOID_GLOBALS`, the whitelist of the Planetoid files (Python-2 pickles of NumPy arrays,
SciPy CSR matrices and ``defaultdict(list)``), allows exactly: NumPy's array reconstructor,
``numpy.ndarray``, ``numpy.dtype``, ``collections.defaultdict`` and ``list``. A pickled
``scipy.sparse.csr_matrix`` is not rebuilt by SciPy's own code: the name resolves to
:class:`SparseRecord`, which only keeps the pickled attribute dict; :func:`to_csr` then validates the
arrays and builds the matrix from them.

>>> import io, os, pickle
>>> from nodeweave.data.safe_pickle import load_pickle
>>> class Evil:
...     def __reduce__(self):
...         return (os.system, ("echo owned",))
>>> import tempfile; path = os.path.join(tempfile.mkdtemp(), "evil.pkl")
>>> with open(path, "wb") as fh:
...     pickle.dump(Evil(), fh, protocol=2)
>>> load_pickle(path)
Traceback (most recent call last):
...
nodeweave.data.safe_pickle.ForbiddenGlobalError: .../evil.pkl: refusing to load the global 'posix.system': only numpy/scipy/collections globals needed by the dataset are allowed
"""

from __future__ import annotations

import collections
import os
import pickle
from typing import Any, Mapping

import numpy as np

from nodeweave.data.errors import DataFormatError
from nodeweave import errors as nwerr

__all__ = ["RestrictedUnpickler", "ForbiddenGlobalError", "SparseRecord", "PLANETOID_GLOBALS", "load_pickle", "to_csr"]


class SparseRecord:
    """Stand-in for a pickled SciPy sparse matrix: holds the pickled attribute dict, runs no SciPy code."""

    def __setstate__(self, state: Any) -> None:
        self.state = state


def _numpy_reconstruct() -> Any:
    try:
        from numpy._core.multiarray import _reconstruct
    except ImportError:  # NumPy < 2
        from numpy.core.multiarray import _reconstruct
    return _reconstruct


PLANETOID_GLOBALS: dict[tuple[str, str], Any] = {
    ("numpy.core.multiarray", "_reconstruct"): _numpy_reconstruct(),
    ("numpy._core.multiarray", "_reconstruct"): _numpy_reconstruct(),
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("scipy.sparse.csr", "csr_matrix"): SparseRecord,
    ("scipy.sparse._csr", "csr_matrix"): SparseRecord,
    ("collections", "defaultdict"): collections.defaultdict,
    ("__builtin__", "list"): list,  # Python 2 name of builtins
    ("builtins", "list"): list,
}


class ForbiddenGlobalError(nwerr.NodeweaveError, pickle.UnpicklingError):
    """A pickle named a global outside the whitelist (a :class:`pickle.UnpicklingError`)."""


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the globals in ``allowed`` (``{(module, name): object}``)."""

    def __init__(self, file: Any, allowed: Mapping[tuple[str, str], Any], path: str = "<pickle>",
                 encoding: str = "latin1") -> None:
        super().__init__(file, encoding=encoding)
        self._allowed = allowed
        self._path = path

    def find_class(self, module: str, name: str) -> Any:
        try:
            return self._allowed[(module, name)]
        except (KeyError, TypeError):
            raise ForbiddenGlobalError(f"{self._path}: refusing to load the global '{module}.{name}': only "
                                   "numpy/scipy/collections globals needed by the dataset are allowed") from None

    def persistent_load(self, pid: Any) -> Any:
        raise ForbiddenGlobalError(f"{self._path}: refusing a persistent id in the pickle")


def load_pickle(path: str | os.PathLike, allowed: Mapping[tuple[str, str], Any] = PLANETOID_GLOBALS) -> Any:
    """Loads a pickle file with :class:`RestrictedUnpickler` (``encoding='latin1'`` for Python-2 files).

    Raises
    ------
    pickle.UnpicklingError
        The file names a global outside ``allowed`` (the message names it).
    DataFormatError
        The file is truncated or corrupt.
    """
    p = os.fspath(path)
    with open(p, "rb") as fh:
        try:
            return RestrictedUnpickler(fh, allowed, p).load()
        except ForbiddenGlobalError:
            raise
        except MemoryError:
            raise DataFormatError(p, "corrupt pickle: it asks for more memory than is available") from None
        except (pickle.UnpicklingError, EOFError) as e:
            raise DataFormatError(p, f"truncated or corrupt pickle ({e or type(e).__name__})") from None
        except (ValueError, TypeError, AttributeError, IndexError, KeyError, OverflowError,
                UnicodeDecodeError) as e:
            # whitelisted constructors called with bad arguments by a corrupt or crafted file
            raise DataFormatError(p, f"corrupt pickle ({type(e).__name__}: {e})") from None


def to_csr(obj: Any, path: Any) -> Any:
    """A validated ``scipy.sparse.csr_matrix`` from a :class:`SparseRecord`."""
    try:
        import scipy.sparse as sp
    except ImportError:
        raise nwerr.ImportError(f"reading {path} needs SciPy (pip install scipy)") from None

    if not isinstance(obj, SparseRecord) or not isinstance(getattr(obj, "state", None), dict):
        raise DataFormatError(path, f"expected a pickled scipy.sparse.csr_matrix, got {type(obj).__name__}")
    st = obj.state
    shape = st.get("_shape", st.get("shape"))
    data, indices, indptr = st.get("data"), st.get("indices"), st.get("indptr")
    if not (isinstance(shape, tuple) and len(shape) == 2 and all(isinstance(n, int) and n >= 0 for n in shape)):
        raise DataFormatError(path, f"pickled csr_matrix has an invalid shape {shape!r}")
    for name, arr, kinds in (("data", data, "fiub"), ("indices", indices, "iu"), ("indptr", indptr, "iu")):
        if not isinstance(arr, np.ndarray) or arr.ndim != 1 or arr.dtype.kind not in kinds:
            raise DataFormatError(path, f"pickled csr_matrix has an invalid {name} array")
    try:
        m = sp.csr_matrix((data, indices, indptr), shape=shape)
        m.check_format(full_check=True)
    except ValueError as e:
        raise DataFormatError(path, f"pickled csr_matrix is inconsistent: {e}") from None
    return m
