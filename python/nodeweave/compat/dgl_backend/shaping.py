"""Shapes and layouts: DGL's ``cat``, ``stack``, ``split``, ``repeat``, ``squeeze``, ``unsqueeze``,
``reshape``, ``swapaxes``, ``slice_axis``, ``narrow_row`` and the packed <-> padded conversions of
variable-length batches (``pad_packed_tensor``, ``pack_padded_tensor``).

Every one is differentiable on both backends.

>>> import torch
>>> from nodeweave.compat import dgl_backend as F
>>> x = torch.arange(5.0).reshape(5, 1)              # two sequences, of lengths 2 and 3
>>> padded = F.pad_packed_tensor(x, [2, 3], -1.0)
>>> padded.squeeze(-1).tolist()
[[0.0, 1.0, -1.0], [2.0, 3.0, 4.0]]
>>> F.pack_padded_tensor(padded, [2, 3]).squeeze(-1).tolist()
[0.0, 1.0, 2.0, 3.0, 4.0]
>>> F.repeat(torch.tensor([1, 2]), torch.tensor([2, 0]), 0).tolist()
[1, 1]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import nodeweave.core as nc
from nodeweave import backend
from nodeweave import errors as nwerr
from nodeweave.compat.dgl_backend import _library

__all__ = ["cat", "stack", "split", "repeat", "squeeze", "unsqueeze", "reshape", "swapaxes", "slice_axis",
           "narrow_row", "pad_packed_tensor", "pack_padded_tensor"]


def cat(seq: Sequence[Any], dim: int) -> Any:
    """Concatenation along ``dim``."""
    return _library.of(*seq).cat(list(seq), dim)


def stack(seq: Sequence[Any], dim: int) -> Any:
    """Stacking along a new dimension ``dim``."""
    return _library.of(*seq).stack(list(seq), dim)


def split(input: Any, sizes_or_sections: Any, dim: int) -> list[Any]:  # noqa: A002
    """``input`` cut along ``dim`` into pieces of ``sizes_or_sections`` rows each (an int: the last
    piece may be smaller) or of the listed sizes (which must add up to the dimension)."""
    sizes = sizes_or_sections
    if backend.of(sizes) is not None:
        sizes = backend.of(sizes).to_numpy(sizes).tolist()
    elif not isinstance(sizes, int):
        sizes = [int(s) for s in sizes]
    return list(_library.of(input).split(input, sizes, dim))


def _int_array(values: Any, name: str) -> np.ndarray:
    B = backend.of(values)
    arr = np.asarray(B.to_numpy(values) if B is not None else values)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise nwerr.TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    if (arr < 0).any():
        raise nwerr.ValueError(f"{name} must be non-negative, got {arr.min()}")
    return arr.astype(np.int64)


def repeat(input: Any, repeats: Any, dim: int) -> Any:  # noqa: A002
    """Each slice of ``input`` along ``dim`` repeated ``repeats`` times (an int, or one count per
    slice), consecutively: ``[a, b]`` with ``[2, 1]`` gives ``[a, a, b]``."""
    lib = _library.of(input)
    if lib is not nc:
        return lib.repeat_interleave(input, repeats, dim)
    n = int(input.shape[dim])
    counts = _int_array(repeats, "repeats")
    if counts.ndim > 1 or counts.size not in (1, n):
        raise nwerr.ValueError(f"repeats must be an int or hold one count per slice ({n}), got shape "
                               f"{counts.shape}")
    return input.index_select(dim, _library.index_tensor(input, np.repeat(np.arange(n), counts.reshape(-1))))


def squeeze(input: Any, dim: int) -> Any:  # noqa: A002
    """``input`` without dimension ``dim`` (which must have size 1 to be removed)."""
    return _library.of(input).squeeze(input, dim)


def unsqueeze(input: Any, dim: int) -> Any:  # noqa: A002
    """``input`` with a new dimension of size 1 at ``dim``."""
    return _library.of(input).unsqueeze(input, dim)


def reshape(input: Any, shape: Sequence[int]) -> Any:  # noqa: A002
    """``input`` with a new shape of the same number of elements."""
    return _library.of(input).reshape(input, tuple(shape))


def swapaxes(input: Any, axis1: int, axis2: int) -> Any:  # noqa: A002
    """``input`` with two dimensions exchanged."""
    return _library.of(input).transpose(input, axis1, axis2)


def slice_axis(data: Any, axis: int, begin: int, end: int) -> Any:
    """Indices ``begin`` to ``end - 1`` of ``data`` along ``axis``."""
    return _library.of(data).narrow(data, axis, begin, end - begin)


def narrow_row(x: Any, start: int, stop: int) -> Any:
    """Rows ``start`` to ``stop - 1`` of ``x`` (a view where the library makes one)."""
    return x[start:stop]


def _packed_positions(lengths: np.ndarray, width: int) -> np.ndarray:
    """For the rows of a packed batch (sequence i has lengths[i] rows): their row in the padded
    (batch * width) layout."""
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    within = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts, lengths)
    return np.repeat(np.arange(lengths.size, dtype=np.int64) * width, lengths) + within


def pad_packed_tensor(input: Any, lengths: Any, value: Any, l_min: int | None = None) -> Any:  # noqa: A002
    """``(B, L, *)`` from the ``(N, *)`` rows of ``B`` sequences stored one after the other
    (``lengths``, adding up to ``N``); ``L`` is the longest length, at least ``l_min``, and the
    rows past each sequence's end hold ``value``."""
    lens = _int_array(lengths, "lengths").reshape(-1)
    n = int(input.shape[0])
    if int(lens.sum()) != n:
        raise nwerr.ValueError(f"lengths must add up to input's {n} rows, got {int(lens.sum())}")
    width = max(int(lens.max()) if lens.size else 0, int(l_min or 0))
    lib = _library.of(input)
    rest = tuple(input.shape[1:])
    out = lib.full((lens.size * width,) + rest, value, dtype=input.dtype, device=input.device)
    out = out.index_copy(0, _library.index_tensor(input, _packed_positions(lens, width)), input)
    return out.reshape((lens.size, width) + rest)


def pack_padded_tensor(input: Any, lengths: Any) -> Any:  # noqa: A002
    """The inverse of :func:`pad_packed_tensor`: the first ``lengths[i]`` rows of each ``input[i]``
    (``input`` of shape ``(B, L, *)``), one sequence after the other."""
    lens = _int_array(lengths, "lengths").reshape(-1)
    batch, width = int(input.shape[0]), int(input.shape[1])
    if lens.size != batch or (lens.size and int(lens.max()) > width):
        raise nwerr.ValueError(f"lengths must hold {batch} lengths of at most {width}, got "
                               f"{lens.tolist()}")
    flat = input.reshape((batch * width,) + tuple(input.shape[2:]))
    return flat.index_select(0, _library.index_tensor(input, _packed_positions(lens, width)))
