"""Fast, strict parsing of the plain-text tables datasets ship: integer and float columns separated
by whitespace or commas (TU Dortmund files, edge lists, index files), and tab-separated string
columns (knowledge-graph triples, dictionaries).

Numbers are parsed in one vectorized NumPy call. Only when that fails or the value count does not
match the line count is the file walked line by line, to report the first bad line: a malformed file
costs a second pass, a good one does not. Every error is a :class:`DataFormatError` naming the file
and the 1-based line. Trailing empty lines are allowed; empty lines in between are errors.

>>> from nodeweave.data.text_tables import int_table, str_table
>>> int_table(b"1, 2\\n2, 1\\n", "A.txt", 2).tolist()
[[1, 2], [2, 1]]
>>> int_table(b"1, 2\\n2\\n", "A.txt", 2)
Traceback (most recent call last):
...
nodeweave.data.errors.DataFormatError: A.txt:2: expected 2 numbers, got 1: '2'
>>> str_table("a\\tr\\tb\\n", "train.txt", 3)
[['a', 'r', 'b']]
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from typing import Any

import numpy as np

from nodeweave.data.errors import DataFormatError

__all__ = ["read_bytes", "read_text", "int_table", "float_table", "str_table"]

_FIELD_SPLIT = re.compile(rb"[,\s]+")
_WS_SPLIT = re.compile(rb"\s+")
_INT = re.compile(rb"[+-]?[0-9]+")


def read_bytes(path: str | os.PathLike) -> bytes:
    """A file's bytes, decompressed when the name ends in ``.gz``.

    Raises :class:`DataFormatError` for a truncated or corrupt gzip file, FileNotFoundError when absent.
    """
    p = os.fspath(path)
    if not p.endswith(".gz"):
        with open(p, "rb") as fh:
            return fh.read()
    try:
        with gzip.open(p, "rb") as fh:
            return fh.read()
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise DataFormatError(p, f"truncated or corrupt gzip data ({e})") from None


def read_text(path: str | os.PathLike) -> str:
    """A file's text (UTF-8, ``.gz`` decompressed); a decoding error names the line."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise DataFormatError(path, f"not valid UTF-8 ({e.reason})", line=line) from None


def _lines_for_check(data: bytes) -> int:
    """Number of lines, not counting trailing empty ones."""
    body = data.rstrip()
    return body.count(b"\n") + 1 if body else 0


def _diagnose(data: bytes, path: Any, ncols: int | None, kind: str, commas: bool) -> None:
    """Walks the lines to raise a precise error for the first bad one."""
    splitter = _FIELD_SPLIT if commas else _WS_SPLIT
    lines = data.split(b"\n")
    last = len(lines)
    while last and not lines[last - 1].strip():
        last -= 1
    for i, raw in enumerate(lines[:last], 1):
        body = raw.strip()
        if not body:
            raise DataFormatError(path, "empty line inside the table", line=i)
        fields = splitter.split(body)
        if ncols is not None and len(fields) != ncols:
            raise DataFormatError(path, f"expected {ncols} numbers, got {len(fields)}: {_show(raw)}", line=i)
        for fld in fields:
            # stricter than int()/float(): no '_' digit separators, ASCII only, as NumPy parses them
            ok = _INT.fullmatch(fld) if kind == "int" else (b"_" not in fld and _is_float(fld))
            if not ok:
                what = "an integer" if kind == "int" else "a number"
                raise DataFormatError(path, f"{_show(fld)} is not {what} (line {_show(raw)})", line=i)
            if kind == "int" and not -(1 << 63) <= int(fld) < (1 << 63):
                raise DataFormatError(path, f"{_show(fld)} is outside the int64 range", line=i)


def _is_float(b: bytes) -> bool:
    try:
        float(b)
    except ValueError:
        return False
    return True


def _show(b: bytes) -> str:
    s = b.decode("utf-8", "replace").rstrip("\r")
    return repr(s if len(s) <= 80 else s[:77] + "...")


def _numeric(data: bytes, path: Any, ncols: int | None, kind: str, commas: bool) -> np.ndarray:
    nlines = _lines_for_check(data)
    if ncols is None:  # width from the first line
        first = data.lstrip().split(b"\n", 1)[0].strip()
        ncols = len((_FIELD_SPLIT if commas else _WS_SPLIT).split(first)) if first else 1
    text = data.replace(b",", b" ") if commas else data
    dtype = np.int64 if kind == "int" else np.float64
    try:
        flat = np.fromstring(text, dtype=dtype, sep=" ")
    except ValueError:
        _diagnose(data, path, ncols, kind, commas)
        raise DataFormatError(path, f"could not parse the {kind} table") from None
    if flat.size != nlines * ncols:  # missing, extra or empty fields
        _diagnose(data, path, ncols, kind, commas)
        raise DataFormatError(path, f"expected {nlines} x {ncols} numbers, got {flat.size}")
    if kind == "int" and flat.size:
        lim = np.iinfo(np.int64)
        if np.any((flat == lim.max) | (flat == lim.min)):  # NumPy saturates out-of-range integers
            _diagnose(data, path, ncols, kind, commas)
    return flat.reshape(nlines, ncols)


def int_table(data: bytes, path: Any, ncols: int, commas: bool = True) -> np.ndarray:
    """An ``(n, ncols)`` int64 array from ``n`` lines of ``ncols`` integers each.

    Fields are separated by whitespace, or also by commas with ``commas=True`` (TU format ``1, 2``).
    """
    return _numeric(data, path, ncols, "int", commas)


def float_table(data: bytes, path: Any, ncols: int | None = None, commas: bool = True) -> np.ndarray:
    """An ``(n, ncols)`` float64 array; ``ncols=None`` takes the width of the first line."""
    return _numeric(data, path, ncols, "float", commas)


def str_table(text: str, path: Any, ncols: int, sep: str = "\t", first_line: int = 1) -> list[list[str]]:
    """Rows of exactly ``ncols`` fields separated by ``sep``; ``\\r`` line ends are tolerated.

    ``first_line`` is the file line number of ``text``'s first line (after a skipped header).
    """
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    rows = [ln.rstrip("\r").split(sep) for ln in lines]
    bad = next((i for i, r in enumerate(rows) if len(r) != ncols or not all(r)), None)
    if bad is not None:
        r = rows[bad]
        if len(r) != ncols:
            msg = f"expected {ncols} {sep!r}-separated fields, got {len(r)}: {lines[bad][:80]!r}"
        else:
            msg = f"empty field in {lines[bad][:80]!r}"
        raise DataFormatError(path, msg, line=first_line + bad)
    return rows
