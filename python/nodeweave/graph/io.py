"""``save_graphs`` / ``load_graphs``: graphs (structure, features, batch counts) and labels in one file.

Format, version 1 (all integers little-endian; the layout of :mod:`nodeweave.core.serialization`
with a graph-specific header)::

    offset  size  field
    0       8     magic b"\\x89NWG\\r\\n\\x1a\\n"
    8       4     uint32 format version (1)
    12      8     uint64 header length H
    20      4     uint32 CRC-32 of the header bytes
    24      H     header: UTF-8 JSON (below)
    ...           zero padding up to D = 24 + H rounded up to a multiple of 64
    D       S     data: each array's raw bytes (C order) at D + offset, offsets multiples of 64,
                  zero padding between arrays; the file ends at D + S

    header = {"data_size": S,
              "arrays": [{"dtype": "int64", "shape": [5], "offset": 0, "nbytes": 40, "crc32": ...}, ...],
              "graphs": [{"idtype": "int64",
                          "ntypes": [{"name": "_N", "num_nodes": 4, "data": {"h": array index},
                                      "batch_num_nodes": array index or null}, ...],
                          "etypes": [{"type": ["_N", "_E", "_N"], "num_edges": 5,
                                      "src": array index, "dst": array index, "data": {...},
                                      "batch_num_edges": array index or null}, ...]}, ...],
              "labels": {"name": array index, ...}}

Relations are stored as COO in edge-id order, with the graph's id type. Loading checks the magic,
version, header CRC and schema, every array's dtype, shape and extent against the file size (before
allocating anything), each array's CRC-32, feature row counts, batch counts, and the edge ids (the
C++ relation graph validates them); any violation raises ValueError naming the file. With
``idx_list``, only the chosen graphs' arrays are read. No pickle: loading cannot run code.

>>> import os, tempfile, nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([0, 1], [1, 2]))
>>> g.ndata["h"] = nc.tensor([1.0, 2.0, 3.0])
>>> path = os.path.join(tempfile.mkdtemp(), "graphs.nwg")
>>> nw.save_graphs(path, [g, nw.graph(([0], [0]))], {"y": nc.tensor([1, 0])})
>>> gs, labels = nw.load_graphs(path)
>>> len(gs), gs[0].ndata["h"].tolist(), labels["y"].tolist()
(2, [1.0, 2.0, 3.0], [1, 0])
"""

from __future__ import annotations

import json
import os
import struct
import sys
import zlib
from typing import Any, BinaryIO, Sequence

import numpy as np

from nodeweave import backend
from nodeweave._binfile import FormatError as _Corrupt
from nodeweave._binfile import align as _align
from nodeweave._binfile import atomic_write, check_entries
from nodeweave._binfile import is_int as _is_int
from nodeweave._binfile import read_exact_into, skip_zeros as _skip_zeros
from nodeweave._binfile import require as _require
from nodeweave.graph.heterograph import HeteroGraph, IdRangeError, RelationGraph
from nodeweave import errors as nwerr

__all__ = ["save_graphs", "save_graph_arrays", "load_graphs", "MAGIC", "FORMAT_VERSION"]

MAGIC = b"\x89NWG\r\n\x1a\n"
FORMAT_VERSION = 1
_PREAMBLE = struct.Struct("<8sIQI")  # magic, version, header length, header crc
_DTYPES = ("bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64")
_MAX_DIMS = 32
_ITEMSIZE = {name: np.dtype(name).itemsize for name in _DTYPES}
_MAX_COUNT = 2 ** 48  # nodes of one type: far past any real graph, far below int64 overflow



# ---------------------------------------------------------------- save
class _Writer:
    """Collects arrays (C-contiguous little-endian NumPy) and their header entries."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self.entries: list[dict] = []
        self.size = 0

    def add(self, arr: np.ndarray, where: str) -> int:
        if arr.dtype.name not in _DTYPES:
            raise nwerr.TypeError(f"save_graphs: {where} has dtype {arr.dtype}, which graph files can't hold "
                                  f"(supported: {', '.join(_DTYPES)})")
        a = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
        self.size = _align(self.size)
        self.entries.append({"dtype": a.dtype.name, "shape": list(a.shape), "offset": self.size,
                             "nbytes": a.nbytes, "crc32": zlib.crc32(memoryview(a).cast("B"))})
        self.arrays.append(a)
        self.size += a.nbytes
        return len(self.arrays) - 1

    def tensor(self, t: Any, where: str) -> int:
        B = backend.of(t)
        name = B.dtype_name(t)
        if name not in _DTYPES:
            raise nwerr.TypeError(f"save_graphs: {where} has dtype {name}, which graph files can't hold "
                                  f"(supported: {', '.join(_DTYPES)}); convert it first")
        return self.add(B.to_numpy(t), where)


    def value(self, v: Any, where: str) -> int:
        """A NumPy array or a tensor of any backend."""
        return self.add(v, where) if isinstance(v, np.ndarray) else self.tensor(v, where)


def _describe_arrays(w: _Writer, idtype: str, num_nodes: dict[str, int], edges: dict[tuple, tuple[Any, Any]],
                     ndata: dict[str, Any], edata: dict[tuple, Any], bnn: dict | None, bne: dict | None,
                     where: str) -> dict:
    """The header entry of one graph, its arrays added to ``w``: features as NumPy arrays or tensors."""
    ntypes = []
    for nt, n in num_nodes.items():
        ntypes.append({
            "name": nt, "num_nodes": n,
            "data": {k: w.value(v, f"{where} node type {nt!r} feature {k!r}") for k, v in ndata.get(nt, {}).items()},
            "batch_num_nodes": None if bnn is None else w.add(np.asarray(bnn[nt], np.int64), "batch counts")})
    etypes = []
    for ct, (src, dst) in edges.items():
        etypes.append({
            "type": list(ct), "num_edges": int(len(src)),
            "src": w.add(np.asarray(src, idtype), "src ids"),
            "dst": w.add(np.asarray(dst, idtype), "dst ids"),
            "data": {k: w.value(v, f"{where} edge type {ct!r} feature {k!r}") for k, v in edata.get(ct, {}).items()},
            "batch_num_edges": None if bne is None else w.add(np.asarray(bne[ct], np.int64), "batch counts")})
    return {"idtype": idtype, "ntypes": ntypes, "etypes": etypes}


def _describe(w: _Writer, g: HeteroGraph, i: int) -> dict:
    return _describe_arrays(w, g._idtype_name, g._num_nodes, {ct: g._coo(ct) for ct in g._etypes},
                            g._node_frames, g._edge_frames, g._batch_num_nodes, g._batch_num_edges, f"graphs[{i}]")


def _write(f: BinaryIO, w: _Writer, header: dict) -> None:
    raw = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    f.write(_PREAMBLE.pack(MAGIC, FORMAT_VERSION, len(raw), zlib.crc32(raw)))
    f.write(raw)
    pos = _PREAMBLE.size + len(raw)
    f.write(b"\0" * (_align(pos) - pos))
    pos = 0
    for a, e in zip(w.arrays, w.entries):
        f.write(b"\0" * (e["offset"] - pos))
        f.write(memoryview(a).cast("B") if a.nbytes else b"")
        pos = e["offset"] + e["nbytes"]


def save_graphs(path: str | os.PathLike, graphs: HeteroGraph | Sequence[HeteroGraph],
                labels: dict[str, Any] | None = None) -> None:
    """Saves ``graphs`` (a graph or a list) with all their features and batch counts, and
    ``labels`` (a dict of name -> tensor or NumPy array; loaded back as tensors), to ``path``.

    The file is written under a temporary name in the same directory and renamed over ``path``
    when complete, so ``path`` is never left half-written. Features of dtype bfloat16 are refused
    (convert them to float32 first).

    >>> import os, tempfile, nodeweave as nw
    >>> path = os.path.join(tempfile.mkdtemp(), "g.nwg")
    >>> nw.save_graphs(path, nw.graph(([0], [1])))
    >>> nw.load_graphs(path)[0][0].num_edges()
    1
    """
    if sys.byteorder != "little":
        raise nwerr.NotImplementedError("save_graphs: graph files are little-endian; big-endian hosts are unsupported")
    if not isinstance(path, (str, os.PathLike)):
        raise nwerr.TypeError(f"save_graphs: path must be a file path, got {type(path).__name__}")
    gl = [graphs] if isinstance(graphs, HeteroGraph) else graphs
    if not isinstance(gl, (list, tuple)):
        raise nwerr.TypeError(f"save_graphs: graphs must be a graph or a list of graphs, got {type(graphs).__name__}")
    for i, g in enumerate(gl):
        if not isinstance(g, HeteroGraph):
            raise nwerr.TypeError(f"save_graphs: graphs[{i}] is a {type(g).__name__}, not a graph")
    if labels is None:
        labels = {}
    if not isinstance(labels, dict):
        raise nwerr.TypeError(f"save_graphs: labels must be a dict of name -> tensor, got {type(labels).__name__}")
    w = _Writer()
    described = [_describe(w, g, i) for i, g in enumerate(gl)]
    lab = {}
    for k, v in labels.items():
        if not isinstance(k, str):
            raise nwerr.TypeError(f"save_graphs: label names must be strings, got {k!r}")
        if not isinstance(v, np.ndarray) and backend.of(v) is None:
            raise nwerr.TypeError(f"save_graphs: labels[{k!r}] must be a tensor or a NumPy array, got {type(v).__name__}")
        lab[k] = w.value(v, f"labels[{k!r}]")  # NumPy arrays as they are: no tensor copy first
    header = {"data_size": w.size, "arrays": w.entries, "graphs": described, "labels": lab}
    path = os.fspath(path)
    atomic_write(path, lambda out: _write(out, w, header))


def save_graph_arrays(path: str | os.PathLike, num_nodes: dict[str, int],
                      edges: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]],
                      ndata: dict[str, dict[str, Any]] | None = None,
                      edata: dict[tuple[str, str, str], dict[str, Any]] | None = None,
                      labels: dict[str, Any] | None = None, idtype: str = "int64") -> None:
    """Saves one graph given as arrays, in :func:`save_graphs`' format (``load_graphs`` reads it back
    as a graph), without building the graph first: for writers that hold a graph's arrays and
    need no graph object (the partitioner writes every part this way).

    ``num_nodes`` maps node types to counts, in order; ``edges`` maps canonical edge types to
    ``(src, dst)`` integer arrays; ``ndata`` / ``edata`` map types to ``{name: array or tensor}``
    with one row per node or edge; ``labels`` as in :func:`save_graphs`. Ids are checked against
    the counts (ValueError naming the edge type).

    >>> import os, tempfile, numpy as np, nodeweave as nw
    >>> path = os.path.join(tempfile.mkdtemp(), "g.nwg")
    >>> save_graph_arrays(path, {"_N": 3}, {("_N", "_E", "_N"): (np.array([0, 1]), np.array([1, 2]))},
    ...                   ndata={"_N": {"h": np.arange(3.0)}})
    >>> g = nw.load_graphs(path)[0][0]
    >>> g.edges()[1].tolist(), g.ndata["h"].tolist()
    ([1, 2], [0.0, 1.0, 2.0])
    """
    fn = "save_graph_arrays"
    if idtype not in ("int32", "int64"):
        raise nwerr.ValueError(f"{fn}: idtype must be 'int32' or 'int64', got {idtype!r}")
    if not isinstance(num_nodes, dict) or not all(isinstance(k, str) and _is_int(n) and n >= 0 for k, n in num_nodes.items()):
        raise nwerr.TypeError(f"{fn}: num_nodes must map node type names to counts >= 0, got {num_nodes!r}")
    ndata, edata = ndata or {}, edata or {}
    for ct, (src, dst) in edges.items():
        if not (isinstance(ct, tuple) and len(ct) == 3 and ct[0] in num_nodes and ct[2] in num_nodes):
            raise nwerr.ValueError(f"{fn}: edge type {ct!r} must be (src, etype, dst) over the node types {list(num_nodes)}")
        src, dst = np.asarray(src), np.asarray(dst)
        if src.ndim != 1 or src.shape != dst.shape or (src.size and src.dtype.kind not in "iu") \
                or (dst.size and dst.dtype.kind not in "iu"):
            raise nwerr.ValueError(f"{fn}: edge type {ct!r} needs two 1-D integer id arrays of one length")
        for ids, t, end in ((src, ct[0], "source"), (dst, ct[2], "destination")):
            if ids.size and (ids.min() < 0 or ids.max() >= num_nodes[t]):
                raise nwerr.ValueError(f"{fn}: edge type {ct!r} has {end} ids outside [0, {num_nodes[t]})")
    rows = [(data, num_nodes.get(t), t) for t, data in ndata.items()]
    rows += [(data, len(edges[t][0]) if t in edges else None, t) for t, data in edata.items()]
    for data, n, t in rows:
        if n is None:
            raise nwerr.ValueError(f"{fn}: features of an unknown type {t!r}")
        for k, v in data.items():
            shape = v.shape if isinstance(v, np.ndarray) else backend.of(v).shape(v)
            if len(shape) < 1 or shape[0] != n:
                raise nwerr.ValueError(f"{fn}: feature {k!r} of {t!r} has shape {tuple(shape)}, expected {n} rows")
    w = _Writer()
    described = _describe_arrays(w, idtype, dict(num_nodes), dict(edges), ndata, edata, None, None, "graph")
    lab = {k: w.value(v, f"labels[{k!r}]") for k, v in (labels or {}).items()}
    header = {"data_size": w.size, "arrays": w.entries, "graphs": [described], "labels": lab}
    atomic_write(os.fspath(path), lambda out: _write(out, w, header))


# ---------------------------------------------------------------- load
def _index(v: Any, entries: list, what: str, dtypes: tuple, ndim: int | None = None) -> int:
    _require(_is_int(v) and 0 <= v < len(entries), f"{what}: array index {v!r} is out of range")
    e = entries[v]
    _require(e["dtype"] in dtypes, f"{what}: dtype {e['dtype']} (expected {' or '.join(dtypes)})")
    _require(ndim is None or len(e["shape"]) == ndim, f"{what}: expected {ndim} dimension(s), got shape {e['shape']}")
    return v


def _check_graph_desc(d: Any, i: int, entries: list) -> None:
    """Checks one graph description's schema and every size against its arrays."""
    w = f"graph {i}"
    _require(isinstance(d, dict), f"{w} is not an object")
    idt = d.get("idtype")
    _require(idt in ("int32", "int64"), f"{w}: unknown idtype {idt!r}")
    nts, ets = d.get("ntypes"), d.get("etypes")
    _require(isinstance(nts, list) and isinstance(ets, list), f"{w}: ntypes/etypes missing")
    counts, nbatch = {}, set()

    def batch_counts(v: Any, total: int, what: str) -> None:
        if v is None:
            nbatch.add(None)
            return
        _index(v, entries, what, ("int64",), 1)
        nbatch.add(entries[v]["shape"][0])

    def features(data: Any, rows: int, what: str) -> None:
        _require(isinstance(data, dict), f"{what}: features are not an object")
        for k, v in data.items():
            _index(v, entries, f"{what} feature {k!r}", _DTYPES)
            shape = entries[v]["shape"]
            _require(len(shape) >= 1 and shape[0] == rows,
                     f"{what} feature {k!r} has shape {shape}, expected {rows} rows")

    for j, nt in enumerate(nts):
        _require(isinstance(nt, dict) and isinstance(nt.get("name"), str), f"{w}: node type {j} is malformed")
        n = nt.get("num_nodes")
        _require(_is_int(n) and 0 <= n <= _MAX_COUNT, f"{w}: node type {nt['name']!r} has invalid "
                                                         f"num_nodes {n!r}")
        _require(nt["name"] not in counts, f"{w}: node type {nt['name']!r} appears twice")
        counts[nt["name"]] = n
        features(nt.get("data"), n, f"{w} node type {nt['name']!r}")
        batch_counts(nt.get("batch_num_nodes"), n, f"{w} node type {nt['name']!r} batch counts")
    seen = set()
    for j, et in enumerate(ets):
        _require(isinstance(et, dict), f"{w}: edge type {j} is malformed")
        ct = et.get("type")
        _require(isinstance(ct, list) and len(ct) == 3 and all(isinstance(s, str) for s in ct),
                 f"{w}: edge type {j} has a malformed canonical type")
        ct = tuple(ct)
        _require(ct[0] in counts and ct[2] in counts, f"{w}: edge type {ct!r} uses an unknown node type")
        _require(ct not in seen, f"{w}: edge type {ct!r} appears twice")
        seen.add(ct)
        ne = et.get("num_edges")
        _require(_is_int(ne) and ne >= 0, f"{w}: edge type {ct!r} has invalid num_edges {ne!r}")
        for end in ("src", "dst"):
            _index(et.get(end), entries, f"{w} edge type {ct!r} {end}", (idt,), 1)
            _require(entries[et[end]]["shape"][0] == ne,
                     f"{w} edge type {ct!r}: {end} holds {entries[et[end]]['shape'][0]} ids for {ne} edges")
        features(et.get("data"), ne, f"{w} edge type {ct!r}")
        batch_counts(et.get("batch_num_edges"), ne, f"{w} edge type {ct!r} batch counts")
    _require(len(nbatch) <= 1, f"{w}: batch counts are partial or disagree on the number of graphs")


def _read_exact(src: BinaryIO, n: int) -> bytearray:
    buf = bytearray(n)
    read_exact_into(src, memoryview(buf))
    return buf


def _read_arrays(src: BinaryIO, entries: list, wanted: set[int], data_start: int, data_size: int,
                 check_gaps: bool) -> dict[int, np.ndarray]:
    """Reads the arrays in ``wanted`` (in file order), verifying each one's CRC-32. With
    ``check_gaps`` every byte of the data section is read and padding must be zero."""
    out = {}
    pos = 0
    for i, e in enumerate(entries):
        if i not in wanted and not check_gaps:
            continue
        if check_gaps:
            _skip_zeros(src, e["offset"] - pos, f"before array {i}")
        else:
            src.seek(data_start + e["offset"])
        buf = _read_exact(src, e["nbytes"])
        _require(zlib.crc32(buf) == e["crc32"], f"array {i} data fails its CRC-32 check")
        pos = e["offset"] + e["nbytes"]
        if i in wanted:
            dt = np.dtype(e["dtype"]).newbyteorder("<")
            arr = np.frombuffer(buf, dtype=dt).reshape(e["shape"]).astype(dt.newbyteorder("="), copy=False)
            if arr.dtype == np.bool_:
                _require(bool(np.all(np.frombuffer(buf, np.uint8) <= 1)), f"array {i} holds bools other than 0/1")
            out[i] = arr
    if check_gaps:
        _skip_zeros(src, data_size - pos, "at the end of the data section")
    return out


def _arrays_of(d: dict) -> list[int]:
    idx = []
    for nt in d["ntypes"]:
        idx.extend(nt["data"].values())
        if nt.get("batch_num_nodes") is not None:
            idx.append(nt["batch_num_nodes"])
    for et in d["etypes"]:
        idx.extend([et["src"], et["dst"], *et["data"].values()])
        if et.get("batch_num_edges") is not None:
            idx.append(et["batch_num_edges"])
    return idx


def _make_graph(d: dict, i: int, arrays: dict[int, np.ndarray]) -> HeteroGraph:
    B = backend.current()
    w = f"graph {i}"
    num_nodes = {nt["name"]: nt["num_nodes"] for nt in d["ntypes"]}
    rels, edata = {}, {}
    for et in d["etypes"]:
        ct = tuple(et["type"])
        try:
            rels[ct] = RelationGraph.from_coo(num_nodes[ct[0]], num_nodes[ct[2]], arrays[et["src"]],
                                              arrays[et["dst"]], idtype=d["idtype"])
        except (ValueError, IndexError, TypeError, MemoryError) as e:
            raise _Corrupt(f"{w} edge type {ct!r}: {e}") from None
        edata[ct] = {k: B.from_numpy(arrays[v]) for k, v in et["data"].items()}
    ndata = {nt["name"]: {k: B.from_numpy(arrays[v]) for k, v in nt["data"].items()} for nt in d["ntypes"]}
    try:
        g = HeteroGraph._create(num_nodes, rels, ndata, edata)
    except (ValueError, TypeError) as e:
        raise _Corrupt(f"{w}: {e}") from None
    bnn = {nt["name"]: nt.get("batch_num_nodes") for nt in d["ntypes"]}
    bne = {tuple(et["type"]): et.get("batch_num_edges") for et in d["etypes"]}
    if any(v is not None for v in list(bnn.values()) + list(bne.values())):
        out_n, out_e = {}, {}
        for name, idx, total in ([(nt, bnn[nt], num_nodes[nt]) for nt in bnn] +
                                 [(ct, bne[ct], rels[ct].num_edges) for ct in bne]):
            c = arrays[idx]
            _require(bool(np.all(c >= 0)) and int(c.sum()) == total,
                     f"{w}: batch counts of {name!r} are negative or don't sum to {total}")
            (out_n if isinstance(name, str) else out_e)[name] = c.astype(np.int64)
        g._batch_num_nodes, g._batch_num_edges = out_n, out_e
    return g


def _load_from(src: BinaryIO, size: int, idx_list: Any) -> tuple[list[HeteroGraph], dict[str, Any]]:
    pre = src.read(_PREAMBLE.size)
    _require(len(pre) == _PREAMBLE.size, f"file is {size} bytes, shorter than the {_PREAMBLE.size}-byte preamble")
    magic, version, hlen, hcrc = _PREAMBLE.unpack(pre)
    _require(magic == MAGIC, "not a nodeweave graph file (bad magic bytes)")
    _require(version == FORMAT_VERSION, f"unsupported format version {version} (this build reads {FORMAT_VERSION})")
    _require(_PREAMBLE.size + hlen <= size, f"header length {hlen} runs past the end of the {size}-byte file")
    raw = _read_exact(src, hlen)
    _require(zlib.crc32(raw) == hcrc, "header fails its CRC-32 check")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise _Corrupt(f"header is not valid JSON: {e}") from None
    _require(isinstance(header, dict), "header is not a JSON object")
    entries = check_entries(header, "arrays", "array", _ITEMSIZE, _MAX_DIMS)
    data_start = _align(_PREAMBLE.size + hlen)
    _require(data_start + header["data_size"] == size,
             f"file is {size} bytes, but the header describes {data_start + header['data_size']}")
    graphs, labels = header.get("graphs"), header.get("labels")
    _require(isinstance(graphs, list), "header field 'graphs' is missing or not a list")
    _require(isinstance(labels, dict), "header field 'labels' is missing or not an object")
    for i, d in enumerate(graphs):
        _check_graph_desc(d, i, entries)
    for k, v in labels.items():
        _index(v, entries, f"label {k!r}", _DTYPES)
    if idx_list is None:
        chosen = list(range(len(graphs)))
    else:
        chosen = _parse_idx_list(idx_list, len(graphs))
    wanted = set(labels.values())
    for i in chosen:
        wanted.update(_arrays_of(graphs[i]))
    _skip_zeros(src, data_start - _PREAMBLE.size - hlen, "after the header")
    arrays = _read_arrays(src, entries, wanted, data_start, header["data_size"], idx_list is None)
    B = backend.current()
    out = [_make_graph(graphs[i], i, arrays) for i in chosen]
    return out, {k: B.from_numpy(arrays[v]) for k, v in labels.items()}


def _parse_idx_list(idx_list: Any, n: int) -> list[int]:
    if isinstance(idx_list, (int, np.integer)) and not isinstance(idx_list, bool):
        idx_list = [idx_list]
    B = backend.of(idx_list)
    if B is not None:
        idx_list = B.to_numpy(idx_list).tolist()
    try:
        items = list(idx_list)
    except TypeError:
        raise nwerr.TypeError(f"load_graphs: idx_list must be a list of graph indices, got "
                              f"{type(idx_list).__name__}") from None
    out = []
    for j, v in enumerate(items):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise nwerr.TypeError(f"load_graphs: idx_list[{j}] must be an int, got {v!r}")
        if not 0 <= v < n:
            raise IdRangeError(f"load_graphs: idx_list[{j}] = {int(v)} is out of range: the file holds {n} graphs")
        out.append(int(v))
    return out


def load_graphs(path: str | os.PathLike, idx_list: Sequence[int] | None = None
                ) -> tuple[list[HeteroGraph], dict[str, Any]]:
    """Loads what :func:`save_graphs` wrote: ``(graphs, labels)``, the graphs on the CPU.

    ``idx_list`` picks graphs by position (only their arrays are read). A truncated, corrupted or
    foreign file raises ValueError naming the file and the problem; an index outside the file
    raises an IndexError (that is also a ValueError) naming ``idx_list``.

    >>> import os, tempfile, nodeweave as nw
    >>> path = os.path.join(tempfile.mkdtemp(), "gs.nwg")
    >>> nw.save_graphs(path, [nw.graph(([0], [1])), nw.graph(([0, 1], [1, 2]))])
    >>> [g.num_edges() for g in nw.load_graphs(path, [1])[0]]
    [2]
    """
    if not isinstance(path, (str, os.PathLike)):
        raise nwerr.TypeError(f"load_graphs: path must be a file path, got {type(path).__name__}")
    path = os.fspath(path)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        try:
            return _load_from(fh, size, idx_list)
        except _Corrupt as e:
            raise nwerr.ValueError(f"load_graphs: {path}: corrupted or truncated graph file: {e}") from None
