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

    On a graph with several edge types, ``logits`` may be a dict ``{etype: tensor}`` (canonical or
    plain edge type names): each node's edges of all those types are normalised together, as DGL
    does, and the result is a dict keyed by canonical edge type.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1, 2], [2, 2, 1]), num_nodes=3)
    >>> nw.ops.edge_softmax(g, nc.tensor([[0.0], [1.0]]), eids=[0, 1]).tolist()  # edges 0->2, 1->2
    [[0.2689414322376251], [0.7310585975646973]]

    >>> hg = nw.heterograph({("user", "plays", "game"): ([0, 1], [0, 0]),
    ...                      ("dev", "makes", "game"): ([0], [0])})
    >>> out = nw.ops.edge_softmax(hg, {"plays": nc.zeros((2, 1)), "makes": nc.zeros((1, 1))})
    >>> out[("user", "plays", "game")].tolist(), out[("dev", "makes", "game")].tolist()
    ([[0.3333333432674408], [0.3333333432674408]], [[0.3333333432674408]])
    """
    if norm_by not in ("dst", "src"):
        raise nwerr.ValueError(f"edge_softmax: norm_by must be 'dst' or 'src', got {norm_by!r}")
    selected = eids is not None and not (isinstance(eids, str) and eids == ALL)
    if isinstance(logits, dict):
        if selected or etype is not None:
            raise nwerr.ValueError("edge_softmax: with a dict of logits per edge type, the softmax runs over "
                                   "all edges of all those types; eids= and etype= cannot be given")
        return _softmax_across_types(g, logits, norm_by)
    if selected:
        g, etype = _edge_subset(g, eids, etype), None
    return kernels(logits).edge_softmax(relation(g, etype), logits, norm_by)


def _softmax_across_types(g: Any, logits: dict, norm_by: str) -> dict:
    """Softmax over each node's edges of every type in ``logits``: one kernel call on those edge
    types merged into one relation (so every input takes part in one differentiable op)."""
    from nodeweave.graph.merged_relation import merged_relation

    by_type = {}
    for key, value in logits.items():
        ct = g.to_canonical_etype(key)
        if ct in by_type:
            raise nwerr.ValueError(f"edge_softmax: logits for edge type {ct!r} are given twice")
        by_type[ct] = value
    # Graph order, so that the result does not depend on the dict's order.
    cts = [ct for ct in g.canonical_etypes if ct in by_type]
    if not cts:
        return {}
    parts = [by_type[ct] for ct in cts]
    B = kernels(*parts)
    for ct, part in zip(cts, parts):
        rows = B.shape(part)[0] if B.is_tensor(part) and len(B.shape(part)) else None
        if rows != g.num_edges(ct):
            raise nwerr.ValueError(f"edge_softmax: logits[{ct!r}] must be a tensor with one row per edge "
                                   f"({g.num_edges(ct)}), got {'no rows' if rows is None else rows}")
    merged = merged_relation(g, cts)
    scores = B.edge_softmax(merged.relation, parts[0] if len(parts) == 1 else B.cat(parts, 0), norm_by)
    if len(cts) == 1:
        return {cts[0]: scores}
    off = merged.edge_offsets
    return {ct: scores[off[i]:off[i + 1]] for i, ct in enumerate(cts)}


def _edge_subset(g: Any, eids: Any, etype: Any) -> Any:
    """The listed edges of one relation, in the listed order, as a graph on the same node ids
    (softmax groups by node id, so one node set as large as either side serves both ends)."""
    import nodeweave as nw

    src_type, _, dst_type = g.to_canonical_etype(etype)
    src, dst = g.find_edges(eids, etype=etype)
    n = max(g.num_src_nodes(src_type), g.num_dst_nodes(dst_type))
    return nw.graph((src, dst), num_nodes=n, idtype=g.idtype, device=g.device)
