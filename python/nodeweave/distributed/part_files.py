"""The on-disk format of a partitioned graph (docs/distributed.md): a JSON manifest
``<out_dir>/<graph_name>.json`` and, per part, three files written by :func:`nodeweave.save_graphs`:
``part<p>/graph.nwg`` (the part's structure with its ids and masks), ``part<p>/node_feats.nwg`` and
``part<p>/edge_feats.nwg`` (the features of the nodes and edges it owns).

Every file is written under a temporary name in its directory and renamed; the manifest comes
last, so a manifest never names a file that is not complete. Loading checks the manifest's format
and version, then each file's size and sha256 against it, then that the file belongs to this part
of this partitioning, then its contents against the partition book; any failure raises
:class:`PartitionFormatError` (a ``ValueError``), or ``FileNotFoundError``, naming the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave import errors as nwerr
from nodeweave._binfile import atomic_write
from nodeweave.distributed.partition_book import RangePartitionBook
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.idtypes import idtype_name
from nodeweave.graph.io import load_graphs
from nodeweave.graph.transforms import EID, NID

__all__ = ["FORMAT", "FORMAT_VERSION", "PART_FILES", "PartitionFormatError", "etype_key", "file_entry",
           "stamp_labels", "write_manifest", "read_manifest", "load_partition", "load_partition_book"]

FORMAT = "nodeweave-partition"
FORMAT_VERSION = 1
PART_FILES = ("graph", "node_feats", "edge_feats")  # part<p>/<name>.nwg
# Labels stored in every part file so a file copied from another part, or from another run of
# partition_graph, is recognised even when its checksum was updated with it.
RUN_LABEL, PART_LABEL = "_nw_partition", "_nw_part"
_HEX64 = re.compile(r"[0-9a-f]{64}")


class PartitionFormatError(nwerr.ValueError):
    """A partition manifest or part file is malformed, corrupt, truncated or from another part."""


def etype_key(ct: tuple[str, str, str]) -> str:
    """A canonical edge type as the manifest's key ``'src:etype:dst'``."""
    return ":".join(ct)


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    buf = bytearray(1 << 22)
    view = memoryview(buf)
    with open(path, "rb") as f:
        while True:
            k = f.readinto(buf)
            if not k:
                return h.hexdigest()
            h.update(view[:k])


def file_entry(root: str, rel_path: str) -> dict[str, Any]:
    """The manifest's record of a written file: its path relative to the manifest, size, sha256."""
    path = os.path.join(root, rel_path)
    return {"path": rel_path, "size": os.path.getsize(path), "sha256": sha256_of(path)}


def stamp_labels(run: bytes, part_id: int, num_parts: int) -> dict[str, np.ndarray]:
    return {RUN_LABEL: np.frombuffer(run, np.uint8).copy(), PART_LABEL: np.array([part_id, num_parts], np.int64)}


def write_manifest(path: str, manifest: dict[str, Any]) -> None:
    atomic_write(path, (json.dumps(manifest, indent=1) + "\n").encode())


# ---------------------------------------------------------------- reading
def _fail(where: str, msg: str) -> PartitionFormatError:
    return PartitionFormatError(f"{where}: {msg}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_ranges(r: Any, num_parts: int, total: Any, what: str, where: str) -> None:
    ok = isinstance(r, list) and len(r) == num_parts + 1 and all(_is_int(x) for x in r)
    if not ok or r[0] != 0 or any(b < a for a, b in zip(r, r[1:])) or r[-1] != total:
        raise _fail(where, f"{what} must be {num_parts + 1} non-decreasing offsets from 0 to {total}, got {r!r}")


def _check_files(files: Any, p: int, where: str) -> None:
    if not isinstance(files, dict) or set(files) != set(PART_FILES):
        raise _fail(where, f"part {p} must list the files {list(PART_FILES)}, got {files!r}")
    for name, e in files.items():
        ok = isinstance(e, dict) and isinstance(e.get("path"), str) and _is_int(e.get("size")) \
            and e["size"] >= 0 and isinstance(e.get("sha256"), str) and _HEX64.fullmatch(e["sha256"])
        parts = e.get("path", "").replace("\\", "/").split("/") if ok else []
        if not ok or os.path.isabs(e["path"]) or ".." in parts or not e["path"]:
            raise _fail(where, f"part {p} file {name!r} must be {{path (relative, inside the manifest's "
                               f"directory), size, sha256}}, got {e!r}")


def _check_schema(schema: Any, types: list[str], what: str, where: str) -> None:
    if not isinstance(schema, dict) or not set(schema) <= set(types):
        raise _fail(where, f"{what} must map types among {types} to features, got {schema!r}")
    for t, feats in schema.items():
        if not isinstance(feats, dict) or not all(
                isinstance(f, dict) and isinstance(f.get("dtype"), str) and isinstance(f.get("shape"), list)
                and all(_is_int(s) and s >= 0 for s in f["shape"]) for f in feats.values()):
            raise _fail(where, f"{what}[{t!r}] must map names to {{dtype, shape}}, got {feats!r}")


def read_manifest(path: str | os.PathLike) -> dict[str, Any]:
    """The manifest at ``path``, its schema checked (:class:`PartitionFormatError` naming the file;
    ``FileNotFoundError`` when it is missing)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise nwerr.FileNotFoundError(f"partition manifest {path} is missing")
    try:
        with open(path, "rb") as f:
            m = json.loads(f.read().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _fail(path, f"not a partition manifest (invalid JSON: {e})") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise _fail(path, f"not a partition manifest (its 'format' is not {FORMAT!r})")
    version = m.get("format_version")
    if version != FORMAT_VERSION:
        raise _fail(path, f"format version {version!r} is not supported (this nodeweave reads version "
                          f"{FORMAT_VERSION}; repartition the graph or use the nodeweave that wrote it)")
    k = m.get("num_parts")
    if not _is_int(k) or k < 1:
        raise _fail(path, f"num_parts must be an int >= 1, got {k!r}")
    if not isinstance(m.get("graph_name"), str) or not _is_int(m.get("halo_hops")):
        raise _fail(path, "graph_name (a string) or halo_hops (an int) is missing")
    if not isinstance(m.get("partition_id"), str) or not re.fullmatch(r"[0-9a-f]{32}", m["partition_id"]):
        raise _fail(path, f"partition_id must be 32 hex digits, got {m.get('partition_id')!r}")
    if m.get("idtype") not in ("int32", "int64"):
        raise _fail(path, f"idtype must be 'int32' or 'int64', got {m.get('idtype')!r}")
    ntypes, cets = m.get("ntypes"), m.get("canonical_etypes")
    if not isinstance(ntypes, list) or not all(isinstance(t, str) for t in ntypes) or len(set(ntypes)) != len(ntypes):
        raise _fail(path, f"ntypes must be a list of distinct names, got {ntypes!r}")
    if not isinstance(cets, list) or not all(isinstance(c, list) and len(c) == 3 and all(isinstance(s, str) for s in c)
                                             and c[0] in ntypes and c[2] in ntypes for c in cets):
        raise _fail(path, f"canonical_etypes must be [src, etype, dst] lists over the ntypes, got {cets!r}")
    keys = [etype_key(tuple(c)) for c in cets]
    for what, names, counts, ranges in (("node", ntypes, m.get("num_nodes"), m.get("node_ranges")),
                                        ("edge", keys, m.get("num_edges"), m.get("edge_ranges"))):
        if not isinstance(counts, dict) or set(counts) != set(names) or not all(_is_int(c) and c >= 0 for c in counts.values()):
            raise _fail(path, f"num_{what}s must map every {what} type to a count, got {counts!r}")
        if not isinstance(ranges, dict) or set(ranges) != set(names):
            raise _fail(path, f"{what}_ranges must hold every {what} type, got {sorted(ranges) if isinstance(ranges, dict) else ranges!r}")
        for t in names:
            _check_ranges(ranges[t], k, counts[t], f"{what}_ranges[{t!r}]", path)
    _check_schema(m.get("node_feats"), ntypes, "node_feats", path)
    _check_schema(m.get("edge_feats"), keys, "edge_feats", path)
    parts = m.get("parts")
    if not isinstance(parts, list) or len(parts) != k:
        raise _fail(path, f"parts must list {k} parts, got {len(parts) if isinstance(parts, list) else parts!r}")
    for p, e in enumerate(parts):
        if not isinstance(e, dict) or e.get("part_id") != p:
            raise _fail(path, f"parts[{p}] must be an object with part_id {p}")
        _check_files(e.get("files"), p, path)
    return m


def _verified(root: str, entry: dict[str, Any], manifest: str, what: str) -> str:
    """The path of a part file after checking its size and sha256 against the manifest."""
    path = os.path.join(root, entry["path"])
    if not os.path.isfile(path):
        raise nwerr.FileNotFoundError(f"{path}: the {what} file listed in {manifest} is missing")
    size = os.path.getsize(path)
    if size != entry["size"]:
        raise _fail(path, f"the {what} file is {size} bytes, {manifest} records {entry['size']} "
                          f"({'truncated' if size < entry['size'] else 'replaced or appended to'})")
    if sha256_of(path) != entry["sha256"]:
        raise _fail(path, f"the {what} file is corrupt: its sha256 differs from the one {manifest} records")
    return path


def _load(path: str) -> tuple[list[HeteroGraph], dict[str, Any]]:
    try:
        return load_graphs(path)
    except nwerr.ValueError as e:  # load_graphs' message names the file
        raise PartitionFormatError(str(e)) from None


def _check_stamp(labels: dict[str, Any], m: dict[str, Any], p: int, path: str, manifest: str) -> None:
    B = backend.current()
    run, part = labels.pop(RUN_LABEL, None), labels.pop(PART_LABEL, None)
    if run is None or part is None:
        raise _fail(path, "not a part file of a nodeweave partitioning (no part stamp)")
    run, part = bytes(B.to_numpy(run).astype(np.uint8)).hex(), B.to_numpy(part).tolist()
    if run != m["partition_id"]:
        raise _fail(path, f"belongs to another partitioning ({run}), not to {manifest} ({m['partition_id']})")
    if part != [p, m["num_parts"]]:
        raise _fail(path, f"belongs to part {part[0]} of {part[1]}, not to part {p} of {m['num_parts']} "
                          f"({manifest}): part files were mixed up")


def _np(t: Any) -> np.ndarray:
    return backend.of(t).to_numpy(t)


def _check_graph(g: HeteroGraph, m: dict[str, Any], book: RangePartitionBook, p: int, path: str) -> None:
    if g.ntypes != m["ntypes"] or [list(c) for c in g.canonical_etypes] != m["canonical_etypes"]:
        raise _fail(path, f"holds types {g.ntypes} / {g.canonical_etypes}, the manifest "
                          f"{m['ntypes']} / {m['canonical_etypes']}")
    if idtype_name(g.idtype) != m["idtype"]:
        raise _fail(path, f"has id type {idtype_name(g.idtype)}, the manifest {m['idtype']}")
    checks = [(nt, g.nodes[nt].data, "node", NID, "inner_node", book.nid_range(p, nt), m["num_nodes"][nt])
              for nt in g.ntypes]
    checks += [(ct, g.edges[ct].data, "edge", EID, "inner_edge", book.eid_range(p, ct), m["num_edges"][etype_key(ct)])
               for ct in g.canonical_etypes]
    for t, data, what, id_key, mask_key, (start, end), total in checks:
        if not {id_key, "orig_id", mask_key} <= set(data.keys()):
            raise _fail(path, f"{what} type {t!r} lacks {id_key}, orig_id or {mask_key}")
        ids, orig, mask = _np(data[id_key]), _np(data["orig_id"]), _np(data[mask_key])
        inner = end - start
        if mask.dtype != np.bool_ or not mask[:inner].all() or mask[inner:].any() or len(mask) < inner:
            raise _fail(path, f"{what} type {t!r}: {mask_key} must mark the first {inner} {what}s (the part owns "
                              f"ids {start} .. {end - 1})")
        if not np.array_equal(ids[:inner], np.arange(start, end)) or (ids < 0).any() or (ids >= total).any() \
                or (orig < 0).any() or (orig >= total).any():
            raise _fail(path, f"{what} type {t!r}: {id_key} / orig_id do not match the ids part {p} owns "
                              f"({start} .. {end - 1} of {total})")


def _features(labels: dict[str, Any], schema: dict[str, Any], rows: dict[str, int], path: str) -> dict[str, Any]:
    want = {f"{t}/{name}": (t, spec) for t, feats in schema.items() for name, spec in feats.items()}
    if set(labels) != set(want):
        raise _fail(path, f"holds features {sorted(labels)}, the manifest {sorted(want)}")
    B = backend.current()
    for key, (t, spec) in want.items():
        shape, dtype = list(B.shape(labels[key])), B.dtype_name(labels[key])
        if shape != [rows[t]] + spec["shape"] or dtype != spec["dtype"]:
            raise _fail(path, f"feature {key!r} is {dtype} {shape}, the manifest says {spec['dtype']} "
                              f"{[rows[t]] + spec['shape']}")
    return labels


def _part_id(part_id: Any, k: int, fn: str) -> int:
    if isinstance(part_id, (bool, np.bool_)) or not isinstance(part_id, (int, np.integer)):
        raise nwerr.TypeError(f"{fn}: part_id must be an int, got {part_id!r}")
    if not 0 <= part_id < k:
        raise nwerr.IndexError(f"{fn}: part_id {int(part_id)} is out of range: the partitioning has {k} parts")
    return int(part_id)


def _book(m: dict[str, Any], p: int) -> RangePartitionBook:
    return RangePartitionBook(p, {nt: m["node_ranges"][nt] for nt in m["ntypes"]},
                              {tuple(c): m["edge_ranges"][etype_key(tuple(c))] for c in m["canonical_etypes"]})


def load_partition_book(part_config: str | os.PathLike, part_id: int
                        ) -> tuple[RangePartitionBook, str, list[str], list[tuple[str, str, str]]]:
    """``(book, graph_name, ntypes, canonical_etypes)`` from the manifest alone (DGL's
    ``load_partition_book``)."""
    m = read_manifest(part_config)
    p = _part_id(part_id, m["num_parts"], "load_partition_book")
    return _book(m, p), m["graph_name"], list(m["ntypes"]), [tuple(c) for c in m["canonical_etypes"]]


def load_partition(part_config: str | os.PathLike, part_id: int, load_feats: bool = True
                   ) -> tuple[HeteroGraph, dict[str, Any], dict[str, Any], RangePartitionBook, str, list[str],
                              list[tuple[str, str, str]]]:
    """Loads part ``part_id`` of the partitioning whose manifest is ``part_config`` (DGL's
    ``load_partition``): ``(graph, node_feats, edge_feats, book, graph_name, ntypes,
    canonical_etypes)``.

    ``graph`` holds the part in local ids (per type: the nodes the part owns first, then its HALO
    nodes; per edge type: its own edges first, then HALO edges) with ``ndata[nw.NID]`` /
    ``edata[nw.EID]`` (ids in the partitioned numbering), ``'orig_id'`` (ids in the input graph) and
    the boolean masks ``ndata['inner_node']`` / ``edata['inner_edge']``. ``node_feats`` maps
    ``'ntype/name'`` to the features of the nodes the part owns, in local-id order;
    ``edge_feats`` maps ``'src:etype:dst/name'`` likewise (both empty without ``load_feats``).
    Tensors are of the active backend.
    """
    fn = "load_partition"
    manifest = os.fspath(part_config)
    m = read_manifest(manifest)
    p = _part_id(part_id, m["num_parts"], fn)
    root = os.path.dirname(os.path.abspath(manifest))
    files = m["parts"][p]["files"]
    book = _book(m, p)
    path = _verified(root, files["graph"], manifest, "graph")
    graphs, labels = _load(path)
    _check_stamp(labels, m, p, path, manifest)
    if len(graphs) != 1 or labels:
        raise _fail(path, f"must hold one graph and no other labels, got {len(graphs)} graphs, labels {sorted(labels)}")
    g = graphs[0]
    _check_graph(g, m, book, p, path)
    feats: list[dict[str, Any]] = [{}, {}]
    if load_feats:
        rows_n = {nt: book.nid_range(p, nt)[1] - book.nid_range(p, nt)[0] for nt in m["ntypes"]}
        rows_e = {etype_key(tuple(c)): book.eid_range(p, tuple(c))[1] - book.eid_range(p, tuple(c))[0]
                  for c in m["canonical_etypes"]}
        for i, (name, schema, rows) in enumerate((("node_feats", m["node_feats"], rows_n),
                                                  ("edge_feats", m["edge_feats"], rows_e))):
            path = _verified(root, files[name], manifest, name)
            gs, labels = _load(path)
            _check_stamp(labels, m, p, path, manifest)
            if gs:
                raise _fail(path, f"a feature file must hold no graphs, got {len(gs)}")
            feats[i] = _features(labels, schema, rows, path)
    return g, feats[0], feats[1], book, m["graph_name"], list(m["ntypes"]), [tuple(c) for c in m["canonical_etypes"]]
