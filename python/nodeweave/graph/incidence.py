"""Incidence matrices of one relation (DGL's ``g.inc`` / ``g.incidence_matrix``): a node-by-edge
sparse matrix saying which edges touch which nodes.

- ``'in'``: ``I[v, e] = 1`` when ``v`` is the destination of ``e`` (rows: destination nodes);
- ``'out'``: ``I[u, e] = 1`` when ``u`` is the source of ``e`` (rows: source nodes);
- ``'both'`` (a relation from a node type to itself): ``1`` at the destination, ``-1`` at the
  source, nothing for a self-loop (its two entries cancel).

On the pytorch backend the result is a coalesced ``torch.sparse_coo_tensor`` of float32 on ``ctx``
(the CPU by default, as DGL). The native engine has no sparse tensor type, so there it is a SciPy
``coo_matrix`` of float32 (on the CPU), like :meth:`~nodeweave.HeteroGraph.adj`.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1], [0, 2]))
>>> g.inc("in").toarray().tolist()
[[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]
>>> g.inc("both").toarray().tolist()          # edge 0 is a self-loop
[[0.0, 0.0], [0.0, -1.0], [0.0, 1.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave import errors as nwerr

__all__ = ["incidence_matrix", "install"]

_TYPES = ("in", "out", "both")


def incidence_matrix(g: HeteroGraph, typestr: str, ctx: Any = None, etype: Any = None):
    """The incidence matrix of ``etype`` (see the module docstring for the three kinds).

    Parameters
    ----------
    typestr : {'in', 'out', 'both'}
    ctx : device, optional
        Where the pytorch backend puts the tensor (default: the CPU); the native backend's SciPy
        matrix is always on the CPU.
    etype : str or tuple, optional
        May be omitted when the graph has one edge type.

    Returns
    -------
    torch.Tensor (sparse COO) or scipy.sparse.coo_matrix
        Shape ``(nodes, edges)``.
    """
    import scipy.sparse as sp

    if not isinstance(typestr, str) or typestr not in _TYPES:
        raise nwerr.ValueError(f"inc: typestr must be 'in', 'out' or 'both', got {typestr!r}")
    ct = g.to_canonical_etype(etype)
    rel = g._rels[ct]
    src, dst = (a.astype(np.int64) for a in g._coo(ct))
    eids = np.arange(len(src), dtype=np.int64)
    if typestr == "in":
        rows, cols, vals, n = dst, eids, np.ones(len(dst), np.float32), rel.num_dst
    elif typestr == "out":
        rows, cols, vals, n = src, eids, np.ones(len(src), np.float32), rel.num_src
    else:
        if ct[0] != ct[2]:
            raise nwerr.ValueError(f"inc: typestr='both' needs an edge type from a node type to itself, got {ct}")
        keep = src != dst
        e = eids[keep]
        rows = np.concatenate([src[keep], dst[keep]])
        cols = np.concatenate([e, e])
        vals = np.concatenate([-np.ones(len(e), np.float32), np.ones(len(e), np.float32)])
        n = rel.num_src
    B = backend.current()
    device = B.canonical_device(ctx)
    # The backend function set has no sparse type (the native engine has none), so the two
    # results are built here: torch's sparse COO tensor, or SciPy's matrix.
    if B.name == "pytorch":
        import torch

        index = torch.from_numpy(np.stack([rows, cols]))
        out = torch.sparse_coo_tensor(index, torch.from_numpy(vals), (n, len(src)), check_invariants=False)
        return out.coalesce().to(device)
    if device != "cpu":
        raise nwerr.ValueError(f"inc: ctx={ctx!r}, but on the native backend the incidence matrix is a SciPy "
                               "matrix, which lives on the CPU")
    return sp.coo_matrix((vals, (rows, cols)), shape=(n, len(src)))


def _inc(self, typestr: str, ctx: Any = None, etype: Any = None):
    return incidence_matrix(self, typestr, ctx, etype)


def install(cls: type) -> None:
    """Adds ``inc`` and its long name ``incidence_matrix`` to the graph class ``cls``."""
    _inc.__name__ = _inc.__qualname__ = "inc"
    _inc.__doc__ = "The incidence matrix of an edge type: see :func:`nodeweave.graph.incidence.incidence_matrix`.\n\n" \
        + (incidence_matrix.__doc__ or "")
    cls.inc = _inc
    cls.incidence_matrix = _inc
