"""Reachability along a metapath (DGL's ``metapath_reachable_graph``): an edge ``u -> v`` wherever a
walk following the metapath's edge types leads from ``u`` to ``v``.

>>> import nodeweave as nw
>>> g = nw.heterograph({("A", "AB", "B"): ([0, 1, 2], [1, 2, 3]),
...                     ("B", "BA", "A"): ([1, 2, 3], [0, 1, 2])})
>>> [t.tolist() for t in nw.metapath_reachable_graph(g, ["AB", "BA"]).edges()]
[[0, 1, 2], [0, 1, 2]]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms._common import _build, _check_graph, _coo
from nodeweave import errors as nwerr

__all__ = ["metapath_reachable_graph"]


def _relation_matrix(g: HeteroGraph, ct: tuple) -> sp.csr_matrix:
    src, dst = _coo(g, ct)
    m = sp.csr_matrix((np.ones(len(src), np.int8), (src, dst)),
                      shape=(g._num_nodes[ct[0]], g._num_nodes[ct[2]]), dtype=np.int64)
    m.sum_duplicates()
    return (m > 0).astype(np.int64).tocsr()


def metapath_reachable_graph(g: HeteroGraph, metapath: Sequence[str | tuple]) -> HeteroGraph:
    """The graph of metapath neighbours: one edge ``u -> v`` (however many walks there are) for
    every ``u`` of the metapath's first source type and ``v`` of its last destination type that a
    walk along ``metapath``'s edge types joins.

    The result has the edge type ``(src_type, '_E', dst_type)`` (one node type when they are the
    same), every node of those types (features shared with ``g``), and edges sorted by
    ``(u, v)``. Consecutive edge types must chain: each one's destination type is the next one's
    source type.

    >>> import nodeweave as nw
    >>> g = nw.heterograph({("user", "writes", "paper"): ([0, 1, 2], [0, 0, 1]),
    ...                     ("paper", "written_by", "user"): ([0, 0, 1], [0, 1, 2])})
    >>> co = nw.metapath_reachable_graph(g, ["writes", "written_by"])   # co-authors (and oneself)
    >>> co.canonical_etypes, [t.tolist() for t in co.edges()]
    ([('user', '_E', 'user')], [[0, 0, 1, 1, 2], [0, 1, 0, 1, 2]])
    """
    _check_graph(g)
    if isinstance(metapath, (str, tuple)) or not isinstance(metapath, Sequence) or len(metapath) == 0:
        raise nwerr.ValueError(f"metapath must be a non-empty list of edge types, got {metapath!r}")
    cts = [g.to_canonical_etype(et) for et in metapath]
    for i in range(1, len(cts)):
        if cts[i - 1][2] != cts[i][0]:
            raise nwerr.ValueError(f"metapath does not chain: edge type {cts[i - 1]!r} ends at node type "
                                   f"{cts[i - 1][2]!r} but the next one, {cts[i]!r}, starts at {cts[i][0]!r}")
    reach = _relation_matrix(g, cts[0])
    for ct in cts[1:]:
        # Keep 0/1 entries after every product: walk counts would grow exponentially.
        reach = ((reach @ _relation_matrix(g, ct)) > 0).astype(np.int64).tocsr()
    reach.sort_indices()
    st, dt = cts[0][0], cts[-1][2]
    rows = np.repeat(np.arange(reach.shape[0], dtype=np.int64), np.diff(reach.indptr))
    num_nodes = {t: g._num_nodes[t] for t in sorted({st, dt})}
    frames = {t: g._node_frames[t].clone_shallow() for t in num_nodes}
    return _build(num_nodes, {(st, "_E", dt): (rows, reach.indices.astype(np.int64))}, g._idtype_name,
                  g._device, frames)
