"""Pieces shared by nodeweave's file formats (``nodeweave.core.save``, ``nodeweave.save_graphs``,
the KGE checkpoints, the Cluster-GCN cache, graph partitions): atomic writes, 64-byte alignment, and
the checks a loader uses to turn any format violation into one internal exception.

>>> align(65)
128
"""

from __future__ import annotations

import os
import tempfile
from typing import BinaryIO, Callable, Mapping
from nodeweave import errors as nwerr

ALIGN = 64
_CHUNK = 1 << 24  # padding is read and checked in chunks of at most this many bytes

# umask, for giving the renamed temporary file the permissions a plain open() would.
_UMASK = os.umask(0)
os.umask(_UMASK)


def align(n: int) -> int:
    """``n`` rounded up to a multiple of :data:`ALIGN`."""
    return (n + ALIGN - 1) // ALIGN * ALIGN


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], None] | bytes) -> None:
    """Runs ``write`` (or writes the bytes ``write``) on a temporary file in ``path``'s directory,
    flushes it to disk, then renames it over ``path`` and syncs the directory: a reader never sees a
    half-written file, a failed write leaves the old one in place, and after a crash or ``kill -9``
    ``path`` holds either the old or the new contents.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "note.txt")
    >>> atomic_write(path, b"hello")
    >>> open(path, "rb").read(), os.listdir(os.path.dirname(path))
    (b'hello', ['note.txt'])
    """
    if isinstance(write, (bytes, bytearray, memoryview)):
        data = write
        write = lambda out: out.write(data)  # noqa: E731
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable; not every platform can fsync a directory
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


class FormatError(nwerr.NodeweaveError):
    """Internal: a format violation; loaders turn it into ValueError naming the file."""


def require(cond: bool, msg: str) -> None:
    if not cond:
        raise FormatError(msg)


def is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_entries(header: dict, key: str, what: str, itemsize: Mapping[str, int],
                  max_dims: int) -> list:
    """Checks the table ``header[key]`` that locates each array in the data section: a known dtype
    (``itemsize`` maps the names allowed to their sizes), a valid shape, ``nbytes`` matching both,
    an aligned offset past the previous array, an end inside ``header['data_size']``, and a CRC-32.
    ``what`` names one entry in messages (``'tensor'``, ``'array'``). Returns the entries."""
    data_size = header.get("data_size")
    require(is_int(data_size) and data_size >= 0, "header field 'data_size' is missing or invalid")
    entries = header.get(key)
    require(isinstance(entries, list), f"header field {key!r} is missing or not a list")
    end = 0
    for i, e in enumerate(entries):
        require(isinstance(e, dict), f"{what} entry {i} is not an object")
        dt = e.get("dtype")
        require(isinstance(dt, str) and dt in itemsize, f"{what} {i} has an unknown dtype {dt!r}")
        shape = e.get("shape")
        require(isinstance(shape, list) and len(shape) <= max_dims
                and all(is_int(s) and 0 <= s < 2 ** 62 for s in shape),
                f"{what} {i} has an invalid shape {shape!r}")
        numel = 1
        for s in shape:
            numel *= s
        nbytes, offset = e.get("nbytes"), e.get("offset")
        require(is_int(nbytes) and nbytes == numel * itemsize[dt],
                f"{what} {i}: nbytes {nbytes!r} does not match dtype {dt} and shape {shape}")
        require(is_int(offset) and offset >= end and offset % ALIGN == 0,
                f"{what} {i}: offset {offset!r} is misaligned or overlaps the previous {what}")
        end = offset + nbytes
        require(end <= data_size, f"{what} {i} ends at byte {end} of a {data_size}-byte data section")
        require(is_int(e.get("crc32")) and 0 <= e["crc32"] < 2 ** 32, f"{what} {i} has an invalid crc32")
    return entries


def read_exact_into(src: BinaryIO, view: memoryview) -> None:
    """Fills ``view`` from ``src``; a short file is a FormatError."""
    got = 0
    n = len(view)
    while got < n:
        k = src.readinto(view[got:])
        require(bool(k), f"unexpected end of file ({n - got} bytes missing)")
        got += k


def skip_zeros(src: BinaryIO, n: int, where: str) -> None:
    """Consumes ``n`` padding bytes, which must all be zero."""
    while n > 0:
        chunk = src.read(min(n, _CHUNK))
        require(len(chunk) > 0, "unexpected end of file")
        require(chunk.count(0) == len(chunk), f"non-zero padding {where}")
        n -= len(chunk)
