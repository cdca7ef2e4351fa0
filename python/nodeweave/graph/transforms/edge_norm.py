"""Per-edge normalization coefficients computed from the structure alone (DGL's ``norm_by_dst``).

R-GCN (Schlichtkrull et al., ESWC 2018) scales a message along relation ``r`` into node ``v`` by
``1 / c_{v,r}``, with ``c_{v,r}`` the number of ``r``-edges into ``v``: :func:`norm_by_dst` is that
``1 / c``, one value per edge of one edge type, ready for ``edata['norm']``.

>>> import nodeweave as nw
>>> nw.norm_by_dst(nw.graph(([0, 1, 1], [1, 1, 2]))).tolist()
[0.5, 0.5, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave.graph.transforms._common import _check_graph, _coo

__all__ = ["norm_by_dst"]


def norm_by_dst(g: Any, etype: str | tuple | None = None) -> Any:
    """``1 / in-degree`` of each edge's destination, counting only the edges of ``etype``.

    Parameters
    ----------
    g : HeteroGraph
        The graph (a :class:`~nodeweave.Block` too: degrees are those of its destination nodes).
    etype : str or (str, str, str), optional
        The edge type; may be omitted when the graph has one.

    Returns
    -------
    Tensor
        Shape ``(g.num_edges(etype),)``, float32, of the active backend on the graph's device, in
        edge-id order. Every edge's destination has at least that edge, so no value is infinite.

    >>> import nodeweave as nw
    >>> g = nw.heterograph({("user", "follows", "user"): ([0, 1, 2], [1, 1, 1]),
    ...                     ("user", "buys", "item"): ([0, 0], [0, 1])})
    >>> nw.norm_by_dst(g, "follows").tolist(), nw.norm_by_dst(g, ("user", "buys", "item")).tolist()
    ([0.3333333432674408, 0.3333333432674408, 0.3333333432674408], [1.0, 1.0])
    """
    _check_graph(g)
    ct = g.to_canonical_etype(etype)
    _, dst = _coo(g, ct)
    # counted within this edge type only: R-GCN normalizes per relation
    count = np.bincount(dst, minlength=g.num_dst_nodes(ct[2]))[dst]
    norm = (1.0 / count).astype(np.float32)
    return backend.current().from_numpy(np.ascontiguousarray(norm), g._device)
