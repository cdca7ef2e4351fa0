"""Edge softmax: normalise edge scores over each node's incoming (or outgoing) edges.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([0, 1, 2], [2, 2, 1]), num_nodes=3)
>>> a = nw.ops.edge_softmax(g, nc.tensor([[0.0], [0.0], [5.0]]))
>>> a.tolist()
[[0.5], [0.5], [1.0]]
"""

from __future__ import annotations

from typing import Any

from nodeweave.ops._graph import kernels, relation

__all__ = ["edge_softmax"]


def edge_softmax(g: Any, logits, eids=None, norm_by: str = "dst", etype=None):
    """Softmax of ``logits`` (num_edges, ...) over the in-edges of each destination node
    (``norm_by='dst'``, as in GAT) or the out-edges of each source (``norm_by='src'``).

    ``eids`` (DGL's argument) must be None: softmax over an edge subset is the softmax on
    ``g.edge_subgraph(eids)``.
    """
    if eids is not None:
        raise ValueError("edge_softmax: eids must be None; use g.edge_subgraph(eids) instead")
    if norm_by not in ("dst", "src"):
        raise ValueError(f"edge_softmax: norm_by must be 'dst' or 'src', got {norm_by!r}")
    return kernels(logits).edge_softmax(relation(g, etype), logits, norm_by)
