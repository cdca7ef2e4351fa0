"""``save`` / ``load``: tensors and nested containers of tensors in a versioned binary file.

``obj`` may be a tensor, ``None``, a bool/int/float/str, a dtype, or a list/tuple/dict (plain or
``OrderedDict``) of those, nested to any depth: module ``state_dict()``\\ s, optimizer state dicts,
whole checkpoints. Pickle is never used, so loading a file cannot run code.

File format, version 1 (all integers little-endian)::

    offset  size  field
    0       8     magic b"\\x89NWT\\r\\n\\x1a\\n"  (PNG-style: catches 7-bit and newline-mangling transfers)
    8       4     uint32 format version (1)
    12      8     uint64 header length H
    20      4     uint32 CRC-32 of the header bytes
    24      H     header: UTF-8 JSON object (below)
    ...           zero padding up to D = 24 + H rounded up to a multiple of 64
    D       S     data: each tensor's raw bytes (C order, little-endian) at D + offset, offsets
                  multiples of 64, zero padding between tensors; the file ends at D + S

    header = {"data_size": S,
              "tensors": [{"dtype": "float32", "shape": [2, 3], "offset": 0, "nbytes": 24,
                           "crc32": ..., "requires_grad": false}, ...],
              "root": node}
    node   = {"type": "tensor", "index": i}            (index into "tensors"; a tensor object that
                                                        appears twice is stored once and loads as
                                                        one object)
           | {"type": "none"} | {"type": "bool", "value": true} | {"type": "int", "value": 3}
           | {"type": "float", "value": "0x1.8p+1"}    (float.hex: exact, and covers inf/nan)
           | {"type": "str", "value": "..."} | {"type": "dtype", "value": "float32"}
           | {"type": "list" | "tuple", "items": [node, ...]}
           | {"type": "dict", "ordered": bool, "items": [[key_node, value_node], ...]}

Every byte is checked on load: magic, version, header CRC and JSON schema, tensor dtypes, shapes,
sizes and offsets against the file length, zero padding, and each tensor's CRC-32. Any mismatch --
a truncated or corrupted file -- raises ValueError naming the file; nothing is returned half-read.
``save`` writes a temporary file in the destination directory and renames it over the target
(``os.replace``), so the target is never left partially written.

>>> import os, tempfile, nodeweave.core as nc
>>> path = os.path.join(tempfile.mkdtemp(), "ckpt.nw")
>>> nc.save({"w": nc.tensor([1.0, 2.0]), "epoch": 3}, path)
>>> ck = nc.load(path)
>>> ck["w"].tolist(), ck["epoch"]
([1.0, 2.0], 3)
"""

from __future__ import annotations

import ctypes
import io
import json
import numbers
import os
import struct
import sys
import zlib
from collections import OrderedDict
from typing import Any, BinaryIO, Dict, List, Union

from nodeweave import _C
from nodeweave._binfile import FormatError as _Corrupt
from nodeweave._binfile import align as _align
from nodeweave._binfile import atomic_write, check_entries
from nodeweave._binfile import is_int as _is_int
from nodeweave._binfile import read_exact_into as _read_exact_into
from nodeweave._binfile import require as _require
from nodeweave._binfile import skip_zeros as _skip_zeros
from nodeweave._C import Tensor
from nodeweave import errors as nwerr

__all__ = ["save", "load", "MAGIC", "FORMAT_VERSION"]

MAGIC = b"\x89NWT\r\n\x1a\n"
FORMAT_VERSION = 1
_PREAMBLE = struct.Struct("<8sIQI")  # magic, version, header length, header crc
_MAX_DEPTH = 200  # each level costs Python stack frames; the default limit is 1000
_MAX_DIMS = 64
_DTYPES = {name: getattr(_C.dtype, name) for name in
           ("bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64")}
_ITEMSIZE = {name: dt.itemsize for name, dt in _DTYPES.items()}

PathOrFile = Union[str, "os.PathLike[str]", BinaryIO]



def _bytes_of(t: Tensor) -> memoryview:
    """A zero-copy byte view of a contiguous CPU tensor (the caller keeps ``t`` alive)."""
    n = t.numel() * t.element_size()
    if n == 0:
        return memoryview(b"")
    return memoryview((ctypes.c_ubyte * n).from_address(t.data_ptr())).cast("B")


# ---------------------------------------------------------------- save
class _Encoder:
    def __init__(self) -> None:
        self.tensors: List[Tensor] = []
        self.entries: List[Dict[str, Any]] = []
        self.by_id: Dict[int, int] = {}
        self.keep: List[Any] = []  # originals, so ids stay unique while encoding
        self.size = 0
        self.active: set = set()

    def tensor(self, t: Tensor) -> Dict[str, Any]:
        idx = self.by_id.get(id(t))
        if idx is None:
            data = t.detach()
            if data.device.type != "cpu":
                data = data._to_device("cpu")
            data = data.contiguous()
            nbytes = data.numel() * data.element_size()
            self.size = _align(self.size)
            idx = len(self.tensors)
            self.tensors.append(data)
            self.keep.append(t)
            self.entries.append({"dtype": data.dtype.name, "shape": list(data.shape), "offset": self.size,
                                 "nbytes": nbytes, "crc32": zlib.crc32(_bytes_of(data)),
                                 "requires_grad": bool(t.requires_grad)})
            self.size += nbytes
            self.by_id[id(t)] = idx
        return {"type": "tensor", "index": idx}

    def node(self, obj: Any, where: str) -> Dict[str, Any]:
        if isinstance(obj, Tensor):
            return self.tensor(obj)
        if obj is None:
            return {"type": "none"}
        if isinstance(obj, bool):
            return {"type": "bool", "value": obj}
        if isinstance(obj, numbers.Integral):
            return {"type": "int", "value": int(obj)}
        if isinstance(obj, numbers.Real):
            return {"type": "float", "value": float(obj).hex()}
        if isinstance(obj, str):
            return {"type": "str", "value": obj}
        if isinstance(obj, _C.dtype):
            return {"type": "dtype", "value": obj.name}
        if isinstance(obj, (list, tuple, dict)):
            if id(obj) in self.active:
                raise nwerr.ValueError(f"save: obj contains a reference cycle at {where}")
            self.active.add(id(obj))
            try:
                if isinstance(obj, dict):
                    items = [[self.node(k, f"{where} (key {k!r})"), self.node(v, f"{where}[{k!r}]")]
                             for k, v in obj.items()]
                    return {"type": "dict", "ordered": isinstance(obj, OrderedDict), "items": items}
                kind = "list" if isinstance(obj, list) else "tuple"
                return {"type": kind, "items": [self.node(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
            finally:
                self.active.discard(id(obj))
        raise nwerr.TypeError(f"save: can't save an object of type {type(obj).__name__} at {where}; supported are "
                              f"tensors, None, bool, int, float, str, dtypes and lists/tuples/dicts of them")


def _write_tensor_data(f: BinaryIO, t: Tensor) -> None:
    """Writes one tensor's bytes (a separate function so tests can simulate a failing disk)."""
    f.write(_bytes_of(t))


def _write(f: BinaryIO, enc: _Encoder, root: Dict[str, Any]) -> None:
    header = json.dumps({"data_size": enc.size, "tensors": enc.entries, "root": root},
                        separators=(",", ":"), allow_nan=False).encode("utf-8")
    f.write(_PREAMBLE.pack(MAGIC, FORMAT_VERSION, len(header), zlib.crc32(header)))
    f.write(header)
    pos = _PREAMBLE.size + len(header)
    data_start = _align(pos)
    f.write(b"\0" * (data_start - pos))
    pos = 0
    for t, e in zip(enc.tensors, enc.entries):
        f.write(b"\0" * (e["offset"] - pos))
        _write_tensor_data(f, t)
        pos = e["offset"] + e["nbytes"]


def save(obj: Any, f: PathOrFile) -> None:
    """Saves ``obj`` (a tensor or nested containers of tensors and scalars) to a path or binary file.

    Writing to a path is atomic: the data goes to a temporary file in the same directory that is
    renamed over ``f`` only when complete.
    """
    if sys.byteorder != "little":
        raise nwerr.NotImplementedError("save: the nodeweave format is little-endian; big-endian hosts are unsupported")
    enc = _Encoder()
    root = enc.node(obj, "obj")
    if hasattr(f, "write"):
        _write(f, enc, root)
        return
    if not isinstance(f, (str, os.PathLike)):
        raise nwerr.TypeError(f"save: f must be a path or a writable binary file, got {type(f).__name__}")
    atomic_write(os.fspath(f), lambda out: _write(out, enc, root))


# ---------------------------------------------------------------- load
def _check_entries(header: Dict[str, Any]) -> List[Dict[str, Any]]:
    entries = check_entries(header, "tensors", "tensor", _ITEMSIZE, _MAX_DIMS)
    for i, e in enumerate(entries):
        _require(isinstance(e.get("requires_grad"), bool), f"tensor {i} has an invalid requires_grad flag")
    return entries


def _read_tensors(src: BinaryIO, entries: List[Dict[str, Any]], data_size: int) -> List[Tensor]:
    out = []
    pos = 0
    for i, e in enumerate(entries):
        _skip_zeros(src, e["offset"] - pos, f"before tensor {i}")
        t = _C.empty(e["shape"], dtype=_DTYPES[e["dtype"]])
        view = _bytes_of(t)
        _read_exact_into(src, view)
        _require(zlib.crc32(view) == e["crc32"], f"tensor {i} data fails its CRC-32 check")
        if e["requires_grad"] and t.is_floating_point():
            t.requires_grad_(True)
        out.append(t)
        pos = e["offset"] + e["nbytes"]
    _skip_zeros(src, data_size - pos, "at the end of the data section")
    return out


def _decode(node: Any, tensors: List[Tensor], depth: int) -> Any:
    _require(depth <= _MAX_DEPTH, f"structure nested deeper than {_MAX_DEPTH} levels")
    _require(isinstance(node, dict) and isinstance(node.get("type"), str), "structure node is not a typed object")
    kind = node["type"]
    if kind == "tensor":
        i = node.get("index")
        _require(_is_int(i) and 0 <= i < len(tensors), f"tensor index {i!r} is out of range")
        return tensors[i]
    if kind == "none":
        return None
    if kind in ("bool", "int", "str", "float", "dtype"):
        v = node.get("value")
        if kind == "bool":
            _require(isinstance(v, bool), "bool node without a bool value")
        elif kind == "int":
            _require(_is_int(v), "int node without an int value")
        elif kind == "str":
            _require(isinstance(v, str), "str node without a str value")
        elif kind == "dtype":
            _require(isinstance(v, str) and v in _DTYPES, f"unknown dtype {v!r}")
            v = _DTYPES[v]
        else:
            _require(isinstance(v, str), "float node without a hex string value")
            try:
                v = float.fromhex(v)
            except (ValueError, OverflowError):
                raise _Corrupt(f"bad float value {node.get('value')!r}") from None
        return v
    if kind in ("list", "tuple"):
        items = node.get("items")
        _require(isinstance(items, list), f"{kind} node without items")
        vals = [_decode(n, tensors, depth + 1) for n in items]
        return vals if kind == "list" else tuple(vals)
    if kind == "dict":
        items, ordered = node.get("items"), node.get("ordered")
        _require(isinstance(items, list) and isinstance(ordered, bool), "dict node without items/ordered")
        out: Dict[Any, Any] = OrderedDict() if ordered else {}
        for pair in items:
            _require(isinstance(pair, list) and len(pair) == 2, "dict item is not a [key, value] pair")
            key = _decode(pair[0], tensors, depth + 1)
            try:
                hash(key)
            except TypeError:
                raise _Corrupt(f"dict key of type {type(key).__name__} is not hashable") from None
            _require(not isinstance(key, Tensor), "dict keys can't be tensors")
            out[key] = _decode(pair[1], tensors, depth + 1)
        return out
    raise _Corrupt(f"unknown node type {kind!r}")


def _load_from(src: BinaryIO, size: int) -> Any:
    pre = src.read(_PREAMBLE.size)
    _require(len(pre) == _PREAMBLE.size, f"file is {size} bytes, shorter than the {_PREAMBLE.size}-byte preamble")
    magic, version, hlen, hcrc = _PREAMBLE.unpack(pre)
    _require(magic == MAGIC, "not a nodeweave file (bad magic bytes)")
    _require(version == FORMAT_VERSION, f"unsupported format version {version} (this build reads {FORMAT_VERSION})")
    _require(_PREAMBLE.size + hlen <= size, f"header length {hlen} runs past the end of the {size}-byte file")
    raw = src.read(hlen)
    _require(len(raw) == hlen, "unexpected end of file in the header")
    _require(zlib.crc32(raw) == hcrc, "header fails its CRC-32 check")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise _Corrupt(f"header is not valid JSON: {e}") from None
    _require(isinstance(header, dict), "header is not a JSON object")
    entries = _check_entries(header)
    data_start = _align(_PREAMBLE.size + hlen)
    _require(data_start + header["data_size"] == size,
             f"file is {size} bytes, but the header describes {data_start + header['data_size']}")
    _skip_zeros(src, data_start - _PREAMBLE.size - hlen, "after the header")
    tensors = _read_tensors(src, entries, header["data_size"])
    _require("root" in header, "header field 'root' is missing")
    try:
        return _decode(header["root"], tensors, 0)
    except RecursionError:
        raise _Corrupt("structure nested too deeply") from None


def load(f: PathOrFile) -> Any:
    """Loads what :func:`save` wrote. Tensors are fresh CPU tensors (they share no memory with the
    file); a truncated, corrupted or foreign file raises ValueError naming it."""
    if hasattr(f, "read"):
        name = getattr(f, "name", repr(f))
        data = f.read()
        if not isinstance(data, (bytes, bytearray)):
            raise nwerr.TypeError(f"load: {name!r} must be opened in binary mode")
        src: BinaryIO = io.BytesIO(data)
        size = len(data)
        try:
            return _load_from(src, size)
        except _Corrupt as e:
            raise nwerr.ValueError(f"load: {name}: corrupted or truncated nodeweave file: {e}") from None
    if not isinstance(f, (str, os.PathLike)):
        raise nwerr.TypeError(f"load: f must be a path or a readable binary file, got {type(f).__name__}")
    path = os.fspath(f)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        try:
            return _load_from(fh, size)
        except _Corrupt as e:
            raise nwerr.ValueError(f"load: {path}: corrupted or truncated nodeweave file: {e}") from None
