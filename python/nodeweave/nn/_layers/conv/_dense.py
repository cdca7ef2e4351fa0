"""Input checks shared by the dense-adjacency layers (``DenseGraphConv``, ``DenseSAGEConv``,
``DenseChebConv``): they take an ``(N_dst, N_src)`` adjacency tensor instead of a graph, as DGL's
``Dense*Conv`` do (row = destination node, column = source node).

>>> import nodeweave.core as nc
>>> dense_adj("DenseGraphConv", nc.tensor([[0, 1], [1, 0]]), nc.ones(2, 3)).dtype
nodeweave.core.float32
"""

from __future__ import annotations

from typing import Any

from .._ns import T
from nodeweave import errors as nwerr

__all__ = ["dense_adj"]


def dense_adj(layer: str, adj: Any, feat: Any, square: bool = False, name: str = "feat",
              side: str = "source") -> Any:
    """``adj`` on ``feat``'s dtype and device (0/1 integer or boolean adjacencies are common) after
    checking that it is a 2-D tensor with one column (``side='source'``) or one row
    (``side='destination'``) per row of ``feat`` and, with ``square``, as many rows as columns.
    ``name`` is ``feat``'s name in messages."""
    if not isinstance(adj, T.Tensor):
        raise nwerr.TypeError(f"{layer}: adj must be a dense (N_dst, N_src) tensor, got {type(adj).__name__}")
    if adj.dim() != 2:
        raise nwerr.ValueError(f"{layer}: adj must be a 2-D (N_dst, N_src) tensor, got shape {tuple(adj.shape)}")
    if square and adj.shape[0] != adj.shape[1]:
        raise nwerr.ValueError(f"{layer}: adj must be square (N, N) when feat is one tensor, got shape "
                               f"{tuple(adj.shape)}")
    if not isinstance(feat, T.Tensor):
        raise nwerr.TypeError(f"{layer}: {name} must be a tensor, got {type(feat).__name__}")
    if not feat.is_floating_point():
        raise nwerr.TypeError(f"{layer}: {name} must be a floating point tensor, got dtype {feat.dtype}")
    if feat.dim() != 2:
        raise nwerr.ValueError(f"{layer}: {name} must be 2-D (N, in_feats), got shape {tuple(feat.shape)}")
    axis, what = (1, "columns") if side == "source" else (0, "rows")
    if adj.shape[axis] != feat.shape[0]:
        raise nwerr.ValueError(f"{layer}: adj has {adj.shape[axis]} {what} ({side} nodes) but {name} has "
                               f"{feat.shape[0]} rows")
    return adj.to(feat)
