"""Reading edges given as Python data: the forms :func:`nodeweave.graph`, the values of
:func:`nodeweave.heterograph` and :func:`nodeweave.create_block` accept, and the node counts that go
with them.

The forms, as in DGL:

- ``(src, dst)``: a **tuple** of two id sequences (lists, ranges, NumPy arrays or integer tensors
  of either backend); edge ``i`` is ``src[i] -> dst[i]``.
- ``[(u0, v0), (u1, v1), ...]``: a **list** of ``(u, v)`` pairs, one per edge; ``[]`` is no edges.
- ``('coo', (src, dst))``; ``('csr', (indptr, indices[, eids]))`` (rows are sources);
  ``('csc', (indptr, indices[, eids]))`` (rows are destinations).

A tuple is always the pair form and a list always a list of edges, whatever their lengths: so
``[(0, 1), (2, 3)]`` is the edges 0->1 and 2->3. The one list that could be meant either way, two
arrays or tensors (``[src, dst]`` or two pairs?), is refused, as is anything else that fits no form;
the error names the accepted forms.

>>> from nodeweave.graph.edge_data import parse_edges
>>> [a.tolist() for a in parse_edges([(0, 1), (2, 3)], "graph()").arrays]
[[0, 2], [1, 3]]
>>> [a.tolist() for a in parse_edges(([0, 1], [2, 3]), "graph()").arrays]
[[0, 1], [2, 3]]
>>> parse_edges([[0, 1, 2], [1, 2, 0]], "graph()")
Traceback (most recent call last):
...
nodeweave.errors.ValueError: graph(): a list is read as edges, one (u, v) pair per item, but item 0 holds 3 values; pass (src, dst) id sequences as a tuple. Accepted forms: a (src, dst) tuple of id sequences, arrays or tensors; a list of (u, v) pairs; ('coo', (src, dst)); ('csr' or 'csc', (indptr, indices[, eids]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave.graph.heterograph import RelationGraph
from nodeweave.graph.idtypes import idtype_name
from nodeweave import errors as nwerr

__all__ = ["EDGE_FORMS", "RelSpec", "parse_edges", "id_array", "check_count", "infer_idtype"]

EDGE_FORMS = ("a (src, dst) tuple of id sequences, arrays or tensors; a list of (u, v) pairs; "
              "('coo', (src, dst)); ('csr' or 'csc', (indptr, indices[, eids]))")


# ----------------------------------------------------------------------------- ids and counts


def id_array(x: Any, name: str) -> np.ndarray:
    """``x`` as a 1-D int64 array of non-negative ids; TypeError for non-integers, ValueError for
    negative ids or wrong dimensions."""
    B = backend.of(x)
    if B is not None:
        arr = B.to_numpy(x)
    elif isinstance(x, (str, bytes)) or np.isscalar(x) and not isinstance(x, (int, np.integer)):
        raise nwerr.TypeError(f"{name} must be a sequence of integer node ids, got {type(x).__name__}")
    else:
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError) as e:
            raise nwerr.TypeError(f"{name} must be a sequence of integer node ids: {e}") from None
    if arr.size == 0 and arr.dtype.kind in "fO" and not isinstance(x, np.ndarray) and B is None:
        arr = arr.astype(np.int64).reshape(0)  # [] parses as float64
    if arr.dtype.kind not in "iu":
        raise nwerr.TypeError(f"{name} must hold integer node ids, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise nwerr.ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise nwerr.ValueError(f"{name} holds id {int(arr.max())}, beyond the int64 range")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and arr.min() < 0:
        i = int(np.flatnonzero(arr < 0)[0])
        raise nwerr.ValueError(f"{name}[{i}] = {int(arr[i])} is negative; node ids start at 0")
    return arr


def check_count(n: Any, name: str) -> int:
    """A node or edge count: an int, a NumPy integer or a 0-d integer tensor of either backend
    (``ids.max() + 1``). TypeError for anything else (floats and bools included), ValueError when
    negative."""
    B = backend.of(n)
    if B is not None:
        arr = B.to_numpy(n)
        if arr.ndim != 0 or arr.dtype.kind not in "iu":
            raise nwerr.TypeError(f"{name} must be an int, got a tensor of shape {tuple(arr.shape)} and "
                                  f"dtype {arr.dtype}")
        n = arr.item()
    elif isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise nwerr.TypeError(f"{name} must be an int, got {type(n).__name__} {n!r}")
    if n < 0:
        raise nwerr.ValueError(f"{name} must be non-negative, got {n}")
    return int(n)


def _is_int32_tensor(x: Any) -> bool:
    B = backend.of(x)
    return B is not None and B.dtype_name(x) == "int32"


# ----------------------------------------------------------------------------- one relation


class RelSpec:
    """One relation's parsed input: COO ``(src, dst)`` or CSR/CSC ``(indptr, indices, eids)``.

    ``int32_given``: the ids came as int32 tensors, which makes int32 the default id type (as in
    DGL, where tensors keep their type and sequences become int64)."""

    def __init__(self, fmt: str, arrays: tuple, int32_given: bool) -> None:
        self.fmt, self.arrays, self.int32_given = fmt, arrays, int32_given

    def needed(self) -> tuple[int, int]:
        """The least (num_src, num_dst) the ids require."""
        if self.fmt == "coo":
            src, dst = self.arrays
            return (int(src.max()) + 1 if src.size else 0, int(dst.max()) + 1 if dst.size else 0)
        indptr, indices, _ = self.arrays
        rows = max(len(indptr) - 1, 0)
        cols = int(indices.max()) + 1 if indices.size else 0
        return (rows, cols) if self.fmt == "csr" else (cols, rows)

    def build(self, num_src: int, num_dst: int, idtype: str, formats: Any) -> RelationGraph:
        if self.fmt == "coo":
            return RelationGraph.from_coo(num_src, num_dst, *self.arrays, idtype=idtype, formats=formats)
        indptr, indices, eids = self.arrays
        rows = num_src if self.fmt == "csr" else num_dst
        cols = num_dst if self.fmt == "csr" else num_src
        if len(indptr) - 1 < rows:  # more nodes than rows given: pad with empty rows
            last = indptr[-1] if len(indptr) else 0
            indptr = np.concatenate([indptr if len(indptr) else np.zeros(1, np.int64),
                                     np.full(rows - max(len(indptr) - 1, 0), last, np.int64)])
        rel = RelationGraph.from_csr(rows, cols, indptr, indices, eids, idtype=idtype)
        if self.fmt == "csc":
            rel = rel.reverse()
        return rel if formats is None else rel.with_formats(formats)


def infer_idtype(idtype: Any, specs: list[RelSpec]) -> str:
    """``idtype`` parsed, or by default int32 when every relation's ids came as int32 tensors."""
    if idtype is not None:
        return idtype_name(idtype)
    return "int32" if specs and all(s.int32_given for s in specs) else "int64"


def _describe(x: Any) -> str:
    B = backend.of(x)
    if B is not None or isinstance(x, np.ndarray):
        shape = tuple(B.shape(x)) if B is not None else x.shape
        return f"a {'tensor' if B is not None else 'NumPy array'} of shape {shape}"
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of {len(x)} items"
    return f"{type(x).__name__} {x!r}"[:80]


def _is_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) or backend.of(x) is not None


def _coo(src: Any, dst: Any) -> RelSpec:
    s, d = id_array(src, "src"), id_array(dst, "dst")
    if len(s) != len(d):
        raise nwerr.ValueError(f"src and dst must have the same length, got {len(s)} and {len(d)}")
    return RelSpec("coo", (s, d), _is_int32_tensor(src) and _is_int32_tensor(dst))


def _edge_list(data: list, where: str) -> RelSpec:
    """A list of (u, v) pairs. NumPy reads a list of pairs (of ints, 0-d tensors or length-2
    arrays) in one C loop; only when that fails is each item looked at, to name the bad one."""
    empty = np.zeros(0, np.int64)
    if not data:
        return RelSpec("coo", (empty, empty), False)
    if len(data) == 2 and all(_is_array(x) for x in data):
        raise nwerr.ValueError(f"{where}: a list of two arrays or tensors is ambiguous, [src, dst] or two "
                               "(u, v) pairs: pass (src, dst) as a tuple, or the pairs as a list of (u, v) "
                               f"tuples. Accepted forms: {EDGE_FORMS}")
    try:
        arr = np.asarray(data)
    except Exception:  # noqa: BLE001 - ragged, or tensors NumPy cannot read: diagnosed below
        arr = None
    if arr is None or arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype == object:
        arr = np.asarray([_pair(item, i, where) for i, item in enumerate(data)])
    if arr.dtype.kind == "i" and arr.size and arr.min() < 0:
        i = int(np.flatnonzero((arr < 0).any(axis=1))[0])
        raise nwerr.ValueError(f"{where}: edge {i} = ({arr[i, 0]}, {arr[i, 1]}) has a negative node id; "
                               "node ids start at 0")
    name = f"{where}: the edge list"
    # As DGL: pairs given as int32 tensors make an int32 graph, as (src, dst) int32 tensors do.
    int32_given = all(_is_int32_tensor(item) for item in data)
    return RelSpec("coo", (id_array(arr[:, 0], name), id_array(arr[:, 1], name)), int32_given)


def _pair(item: Any, i: int, where: str) -> tuple[Any, Any]:
    """Item ``i`` of an edge list as (u, v) NumPy scalars; ValueError naming it when it is not a pair."""
    B = backend.of(item)
    values = B.to_numpy(item) if B is not None else item
    if isinstance(values, np.ndarray) and values.ndim == 1 or isinstance(values, (tuple, list)):
        if len(values) == 2:
            return tuple(_scalar(v) for v in values)
        held = f"holds {len(values)} values"
    else:
        held = f"is {_describe(item)}"
    raise nwerr.ValueError(f"{where}: a list is read as edges, one (u, v) pair per item, but item {i} "
                           f"{held}; pass (src, dst) id sequences as a tuple. Accepted forms: {EDGE_FORMS}")


def _scalar(v: Any) -> Any:
    B = backend.of(v)
    return B.to_numpy(v)[()] if B is not None else v


def parse_edges(data: Any, where: str) -> RelSpec:
    """One relation's edges in any accepted form (see the module docstring); ``where`` starts the
    error messages (``"graph()"``, ``"data_dict[('u', 'r', 'v')]"``)."""
    if isinstance(data, tuple) and len(data) == 2 and isinstance(data[0], str):
        return _sparse(data[0], data[1], where)
    if isinstance(data, tuple):
        if len(data) != 2:
            raise nwerr.ValueError(f"{where}: a tuple is read as (src, dst) and must hold 2 id sequences, got "
                                   f"{len(data)} items (a list of (u, v) pairs is a list). "
                                   f"Accepted forms: {EDGE_FORMS}")
        return _coo(*data)
    if isinstance(data, list):
        return _edge_list(data, where)
    hint = ""
    if _is_array(data) and len(getattr(data, "shape", ())) == 2:
        hint = " (for an edge_index of shape (2, E) pass (edge_index[0], edge_index[1]))"
    raise nwerr.TypeError(f"{where}: expected {EDGE_FORMS}; got {_describe(data)}{hint}")


def _sparse(fmt_name: str, payload: Any, where: str) -> RelSpec:
    fmt = fmt_name.lower()
    if fmt not in ("coo", "csr", "csc"):
        raise nwerr.ValueError(f"{where}: unknown sparse format {fmt_name!r} (use 'coo', 'csr' or 'csc')")
    if not isinstance(payload, (tuple, list)):
        arrays = "(src, dst)" if fmt == "coo" else "(indptr, indices[, eids])"
        raise nwerr.TypeError(f"{where}: expected ({fmt_name!r}, {arrays}), got {_describe(payload)} for the arrays")
    if fmt == "coo":
        if len(payload) != 2:
            raise nwerr.ValueError(f"{where}: expected ('coo', (src, dst)), got {len(payload)} arrays")
        return _coo(*payload)
    if len(payload) not in (2, 3):
        raise nwerr.ValueError(f"{where}: expected (indptr, indices[, eids]) for {fmt}, got {len(payload)} items")
    indptr = id_array(payload[0], "indptr")
    indices = id_array(payload[1], "indices")
    eids = None
    if len(payload) == 3 and payload[2] is not None:
        e = id_array(payload[2], "eids")
        eids = e if len(e) else None
        if eids is not None and len(eids) != len(indices):
            raise nwerr.ValueError(f"eids must have one id per entry of indices: got {len(eids)} and {len(indices)}")
    if len(indptr) == 0:
        if len(indices):
            raise nwerr.ValueError("indptr is empty but indices is not")
        indptr = np.zeros(1, np.int64)
    if indptr[-1] != len(indices):
        raise nwerr.ValueError(f"indptr[-1] must equal len(indices) = {len(indices)}, got {int(indptr[-1])}")
    if np.any(np.diff(indptr) < 0):
        raise nwerr.ValueError("indptr must be non-decreasing")
    return RelSpec(fmt, (indptr, indices, eids),
                   _is_int32_tensor(payload[0]) and _is_int32_tensor(payload[1]))
