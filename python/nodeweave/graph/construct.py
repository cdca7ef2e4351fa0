"""Building graphs: from id arrays, CSR/CSC, SciPy sparse matrices, networkx graphs and edge-list files.

Every builder validates its input at the boundary and raises an exception that names the argument:
``TypeError`` for non-integer ids, ``ValueError`` for negative ids, mismatched lengths or a
``num_nodes`` too small for the ids used.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
>>> g
Graph(num_nodes=3, num_edges=3,
      ndata_schemes={}
      edata_schemes={})
>>> nw.graph(([0, 5], [1, 2]), num_nodes=3)
Traceback (most recent call last):
...
ValueError: num_nodes=3 is too small: the edges use node id 5 (num_nodes must be at least 6)
"""

from __future__ import annotations

import os
import re
from typing import Any, Sequence

import numpy as np

from nodeweave import backend
from nodeweave.graph.heterograph import (DEFAULT_ETYPE, DEFAULT_NTYPE, HeteroGraph, RelationGraph,
                                         _idtype_name)

__all__ = ["graph", "heterograph", "from_scipy", "from_networkx", "to_networkx", "read_edge_list"]


# ----------------------------------------------------------------------------- input parsing


def _id_array(x: Any, name: str) -> np.ndarray:
    """``x`` as a 1-D int64 array of non-negative ids; TypeError for non-integers, ValueError for
    negative ids or wrong dimensions."""
    B = backend.of(x)
    if B is not None:
        arr = B.to_numpy(x)
    elif isinstance(x, (str, bytes)) or np.isscalar(x) and not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name} must be a sequence of integer node ids, got {type(x).__name__}")
    else:
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError) as e:
            raise TypeError(f"{name} must be a sequence of integer node ids: {e}") from None
    if arr.size == 0 and arr.dtype.kind in "fO" and not isinstance(x, np.ndarray) and B is None:
        arr = arr.astype(np.int64).reshape(0)  # [] parses as float64
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer node ids, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{name} holds id {int(arr.max())}, beyond the int64 range")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and arr.min() < 0:
        i = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"{name}[{i}] = {int(arr[i])} is negative; node ids start at 0")
    return arr


def _infer_idtype(idtype: Any, *arrays: Any) -> str:
    if idtype is not None:
        return _idtype_name(idtype)
    if arrays and all(backend.of(a) is not None and backend.of(a).dtype_name(a) == "int32"
                      for a in arrays):
        return "int32"
    return "int64"


def _check_count(n: Any, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(n).__name__} {n!r}")
    if n < 0:
        raise ValueError(f"{name} must be non-negative, got {n}")
    return int(n)


class _RelSpec:
    """One relation's parsed input: COO ``(src, dst)`` or CSR/CSC ``(indptr, indices, eids)``."""

    def __init__(self, fmt: str, arrays: tuple, raw: tuple) -> None:
        self.fmt, self.arrays, self.raw = fmt, arrays, raw

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


def _parse_rel(data: Any, where: str) -> _RelSpec:
    """Parses ``(src, dst)``, ``('coo', (src, dst))``, ``('csr'|'csc', (indptr, indices[, eids]))``."""
    if isinstance(data, tuple) and len(data) == 2 and isinstance(data[0], str):
        fmt, payload = data[0].lower(), data[1]
        if fmt not in ("coo", "csr", "csc"):
            raise ValueError(f"{where}: unknown sparse format {data[0]!r} (use 'coo', 'csr' or 'csc')")
    else:
        fmt, payload = "coo", data
    if not isinstance(payload, (tuple, list)):
        raise TypeError(f"{where}: expected a (src, dst) pair of id sequences, got {type(payload).__name__}")
    if fmt == "coo":
        if len(payload) != 2:
            raise ValueError(f"{where}: expected a (src, dst) pair, got {len(payload)} items")
        src = _id_array(payload[0], "src")
        dst = _id_array(payload[1], "dst")
        if len(src) != len(dst):
            raise ValueError(f"src and dst must have the same length, got {len(src)} and {len(dst)}")
        return _RelSpec("coo", (src, dst), tuple(payload))
    if len(payload) not in (2, 3):
        raise ValueError(f"{where}: expected (indptr, indices[, eids]) for {fmt}, got {len(payload)} items")
    indptr = _id_array(payload[0], "indptr")
    indices = _id_array(payload[1], "indices")
    eids = None
    if len(payload) == 3 and payload[2] is not None:
        e = _id_array(payload[2], "eids")
        eids = e if len(e) else None
        if eids is not None and len(eids) != len(indices):
            raise ValueError(f"eids must have one id per entry of indices: got {len(eids)} and {len(indices)}")
    if len(indptr) == 0:
        if len(indices):
            raise ValueError("indptr is empty but indices is not")
        indptr = np.zeros(1, np.int64)
    if indptr[-1] != len(indices):
        raise ValueError(f"indptr[-1] must equal len(indices) = {len(indices)}, got {int(indptr[-1])}")
    if np.any(np.diff(indptr) < 0):
        raise ValueError("indptr must be non-decreasing")
    return _RelSpec(fmt, (indptr, indices, eids), tuple(payload))


def _finish(g: HeteroGraph, device: Any) -> HeteroGraph:
    dev = backend.current().canonical_device(device)
    return g if dev == "cpu" else g.to(dev)


# ----------------------------------------------------------------------------- public builders


def graph(data: Any, num_nodes: int | None = None, idtype: Any = None, device: Any = None,
          formats: str | Sequence[str] | None = None, **kwargs: Any) -> HeteroGraph:
    """A homogeneous graph (one node type ``'_N'``, one edge type ``'_E'``).

    Parameters
    ----------
    data : tuple, SciPy sparse matrix or networkx graph
        ``(src, dst)`` with ids as lists, NumPy arrays or integer tensors (edge ``i`` is
        ``src[i] -> dst[i]``); or ``('coo', (src, dst))``, ``('csr', (indptr, indices, eids))`` (rows
        are sources; ``eids`` may be omitted or empty for ``0..E-1``), ``('csc', (indptr, indices,
        eids))`` (rows are destinations); or a square SciPy sparse matrix (see :func:`from_scipy`);
        or a networkx graph (see :func:`from_networkx`).
    num_nodes : int, optional
        Number of nodes; by default the largest id used plus one. Must not be smaller than that.
    idtype : 'int32' or 'int64' (or the backend dtype), optional
        Id type; by default int32 when both id tensors are int32 tensors, else int64.
    device : str, optional
        ``'cpu'`` (default) or ``'cuda:N'``.
    formats : str or list of str, optional
        Sparse formats the graph may create (``'coo'``, ``'csr'``, ``'csc'``); all by default.

    Examples
    --------
    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 0, 1], [1, 2, 2]), num_nodes=4)
    >>> g.num_nodes(), g.num_edges(), g.idtype
    (4, 3, nodeweave.core.int64)
    >>> nw.graph(("csr", ([0, 2, 3, 3], [1, 2, 2], []))).edges()[1].tolist()
    [1, 2, 2]
    >>> nw.graph(([0, 1], [1.0, 2.0]))
    Traceback (most recent call last):
    ...
    TypeError: dst must hold integer node ids, got dtype float64
    """
    if kwargs:
        raise TypeError(f"graph() got unexpected keyword arguments {sorted(kwargs)}")
    if _is_scipy(data):
        g = from_scipy(data, idtype=idtype, device=None)
        if num_nodes is not None and _check_count(num_nodes, "num_nodes") != g.num_nodes():
            raise ValueError(f"num_nodes={num_nodes} does not match the {data.shape} matrix")
        g = g if formats is None else g.formats(formats)
        return _finish(g, device)
    if _is_networkx(data):
        g = from_networkx(data, idtype=idtype)
        g = g if formats is None else g.formats(formats)
        return _finish(g, device)
    if not isinstance(data, (tuple, list)):
        raise TypeError("graph(): data must be a (src, dst) pair, a ('coo'|'csr'|'csc', arrays) pair, "
                        f"a SciPy sparse matrix or a networkx graph, got {type(data).__name__}")
    spec = _parse_rel(tuple(data) if isinstance(data, list) else data, "graph()")
    need = max(spec.needed())
    if num_nodes is None:
        n = need
    else:
        n = _check_count(num_nodes, "num_nodes")
        if n < need:
            if spec.fmt != "coo" and spec.needed()[0 if spec.fmt == "csr" else 1] > n:
                raise ValueError(f"num_nodes={n} is too small: indptr has {len(spec.arrays[0]) - 1} rows")
            raise ValueError(f"num_nodes={n} is too small: the edges use node id {need - 1} "
                             f"(num_nodes must be at least {need})")
    idt = _infer_idtype(idtype, *spec.raw[:2])
    rel = spec.build(n, n, idt, formats)
    g = HeteroGraph._create({DEFAULT_NTYPE: n}, {(DEFAULT_NTYPE, DEFAULT_ETYPE, DEFAULT_NTYPE): rel})
    return _finish(g, device)


def heterograph(data_dict: dict, num_nodes_dict: dict[str, int] | None = None, idtype: Any = None,
                device: Any = None) -> HeteroGraph:
    """A graph with several node and edge types.

    Parameters
    ----------
    data_dict : dict
        ``{(src_type, etype, dst_type): edges}`` where ``edges`` is anything :func:`graph` takes as
        a pair (``(src, dst)``, ``('coo', ...)``, ``('csr', ...)``, ``('csc', ...)``). A plain string
        key ``'follows'`` means ``(T, 'follows', T)`` for the graph's only node type ``T`` (``'_N'``
        when no key names one).
    num_nodes_dict : dict, optional
        Nodes per type; by default the largest id used per type plus one. Types listed here but in no
        edge type become node types without edges.
    idtype, device
        As for :func:`graph`.

    Node types and canonical edge types are sorted, as in DGL.

    Examples
    --------
    >>> import nodeweave as nw
    >>> g = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 2]),
    ...                     ("user", "plays", "game"): ([0, 2], [1, 0])})
    >>> g.ntypes, g.etypes
    (['game', 'user'], ['follows', 'plays'])
    >>> g.num_nodes("game"), g.num_edges("plays")
    (2, 2)
    """
    if not isinstance(data_dict, dict) or not data_dict:
        raise ValueError("heterograph(): data_dict must be a non-empty dict {(src_type, etype, dst_type): (src, dst)}")
    canon = [k for k in data_dict if isinstance(k, tuple) and len(k) == 3]
    named = {k[0] for k in canon} | {k[2] for k in canon}
    default_nt = next(iter(named)) if len(named) == 1 else DEFAULT_NTYPE
    specs: dict[tuple, _RelSpec] = {}
    raws = []
    for key, value in data_dict.items():
        if isinstance(key, str):
            ct = (default_nt, key, default_nt)
        elif isinstance(key, tuple) and len(key) == 3 and all(isinstance(s, str) for s in key):
            ct = key
        else:
            raise ValueError(f"heterograph(): edge type keys must be (src_type, etype, dst_type) tuples "
                             f"of strings or etype strings, got {key!r}")
        if ct in specs:
            raise ValueError(f"heterograph(): edge type {ct!r} is given twice")
        specs[ct] = _parse_rel(value, f"data_dict[{key!r}]")
        raws.extend(specs[ct].raw[:2])
    needed: dict[str, int] = {}
    for (st, _, dt), spec in specs.items():
        ns, nd = spec.needed()
        needed[st] = max(needed.get(st, 0), ns)
        needed[dt] = max(needed.get(dt, 0), nd)
    counts = dict(needed)
    for nt, n in (num_nodes_dict or {}).items():
        if not isinstance(nt, str):
            raise TypeError(f"num_nodes_dict keys must be node type names, got {nt!r}")
        n = _check_count(n, f"num_nodes_dict[{nt!r}]")
        if n < needed.get(nt, 0):
            raise ValueError(f"num_nodes_dict[{nt!r}]={n} is too small: the edges use {nt!r} node id "
                             f"{needed[nt] - 1} (need at least {needed[nt]})")
        counts[nt] = n
    idt = _infer_idtype(idtype, *raws)
    ntypes = sorted(counts)
    rels = {ct: specs[ct].build(counts[ct[0]], counts[ct[2]], idt, None) for ct in sorted(specs)}
    g = HeteroGraph._create({nt: counts[nt] for nt in ntypes}, rels)
    return _finish(g, device)


def _is_scipy(x: Any) -> bool:
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover
        return False
    return sp.issparse(x)


def _is_networkx(x: Any) -> bool:
    try:
        import networkx as nx
    except ImportError:  # pragma: no cover
        return False
    return isinstance(x, nx.Graph)


def from_scipy(sp_mat: Any, eweight_name: str | None = None, idtype: Any = None,
               device: Any = None) -> HeteroGraph:
    """A graph from a square SciPy sparse matrix: each stored entry ``(i, j)`` is an edge ``i -> j``
    (rows are sources), with edge ids in the matrix's COO order (row-major for CSR).

    Parameters
    ----------
    sp_mat : scipy.sparse matrix or array, shape (N, N)
    eweight_name : str, optional
        Store the entries' values as ``edata[eweight_name]``.

    >>> import numpy as np, scipy.sparse as sp, nodeweave as nw
    >>> A = sp.csr_matrix(np.array([[0, 2.0], [0.5, 0]]))
    >>> g = nw.from_scipy(A, eweight_name="w")
    >>> g.edges()[0].tolist(), g.edata["w"].tolist()
    ([0, 1], [2.0, 0.5])
    """
    if not _is_scipy(sp_mat):
        raise TypeError(f"from_scipy: expected a SciPy sparse matrix, got {type(sp_mat).__name__}")
    n, m = sp_mat.shape
    if n != m:
        raise ValueError(f"from_scipy: the matrix must be square for a homogeneous graph, got shape "
                         f"{sp_mat.shape}; use nw.heterograph for bipartite relations")
    coo = sp_mat.tocoo()
    src = np.asarray(coo.row, dtype=np.int64)
    dst = np.asarray(coo.col, dtype=np.int64)
    rel = RelationGraph.from_coo(n, n, src, dst, idtype=_idtype_name(idtype))
    g = HeteroGraph._create({DEFAULT_NTYPE: n}, {(DEFAULT_NTYPE, DEFAULT_ETYPE, DEFAULT_NTYPE): rel})
    if eweight_name is not None:
        g.edata[eweight_name] = backend.current().from_numpy(np.asarray(coo.data))
    return _finish(g, device)


def _stack_attr(values: list, what: str) -> Any:
    B = backend.current()
    try:
        arr = np.asarray(values)
    except ValueError as e:
        raise ValueError(f"{what}: values of different shapes cannot be stacked ({e})") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{what}: values must be numbers or arrays of numbers, got dtype {arr.dtype}")
    if arr.dtype.kind == "f" and not any(isinstance(v, np.ndarray) and v.dtype == np.float64 for v in values[:1]):
        arr = arr.astype(np.float32)  # Python floats become float32, as B.tensor would
    if arr.dtype.kind == "i" and arr.dtype != np.int32:
        arr = arr.astype(np.int64)
    return B.from_numpy(arr)


def from_networkx(nx_graph: Any, node_attrs: Sequence[str] | None = None,
                  edge_attrs: Sequence[str] | None = None, idtype: Any = None,
                  device: Any = None) -> HeteroGraph:
    """A graph from a networkx graph.

    Nodes are relabeled ``0..N-1`` in sorted order of their labels (in ``nx_graph.nodes`` order when
    labels cannot be sorted). A directed graph keeps its edges; an undirected one gets both
    directions of every edge (a self-loop once), as DGL. Edge ids follow ``nx_graph.edges`` order
    (of the directed version).

    Parameters
    ----------
    node_attrs, edge_attrs : list of str, optional
        Attributes to copy into ``ndata`` / ``edata``; every node (edge) must have them.

    >>> import networkx as nx, nodeweave as nw
    >>> g = nw.from_networkx(nx.path_graph(3))
    >>> g.num_edges(), sorted(zip(*[t.tolist() for t in g.edges()]))
    (4, [(0, 1), (1, 0), (1, 2), (2, 1)])
    """
    import networkx as nx

    if not isinstance(nx_graph, nx.Graph):
        raise TypeError(f"from_networkx: expected a networkx graph, got {type(nx_graph).__name__}")
    nodes = list(nx_graph.nodes)
    try:
        nodes = sorted(nodes)
    except TypeError:
        pass
    index = {v: i for i, v in enumerate(nodes)}
    directed = nx_graph if nx_graph.is_directed() else nx_graph.to_directed()
    edge_list = list(directed.edges(data=True))
    src = np.array([index[u] for u, _, _ in edge_list], dtype=np.int64)
    dst = np.array([index[v] for _, v, _ in edge_list], dtype=np.int64)
    n = len(nodes)
    rel = RelationGraph.from_coo(n, n, src, dst, idtype=_idtype_name(idtype))
    g = HeteroGraph._create({DEFAULT_NTYPE: n}, {(DEFAULT_NTYPE, DEFAULT_ETYPE, DEFAULT_NTYPE): rel})
    for attr in node_attrs or ():
        vals = []
        for v in nodes:
            if attr not in nx_graph.nodes[v]:
                raise ValueError(f"from_networkx: node {v!r} has no attribute {attr!r}")
            vals.append(nx_graph.nodes[v][attr])
        if n:
            g.ndata[attr] = _stack_attr(vals, f"node attribute {attr!r}")
    for attr in edge_attrs or ():
        vals = []
        for u, v, d in edge_list:
            if attr not in d:
                raise ValueError(f"from_networkx: edge ({u!r}, {v!r}) has no attribute {attr!r}")
            vals.append(d[attr])
        if edge_list:
            g.edata[attr] = _stack_attr(vals, f"edge attribute {attr!r}")
    return _finish(g, device)


def to_networkx(g: HeteroGraph, node_attrs: Sequence[str] | None = None,
                edge_attrs: Sequence[str] | None = None):
    """A ``networkx.MultiDiGraph`` of a homogeneous graph: nodes ``0..N-1``, one edge per edge with
    attribute ``'id'`` (its edge id); ``node_attrs`` / ``edge_attrs`` copy feature rows (NumPy
    arrays, or Python numbers for 1-D features).

    >>> import nodeweave as nw
    >>> nxg = nw.to_networkx(nw.graph(([0, 1], [1, 1])))
    >>> sorted(nxg.edges(data="id"))
    [(0, 1, 0), (1, 1, 1)]
    """
    import networkx as nx

    if not isinstance(g, HeteroGraph):
        raise TypeError(f"to_networkx: expected a graph, got {type(g).__name__}")
    if len(g.ntypes) != 1 or len(g.canonical_etypes) != 1:
        raise ValueError("to_networkx: only graphs with one node type and one edge type are supported, "
                         f"got node types {g.ntypes} and edge types {g.canonical_etypes}")
    ct = g.canonical_etypes[0]
    src, dst = g._coo(ct)
    out = nx.MultiDiGraph()
    n = g.num_nodes()
    nfeat = {a: backend.of(g.ndata[a]).to_numpy(g.ndata[a]) for a in node_attrs or ()}
    efeat = {a: backend.of(g.edata[a]).to_numpy(g.edata[a]) for a in edge_attrs or ()}

    def row(arr: np.ndarray, i: int) -> Any:
        return arr[i].item() if arr.ndim == 1 else arr[i].copy()

    out.add_nodes_from((i, {a: row(v, i) for a, v in nfeat.items()}) for i in range(n))
    out.add_edges_from((int(u), int(v), {"id": e, **{a: row(x, e) for a, x in efeat.items()}})
                       for e, (u, v) in enumerate(zip(src.tolist(), dst.tolist())))
    return out


# ----------------------------------------------------------------------------- edge-list files

_DIGITS = re.compile(r"\+?[0-9]+\Z")


def _loadtxt_pairs(text: str, delimiter: str | None, skip: int, src_col: int, dst_col: int,
                   comments: str | None) -> tuple[np.ndarray, np.ndarray] | None:
    """The fast path: NumPy's C parser. None whenever it objects or finds a negative id; the
    line-by-line reader then finds and names the bad line (it is the reference for what is valid)."""
    import io
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data"
            arr = np.loadtxt(io.StringIO(text), dtype=np.int64, delimiter=delimiter, comments=comments,
                             skiprows=skip, usecols=(src_col, dst_col), ndmin=2)
    except Exception:  # noqa: BLE001 - any objection sends us to the careful reader
        return None
    if arr.shape[1] != 2 or (arr.size and arr.min() < 0):
        return None
    return np.ascontiguousarray(arr[:, 0]), np.ascontiguousarray(arr[:, 1])


def _describe_delim(d: str | None) -> str:
    return {None: "whitespace", ",": "commas", "\t": "tabs", ";": "semicolons", " ": "spaces"}.get(d, repr(d))


def read_edge_list(path: str | os.PathLike, delimiter: str | None = None, header: bool | int = False,
                   src_col: int = 0, dst_col: int = 1, comments: str | None = "#",
                   num_nodes: int | None = None, relabel: bool = False, idtype: Any = None,
                   device: Any = None):
    """A homogeneous graph from a text file with one edge per line.

    Parameters
    ----------
    path : str or path
        UTF-8 text file.
    delimiter : str, optional
        Field separator. By default ``','`` for ``.csv`` files, a tab for ``.tsv`` files and any run
        of whitespace otherwise.
    header : bool or int
        ``True`` skips the first line, an int skips that many lines.
    src_col, dst_col : int
        Columns (from 0) holding the source and destination; other columns are ignored.
    comments : str or None
        Text from this marker to the end of a line is ignored; blank lines are skipped.
    num_nodes : int, optional
        As for :func:`graph`.
    relabel : bool
        When False, fields must be non-negative integers and are the node ids. When True, fields are
        arbitrary labels numbered ``0..N-1`` in order of first appearance, and the function returns
        ``(graph, labels)`` with ``labels[i]`` the label (str) of node ``i``.

    Raises
    ------
    ValueError
        Naming the file and line for a malformed line, a missing column or a bad id; also for a file
        that is not UTF-8 text.

    Examples
    --------
    >>> import os, tempfile, nodeweave as nw
    >>> path = os.path.join(tempfile.mkdtemp(), "edges.csv")
    >>> _ = open(path, "w").write("src,dst\\n0,1\\n1,2  # a comment\\n")
    >>> g = nw.read_edge_list(path, header=True)
    >>> g.num_nodes(), g.edges()[1].tolist()
    (3, [1, 2])
    >>> _ = open(path, "w").write("0,1\\n1;2\\n")
    >>> nw.read_edge_list(path)
    Traceback (most recent call last):
    ...
    ValueError: ...edges.csv, line 2: expected at least 2 fields separated by commas, got 1: '1;2'
    """
    name = os.fspath(path)
    if delimiter is None:
        low = name.lower()
        delimiter = "," if low.endswith(".csv") else "\t" if low.endswith(".tsv") else None
    if delimiter == "":
        raise ValueError("read_edge_list: delimiter must not be empty")
    if isinstance(header, bool):
        skip = int(header)
    elif isinstance(header, (int, np.integer)) and header >= 0:
        skip = int(header)
    else:
        raise ValueError(f"read_edge_list: header must be True/False or a number of lines, got {header!r}")
    for cname, c in (("src_col", src_col), ("dst_col", dst_col)):
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 0:
            raise ValueError(f"read_edge_list: {cname} must be a non-negative int, got {c!r}")
    with open(name, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise ValueError(f"{name}, line {line}: the file is not UTF-8 text ({e.reason} at byte {e.start})") from e
    if not relabel:
        fast = _loadtxt_pairs(text, delimiter, skip, src_col, dst_col, comments)
        if fast is not None:
            return graph(fast, num_nodes=num_nodes, idtype=idtype, device=device)
    need = max(src_col, dst_col) + 1
    labels: dict[str, int] = {}
    src: list[int] = []
    dst: list[int] = []
    lines = text.split("\n")
    for lineno in range(skip + 1, len(lines) + 1):
        line = lines[lineno - 1]
        body = line
        if comments:
            cut = body.find(comments)
            if cut >= 0:
                body = body[:cut]
        body = body.strip()
        if not body:
            continue
        fields = body.split(delimiter) if delimiter is not None else body.split()
        if len(fields) < need:
            raise ValueError(f"{name}, line {lineno}: expected at least {need} fields separated by "
                             f"{_describe_delim(delimiter)}, got {len(fields)}: {line.rstrip(chr(13))!r}")
        pair = []
        for col in (src_col, dst_col):
            tok = fields[col].strip()
            if relabel:
                if not tok:
                    raise ValueError(f"{name}, line {lineno}: column {col} is empty")
                pair.append(labels.setdefault(tok, len(labels)))
                continue
            if not _DIGITS.match(tok):
                if tok.startswith("-") and _DIGITS.match(tok[1:]):
                    raise ValueError(f"{name}, line {lineno}: node id {tok} in column {col} is negative")
                raise ValueError(f"{name}, line {lineno}: column {col} holds {tok!r}, not an integer "
                                 "node id (pass relabel=True for non-integer labels)")
            value = int(tok)
            if value > np.iinfo(np.int64).max:
                raise ValueError(f"{name}, line {lineno}: node id {tok} in column {col} is too large")
            pair.append(value)
        src.append(pair[0])
        dst.append(pair[1])
    s = np.array(src, dtype=np.int64)
    d = np.array(dst, dtype=np.int64)
    if relabel:
        n = len(labels) if num_nodes is None else num_nodes
        g = graph((s, d), num_nodes=n, idtype=idtype, device=device)
        return g, np.array(list(labels), dtype=str) if labels else np.zeros(0, dtype=str)
    return graph((s, d), num_nodes=num_nodes, idtype=idtype, device=device)
