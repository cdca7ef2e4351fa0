"""k-hop structure: the k-hop in/out neighbourhood subgraphs of seed nodes (DGL's
``khop_in_subgraph`` / ``khop_out_subgraph``) and the graph of length-k walks (``khop_graph``).

>>> import nodeweave as nw
>>> sg, inv = nw.khop_out_subgraph(nw.graph(([0, 1, 2], [1, 2, 3])), [1], k=1)
>>> sg.ndata["_ID"].tolist(), inv.tolist()
([1, 2], [0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.frame import Frame
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms._common import (_adjacency, _check_graph, _check_k, _coo, _homo_types, _node_graphs,
                                                _rebuild)
from nodeweave.graph.id_sets import node_sets
from nodeweave.graph.transforms.subgraph import node_subgraph
from nodeweave import errors as nwerr

__all__ = ["khop_in_subgraph", "khop_out_subgraph", "khop_graph", "khop_adj"]


def _khop(g: HeteroGraph, nodes: Any, k: Any, inward: bool, relabel_nodes: bool, store_ids: bool,
          output_device: Any, fn: str):
    """Breadth-first search from ``nodes`` over every edge type, then the induced subgraph. Each hop
    asks the C++ in/out subgraph for the edges of the frontier only: it walks the frontier's rows of
    the in-edge CSC (or out-edge CSR), which is built once and cached with the graph, so a hop costs
    the frontier's degree rather than a pass over every edge."""
    _check_graph(g)
    k = _check_k(k, fn)
    was_dict = isinstance(nodes, dict)
    seeds = node_sets(g, nodes, "nodes")
    reached = {nt: np.zeros(g._num_nodes[nt], bool) for nt in g._ntypes}
    frontier = {}
    for nt, ids in seeds.items():
        reached[nt][ids] = True
        frontier[nt] = np.flatnonzero(reached[nt])
    for _ in range(k):
        found = {nt: [] for nt in g._ntypes}
        for ct in g._etypes:
            st, _, dt = ct
            host = g._host(ct)
            if inward and frontier[dt].size:  # predecessors of the frontier
                host.csc()
                found[st].append(_C.in_subgraph(host, frontier[dt], "keep")[0].coo()[0])
            elif not inward and frontier[st].size:
                host.csr()
                found[dt].append(_C.out_subgraph(host, frontier[st], "keep")[0].coo()[1])
        for nt in g._ntypes:
            ids = np.concatenate(found[nt]).astype(np.int64) if found[nt] else np.zeros(0, np.int64)
            ids = np.unique(ids[~reached[nt][ids]])
            reached[nt][ids] = True
            frontier[nt] = ids
        if not any(f.size for f in frontier.values()):
            break
    keep = {nt: np.flatnonzero(m).astype(np.int64) for nt, m in reached.items()}
    sub = node_subgraph(g, keep, relabel_nodes=relabel_nodes, store_ids=store_ids,
                        output_device=output_device)
    inv = {}
    for nt, ids in seeds.items():
        if was_dict and nt not in nodes:
            continue
        new_ids = np.searchsorted(keep[nt], ids) if relabel_nodes else ids
        inv[nt] = backend.current().int_tensor(new_ids, sub._device, g._idtype_name)
    return sub, (inv if was_dict else inv[g._ntypes[0]])


def khop_in_subgraph(g: HeteroGraph, nodes: Any, k: int, *, relabel_nodes: bool = True,
                     store_ids: bool = True, output_device: Any = None):
    """The subgraph induced by ``nodes`` and every node that reaches one of them in at most ``k``
    hops (following edges of every type backwards).

    Returns ``(subgraph, inverse_indices)``: kept nodes are in increasing original id, and
    ``inverse_indices`` gives the new id of each seed node (a dict when ``nodes`` is a dict).

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 4]))
    >>> sg, inv = nw.khop_in_subgraph(g, [3], k=2)
    >>> sg.ndata["_ID"].tolist(), inv.tolist()
    ([1, 2, 3], [2])
    """
    return _khop(g, nodes, k, True, relabel_nodes, store_ids, output_device, "khop_in_subgraph")


def khop_out_subgraph(g: HeteroGraph, nodes: Any, k: int, *, relabel_nodes: bool = True,
                      store_ids: bool = True, output_device: Any = None):
    """Like :func:`khop_in_subgraph`, following edges forwards (nodes reachable from ``nodes``).

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 4]))
    >>> sg, inv = nw.khop_out_subgraph(g, [3, 0], k=1)
    >>> sg.ndata["_ID"].tolist(), inv.tolist()
    ([0, 1, 3, 4], [2, 0])
    """
    return _khop(g, nodes, k, False, relabel_nodes, store_ids, output_device, "khop_out_subgraph")


def khop_graph(g: HeteroGraph, k: int, copy_ndata: bool = True) -> HeteroGraph:
    """The graph whose edges ``u -> v`` are the walks of length ``k`` from ``u`` to ``v`` in ``g``:
    as many parallel edges as there are such walks (the adjacency matrix is ``A**k``, counting
    multi-edges). Edges are sorted by ``(u, v)``; ``k = 0`` gives one self-loop per node.

    >>> import nodeweave as nw
    >>> kg = nw.khop_graph(nw.graph(([0, 0, 1, 2], [1, 2, 3, 3])), 2)
    >>> [t.tolist() for t in kg.edges()]
    [[0, 0], [3, 3]]
    """
    import scipy.sparse as sp

    _check_graph(g)
    nt, ct = _homo_types(g, "khop_graph")
    k = _check_k(k, "khop_graph")
    n = g._num_nodes[nt]
    src, dst = _coo(g, ct)
    a = sp.csr_matrix((np.ones(len(src), np.int64), (src, dst)), shape=(n, n))
    # Walk counts grow exponentially; count them in floating point first so an impossible result
    # is refused before the exact int64 power could overflow.
    w = np.ones(n)
    for _ in range(k):
        w = a @ w
    total = float(w.sum())
    limit = 2 ** 31 - 1 if g._idtype_name == "int32" else 2 ** 34
    if total > limit:
        raise nwerr.ValueError(f"khop_graph: the result would have {total:.3g} edges (walks of length {k}), "
                               f"more than the limit of {limit}")
    m = sp.identity(n, dtype=np.int64, format="csr")
    for _ in range(k):
        m = m @ a
    m = m.tocsr()
    m.sum_duplicates()
    m.sort_indices()
    m.eliminate_zeros()
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(m.indptr))
    counts = m.data.astype(np.int64)
    s, d = np.repeat(rows, counts), np.repeat(m.indices.astype(np.int64), counts)
    batch_edges = {}
    if g._batch_num_nodes is not None:
        batch_edges[ct] = np.bincount(_node_graphs(g, nt)[s], minlength=g.batch_size).astype(np.int64)
    return _rebuild(g, {ct: (s, d, Frame(len(s)))}, copy_ndata, batch_edges)


def khop_adj(g: HeteroGraph, k: int) -> Any:
    """``A**k`` as a dense float32 tensor of the active backend on the CPU (as DGL): ``A[u, v]`` is
    the number of edges ``u -> v`` (rows are sources), so entry ``(u, v)`` counts the walks of length
    ``k`` from ``u`` to ``v``; ``k = 0`` gives the identity. The graph must be homogeneous.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3, 4, 0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 1, 2, 3, 4, 0]))
    >>> nw.khop_adj(g, 3).tolist()[0]                  # (I + P)^3 on a 5-ring: 1, 3, 3, 1
    [1.0, 3.0, 3.0, 1.0, 0.0]
    """
    _check_graph(g)
    k = _check_k(k, "khop_adj")
    a = _adjacency(g, "khop_adj")
    n = a.shape[0]
    if n * n > 2 ** 31:
        raise nwerr.ValueError(f"khop_adj: the dense {n} x {n} result would have more than 2^31 entries")
    m = np.identity(n)
    for _ in range(k):
        m = np.asarray((a.T @ m.T).T)  # m @ a, the sparse factor on the left of the product
    return backend.current().from_numpy(np.ascontiguousarray(m, np.float32))
