"""Edge softmax: normalise edge scores over each node's incoming (or outgoing) edges.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([0, 1, 2], [2, 2, 1]), num_nodes=3)
>>> a = nw.ops.edge_softmax(g, nc.tensor([[0.0], [0.0], [5.0]]))
>>> a.tolist()
[[0.5], [0.5], [1.0]]
"""

from __future__ import annotations

from typing import Any

from nodeweave.graph.heterograph import ALL
from nodeweave.ops._graph import kernels, relation
from nodeweave import errors as nwerr

__all__ = ["edge_softmax"]


def edge_softmax(g: Any, logits, eids=None, norm_by: str = "dst", etype=None):
    """Softmax of ``logits`` (num_edges, ...) over the in-edges of each destination node
    (``norm_by='dst'``, as in GAT) or the out-edges of each source (``norm_by='src'``).

    ``eids`` (as in DGL): the softmax over only those edges, in that order, with ``logits`` holding one
    row per listed edge; ``None`` or ``nodeweave.ALL`` means every edge.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1, 2], [2, 2, 1]), num_nodes=3)
    >>> nw.ops.edge_softmax(g, nc.tensor([[0.0], [1.0]]), eids=[0, 1]).tolist()  # edges 0->2, 1->2
    [[0.2689414322376251], [0.7310585975646973]]
    """
    if norm_by not in ("dst", "src"):
        raise nwerr.ValueError(f"edge_softmax: norm_by must be 'dst' or 'src', got {norm_by!r}")
    if eids is not None and not (isinstance(eids, str) and eids == ALL):
        g, etype = _edge_subset(g, eids, etype), None
    return kernels(logits).edge_softmax(relation(g, etype), logits, norm_by)


def _edge_subset(g: Any, eids: Any, etype: Any) -> Any:
    """The listed edges of one relation, in the listed order, as a graph on the same node ids
    (softmax groups by node id, so one node set as large as either side serves both ends)."""
    import nodeweave as nw

    src_type, _, dst_type = g.to_canonical_etype(etype)
    src, dst = g.find_edges(eids, etype=etype)
    n = max(g.num_src_nodes(src_type), g.num_dst_nodes(dst_type))
    return nw.graph((src, dst), num_nodes=n, idtype=g.idtype, device=g.device)
