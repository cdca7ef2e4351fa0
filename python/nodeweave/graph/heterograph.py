"""The graph object: node types, canonical edge types and one relation graph per edge type.

:class:`HeteroGraph` holds the structure (``nodeweave._C.RelationGraph`` per canonical edge type
``(src_type, etype, dst_type)``, immutable, with COO/CSR/CSC built lazily in C++) and the feature
frames. A homogeneous graph is the special case of one node type ``'_N'`` and one edge type
``('_N', '_E', '_N')``, as in DGL. Structure queries compute with NumPy on the relation graphs' arrays
and return id tensors of the graph's id type on the graph's device through the active backend.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 0, 1], [1, 2, 2]))
>>> g.num_nodes(), g.num_edges()
(3, 3)
>>> g.in_degrees().tolist()
[0, 1, 2]
>>> g.successors(0).tolist()
[1, 2]
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.frame import Frame
from nodeweave.graph.idtypes import idtype_name
from nodeweave.graph.message_passing import MessagePassing
from nodeweave import errors as nwerr

RelationGraph = _C.RelationGraph
Canonical = tuple  # (src_type, etype, dst_type)

ALL = "__ALL__"
"""Stands for "every node" / "every edge" where a query takes ids (as ``dgl.ALL``)."""

DEFAULT_NTYPE = "_N"
DEFAULT_ETYPE = "_E"
_ALL_FORMATS = ("coo", "csr", "csc")


class IdRangeError(nwerr.IndexError, nwerr.ValueError):
    """A node or edge id out of range (catchable as IndexError or ValueError)."""


# ----------------------------------------------------------------------------- id parsing helpers


def is_all(x: Any) -> bool:
    return x is None or (isinstance(x, str) and x == ALL) or (isinstance(x, slice) and x == slice(None))


def as_int_array(x: Any, name: str) -> tuple[np.ndarray, bool]:
    """``x`` (int, sequence, NumPy array or backend tensor) as an int64 NumPy array, and whether it
    was a scalar. Floats and bools raise nwerr.TypeError naming ``name``; arrays of more than one
    dimension raise nwerr.ValueError."""
    B = backend.of(x)
    if isinstance(x, (bool, np.bool_)):
        raise nwerr.TypeError(f"{name} must hold integer ids, got a bool")
    if isinstance(x, (int, np.integer)):
        return np.array([int(x)], dtype=np.int64), True
    if B is not None:
        arr = B.to_numpy(x)
    elif isinstance(x, (float, np.floating)):
        raise nwerr.TypeError(f"{name} must hold integer ids, got float {x!r}")
    elif isinstance(x, (str, bytes)):
        raise nwerr.TypeError(f"{name} must hold integer ids, got {type(x).__name__} {x!r}")
    else:
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError) as e:
            raise nwerr.TypeError(f"{name} must be a sequence of integer ids: {e}") from None
        if arr.dtype == object and arr.size == 0:
            arr = arr.astype(np.int64)
    if arr.size == 0 and arr.dtype.kind == "f" and B is None and not isinstance(x, np.ndarray):
        arr = arr.astype(np.int64)  # [] parses as float64
    kind = arr.dtype.kind
    if kind not in "iu":
        what = {"f": "floats", "b": "bools", "c": "complex numbers", "U": "strings", "S": "bytes",
                "O": "Python objects"}.get(kind, f"dtype {arr.dtype}")
        raise nwerr.TypeError(f"{name} must hold integer ids, got {what} (dtype {arr.dtype})")
    if arr.ndim == 0:
        return arr.reshape(1).astype(np.int64), True
    if arr.ndim != 1:
        raise nwerr.ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise IdRangeError(f"{name} holds id {int(arr.max())}, beyond the int64 range")
    return arr.astype(np.int64, copy=False), False


def check_range(arr: np.ndarray, bound: int, name: str, what: str) -> None:
    """Raises IdRangeError naming the first id of ``arr`` outside ``[0, bound)``."""
    if arr.size == 0:
        return
    bad = (arr < 0) | (arr >= bound)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise IdRangeError(f"{name}[{i}] = {int(arr[i])} is out of range: the graph has {bound} {what}")


# ----------------------------------------------------------------------------- the graph


class HeteroGraph(MessagePassing):
    """A graph with typed nodes and edges (DGL's ``DGLGraph``).

    The transform methods (``reverse``, ``subgraph``, ``in_subgraph`` ...) are added by
    :mod:`nodeweave.graph.transform_methods` when :mod:`nodeweave.graph` loads (see there for why).

    Build graphs with :func:`nodeweave.graph`, :func:`nodeweave.heterograph` and the converters;
    ``HeteroGraph._create`` is the internal constructor that transforms use.

    Attributes
    ----------
    _ntypes : list of str
        Node types, in order.
    _num_nodes : dict str -> int
    _etypes : list of (str, str, str)
        Canonical edge types, in order.
    _rels : dict canonical -> nodeweave._C.RelationGraph
    _node_frames, _edge_frames : dict of :class:`Frame`
    _batch_num_nodes, _batch_num_edges : dict of int64 NumPy arrays, or None
        Per-graph counts after ``batch()``.
    _device : str
        ``'cpu'`` or ``'cuda:N'``.
    """

    is_block = False  # a message-flow block (nodeweave.graph.block.Block) says True

    # ------------------------------------------------------------------ construction

    def __init__(self, num_nodes: Any = None, rels: dict[Canonical, RelationGraph] | None = None,
                 node_data: dict[str, dict[str, Any]] | None = None,
                 edge_data: dict[Canonical, dict[str, Any]] | None = None,
                 device: Any = "cpu", **legacy: Any) -> None:
        """``HeteroGraph(num_nodes, rels, ...)`` as :meth:`_create`; or DGL's older constructor
        ``DGLGraph()`` (an empty graph) / ``DGLGraph(data)`` with ``data`` anything
        :func:`nodeweave.graph` takes (an edge list, ``(src, dst)``, a SciPy matrix, a networkx
        graph). That form ignores DGL's retired ``readonly=`` and ``multigraph=`` keywords.

        >>> import networkx as nx
        >>> HeteroGraph().num_nodes(), HeteroGraph(nx.path_graph(3)).num_edges()
        (0, 4)
        """
        if isinstance(num_nodes, dict) or rels is not None:
            if legacy:
                raise nwerr.TypeError(f"HeteroGraph() got unexpected keyword arguments {sorted(legacy)}")
            if rels is None:
                raise nwerr.TypeError("HeteroGraph(num_nodes, rels): rels (a dict canonical etype -> "
                                      "RelationGraph) is missing")
            self._init(num_nodes, rels, node_data, edge_data, device)
            return
        unknown = sorted(set(legacy) - {"readonly", "multigraph"})
        if unknown or node_data is not None or edge_data is not None:
            raise nwerr.TypeError("HeteroGraph(data): DGL's older constructor takes the graph data alone (and "
                                  f"ignores readonly=, multigraph=), got {unknown or 'node_data/edge_data'}")
        from nodeweave.graph.construct import graph

        built = graph([] if num_nodes is None else num_nodes, device=device)
        self.__dict__.update(built.__dict__)

    @classmethod
    def _create(cls, num_nodes: dict[str, int], rels: dict[Canonical, RelationGraph],
                node_data: dict[str, dict[str, Any]] | None = None,
                edge_data: dict[Canonical, dict[str, Any]] | None = None,
                device: Any = "cpu") -> "HeteroGraph":
        """The internal constructor: ntypes in the order of ``num_nodes``' keys, canonical etypes in
        the order of ``rels``' keys. Every relation's ``num_src``/``num_dst`` must match the counts of
        its types, and all relations must share one id type and the graph's device. Feature tensors
        in ``node_data``/``edge_data`` are validated like ``g.ndata[...] = x``.

        >>> import numpy as np
        >>> from nodeweave import _C
        >>> r = _C.RelationGraph.from_coo(2, 3, np.array([0, 1]), np.array([2, 0]))
        >>> g = HeteroGraph._create({"user": 2, "item": 3}, {("user", "buys", "item"): r})
        >>> g.canonical_etypes, g.num_nodes("item")
        ([('user', 'buys', 'item')], 3)
        """
        g = cls.__new__(cls)
        g._init(num_nodes, rels, node_data, edge_data, device)
        return g

    def _init(self, num_nodes, rels, node_data, edge_data, device) -> None:
        B = backend.current()
        if not isinstance(num_nodes, dict):
            raise nwerr.TypeError(f"num_nodes must be a dict ntype -> int, got {type(num_nodes).__name__}")
        if not isinstance(rels, dict):
            raise nwerr.TypeError(f"rels must be a dict canonical etype -> RelationGraph, got {type(rels).__name__}")
        self._device = B.canonical_device(device)
        self._ntypes = []
        self._num_nodes = {}
        for nt, n in num_nodes.items():
            if not isinstance(nt, str):
                raise nwerr.TypeError(f"node type names must be strings, got {nt!r}")
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
                raise nwerr.ValueError(f"num_nodes[{nt!r}] must be a non-negative int, got {n!r}")
            self._ntypes.append(nt)
            self._num_nodes[nt] = int(n)
        self._etypes = []
        self._rels = {}
        idtypes = set()
        for ct, rel in rels.items():
            if not (isinstance(ct, tuple) and len(ct) == 3 and all(isinstance(s, str) for s in ct)):
                raise nwerr.ValueError(f"edge types must be (src_type, etype, dst_type) tuples of strings, got {ct!r}")
            if not isinstance(rel, RelationGraph):
                raise nwerr.TypeError(f"rels[{ct!r}] must be a RelationGraph, got {type(rel).__name__}")
            st, _, dt = ct
            for role, t in (("source", st), ("destination", dt)):
                if t not in self._num_nodes:
                    raise nwerr.ValueError(f"edge type {ct!r}: {role} node type {t!r} is not among the node "
                                           f"types {self._ntypes}")
            if rel.num_src != self._num_nodes[st] or rel.num_dst != self._num_nodes[dt]:
                raise nwerr.ValueError(f"edge type {ct!r}: the relation has {rel.num_src} source and "
                                       f"{rel.num_dst} destination nodes, but the graph has "
                                       f"{self._num_nodes[st]} {st!r} and {self._num_nodes[dt]} {dt!r} nodes")
            if B.canonical_device(rel.device) != self._device:
                raise nwerr.ValueError(f"edge type {ct!r}: the relation is on {rel.device}, the graph on {self._device}")
            if ct in self._rels:
                raise nwerr.ValueError(f"edge type {ct!r} is given twice")
            idtypes.add(rel.idtype)
            self._etypes.append(ct)
            self._rels[ct] = rel
        if len(idtypes) > 1:
            raise nwerr.ValueError(f"all relations must share one idtype, got {sorted(idtypes)}")
        self._idtype_name = idtypes.pop() if idtypes else "int64"
        self._node_frames = {}
        for nt in self._ntypes:
            name = "ndata" if len(self._ntypes) == 1 else f"nodes[{nt!r}].data"
            self._node_frames[nt] = Frame(self._num_nodes[nt], (node_data or {}).get(nt), name=name,
                                          row_name="node", device=self._device)
        self._edge_frames = {}
        for ct in self._etypes:
            name = "edata" if len(self._etypes) == 1 else f"edges[{ct!r}].data"
            self._edge_frames[ct] = Frame(self._rels[ct].num_edges, (edge_data or {}).get(ct),
                                          name=name, row_name="edge", device=self._device)
        for key in node_data or {}:
            if key not in self._num_nodes:
                raise nwerr.ValueError(f"node_data: unknown node type {key!r} (the graph has {self._ntypes})")
        for key in edge_data or {}:
            if key not in self._rels:
                raise nwerr.ValueError(f"edge_data: unknown edge type {key!r} (the graph has {self._etypes})")
        self._batch_num_nodes = None
        self._batch_num_edges = None
        self._cache: dict[Any, Any] = {}

    def _derive(self, rels: dict[Canonical, RelationGraph] | None = None, device: str | None = None,
                frames: str = "share") -> "HeteroGraph":
        """A graph with new relations (same types) sharing or moving this graph's features."""
        dev = self._device if device is None else device
        g = HeteroGraph._create(dict(self._num_nodes), rels if rels is not None else dict(self._rels),
                                device=dev)
        if frames == "share":
            g._node_frames = {k: f.clone_shallow() for k, f in self._node_frames.items()}
            g._edge_frames = {k: f.clone_shallow() for k, f in self._edge_frames.items()}
        else:  # move
            g._node_frames = {k: f.to(dev) for k, f in self._node_frames.items()}
            g._edge_frames = {k: f.to(dev) for k, f in self._edge_frames.items()}
        g._batch_num_nodes = self._batch_num_nodes
        g._batch_num_edges = self._batch_num_edges
        return g

    # ------------------------------------------------------------------ type resolution

    @property
    def ntypes(self) -> list[str]:
        """Node type names."""
        return list(self._ntypes)

    @property
    def etypes(self) -> list[str]:
        """Edge type names (the middle of each canonical edge type; may repeat)."""
        return [ct[1] for ct in self._etypes]

    @property
    def canonical_etypes(self) -> list[tuple[str, str, str]]:
        """Canonical edge types ``(src_type, etype, dst_type)``."""
        return list(self._etypes)

    @property
    def is_unibipartite(self) -> bool:
        """Whether source and destination node types are disjoint (every edge goes from a "source"
        side to a "destination" side). A property, as in DGL."""
        src = {ct[0] for ct in self._etypes}
        dst = {ct[2] for ct in self._etypes}
        return bool(self._etypes) and not (src & dst) and src | dst == set(self._ntypes)

    @property
    def srctypes(self) -> list[str]:
        """Source node types: all node types unless the graph is uni-bipartite."""
        if self.is_unibipartite:
            src = {ct[0] for ct in self._etypes}
            return [nt for nt in self._ntypes if nt in src]
        return self.ntypes

    @property
    def dsttypes(self) -> list[str]:
        """Destination node types: all node types unless the graph is uni-bipartite."""
        if self.is_unibipartite:
            dst = {ct[2] for ct in self._etypes}
            return [nt for nt in self._ntypes if nt in dst]
        return self.ntypes

    @property
    def is_multigraph(self) -> bool:
        """Whether some edge type has two edges with the same source and destination.

        >>> import nodeweave as nw
        >>> nw.graph(([0, 0], [1, 2])).is_multigraph, nw.graph(([0, 0], [1, 1])).is_multigraph
        (False, True)
        """
        for ct in self._etypes:
            keys, _ = self._edge_index(ct)
            if keys.size > 1 and bool((keys[1:] == keys[:-1]).any()):
                return True
        return False

    @property
    def is_homogeneous(self) -> bool:
        """One node type and at most one edge type."""
        return len(self._ntypes) == 1 and len(self._etypes) <= 1

    def metagraph(self):
        """The type graph as a ``networkx.MultiDiGraph``: one node per node type, one edge
        ``src_type -> dst_type`` keyed by the edge type name per canonical edge type."""
        import networkx as nx

        mg = nx.MultiDiGraph()
        mg.add_nodes_from(self._ntypes)
        for st, et, dt in self._etypes:
            mg.add_edge(st, dt, key=et)
        return mg

    @staticmethod
    def _named_side(ntype: str) -> tuple[str | None, str]:
        """DGL names the two sides of a uni-bipartite graph (and of a block) ``'SRC/t'`` and
        ``'DST/t'``: the side such a name fixes ('src' / 'dst', None for a plain name) and the type."""
        for prefix, side in (("SRC/", "src"), ("DST/", "dst")):
            if isinstance(ntype, str) and ntype.startswith(prefix):
                return side, ntype[len(prefix):]
        return None, ntype

    def _ntype(self, ntype: str | None, arg: str = "ntype") -> str:
        if ntype is None:
            if len(self._ntypes) != 1:
                raise nwerr.ValueError(f"{arg} must be given: the graph has several node types {self._ntypes}")
            return self._ntypes[0]
        if ntype not in self._num_nodes:
            side, bare = self._named_side(ntype)
            if side is not None and self.is_unibipartite and bare in (self.srctypes if side == "src"
                                                                          else self.dsttypes):
                return bare
            raise nwerr.ValueError(f"unknown node type {ntype!r} (the graph has {self._ntypes})")
        return ntype

    def to_canonical_etype(self, etype: str | tuple | None) -> tuple[str, str, str]:
        """The canonical ``(src_type, etype, dst_type)`` for an edge type name, a canonical tuple,
        or ``None`` when the graph has exactly one edge type."""
        if etype is None:
            if len(self._etypes) != 1:
                raise nwerr.ValueError("etype must be given: the graph has "
                                       f"{len(self._etypes)} edge types {self._etypes}")
            return self._etypes[0]
        if isinstance(etype, tuple):
            if etype in self._rels:
                return etype
            raise nwerr.ValueError(f"unknown edge type {etype!r} (the graph has {self._etypes})")
        if isinstance(etype, str):
            found = [ct for ct in self._etypes if ct[1] == etype]
            if len(found) == 1:
                return found[0]
            if not found:
                raise nwerr.ValueError(f"unknown edge type {etype!r} (the graph has {self.etypes})")
            raise nwerr.ValueError(f"edge type {etype!r} is ambiguous: it names {found}; pass the canonical "
                                   "(src_type, etype, dst_type) tuple")
        raise nwerr.TypeError(f"etype must be a string or a (src_type, etype, dst_type) tuple, got {etype!r}")

    def _node_key(self, side: str, ntype: str) -> Any:
        """The key of ``ntype``'s frame and count on ``side`` ('src', 'dst' or 'all'). A graph has
        one node set per type, so the key is the type itself; a :class:`Block` has two."""
        return ntype

    def _side_count(self, side: str, ntype: str) -> int:
        return self._num_nodes[self._node_key(side, ntype)]

    def _in_side(self, side: str, ntype: str) -> bool:
        """Whether ``ntype`` (checked by :meth:`_ntype`) is a node type of ``side``."""
        return ntype in {"all": self.ntypes, "src": self.srctypes, "dst": self.dsttypes}[side]

    def get_ntype_id(self, ntype: str | None) -> int:
        """Position of ``ntype`` in :attr:`ntypes`."""
        return self._ntypes.index(self._ntype(ntype))

    def get_etype_id(self, etype: str | tuple | None) -> int:
        """Position of ``etype`` in :attr:`canonical_etypes`."""
        return self._etypes.index(self.to_canonical_etype(etype))

    # ------------------------------------------------------------------ sizes and properties

    def num_nodes(self, ntype: str | None = None) -> int:
        """Number of nodes of ``ntype``; of all types together when ``ntype`` is None."""
        if ntype is None:
            return sum(self._num_nodes.values())
        return self._num_nodes[self._ntype(ntype)]

    number_of_nodes = num_nodes

    def num_src_nodes(self, ntype: str | None = None) -> int:
        """Number of source nodes of ``ntype`` (all source types together when None)."""
        if ntype is None:
            return sum(self._side_count("src", t) for t in self.srctypes)
        return self._side_count("src", self._ntype(ntype))

    def num_dst_nodes(self, ntype: str | None = None) -> int:
        """Number of destination nodes of ``ntype`` (all destination types together when None)."""
        if ntype is None:
            return sum(self._side_count("dst", t) for t in self.dsttypes)
        return self._side_count("dst", self._ntype(ntype))

    number_of_src_nodes = num_src_nodes
    number_of_dst_nodes = num_dst_nodes

    def num_edges(self, etype: str | tuple | None = None) -> int:
        """Number of edges of ``etype``; of all types together when ``etype`` is None."""
        if etype is None:
            return sum(r.num_edges for r in self._rels.values())
        return self._rels[self.to_canonical_etype(etype)].num_edges

    number_of_edges = num_edges

    def has_nodes(self, vid: Any, ntype: str | None = None):
        """Whether each id in ``vid`` is a node of ``ntype`` (bool for an int, else a bool tensor)."""
        nt = self._ntype(ntype)
        arr, scalar = as_int_array(vid, "vid")
        ok = (arr >= 0) & (arr < self._side_count("all", nt))
        return bool(ok[0]) if scalar else backend.current().from_numpy(ok, self._device)

    @property
    def idtype(self):
        """The id type (``nodeweave.core.int32`` or ``int64``) of structure queries' results."""
        return backend.current().dtype_from_name(self._idtype_name)

    @property
    def device(self):
        """The device of the structure and features."""
        return backend.current().device_object(self._device)

    # ------------------------------------------------------------------ relation access helpers

    def _rel(self, etype) -> tuple[tuple, RelationGraph]:
        ct = self.to_canonical_etype(etype)
        return ct, self._rels[ct]

    def _host(self, ct: tuple) -> RelationGraph:
        """A CPU relation allowing every format, to compute queries from (cached)."""
        # A trace that takes this graph as an input cannot follow what the host computes from it.
        _C._jit.note_graph_read(self._rels[ct], "a structure query")
        key = ("host", ct)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        rel = self._rels[ct]
        if rel.device != "cpu":
            rel = rel.to("cpu")
        allowed = set(rel.allowed_formats)
        if allowed != set(_ALL_FORMATS):
            if "coo" in allowed:
                src, dst = rel.coo()
            else:
                fmt = "csr" if "csr" in allowed else "csc"
                indptr, indices, eids = rel.csr() if fmt == "csr" else rel.csc()
                rows = np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))
                src = np.empty(len(indices), np.int64)
                dst = np.empty(len(indices), np.int64)
                a, b = (src, dst) if fmt == "csr" else (dst, src)
                a[eids] = rows
                b[eids] = indices
            rel = RelationGraph.from_coo(rel.num_src, rel.num_dst, np.asarray(src), np.asarray(dst),
                                         rel.idtype)
        self._cache[key] = rel
        return rel

    def _coo(self, ct) -> tuple[np.ndarray, np.ndarray]:
        return self._host(ct).coo()

    def _ids_out(self, arr: np.ndarray):
        return backend.current().int_tensor(arr, self._device, self._idtype_name)

    def _node_ids(self, v: Any, nt: str, name: str, side: str = "all") -> tuple[np.ndarray, bool]:
        count = self._side_count(side, nt)
        if is_all(v):
            return np.arange(count, dtype=np.int64), False
        arr, scalar = as_int_array(v, name)
        what = "nodes" if len(self._ntypes) == 1 else f"nodes of type {nt!r}"
        if side != "all" and self._node_key(side, nt) != nt:
            what = f"{'source' if side == 'src' else 'destination'} {what}"
        check_range(arr, count, name, what)
        return arr, scalar

    def _edge_ids(self, e: Any, ct: tuple, name: str) -> tuple[np.ndarray, bool]:
        n = self._rels[ct].num_edges
        if is_all(e):
            return np.arange(n, dtype=np.int64), False
        arr, scalar = as_int_array(e, name)
        what = "edges" if len(self._etypes) == 1 else f"edges of type {ct!r}"
        check_range(arr, n, name, what)
        return arr, scalar

    # ------------------------------------------------------------------ structure queries

    def in_degrees(self, v: Any = ALL, etype: str | tuple | None = None):
        """In-degrees of nodes ``v`` (all by default) along ``etype``: an int for an int ``v``,
        else a tensor of the graph's idtype."""
        ct, rel = self._rel(etype)
        ids, scalar = self._node_ids(v, ct[2], "v", "dst")
        deg = self._host(ct).in_degrees()[ids]
        return int(deg[0]) if scalar else self._ids_out(deg)

    def out_degrees(self, u: Any = ALL, etype: str | tuple | None = None):
        """Out-degrees of nodes ``u`` (all by default) along ``etype``."""
        ct, rel = self._rel(etype)
        ids, scalar = self._node_ids(u, ct[0], "u", "src")
        deg = self._host(ct).out_degrees()[ids]
        return int(deg[0]) if scalar else self._ids_out(deg)

    def _form(self, src, dst, eid, form: str):
        if form == "uv":
            return self._ids_out(src), self._ids_out(dst)
        if form == "eid":
            return self._ids_out(eid)
        if form == "all":
            return self._ids_out(src), self._ids_out(dst), self._ids_out(eid)
        raise nwerr.ValueError(f"form must be 'uv', 'eid' or 'all', got {form!r}")

    def edges(self, form: str = "uv", order: str = "eid", etype: str | tuple | None = None):
        """All edges of ``etype``: ``(src, dst)`` for ``form='uv'``, edge ids for ``'eid'``,
        ``(src, dst, eid)`` for ``'all'``; ordered by edge id (``order='eid'``) or by source then
        destination then edge id (``order='srcdst'``)."""
        ct, _ = self._rel(etype)
        src, dst = self._coo(ct)
        eid = np.arange(len(src), dtype=np.int64)
        if order == "srcdst":
            perm = np.lexsort((eid, dst, src))
            src, dst, eid = src[perm], dst[perm], eid[perm]
        elif order != "eid":
            raise nwerr.ValueError(f"order must be 'eid' or 'srcdst', got {order!r}")
        return self._form(src, dst, eid, form)

    all_edges = edges

    def find_edges(self, eid: Any, etype: str | tuple | None = None):
        """``(src, dst)`` of the edges with ids ``eid``."""
        ct, _ = self._rel(etype)
        ids, _ = self._edge_ids(eid, ct, "eid")
        src, dst = self._coo(ct)
        return self._ids_out(src[ids]), self._ids_out(dst[ids])

    def _segments(self, indptr: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Positions of the CSR/CSC entries of rows ``nodes``, in node order."""
        starts = indptr[nodes].astype(np.int64)
        counts = (indptr[nodes + 1] - indptr[nodes]).astype(np.int64)
        total = int(counts.sum())
        if total == 0:
            return np.zeros(0, np.int64)
        offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        return np.arange(total, dtype=np.int64) + offsets

    def in_edges(self, v: Any, form: str = "uv", etype: str | tuple | None = None):
        """Edges entering nodes ``v``, grouped by node in the order of ``v`` (then by edge id)."""
        ct, _ = self._rel(etype)
        nodes, _ = self._node_ids(v, ct[2], "v", "dst")
        indptr, indices, eids = self._host(ct).csc()
        pos = self._segments(indptr, nodes)
        src = indices[pos].astype(np.int64)
        dst = np.repeat(nodes, np.diff(indptr)[nodes])
        return self._form(src, dst, eids[pos].astype(np.int64), form)

    def out_edges(self, u: Any, form: str = "uv", etype: str | tuple | None = None):
        """Edges leaving nodes ``u``, grouped by node in the order of ``u`` (then by edge id)."""
        ct, _ = self._rel(etype)
        nodes, _ = self._node_ids(u, ct[0], "u", "src")
        indptr, indices, eids = self._host(ct).csr()
        pos = self._segments(indptr, nodes)
        src = np.repeat(nodes, np.diff(indptr)[nodes])
        dst = indices[pos].astype(np.int64)
        return self._form(src, dst, eids[pos].astype(np.int64), form)

    def successors(self, v: int, etype: str | tuple | None = None):
        """Destinations of the edges leaving node ``v`` (repeated for multi-edges)."""
        ct, _ = self._rel(etype)
        nodes, scalar = self._node_ids(v, ct[0], "v", "src")
        if not scalar:
            raise nwerr.TypeError("successors(v): v must be a single node id")
        indptr, indices, _ = self._host(ct).csr()
        return self._ids_out(indices[indptr[nodes[0]]:indptr[nodes[0] + 1]])

    def predecessors(self, v: int, etype: str | tuple | None = None):
        """Sources of the edges entering node ``v`` (repeated for multi-edges)."""
        ct, _ = self._rel(etype)
        nodes, scalar = self._node_ids(v, ct[2], "v", "dst")
        if not scalar:
            raise nwerr.TypeError("predecessors(v): v must be a single node id")
        indptr, indices, _ = self._host(ct).csc()
        return self._ids_out(indices[indptr[nodes[0]]:indptr[nodes[0] + 1]])

    def _edge_index(self, ct: tuple) -> tuple[np.ndarray, np.ndarray]:
        """Edge keys ``src * num_dst + dst`` sorted (stably, so by edge id within a key), and the
        edge ids in that order. Cached: edge lookups are binary searches in it."""
        key = ("edge_index", ct)
        hit = self._cache.get(key)
        if hit is None:
            src, dst = self._coo(ct)
            keys = src.astype(np.int64) * max(self._rels[ct].num_dst, 1) + dst
            order = np.argsort(keys, kind="stable")
            hit = (keys[order], order.astype(np.int64))
            self._cache[key] = hit
        return hit

    def _pairs(self, u: Any, v: Any, ct: tuple) -> tuple[np.ndarray, np.ndarray, bool]:
        us, su = self._node_ids(u, ct[0], "u", "src")
        vs, sv = self._node_ids(v, ct[2], "v", "dst")
        if su and not sv:
            us = np.full(len(vs), us[0])
        elif sv and not su:
            vs = np.full(len(us), vs[0])
        elif len(us) != len(vs):
            raise nwerr.ValueError(f"u and v must have the same length, got {len(us)} and {len(vs)}")
        return us, vs, su and sv

    def has_edges_between(self, u: Any, v: Any, etype: str | tuple | None = None):
        """Whether an edge ``u[i] -> v[i]`` exists, per pair (a bool for two ints)."""
        ct, _ = self._rel(etype)
        us, vs, scalar = self._pairs(u, v, ct)
        keys, _ = self._edge_index(ct)
        q = us * max(self._rels[ct].num_dst, 1) + vs
        lo = np.searchsorted(keys, q, "left")
        found = np.searchsorted(keys, q, "right") > lo
        return bool(found[0]) if scalar else backend.current().from_numpy(found, self._device)

    has_edge_between = has_edges_between

    def edge_ids(self, u: Any, v: Any, return_uv: bool = False, etype: str | tuple | None = None):
        """Ids of the edges ``u[i] -> v[i]``.

        With ``return_uv=False`` one id per pair (the smallest, for multi-edges; a Python int for
        one pair of ints); a missing edge raises ValueError naming it. With ``return_uv=True`` every matching edge: ``(src, dst, eid)``.
        """
        ct, _ = self._rel(etype)
        us, vs, scalar = self._pairs(u, v, ct)
        keys, order = self._edge_index(ct)
        q = us * max(self._rels[ct].num_dst, 1) + vs
        lo = np.searchsorted(keys, q, "left")
        hi = np.searchsorted(keys, q, "right")
        missing = hi == lo
        if missing.any():
            i = int(np.flatnonzero(missing)[0])
            raise nwerr.ValueError(f"edge_ids: there is no edge {int(us[i])} -> {int(vs[i])} "
                                   f"(pair {i}{'' if len(self._etypes) == 1 else f' of type {ct!r}'})")
        if not return_uv:
            eid = order[lo]
            if scalar:  # one pair of ints: a Python int, as DGL and the single-node queries give
                return int(eid[0])
            return self._ids_out(eid)
        counts = hi - lo
        pos = np.repeat(lo - np.concatenate(([0], np.cumsum(counts)[:-1])), counts) + np.arange(counts.sum())
        eid = order[pos]
        return self._ids_out(np.repeat(us, counts)), self._ids_out(np.repeat(vs, counts)), self._ids_out(eid)

    def edge_id(self, u: int, v: int, etype: str | tuple | None = None):
        """The id of edge ``u -> v`` (DGL's older single-pair spelling of :meth:`edge_ids`)."""
        return self.edge_ids(u, v, etype=etype)

    def adj(self, etype: str | tuple | None = None, eweight_name: str | None = None, *,
            transpose: bool | None = None, ctx: Any = None, scipy_fmt: str | None = None):
        """The adjacency matrix of ``etype`` as a :class:`~nodeweave.graph.sparse_matrix.SparseMatrix`
        (DGL 2.x's ``g.adj``): rows are source nodes, columns destination nodes, one entry per edge in
        edge-id order, valued 1.0 (float32) or by the edge feature ``eweight_name``.

        DGL 1.x's keywords ``transpose=``, ``ctx=`` and ``scipy_fmt=`` give :meth:`adj_external`'s
        result instead (a SciPy matrix with ``scipy_fmt``).

        >>> import nodeweave as nw, nodeweave.core as nc
        >>> g = nw.graph(([0, 1], [1, 2]))
        >>> g.edata["w"] = nc.tensor([2.0, 3.0])
        >>> A = g.adj(eweight_name="w")
        >>> A.indices().tolist(), A.val.tolist(), A.shape
        ([[0, 1], [1, 2]], [2.0, 3.0], (3, 3))
        >>> g.adj(scipy_fmt="csr").toarray().tolist()[0]
        [0.0, 1.0, 0.0]
        """
        if transpose is not None or ctx is not None or scipy_fmt is not None:
            return self.adj_external(bool(transpose), ctx, scipy_fmt, etype)
        from nodeweave.graph.sparse_matrix import SparseMatrix

        ct, rel = self._rel(etype)
        src, dst = self._coo(ct)
        if eweight_name is None:
            val = backend.current().from_numpy(np.ones(len(src), np.float32), self._device)
        else:
            frame = self._edge_frames[ct]
            if eweight_name not in frame:
                raise nwerr.KeyError(f"adj: the edges of {ct!r} have no feature {eweight_name!r} (they have "
                                     f"{sorted(frame)})")
            val = frame[eweight_name]
        return SparseMatrix(src, dst, val, (rel.num_src, rel.num_dst), self._idtype_name)

    adjacency_matrix = adj

    def _adj_scipy(self, ct: tuple, scipy_fmt: str, transpose: bool):
        import scipy.sparse as sp

        rel = self._rels[ct]
        shape = (rel.num_src, rel.num_dst)
        if scipy_fmt == "coo":
            src, dst = self._coo(ct)
            if transpose:
                src, dst, shape = dst, src, shape[::-1]
            m = sp.coo_matrix((np.ones(len(src), np.float32), (src, dst)), shape=shape)
            m.sum_duplicates()
            return m
        # CSR / CSC straight from the relation's own arrays, as DGL: within a row the entries keep
        # the relation's order (edge-id order, or a tag order from sort_csr_by_tag), repeated edges
        # stay separate entries.
        host = self._host(ct)
        rows_are_src = (scipy_fmt == "csr") != transpose
        indptr, indices, _ = host.csr() if rows_are_src else host.csc()
        cls = sp.csr_matrix if scipy_fmt == "csr" else sp.csc_matrix
        out_shape = shape[::-1] if transpose else shape
        return cls((np.ones(len(indices), np.float32), np.asarray(indices), np.asarray(indptr)), shape=out_shape)

    def adj_tensors(self, fmt: str, etype: str | tuple | None = None) -> tuple:
        """The structure of ``etype`` as id tensors of the graph's idtype, on its device (DGL's
        ``adj_tensors``): ``'coo'`` gives ``(src, dst)`` in edge-id order; ``'csr'`` gives
        ``(indptr, indices, eids)`` with a row per source node, ``indices`` the destinations;
        ``'csc'`` the same with a row per destination node, ``indices`` the sources. Within a row,
        edges are in increasing edge id.

        >>> import nodeweave as nw
        >>> g = nw.graph(([0, 2, 1, 0], [1, 0, 2, 2]))
        >>> [t.tolist() for t in g.adj_tensors("csr")]
        [[0, 2, 3, 4], [1, 2, 2, 0], [0, 3, 2, 1]]
        >>> [t.tolist() for t in g.adj_tensors("csc")]
        [[0, 1, 2, 4], [2, 0, 1, 0], [1, 0, 2, 3]]
        """
        if not isinstance(fmt, str) or fmt not in _ALL_FORMATS:
            raise nwerr.ValueError(f"adj_tensors: fmt must be 'coo', 'csr' or 'csc', got {fmt!r}")
        ct, _ = self._rel(etype)
        return tuple(self._ids_out(a) for a in getattr(self._host(ct), fmt)())

    def adj_external(self, transpose: bool = False, ctx: Any = None, scipy_fmt: str | None = None,
                     etype: str | tuple | None = None):
        """The adjacency matrix of ``etype`` in a library's own sparse form (DGL's ``adj_external``):
        ``A[u, v]`` = number of edges ``u -> v`` (rows = sources; destinations with
        ``transpose=True``).

        With ``scipy_fmt`` (``'csr'``, ``'csc'`` or ``'coo'``), a SciPy sparse matrix (float32).
        Without, the active backend's sparse tensor on ``ctx`` (the CPU by default, as DGL): a
        ``torch.sparse_coo_tensor`` (float32) on the pytorch backend; the native engine has no
        sparse tensor type, so there a :class:`~nodeweave.graph.sparse_matrix.SparseMatrix` (whose
        ``to_dense()`` gives a native tensor).

        >>> import nodeweave as nw
        >>> g = nw.graph(([0, 1], [1, 2]))
        >>> g.adj_external(transpose=True).to_dense().tolist()
        [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
        >>> g.adj_external(scipy_fmt="coo").toarray()[0].tolist()
        [0.0, 1.0, 0.0]
        """
        ct, rel = self._rel(etype)
        if scipy_fmt is not None:
            if scipy_fmt not in ("csr", "csc", "coo"):
                raise nwerr.ValueError(f"scipy_fmt must be 'csr', 'csc' or 'coo', got {scipy_fmt!r}")
            return self._adj_scipy(ct, scipy_fmt, transpose)
        B = backend.current()
        dev = B.canonical_device(ctx)
        src, dst = self._coo(ct)
        shape = (rel.num_src, rel.num_dst)
        if transpose:
            src, dst, shape = dst, src, shape[::-1]
        if B.name == "pytorch":
            import torch

            idx = torch.from_numpy(np.stack([src, dst]).astype(np.int64))
            return torch.sparse_coo_tensor(idx, torch.ones(len(src)), shape, device=dev,
                                           check_invariants=False)  # valid by construction
        from nodeweave.graph.sparse_matrix import SparseMatrix

        return SparseMatrix(src, dst, B.from_numpy(np.ones(len(src), np.float32), dev), shape,
                            self._idtype_name)

    # ------------------------------------------------------------------ formats, id types, devices

    def formats(self, formats: str | Sequence[str] | None = None):
        """With no argument: ``{'created': [...], 'not created': [...]}`` over all relations.
        Otherwise a new graph (sharing features) whose relations allow only ``formats``."""
        if formats is None:
            created: set[str] = set()
            allowed: set[str] = set()
            for rel in self._rels.values():
                created |= set(rel.created_formats)
                allowed |= set(rel.allowed_formats)
            if not self._rels:
                allowed = set(_ALL_FORMATS)
            return {"created": [f for f in _ALL_FORMATS if f in created],
                    "not created": [f for f in _ALL_FORMATS if f in allowed - created]}
        if isinstance(formats, str):
            formats = [formats]
        rels = {ct: rel.with_formats(list(formats)) for ct, rel in self._rels.items()}
        return self._derive(rels)

    def create_formats_(self) -> None:
        """Builds every allowed format of every relation now (e.g. before forking workers)."""
        for rel in self._rels.values():
            allowed = rel.allowed_formats
            if "coo" in allowed:
                rel.coo()
            if "csr" in allowed:
                rel.csr()
            if "csc" in allowed:
                rel.csc()

    def astype(self, idtype: Any) -> "HeteroGraph":
        """This graph with id type ``idtype`` (int32 or int64, as the backend's dtype, a NumPy dtype
        or a string); features are shared.

        >>> import numpy as np, nodeweave as nw
        >>> g = nw.graph(([0, 1], [1, 2]))
        >>> g.astype(np.int32).idtype, g.astype("int32").astype(g.idtype).idtype
        (nodeweave.core.int32, nodeweave.core.int64)
        """
        if idtype is None:
            raise nwerr.TypeError("astype: idtype must be given (int32 or int64)")
        name = idtype_name(idtype)
        if name == self._idtype_name:
            return self
        return self._derive({ct: rel.astype(name) for ct, rel in self._rels.items()})

    def int(self) -> "HeteroGraph":
        """This graph with int32 ids."""
        return self.astype("int32")

    def long(self) -> "HeteroGraph":
        """This graph with int64 ids."""
        return self.astype("int64")

    def to(self, device: Any, **kwargs: Any) -> "HeteroGraph":
        """This graph (structure and features) on ``device``; the graph itself if already there."""
        dev = backend.current().canonical_device(device)
        if dev == self._device:
            return self
        return self._derive({ct: rel.to(dev) for ct, rel in self._rels.items()}, device=dev,
                            frames="move")

    def cpu(self) -> "HeteroGraph":
        """This graph on the CPU."""
        return self.to("cpu")

    def is_pinned(self) -> bool:
        """Whether the graph sits in page-locked host memory for GPU access (DGL's ``is_pinned``):
        never, in nodeweave. A graph's structure lives in nodeweave's own storage; GPU training moves
        the graph with :meth:`to` (and the loaders pin the batches they copy)."""
        return False

    def unpin_memory_(self) -> "HeteroGraph":
        """DGL's ``unpin_memory_``: releases page-locked memory. A nodeweave graph is never pinned
        (:meth:`is_pinned`), so this returns the graph unchanged, as DGL does for an unpinned one."""
        return self

    # ------------------------------------------------------------------ batching information

    @property
    def batch_size(self) -> int:
        """How many graphs were batched into this one (1 for an unbatched graph)."""
        if self._batch_num_nodes is None:
            return 1
        return len(next(iter(self._batch_num_nodes.values()))) if self._batch_num_nodes else 1

    def batch_num_nodes(self, ntype: str | None = None):
        """Nodes of ``ntype`` per batched graph (an int64 tensor)."""
        nt = self._ntype(ntype)
        if self._batch_num_nodes is None:
            return backend.current().int_tensor(np.array([self._num_nodes[nt]], np.int64), self._device, "int64")
        return self._batch_counts(("batch_num_nodes", nt), self._batch_num_nodes[nt])

    def batch_num_edges(self, etype: str | tuple | None = None):
        """Edges of ``etype`` per batched graph (an int64 tensor)."""
        ct = self.to_canonical_etype(etype)
        if self._batch_num_edges is None:
            return backend.current().int_tensor(np.array([self._rels[ct].num_edges], np.int64), self._device,
                                                "int64")
        return self._batch_counts(("batch_num_edges", ct), self._batch_num_edges[ct])

    def _batch_counts(self, key: tuple, arr: np.ndarray):
        """The counts tensor of a batched graph, made once per counts array and backend: the same
        tensor each call (as DGL's), so a jit trace can take it as an input (core/jit.py)."""
        be = backend.current()
        key = key + (be.__name__,)
        hit = self._cache.get(key)
        if hit is not None and hit[0] is arr:
            return hit[1]
        t = be.int_tensor(np.asarray(arr, np.int64), self._device, "int64")
        self._cache[key] = (arr, t)
        return t

    def set_batch_num_nodes(self, val: Any) -> None:
        """Sets per-graph node counts: a dict ``{ntype: counts}`` or, for one node type, counts."""
        if not isinstance(val, dict):
            val = {self._ntype(None): val}
        out = {}
        for nt in self._ntypes:
            if nt not in val:
                raise nwerr.ValueError(f"set_batch_num_nodes: counts for node type {nt!r} are missing")
            arr, _ = as_int_array(val[nt], f"batch_num_nodes[{nt!r}]")
            if arr.sum() != self._num_nodes[nt]:
                raise nwerr.ValueError(f"batch_num_nodes[{nt!r}] sums to {int(arr.sum())}, but the graph has "
                                       f"{self._num_nodes[nt]} such nodes")
            out[nt] = arr
        self._batch_num_nodes = out

    def set_batch_num_edges(self, val: Any) -> None:
        """Sets per-graph edge counts: a dict ``{etype: counts}`` or, for one edge type, counts."""
        if not isinstance(val, dict):
            val = {self.to_canonical_etype(None): val}
        val = {self.to_canonical_etype(k): v for k, v in val.items()}
        out = {}
        for ct in self._etypes:
            if ct not in val:
                raise nwerr.ValueError(f"set_batch_num_edges: counts for edge type {ct!r} are missing")
            arr, _ = as_int_array(val[ct], f"batch_num_edges[{ct!r}]")
            if arr.sum() != self._rels[ct].num_edges:
                raise nwerr.ValueError(f"batch_num_edges[{ct!r}] sums to {int(arr.sum())}, but the graph has "
                                       f"{self._rels[ct].num_edges} such edges")
            out[ct] = arr
        self._batch_num_edges = out

    # ------------------------------------------------------------------ features

    @property
    def nodes(self):
        """``g.nodes()`` / ``g.nodes('user')``: node ids; ``g.nodes['user'].data``: features."""
        from nodeweave.graph.views import NodeView

        return NodeView(self, "all")

    @property
    def srcnodes(self):
        """Like :attr:`nodes`, over source node types."""
        from nodeweave.graph.views import NodeView

        return NodeView(self, "src")

    @property
    def dstnodes(self):
        """Like :attr:`nodes`, over destination node types."""
        from nodeweave.graph.views import NodeView

        return NodeView(self, "dst")

    @property
    def edges(self):  # type: ignore[override]
        """``g.edges(form=..., order=..., etype=...)``: the edges; ``g.edges['follows'].data``:
        features."""
        from nodeweave.graph.views import EdgeView

        return EdgeView(self)

    def _data_view(self, types: list[str], side: str):
        from nodeweave.graph.views import FrameView, HeteroFrameView

        if len(types) == 1:
            return FrameView(self, "node", self._node_key(side, types[0]))
        return HeteroFrameView(self, "node", types, side)

    @property
    def ndata(self):
        """Node features: a dict-like ``name -> tensor`` for one node type; for several, values are
        ``{ntype: tensor}`` dicts (as DGL)."""
        return self._data_view(self._ntypes, "all")

    @property
    def srcdata(self):
        """Features of source nodes (the same as :attr:`ndata` unless uni-bipartite)."""
        return self._data_view(self.srctypes, "src")

    @property
    def dstdata(self):
        """Features of destination nodes (the same as :attr:`ndata` unless uni-bipartite)."""
        return self._data_view(self.dsttypes, "dst")

    @property
    def edata(self):
        """Edge features: a dict-like ``name -> tensor`` for one edge type; for several, values are
        ``{canonical etype: tensor}`` dicts."""
        from nodeweave.graph.views import FrameView, HeteroFrameView

        if len(self._etypes) == 1:
            return FrameView(self, "edge", self._etypes[0])
        return HeteroFrameView(self, "edge", list(self._etypes))

    @contextlib.contextmanager
    def local_scope(self) -> Iterator["HeteroGraph"]:
        """Features set or deleted inside the ``with`` block are forgotten on exit; tensors changed
        in place stay changed (as DGL).

        >>> import nodeweave as nw, nodeweave.core as nc
        >>> g = nw.graph(([0, 1], [1, 2]))
        >>> g.ndata["h"] = nc.ones(3)
        >>> with g.local_scope():
        ...     g.ndata["h"] = g.ndata["h"] * 2
        ...     g.ndata["tmp"] = nc.zeros(3)
        >>> g.ndata["h"].tolist(), "tmp" in g.ndata
        ([1.0, 1.0, 1.0], False)
        """
        saved_nodes, saved_edges = self._node_frames, self._edge_frames
        self._node_frames = {k: f.clone_shallow() for k, f in saved_nodes.items()}
        self._edge_frames = {k: f.clone_shallow() for k, f in saved_edges.items()}
        try:
            yield self
        finally:
            self._node_frames, self._edge_frames = saved_nodes, saved_edges

    def local_var(self) -> "HeteroGraph":
        """A graph sharing this graph's structure and feature tensors with its own feature tables
        (DGL's older spelling of :meth:`local_scope`): features set or deleted on it leave this
        graph alone; tensors changed in place change here too. Initializers come along.

        >>> import nodeweave as nw, nodeweave.core as nc
        >>> g = nw.graph(([0, 1], [1, 2]))
        >>> g.ndata["h"] = nc.zeros(3)
        >>> lg = g.local_var()
        >>> lg.ndata["h"] = nc.ones(3)
        >>> g.ndata["h"].tolist(), lg.ndata["h"].tolist()
        ([0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
        """
        out = copy.copy(self)
        # Its own tables, so that mutating it (add_edges ...) or its query cache leaves this graph's
        # alone; the relation graphs themselves are immutable and shared.
        out._ntypes, out._etypes = list(self._ntypes), list(self._etypes)
        out._num_nodes, out._rels, out._cache = dict(self._num_nodes), dict(self._rels), {}
        out._node_frames = {k: f.clone_shallow() for k, f in self._node_frames.items()}
        out._edge_frames = {k: f.clone_shallow() for k, f in self._edge_frames.items()}
        return out

    def set_n_initializer(self, initializer: Callable, field: str | None = None,
                          ntype: str | None = None) -> None:
        """Makes ``initializer`` fill the rows of node features that nothing wrote: nodes added
        without the feature, the other rows when a feature is first set on some nodes, nodes a
        user-defined reducer left out. ``field`` limits it to one feature; ``ntype`` picks the node
        type (optional for one). Called as ``initializer(shape, dtype, ctx, id_range)``; see
        :mod:`nodeweave.init`. Without one, such rows are zeros.

        >>> import nodeweave as nw, nodeweave.core as nc
        >>> g = nw.graph(([0], [1]))
        >>> g.set_n_initializer(lambda shape, dtype, ctx, ids: nc.full(shape, 7.0, dtype=dtype), field="h")
        >>> g.nodes[[1]].data["h"] = nc.tensor([1.0])
        >>> g.ndata["h"].tolist()
        [7.0, 1.0]
        """
        nt = self._ntype(ntype)
        for key, frame in self._node_frames.items():
            if key == nt or (isinstance(key, tuple) and key[1] == nt):  # a block has a frame per side
                frame.set_initializer(initializer, field)

    def set_e_initializer(self, initializer: Callable, field: str | None = None,
                          etype: str | tuple | None = None) -> None:
        """Like :meth:`set_n_initializer`, for the features of the edges of ``etype`` (optional
        for one edge type)."""
        self._edge_frames[self.to_canonical_etype(etype)].set_initializer(initializer, field)

    # ------------------------------------------------------------------ printing

    def __repr__(self) -> str:
        if len(self._ntypes) == 1 and len(self._etypes) == 1:
            nt, ct = self._ntypes[0], self._etypes[0]
            return (f"Graph(num_nodes={self._num_nodes[nt]}, num_edges={self._rels[ct].num_edges},\n"
                    f"      ndata_schemes={self._node_frames[nt].schemes}\n"
                    f"      edata_schemes={self._edge_frames[ct].schemes})")
        nn = {nt: self._num_nodes[nt] for nt in self._ntypes}
        ne = {ct: self._rels[ct].num_edges for ct in self._etypes}
        meta = [(st, dt, et) for st, et, dt in self._etypes]
        return f"Graph(num_nodes={nn},\n      num_edges={ne},\n      metagraph={meta})"
