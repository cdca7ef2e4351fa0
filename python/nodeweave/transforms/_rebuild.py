"""Building a transform's result graph from new per-relation edge lists (DGL's
``update_graph_structure``): every node (count and features) of the input, the given edges, and the
edge features the caller carries over. Types come out sorted, as :func:`nodeweave.heterograph` sorts
them; batch information is not kept (the edges no longer follow the batch's graphs).

>>> import numpy as np, nodeweave as nw
>>> g = nw.graph(([0, 1], [1, 2]))
>>> h = with_edges(g, {("_N", "_E", "_N"): (np.array([2]), np.array([0]))})
>>> [t.tolist() for t in h.edges()], h.num_nodes()
([[2], [0]], 3)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["with_edges"]


def with_edges(g: Any, edges: dict[tuple, tuple[np.ndarray, np.ndarray]],
               edge_data: dict[tuple, dict[str, Any]] | None = None, copy_ndata: bool = True) -> Any:
    """A graph with ``g``'s node types, node counts and (when ``copy_ndata``) node features, the
    relations ``edges`` (``{canonical etype: (src, dst)}``) and the edge features ``edge_data``."""
    import nodeweave as nw

    out = nw.heterograph({ct: (np.asarray(s, np.int64), np.asarray(d, np.int64)) for ct, (s, d) in edges.items()},
                         {nt: g.num_nodes(nt) for nt in g.ntypes}, idtype=g._idtype_name, device=g.device)
    if copy_ndata:
        for nt in g.ntypes:
            for key, value in g.nodes[nt].data.items():
                out.nodes[nt].data[key] = value
    for ct, feats in (edge_data or {}).items():
        for key, value in feats.items():
            out.edges[ct].data[key] = value
    return out
