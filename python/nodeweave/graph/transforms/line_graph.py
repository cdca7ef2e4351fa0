"""The line graph (DGL's ``line_graph``): one node per edge, an edge wherever two edges meet
head to tail.

>>> import nodeweave as nw
>>> nw.line_graph(nw.graph(([0, 1], [1, 2]))).num_edges()
1
"""

from __future__ import annotations

import numpy as np

from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms._common import (_bne, _build, _check_graph, _coo, _edge_graphs,
                                                _homo_types, _ragged_positions)

__all__ = ["line_graph"]


def line_graph(g: HeteroGraph, backtracking: bool = True, shared: bool = False) -> HeteroGraph:
    """The line graph: one node per edge of ``g``, and an edge ``e1 -> e2`` wherever ``e1 = (u, v)``
    and ``e2 = (v, w)`` are two different edges (a self-loop is not joined to itself, as in DGL).
    Without ``backtracking``, pairs with ``w == u`` are left out. Edges are ordered by ``e1``, then
    ``e2``. ``shared=True`` makes ``g``'s edge features the node features.

    >>> import nodeweave as nw
    >>> lg = nw.line_graph(nw.graph(([0, 1, 1], [1, 0, 2])), backtracking=False)
    >>> lg.num_nodes(), [t.tolist() for t in lg.edges()]
    (3, [[0], [2]])
    """
    _check_graph(g)
    nt, ct = _homo_types(g, "line_graph")
    src, dst = _coo(g, ct)
    indptr, _, eids = g._host(ct).csr()
    indptr = indptr.astype(np.int64)
    e1 = np.repeat(np.arange(len(src), dtype=np.int64), np.diff(indptr)[dst])
    e2 = eids[_ragged_positions(indptr, dst)].astype(np.int64)
    ok = e1 != e2
    if not backtracking:
        ok &= dst[e2] != src[e1]
    e1, e2 = e1[ok], e2[ok]
    lnt = nt
    lct = (lnt, ct[1], lnt)
    nframes = {lnt: g._edge_frames[ct].clone_shallow()} if shared else None
    out = _build({lnt: len(src)}, {lct: (e1, e2)}, g._idtype_name, g._device, nframes)
    if g._batch_num_nodes is not None:
        out._batch_num_nodes = {lnt: _bne(g)[ct]}
        out._batch_num_edges = {lct: np.bincount(_edge_graphs(g, ct)[e1],
                                                 minlength=g.batch_size).astype(np.int64)}
    return out
