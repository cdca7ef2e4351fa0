"""``partition_graph``: a graph cut into parts for multi-process training and written to disk
(DGL's ``dgl.distributed.partition_graph``); :func:`~nodeweave.distributed.load_partition` reads a
part back. The assignment is METIS' (or a balanced random one, a baseline); the heavy work,
renumbering every part into contiguous id ranges and finding each part's HALO, runs in C++
(``distributed/``), one part at a time, so the memory it adds stays a fraction of the graph's.

>>> import os, tempfile, numpy as np, nodeweave as nw
>>> g = nw.graph(([0, 1, 2, 3, 4, 5, 2], [1, 2, 0, 4, 5, 3, 3]))      # two triangles and a bridge
>>> g.ndata["x"] = nw.backend.current().from_numpy(np.arange(6.0))
>>> out = tempfile.mkdtemp()
>>> partition_graph(g, 2, out, graph_name="tri")
>>> sorted(os.listdir(out))
['part0', 'part1', 'tri.json']
>>> part, nfeat, _, book, *_ = nw.distributed.load_partition(os.path.join(out, "tri.json"), 1)
>>> book.nid_range(1), nfeat["_N/x"].tolist()
((3, 6), [3.0, 4.0, 5.0])
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

import numpy as np

from nodeweave import _C, backend
from nodeweave import errors as nwerr
from nodeweave.distributed.assignment import balance_classes, metis_assignment, random_assignment, typed_relations
from nodeweave.distributed.part_files import FORMAT, FORMAT_VERSION, PART_FILES, etype_key, file_entry, \
    stamp_labels, write_manifest
from nodeweave.distributed.peak_memory import PeakMemory
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.idtypes import idtype_name
from nodeweave.graph.io import save_graph_arrays, save_graphs
from nodeweave.graph.transforms import EID, NID

__all__ = ["partition_graph", "graph_nbytes"]

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def graph_nbytes(g: HeteroGraph) -> int:
    """The graph's own size: its edge lists (source and destination ids at its id type) and every
    node and edge feature."""
    item = 4 if idtype_name(g.idtype) == "int32" else 8
    size = sum(2 * item * g.num_edges(ct) for ct in g.canonical_etypes)
    for frames in (_node_frames(g).values(), _edge_frames(g).values()):
        for frame in frames:
            for t in frame.values():
                size += int(np.prod(backend.of(t).shape(t), dtype=np.int64)) * _itemsize(t)
    return size


def _node_frames(g: HeteroGraph) -> dict[str, Any]:
    return {nt: g.nodes[nt].data for nt in g.ntypes}


def _edge_frames(g: HeteroGraph) -> dict[tuple, Any]:
    return {ct: g.edges[ct].data for ct in g.canonical_etypes}


def _itemsize(t: Any) -> int:
    name = backend.of(t).dtype_name(t)
    return 2 if name == "bfloat16" else np.dtype(name).itemsize


def _int_arg(v: Any, name: str, low: int, high: int | None = None, hint: str = "") -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise nwerr.TypeError(f"partition_graph: {name} must be an int, got {v!r}{hint}")
    if v < low or (high is not None and v > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise nwerr.ValueError(f"partition_graph: {name} must be {bound}, got {int(v)}")
    return int(v)


def _check_types(g: HeteroGraph) -> None:
    for nt in g.ntypes:
        if "/" in nt:
            raise nwerr.ValueError(f"partition_graph: node type {nt!r} contains '/', which the part files use to "
                                   "join type and feature names")
    for ct in g.canonical_etypes:
        if any(":" in s or "/" in s for s in ct):
            raise nwerr.ValueError(f"partition_graph: edge type {ct!r} contains ':' or '/', which the manifest uses "
                                   "to join canonical edge types and feature names")


def _numpy(t: Any) -> np.ndarray:
    return backend.of(t).to_numpy(t)


def _schema(frames: dict, keys: dict) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for t, frame in frames.items():
        for name, v in frame.items():
            B = backend.of(v)
            out.setdefault(keys[t], {})[name] = {"dtype": B.dtype_name(v), "shape": list(B.shape(v))[1:]}
    return out


class _BackgroundWriter:
    """Writes part files (then their size and sha256) on two worker threads, so that writing,
    syncing and hashing, which release the GIL, overlap the extraction of the next part. At most
    ``depth`` files are queued or being written: that bounds the memory the queued arrays hold. An
    error in a worker surfaces from :meth:`save` or from the futures."""

    def __init__(self, out_dir: str, depth: int = 2) -> None:
        self.out_dir, self.depth = out_dir, depth
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="nodeweave-partition")
        self.pending: list[Future] = []

    def _job(self, rel_path: str, write: Callable[[str], None]) -> dict[str, Any]:
        write(os.path.join(self.out_dir, rel_path))
        return file_entry(self.out_dir, rel_path)

    def save(self, rel_path: str, write: Callable[[str], None]) -> Future:
        """Queues ``write(full path)``; the future gives the file's manifest record."""
        while sum(not f.done() for f in self.pending) >= self.depth:
            next(f for f in self.pending if not f.done()).result()
        fut = self.pool.submit(self._job, rel_path, write)
        self.pending.append(fut)
        return fut

    def close(self, failed: bool) -> None:
        self.pool.shutdown(wait=True, cancel_futures=failed)


def _write_part(g: HeteroGraph, hp: Any, p: int, writer: _BackgroundWriter, run: bytes, k: int) -> dict[str, Any]:
    """Queues part ``p``'s three files; returns their manifest records (futures) and local sizes.
    The structure is written straight from the arrays C++ extracted (no graph object is built),
    and the features from one gather per feature."""
    d = hp.extract(p)
    idtype = idtype_name(g.idtype)
    ntypes, etypes = g.ntypes, g.canonical_etypes
    rel = f"part{p}"
    os.makedirs(os.path.join(writer.out_dir, rel), exist_ok=True)

    def ids(arr: np.ndarray) -> np.ndarray:
        return arr if arr.dtype.name == idtype else arr.astype(idtype)

    num_nodes = {nt: len(d["node_ids"][t]) for t, nt in enumerate(ntypes)}
    num_edges = {ct: len(d["edge_ids"][r]) for r, ct in enumerate(etypes)}
    ndata = {nt: {NID: ids(d["node_ids"][t]), "orig_id": ids(d["orig_node_ids"][t]),
                  "inner_node": np.arange(num_nodes[nt]) < d["num_inner_nodes"][t]} for t, nt in enumerate(ntypes)}
    edata = {ct: {EID: ids(d["edge_ids"][r]), "orig_id": ids(d["orig_edge_ids"][r]),
                  "inner_edge": np.arange(num_edges[ct]) < d["num_inner_edges"][r]} for r, ct in enumerate(etypes)}
    edges = {ct: (d["src"][r], d["dst"][r]) for r, ct in enumerate(etypes)}
    del d
    stamps = stamp_labels(run, p, k)
    # The job holds the part's arrays only until it has written them.
    files = {"graph": writer.save(f"{rel}/graph.nwg", functools.partial(
        save_graph_arrays, num_nodes=num_nodes, edges=edges, ndata=ndata, edata=edata, labels=stamps, idtype=idtype))}
    del ndata, edata, edges
    # A part's features are those of the nodes and edges it owns: its range of the new ids.
    noff, eoff = hp.node_offsets, hp.edge_offsets
    owned_nodes = {nt: hp.orig_node_ids(t)[noff[t][p]:noff[t][p + 1]] for t, nt in enumerate(ntypes)}
    owned_edges = {ct: hp.orig_edge_ids(r)[eoff[r][p]:eoff[r][p + 1]] for r, ct in enumerate(etypes)}
    for name, frames, owned, key in (("node_feats", _node_frames(g), owned_nodes, str),
                                     ("edge_feats", _edge_frames(g), owned_edges, etype_key)):
        feats = dict(stamps)
        for t, frame in frames.items():
            for fname, v in frame.items():
                feats[f"{key(t)}/{fname}"] = np.take(_numpy(v), owned[t], axis=0)
        files[name] = writer.save(f"{rel}/{name}.nwg", functools.partial(save_graphs, graphs=[], labels=feats))
        del feats
    assert set(files) == set(PART_FILES)
    return {"part_id": p, "files": files, "num_nodes": num_nodes,
            "num_edges": {etype_key(ct): m for ct, m in num_edges.items()}}


def partition_graph(g: HeteroGraph, num_parts: int, out_dir: str | os.PathLike, *, graph_name: str = "graph",
                    num_hops: int = 1, part_method: str = "metis", objtype: str = "cut", balance_ntypes: Any = None,
                    balance_edges: bool = False, seed: int = 0, return_mapping: bool = False,
                    verbose: bool = False) -> Any:
    """Partitions ``g`` into ``num_parts`` parts and writes them to ``out_dir`` (format in
    docs/distributed.md): the manifest ``<out_dir>/<graph_name>.json`` and ``part<p>/`` folders.

    Nodes are renumbered so that each part owns one contiguous range of ids per node type, and
    edges so that each part owns the edges into its nodes as one contiguous range per edge type
    (the range partition book). Every part also holds HALO nodes: those up to ``num_hops`` in-edge
    hops from its nodes (with the in-edges among them) and the destinations of its nodes' out-edges.

    Parameters
    ----------
    g : graph
        Homogeneous or heterogeneous; its node and edge features are split among the parts (a
        part's files hold the features of the nodes and edges it owns).
    num_parts : int
        ``1 <= num_parts <= g.num_nodes()`` (all types together).
    out_dir : path
        Created when missing. An existing manifest of the same name is removed first, so that an
        interrupted run never leaves a manifest naming files of another run.
    graph_name : str
        Names the manifest; letters, digits, ``_``, ``.``, ``-``.
    num_hops : int
        HALO depth, ``>= 1``.
    part_method : 'metis' or 'random'
        METIS k-way on the symmetrized graph (all edge types together), or a random assignment that
        balances every balance class exactly (a baseline).
    objtype : 'cut' or 'vol'
        What METIS minimises: the edge cut or the total communication volume.
    balance_ntypes : values per node, or dict ntype -> values per node
        Balance the node count of each distinct value over the parts (a training mask, say); for a
        heterograph each node type is balanced on its own in any case (DGL's rule).
    balance_edges : bool
        METIS also balances the in-degree sums (per balance class). ``random`` balances them only
        in expectation.
    seed : int
        METIS' seed (``gpmetis -seed``) or the random assignment's, in ``[0, 2**31 - 1)``.
    return_mapping : bool
        Return ``(orig_nids, orig_eids)``: for every new id the input graph's id, as int64 tensors
        (dicts per type for a heterograph).
    verbose : bool
        Print the time of each step and the memory partitioning added at its peak (this resets
        the process's peak-memory counter).
    """
    fn = "partition_graph"
    if not isinstance(g, HeteroGraph) or getattr(g, "is_block", False):
        raise nwerr.TypeError(f"{fn}: g must be a graph (not a block), got {type(g).__name__}")
    hint = (" (nodeweave takes (g, num_parts, out_dir, graph_name=...); DGL's order is (g, graph_name, "
            "num_parts, out_path))") if isinstance(num_parts, str) else ""
    total = sum(g.num_nodes(nt) for nt in g.ntypes)
    k = _int_arg(num_parts, "num_parts", 1, max(total, 1), hint)
    if not isinstance(out_dir, (str, os.PathLike)):
        raise nwerr.TypeError(f"{fn}: out_dir must be a directory path, got {type(out_dir).__name__}")
    if not isinstance(graph_name, str) or not _NAME.fullmatch(graph_name):
        raise nwerr.ValueError(f"{fn}: graph_name must be a file name of letters, digits, '_', '.', '-', "
                               f"got {graph_name!r}")
    hops = _int_arg(num_hops, "num_hops", 1)
    if part_method not in ("metis", "random"):
        raise nwerr.ValueError(f"{fn}: part_method must be 'metis' or 'random', got {part_method!r}")
    if objtype not in ("cut", "vol"):
        raise nwerr.ValueError(f"{fn}: objtype must be 'cut' (edge cut) or 'vol' (communication volume), "
                               f"got {objtype!r}")
    seed = _int_arg(seed, "seed", 0, 2**31 - 2)
    _check_types(g)
    classes = balance_classes(g, balance_ntypes, fn)
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    manifest_path = os.path.join(out_dir, f"{graph_name}.json")
    if os.path.exists(manifest_path):
        os.unlink(manifest_path)

    mem = PeakMemory() if verbose else None
    with mem if mem is not None else contextlib.nullcontext():
        t0 = time.perf_counter()
        objval = None
        if part_method == "metis" and k > 1:
            part, objval = metis_assignment(g, k, objtype, classes, bool(balance_edges), seed)
        else:
            part = random_assignment(classes, total, k, seed)
        t1 = time.perf_counter()
        hp = _C.distributed.HaloParts(typed_relations(g), [g.num_nodes(nt) for nt in g.ntypes], part, k, hops)
        del part
        t2 = time.perf_counter()
        run = os.urandom(16)
        parts = []
        writer = _BackgroundWriter(out_dir)
        try:
            for p in range(k):
                parts.append(_write_part(g, hp, p, writer, run, k))
            for rec in parts:
                rec["files"] = {name: fut.result() for name, fut in rec["files"].items()}
        except BaseException:
            writer.close(failed=True)
            raise
        writer.close(failed=False)
        ntypes, etypes = g.ntypes, g.canonical_etypes
        manifest = {
            "format": FORMAT, "format_version": FORMAT_VERSION, "partition_id": run.hex(), "graph_name": graph_name,
            "num_parts": k, "halo_hops": hops, "part_method": part_method, "objtype": objtype, "seed": seed,
            "balance_edges": bool(balance_edges), "metis_objective_value": objval,
            "idtype": idtype_name(g.idtype), "ntypes": ntypes, "canonical_etypes": [list(ct) for ct in etypes],
            "num_nodes": {nt: g.num_nodes(nt) for nt in ntypes},
            "num_edges": {etype_key(ct): g.num_edges(ct) for ct in etypes},
            "node_ranges": {nt: [int(x) for x in hp.node_offsets[t]] for t, nt in enumerate(ntypes)},
            "edge_ranges": {etype_key(ct): [int(x) for x in hp.edge_offsets[r]] for r, ct in enumerate(etypes)},
            "node_feats": _schema(_node_frames(g), {nt: nt for nt in ntypes}),
            "edge_feats": _schema(_edge_frames(g), {ct: etype_key(ct) for ct in etypes}),
            "parts": parts,
        }
        write_manifest(manifest_path, manifest)
        t3 = time.perf_counter()
    times = {"assign": t1 - t0, "halo": t2 - t1, "write": t3 - t2}
    if mem is not None:
        size = graph_nbytes(g)
        print(f"partition_graph: {k} parts of {total} nodes ({part_method}"
              + (f", METIS {objtype} {objval}" if objval is not None else "") + f") in {sum(times.values()):.2f} s "
              f"(assign {times['assign']:.2f}, relabel+halo {times['halo']:.2f}, write {times['write']:.2f}); peak "
              f"memory +{mem.growth / 2**20:.1f} MiB = {mem.growth / max(size, 1):.2f}x the graph's "
              f"{size / 2**20:.1f} MiB; manifest {manifest_path}", file=sys.stdout, flush=True)
    if not return_mapping:
        return None
    B = backend.current()
    nids = {nt: B.int_tensor(np.array(hp.orig_node_ids(t)), "cpu", "int64") for t, nt in enumerate(ntypes)}
    eids = {ct: B.int_tensor(np.array(hp.orig_edge_ids(r)), "cpu", "int64") for r, ct in enumerate(etypes)}
    if len(ntypes) == 1 and len(etypes) <= 1:
        return nids[ntypes[0]], (eids[etypes[0]] if etypes else B.int_tensor(np.zeros(0, np.int64), "cpu", "int64"))
    return nids, eids
