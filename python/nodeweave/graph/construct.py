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
nodeweave.errors.ValueError: num_nodes=3 is too small: the edges use node id 5 (num_nodes must be at least 6)
"""

from __future__ import annotations

import os
import re
from typing import Any, Sequence

import numpy as np

from nodeweave import backend
from nodeweave.graph.edge_data import EDGE_FORMS, RelSpec, check_count, infer_idtype, parse_edges
from nodeweave.graph.heterograph import DEFAULT_ETYPE, DEFAULT_NTYPE, HeteroGraph, RelationGraph
from nodeweave.graph.idtypes import idtype_name
from nodeweave import errors as nwerr

__all__ = ["graph", "heterograph", "from_scipy", "from_networkx", "to_networkx", "bipartite_from_scipy",
           "bipartite_from_networkx", "read_edge_list"]


def _finish(g: HeteroGraph, device: Any) -> HeteroGraph:
    dev = backend.current().canonical_device(device)
    return g if dev == "cpu" else g.to(dev)


# ----------------------------------------------------------------------------- public builders


def graph(data: Any, num_nodes: int | None = None, idtype: Any = None, device: Any = None,
          formats: str | Sequence[str] | None = None, *, row_sorted: bool = False,
          col_sorted: bool = False, **kwargs: Any) -> HeteroGraph:
    """A homogeneous graph (one node type ``'_N'``, one edge type ``'_E'``).

    Parameters
    ----------
    data : tuple, list, SciPy sparse matrix or networkx graph
        The edges, as in DGL:

        - ``(src, dst)``, a tuple of two id sequences (lists, ranges, NumPy arrays or integer
          tensors of either backend): edge ``i`` is ``src[i] -> dst[i]``;
        - ``[(u, v), ...]``, a list of pairs, one per edge (``[]`` is a graph without edges);
        - ``('coo', (src, dst))``; ``('csr', (indptr, indices[, eids]))`` (rows are sources;
          ``eids`` may be omitted or empty for ``0..E-1``); ``('csc', (indptr, indices[, eids]))``
          (rows are destinations);
        - a square SciPy sparse matrix (see :func:`from_scipy`) or a networkx graph (see
          :func:`from_networkx`).

        A tuple is always ``(src, dst)`` and a list always a list of edges; input that fits no form
        (a list of two arrays or tensors, which could be either) raises, naming the forms.
    num_nodes : int, optional
        Number of nodes (an int or a 0-d integer tensor); by default the largest id used plus one.
        Must not be smaller than that.
    idtype : int32 or int64, optional
        Id type, as the backend's dtype (``torch.int32``, ``nodeweave.core.int32``, or ``g.idtype``
        of another graph), a NumPy dtype or a string; by default int32 when the ids are int32
        tensors, else int64.
    device : str, optional
        ``'cpu'`` (default) or ``'cuda:N'``.
    formats : str or list of str, optional
        Sparse formats the graph may create (``'coo'``, ``'csr'``, ``'csc'``); all by default.
    row_sorted, col_sorted : bool
        DGL's hints that the COO input is sorted by source (and by destination within a source).
        Accepted and otherwise ignored: nodeweave builds CSR/CSC with a linear-time counting sort
        that a hint could not shorten, so a wrong hint can never give a wrong graph.

    Examples
    --------
    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 0, 1], [1, 2, 2]), num_nodes=4)
    >>> g.num_nodes(), g.num_edges(), g.idtype
    (4, 3, nodeweave.core.int64)
    >>> [t.tolist() for t in nw.graph([(0, 1), (2, 3)]).edges()]  # a list of (u, v) pairs
    [[0, 2], [1, 3]]
    >>> nw.graph([]).num_nodes()
    0
    >>> nw.graph(("csr", ([0, 2, 3, 3], [1, 2, 2], []))).edges()[1].tolist()
    [1, 2, 2]
    >>> nw.graph(([0, 1], [1.0, 2.0]))
    Traceback (most recent call last):
    ...
    nodeweave.errors.TypeError: dst must hold integer node ids, got dtype float64
    """
    if kwargs:
        raise nwerr.TypeError(f"graph() got unexpected keyword arguments {sorted(kwargs)}")
    for flag, value in (("row_sorted", row_sorted), ("col_sorted", col_sorted)):
        if not isinstance(value, (bool, np.bool_)):
            raise nwerr.TypeError(f"graph(): {flag} must be True or False, got {value!r}")
    if _is_scipy(data) or _is_networkx(data):
        g = (from_scipy(data, idtype=idtype) if _is_scipy(data)
             else from_networkx(data, idtype=idtype))
        if num_nodes is not None and check_count(num_nodes, "num_nodes") != g.num_nodes():
            what = f"the {data.shape} matrix" if _is_scipy(data) else f"the {g.num_nodes()} networkx nodes"
            raise nwerr.ValueError(f"num_nodes={num_nodes} does not match {what}")
        g = g if formats is None else g.formats(formats)
        return _finish(g, device)
    if not isinstance(data, (tuple, list)):
        raise nwerr.TypeError(f"graph(): data must be {EDGE_FORMS}; or a SciPy sparse matrix or a networkx "
                              f"graph; got {type(data).__name__}"
                              + (" (for an edge_index of shape (2, E) pass (edge_index[0], edge_index[1]))"
                           if len(getattr(data, "shape", ())) == 2 else ""))
    spec = parse_edges(data, "graph()")
    need = max(spec.needed())
    if num_nodes is None:
        n = need
    else:
        n = check_count(num_nodes, "num_nodes")
        if n < need:
            if spec.fmt != "coo" and spec.needed()[0 if spec.fmt == "csr" else 1] > n:
                raise nwerr.ValueError(f"num_nodes={n} is too small: indptr has {len(spec.arrays[0]) - 1} rows")
            raise nwerr.ValueError(f"num_nodes={n} is too small: the edges use node id {need - 1} "
                                   f"(num_nodes must be at least {need})")
    rel = spec.build(n, n, infer_idtype(idtype, [spec]), formats)
    g = HeteroGraph._create({DEFAULT_NTYPE: n}, {(DEFAULT_NTYPE, DEFAULT_ETYPE, DEFAULT_NTYPE): rel})
    return _finish(g, device)


def heterograph(data_dict: dict, num_nodes_dict: dict[str, int] | None = None, idtype: Any = None,
                device: Any = None) -> HeteroGraph:
    """A graph with several node and edge types.

    Parameters
    ----------
    data_dict : dict
        ``{(src_type, etype, dst_type): edges}`` where ``edges`` is any form of edges :func:`graph`
        takes (``(src, dst)``, a list of ``(u, v)`` pairs, ``('coo', ...)``, ``('csr', ...)``,
        ``('csc', ...)``); ``csr`` rows are source nodes, ``csc`` rows destinations. A plain string
        key ``'follows'`` means ``(T, 'follows', T)`` for the graph's only node type ``T`` (``'_N'``
        when no key names one).
    num_nodes_dict : dict, optional
        Nodes per type (ints or 0-d integer tensors); a type left out gets the largest id used for it
        plus one. Types listed here but in no edge type become node types without edges.
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
        raise nwerr.ValueError("heterograph(): data_dict must be a non-empty dict {(src_type, etype, dst_type): (src, dst)}")
    canon = [k for k in data_dict if isinstance(k, tuple) and len(k) == 3]
    named = {k[0] for k in canon} | {k[2] for k in canon}
    default_nt = next(iter(named)) if len(named) == 1 else DEFAULT_NTYPE
    specs: dict[tuple, RelSpec] = {}
    for key, value in data_dict.items():
        if isinstance(key, str):
            ct = (default_nt, key, default_nt)
        elif isinstance(key, tuple) and len(key) == 3 and all(isinstance(s, str) for s in key):
            ct = key
        else:
            raise nwerr.ValueError(f"heterograph(): edge type keys must be (src_type, etype, dst_type) tuples "
                                   f"of strings or etype strings, got {key!r}")
        if ct in specs:
            raise nwerr.ValueError(f"heterograph(): edge type {ct!r} is given twice")
        specs[ct] = parse_edges(value, f"heterograph(): data_dict[{key!r}]")
    needed: dict[str, int] = {}
    for (st, _, dt), spec in specs.items():
        ns, nd = spec.needed()
        needed[st] = max(needed.get(st, 0), ns)
        needed[dt] = max(needed.get(dt, 0), nd)
    counts = dict(needed)
    if num_nodes_dict is not None and not isinstance(num_nodes_dict, dict):
        raise nwerr.TypeError("heterograph(): num_nodes_dict must be a dict {node_type: count}, got "
                              f"{type(num_nodes_dict).__name__}")
    for nt, n in (num_nodes_dict or {}).items():
        if not isinstance(nt, str):
            raise nwerr.TypeError(f"num_nodes_dict keys must be node type names, got {nt!r}")
        n = check_count(n, f"num_nodes_dict[{nt!r}]")
        if n < needed.get(nt, 0):
            raise nwerr.ValueError(f"num_nodes_dict[{nt!r}]={n} is too small: the edges use {nt!r} node id "
                                   f"{needed[nt] - 1} (need at least {needed[nt]})")
        counts[nt] = n
    idt = infer_idtype(idtype, list(specs.values()))
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
        raise nwerr.TypeError(f"from_scipy: expected a SciPy sparse matrix, got {type(sp_mat).__name__}")
    n, m = sp_mat.shape
    if n != m:
        raise nwerr.ValueError(f"from_scipy: the matrix must be square for a homogeneous graph, got shape "
                               f"{sp_mat.shape}; use nw.heterograph for bipartite relations")
    coo = sp_mat.tocoo()
    src = np.asarray(coo.row, dtype=np.int64)
    dst = np.asarray(coo.col, dtype=np.int64)
    rel = RelationGraph.from_coo(n, n, src, dst, idtype=idtype_name(idtype))
    g = HeteroGraph._create({DEFAULT_NTYPE: n}, {(DEFAULT_NTYPE, DEFAULT_ETYPE, DEFAULT_NTYPE): rel})
    if eweight_name is not None:
        g.edata[eweight_name] = backend.current().from_numpy(np.asarray(coo.data))
    return _finish(g, device)


def _node_attr(nx_graph: Any, nodes: Sequence, attr: str, fn: str) -> Any:
    """The networkx attribute ``attr`` of ``nodes`` (in that order) as one tensor; a node without
    it raises naming the node."""
    vals = []
    for v in nodes:
        if attr not in nx_graph.nodes[v]:
            raise nwerr.ValueError(f"{fn}: node {v!r} has no attribute {attr!r}")
        vals.append(nx_graph.nodes[v][attr])
    return _stack_attr(vals, f"node attribute {attr!r}")


def _stack_attr(values: list, what: str) -> Any:
    B = backend.current()
    try:
        arr = np.asarray(values)
    except ValueError as e:
        raise nwerr.ValueError(f"{what}: values of different shapes cannot be stacked ({e})") from None
    if arr.dtype.kind not in "biuf":
        raise nwerr.TypeError(f"{what}: values must be numbers or arrays of numbers, got dtype {arr.dtype}")
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
        raise nwerr.TypeError(f"from_networkx: expected a networkx graph, got {type(nx_graph).__name__}")
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
    rel = RelationGraph.from_coo(n, n, src, dst, idtype=idtype_name(idtype))
    g = HeteroGraph._create({DEFAULT_NTYPE: n}, {(DEFAULT_NTYPE, DEFAULT_ETYPE, DEFAULT_NTYPE): rel})
    for attr in node_attrs or ():
        if n:
            g.ndata[attr] = _node_attr(nx_graph, nodes, attr, "from_networkx")
    for attr in edge_attrs or ():
        vals = []
        for u, v, d in edge_list:
            if attr not in d:
                raise nwerr.ValueError(f"from_networkx: edge ({u!r}, {v!r}) has no attribute {attr!r}")
            vals.append(d[attr])
        if edge_list:
            g.edata[attr] = _stack_attr(vals, f"edge attribute {attr!r}")
    return _finish(g, device)


def to_networkx(g: HeteroGraph, node_attrs: Sequence[str] | None = None,
                edge_attrs: Sequence[str] | None = None, ntype_attr: str = "ntype", etype_attr: str = "etype",
                eid_attr: str = "id"):
    """A ``networkx.MultiDiGraph`` of the graph (also the method ``g.to_networkx()``), one networkx
    edge per edge, with attribute ``eid_attr`` (``'id'``) its edge id; ``node_attrs`` /
    ``edge_attrs`` copy feature rows (NumPy arrays, or Python numbers for 1-D features).

    A homogeneous graph keeps its node ids. A graph with several node or edge types is numbered as
    :func:`nodeweave.to_homogeneous` numbers it (node types in order, then edge types in order): each
    node gets attribute ``ntype_attr`` (its type name) and each edge ``etype_attr`` (its canonical
    type) and, as ``eid_attr``, its id in that numbering; a feature is copied for the types that
    have it.

    >>> import nodeweave as nw
    >>> nxg = nw.to_networkx(nw.graph(([0, 1], [1, 1])))
    >>> sorted(nxg.edges(data="id"))
    [(0, 1, 0), (1, 1, 1)]
    >>> hg = nw.heterograph({("user", "plays", "game"): ([0, 1], [1, 0])})
    >>> h = hg.to_networkx()
    >>> h.nodes[0], sorted(h.edges(data="id"))        # games are nodes 0-1, users 2-3
    ({'ntype': 'game'}, [(2, 1, 0), (3, 0, 1)])
    """
    import networkx as nx

    if not isinstance(g, HeteroGraph):
        raise nwerr.TypeError(f"to_networkx: expected a graph, got {type(g).__name__}")
    for what, name, attrs in (("node", ntype_attr, node_attrs), ("edge", etype_attr, edge_attrs),
                              ("edge", eid_attr, edge_attrs)):
        if not isinstance(name, str):
            raise nwerr.TypeError(f"to_networkx: the {what} attribute names must be strings, got {name!r}")
        if attrs is not None and name in attrs:
            raise nwerr.ValueError(f"to_networkx: {name!r} names both a copied {what} feature and the {what} "
                                   "type or id attribute; rename one of them")
    homogeneous = len(g.ntypes) == 1 and len(g.canonical_etypes) == 1
    out = nx.MultiDiGraph()

    def rows(frame: Any, names: Sequence[str] | None) -> dict[str, np.ndarray]:
        return {a: backend.of(frame[a]).to_numpy(frame[a]) for a in names or () if a in frame or homogeneous}

    def row(arr: np.ndarray, i: int) -> Any:
        return arr[i].item() if arr.ndim == 1 else arr[i].copy()

    offset = 0
    node_base = {}
    for nt in g.ntypes:
        node_base[nt] = offset
        feats = rows(g._node_frames[nt], node_attrs)
        kind = {} if homogeneous else {ntype_attr: nt}
        out.add_nodes_from((offset + i, {**kind, **{a: row(v, i) for a, v in feats.items()}})
                           for i in range(g.num_nodes(nt)))
        offset += g.num_nodes(nt)
    offset = 0
    for ct in g.canonical_etypes:
        src, dst = g._coo(ct)
        feats = rows(g._edge_frames[ct], edge_attrs)
        kind = {} if homogeneous else {etype_attr: ct}
        su, sv = node_base[ct[0]], node_base[ct[2]]
        out.add_edges_from((su + int(u), sv + int(v),
                            {eid_attr: offset + e, **kind, **{a: row(x, e) for a, x in feats.items()}})
                           for e, (u, v) in enumerate(zip(src.tolist(), dst.tolist())))
        offset += len(src)
    return out


def _bipartite_types(utype: Any, etype: Any, vtype: Any, ns: int, nd: int, fn: str) -> tuple:
    for name, t in (("utype", utype), ("etype", etype), ("vtype", vtype)):
        if not isinstance(t, str):
            raise nwerr.TypeError(f"{fn}: {name} must be a type name (str), got {t!r}")
    if utype == vtype and ns != nd:
        raise nwerr.ValueError(f"{fn}: utype and vtype are both {utype!r}, so the two sides must have as many "
                               f"nodes, got {ns} and {nd}")
    return utype, etype, vtype


def bipartite_from_scipy(sp_mat: Any, utype: str, etype: str, vtype: str, eweight_name: str | None = None,
                         idtype: Any = None, device: Any = None) -> HeteroGraph:
    """A graph with one edge type ``utype -> vtype`` from a SciPy sparse matrix of shape ``(N, M)``:
    ``N`` nodes of ``utype``, ``M`` of ``vtype``, and an edge ``i -> j`` per stored entry
    ``(i, j)``, in the matrix's COO order (row-major for CSR).

    Parameters
    ----------
    sp_mat : scipy.sparse matrix or array
    utype, etype, vtype : str
        Source node type, edge type, destination node type.
    eweight_name : str, optional
        Store the entries' values as ``edata[eweight_name]``.
    idtype, device
        As for :func:`graph`.

    >>> import numpy as np, scipy.sparse as sp, nodeweave as nw
    >>> A = sp.coo_matrix((np.array([0.2, 0.3]), (np.array([2, 3]), np.array([1, 0]))))
    >>> g = nw.bipartite_from_scipy(A, "user", "plays", "game", eweight_name="w")
    >>> g.num_nodes("user"), g.num_nodes("game"), g.edges()[0].tolist(), g.edata["w"].tolist()
    (4, 2, [2, 3], [0.2, 0.3])
    """
    fn = "bipartite_from_scipy"
    if not _is_scipy(sp_mat):
        raise nwerr.TypeError(f"{fn}: sp_mat must be a SciPy sparse matrix, got {type(sp_mat).__name__}")
    ns, nd = sp_mat.shape
    ut, et, vt = _bipartite_types(utype, etype, vtype, ns, nd, fn)
    coo = sp_mat.tocoo()
    rel = RelationGraph.from_coo(ns, nd, np.asarray(coo.row, dtype=np.int64), np.asarray(coo.col, dtype=np.int64),
                                 idtype=idtype_name(idtype))
    g = HeteroGraph._create({ut: ns, vt: nd} if ut != vt else {ut: ns}, {(ut, et, vt): rel})
    if eweight_name is not None:
        g.edata[eweight_name] = backend.current().from_numpy(np.asarray(coo.data))
    return _finish(g, device)


def _edge_id_value(value: Any, edge: tuple, name: str) -> int:
    arr = np.asarray(value)
    if arr.size != 1 or arr.dtype.kind not in "iu":
        raise nwerr.ValueError(f"bipartite_from_networkx: edge {edge!r} has {name}={value!r}, not an integer edge id")
    return int(arr.reshape(-1)[0])


def bipartite_from_networkx(nx_graph: Any, utype: str, etype: str, vtype: str,
                            u_attrs: Sequence[str] | None = None, e_attrs: Sequence[str] | None = None,
                            v_attrs: Sequence[str] | None = None, edge_id_attr_name: str | None = None,
                            idtype: Any = None, device: Any = None) -> HeteroGraph:
    """A graph with one edge type ``utype -> vtype`` from a directed networkx graph that follows
    networkx's bipartite convention: every node has attribute ``bipartite`` 0 (a ``utype`` node) or
    1 (a ``vtype`` node), and every edge goes from a 0 node to a 1 node.

    Each side is numbered ``0..`` in sorted order of its labels (in ``nx_graph.nodes`` order when
    they cannot be sorted). Edge ids follow ``nx_graph.edges`` order, or the integer edge attribute
    ``edge_id_attr_name`` (which must number the edges ``0..E-1``).

    Parameters
    ----------
    u_attrs, v_attrs, e_attrs : list of str, optional
        Node attributes to copy into ``srcdata`` / ``dstdata`` and edge attributes into ``edata``;
        every node of that side (every edge) must have them.

    >>> import networkx as nx, nodeweave as nw
    >>> G = nx.DiGraph()
    >>> G.add_nodes_from([1, 3], bipartite=0)
    >>> G.add_nodes_from([2, 4, 5], bipartite=1)
    >>> G.add_edges_from([(1, 4), (3, 5)])
    >>> g = nw.bipartite_from_networkx(G, "user", "plays", "game")
    >>> [t.tolist() for t in g.edges()], g.num_nodes("game")
    ([[0, 1], [1, 2]], 3)
    """
    import networkx as nx

    fn = "bipartite_from_networkx"
    if not isinstance(nx_graph, nx.Graph):
        raise nwerr.TypeError(f"{fn}: nx_graph must be a networkx graph, got {type(nx_graph).__name__}")
    if not nx_graph.is_directed():
        raise nwerr.ValueError(f"{fn}: nx_graph must be directed (a networkx DiGraph or MultiDiGraph), "
                               "with edges from the bipartite=0 side to the bipartite=1 side")
    sides: tuple[list, list] = ([], [])
    for node, data in nx_graph.nodes(data=True):
        side = data.get("bipartite")
        if isinstance(side, (bool, np.bool_)) or side not in (0, 1):
            raise nwerr.ValueError(f"{fn}: node {node!r} must have attribute bipartite=0 or 1, got "
                                   f"{'none' if 'bipartite' not in data else repr(side)}")
        sides[int(side)].append(node)
    ordered = []
    for nodes in sides:
        try:
            nodes = sorted(nodes)
        except TypeError:
            pass
        ordered.append(nodes)
    top, bottom = ({v: i for i, v in enumerate(nodes)} for nodes in ordered)
    ns, nd = len(top), len(bottom)
    ut, et, vt = _bipartite_types(utype, etype, vtype, ns, nd, fn)
    edge_list = list(nx_graph.edges(data=True))
    m = len(edge_list)
    order = np.arange(m, dtype=np.int64)  # order[k]: the edge id of the k-th networkx edge
    if edge_id_attr_name is not None:
        for k, (u, v, d) in enumerate(edge_list):
            if edge_id_attr_name not in d:
                raise nwerr.ValueError(f"{fn}: edge ({u!r}, {v!r}) has no edge id attribute {edge_id_attr_name!r}")
            order[k] = _edge_id_value(d[edge_id_attr_name], (u, v), edge_id_attr_name)
        if not np.array_equal(np.sort(order), np.arange(m)):
            raise nwerr.ValueError(f"{fn}: the edge ids in attribute {edge_id_attr_name!r} must number the {m} "
                                   f"edges 0..{m - 1}, each once")
    src = np.empty(m, np.int64)
    dst = np.empty(m, np.int64)
    for k, (u, v, _) in enumerate(edge_list):
        if u not in top or v not in bottom:
            raise nwerr.ValueError(f"{fn}: edge ({u!r}, {v!r}) must go from a bipartite=0 node to a bipartite=1 node")
        src[order[k]], dst[order[k]] = top[u], bottom[v]
    rel = RelationGraph.from_coo(ns, nd, src, dst, idtype=idtype_name(idtype))
    g = HeteroGraph._create({ut: ns, vt: nd} if ut != vt else {ut: ns}, {(ut, et, vt): rel})
    for attrs, nodes, data in ((u_attrs, ordered[0], g.srcdata), (v_attrs, ordered[1], g.dstdata)):
        for attr in attrs or ():
            if len(nodes):
                data[attr] = _node_attr(nx_graph, nodes, attr, fn)
    for attr in e_attrs or ():
        vals = [None] * m
        for k, (u, v, d) in enumerate(edge_list):
            if attr not in d:
                raise nwerr.ValueError(f"{fn}: edge ({u!r}, {v!r}) has no attribute {attr!r}")
            vals[order[k]] = d[attr]
        if vals:
            g.edata[attr] = _stack_attr(vals, f"edge attribute {attr!r}")
    return _finish(g, device)


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
    nodeweave.errors.ValueError: ...edges.csv, line 2: expected at least 2 fields separated by commas, got 1: '1;2'
    """
    name = os.fspath(path)
    if delimiter is None:
        low = name.lower()
        delimiter = "," if low.endswith(".csv") else "\t" if low.endswith(".tsv") else None
    if delimiter == "":
        raise nwerr.ValueError("read_edge_list: delimiter must not be empty")
    if isinstance(header, bool):
        skip = int(header)
    elif isinstance(header, (int, np.integer)) and header >= 0:
        skip = int(header)
    else:
        raise nwerr.ValueError(f"read_edge_list: header must be True/False or a number of lines, got {header!r}")
    for cname, c in (("src_col", src_col), ("dst_col", dst_col)):
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 0:
            raise nwerr.ValueError(f"read_edge_list: {cname} must be a non-negative int, got {c!r}")
    with open(name, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise nwerr.ValueError(f"{name}, line {line}: the file is not UTF-8 text ({e.reason} at byte {e.start})") from e
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
            raise nwerr.ValueError(f"{name}, line {lineno}: expected at least {need} fields separated by "
                                   f"{_describe_delim(delimiter)}, got {len(fields)}: {line.rstrip(chr(13))!r}")
        pair = []
        for col in (src_col, dst_col):
            tok = fields[col].strip()
            if relabel:
                if not tok:
                    raise nwerr.ValueError(f"{name}, line {lineno}: column {col} is empty")
                pair.append(labels.setdefault(tok, len(labels)))
                continue
            if not _DIGITS.match(tok):
                if tok.startswith("-") and _DIGITS.match(tok[1:]):
                    raise nwerr.ValueError(f"{name}, line {lineno}: node id {tok} in column {col} is negative")
                raise nwerr.ValueError(f"{name}, line {lineno}: column {col} holds {tok!r}, not an integer "
                                       "node id (pass relabel=True for non-integer labels)")
            value = int(tok)
            if value > np.iinfo(np.int64).max:
                raise nwerr.ValueError(f"{name}, line {lineno}: node id {tok} in column {col} is too large")
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
