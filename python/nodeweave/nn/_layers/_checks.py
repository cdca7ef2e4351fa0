"""Helpers shared by the relational, heterogeneous and pooling layers: source/destination feature
pairs, argument checks that name the argument, and id tensors built on a feature's device.

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.nn.native._checks import expand_as_pair, src_dst_feats
>>> expand_as_pair(4)
(4, 4)
>>> g = nw.heterograph({("_U", "_E", "_V"): ([0, 1], [0, 0])}, num_nodes_dict={"_U": 2, "_V": 1})
>>> s, d = src_dst_feats(g, (nc.ones(2, 3), nc.zeros(1, 3)))
>>> tuple(s.shape), tuple(d.shape)
((2, 3), (1, 3))
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ._ns import T
from ._utils import expand_as_pair, is_block  # noqa: F401 - one copy, re-exported for the layers below
from nodeweave import errors as nwerr

__all__ = ["expand_as_pair", "is_block", "src_dst_feats", "check_rows", "check_feat_dim", "id_tensor",
           "to_numpy_ids", "relation_graph", "positive_int", "resolve_ntype"]


def positive_int(value: Any, name: str, cls: str, allow_zero: bool = False) -> int:
    """``value`` if it is a positive (or, with ``allow_zero``, non-negative) int, else ValueError
    naming ``name``.

    >>> positive_int(3, "k", "SortPooling")
    3
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < (0 if allow_zero else 1):
        raise nwerr.ValueError(f"{cls}: {name} must be a {'non-negative' if allow_zero else 'positive'} int, "
                               f"got {value!r}")
    return int(value)


def check_rows(t: Any, rows: int, name: str, what: str) -> None:
    """Raises naming ``name`` unless ``t`` is a tensor with ``rows`` rows (one per ``what``).

    >>> import nodeweave.core as nc
    >>> check_rows(nc.zeros(3, 2), 4, "feat", "source node")
    Traceback (most recent call last):
    ...
    nodeweave.errors.ValueError: feat must have one row per source node (4), got 3 rows (shape (3, 2))
    """
    if not isinstance(t, T.Tensor):
        raise nwerr.TypeError(f"{name} must be a tensor, got {type(t).__name__}")
    if t.dim() == 0 or t.shape[0] != rows:
        got = "a 0-dimensional tensor" if t.dim() == 0 else f"{t.shape[0]} rows (shape {tuple(t.shape)})"
        raise nwerr.ValueError(f"{name} must have one row per {what} ({rows}), got {got}")


def check_feat_dim(t: Any, dim: int, name: str, cls: str) -> None:
    """Raises naming ``name`` unless ``t`` is 2-D with ``dim`` columns.

    >>> import nodeweave.core as nc
    >>> check_feat_dim(nc.zeros(3, 2), 2, "feat", "SAGEConv")
    """
    if t.dim() != 2 or t.shape[1] != dim:
        raise nwerr.ValueError(f"{cls}: {name} must have shape (num_nodes, {dim}), got {tuple(t.shape)}")


def src_dst_feats(graph: Any, feat: Any, name: str = "feat") -> Tuple[Any, Any]:
    """``(feat_src, feat_dst)`` for a graph with one edge type, after checking their row counts
    against the graph's source and destination nodes.

    A pair is taken as ``(source, destination)`` features. A single tensor serves both sides of a
    graph whose sources are its destinations; on a block the destination features are its first
    ``num_dst_nodes`` rows. A single tensor on a bipartite graph raises ValueError.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> s, d = src_dst_feats(nw.graph(([0], [1])), nc.ones(2, 4))
    >>> s is d
    True
    """
    n_src, n_dst = graph.num_src_nodes(), graph.num_dst_nodes()
    if isinstance(feat, (tuple, list)):
        if len(feat) != 2:
            raise nwerr.ValueError(f"{name} must be a tensor or a (source, destination) pair, got {len(feat)} items")
        check_rows(feat[0], n_src, f"{name}[0]", "source node")
        check_rows(feat[1], n_dst, f"{name}[1]", "destination node")
        return feat[0], feat[1]
    check_rows(feat, n_src, name, "source node")
    if is_block(graph):
        return feat, feat[:n_dst]
    if graph.srctypes != graph.dsttypes:
        raise nwerr.ValueError(f"{name}: the graph is bipartite ({n_src} source, {n_dst} destination nodes); "
                               "pass a (source features, destination features) pair")
    return feat, feat


def id_tensor(ids: Any, like: Any) -> Any:
    """An int64 tensor holding ``ids`` (NumPy array or list) on the device of tensor ``like``.

    >>> import nodeweave.core as nc
    >>> id_tensor([2, 0], nc.zeros(1)).tolist()
    [2, 0]
    """
    t = T.from_numpy(np.ascontiguousarray(np.asarray(ids, dtype=np.int64)))
    return t if like is None else t.to(like.device)


def to_numpy_ids(ids: Any, name: str) -> np.ndarray:
    """``ids`` (int tensor, NumPy array or sequence) as a 1-D int64 NumPy array; TypeError naming
    ``name`` for non-integers.

    >>> import nodeweave.core as nc
    >>> to_numpy_ids(nc.tensor([1, 2]), "etypes").tolist()
    [1, 2]
    """
    if isinstance(ids, T.Tensor):
        arr = ids.detach().cpu().numpy()
    else:
        arr = np.asarray(ids)
        if arr.size == 0:
            arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise nwerr.TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise nwerr.ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr.astype(np.int64, copy=False)


def relation_graph(g: Any, etype: Any) -> Any:
    """The graph of one canonical edge type of ``g`` (DGL's ``g[stype, etype, dtype]``): same
    relation structure and feature frames (shared, not copied), only that relation's node types.

    >>> import nodeweave as nw
    >>> g = nw.heterograph({("user", "plays", "game"): ([0, 1], [0, 0]),
    ...                     ("user", "follows", "user"): ([0], [1])})
    >>> r = relation_graph(g, "plays")
    >>> r.canonical_etypes, r.num_src_nodes(), r.num_dst_nodes()
    ([('user', 'plays', 'game')], 2, 1)
    """
    return g[g.to_canonical_etype(etype)]


def resolve_ntype(g: Any, ntype: Optional[str], what: str = "ntype") -> str:
    """The node type ``ntype`` of ``g``, or its only node type when None.

    >>> import nodeweave as nw
    >>> resolve_ntype(nw.graph(([0], [1])), None)
    '_N'
    """
    if ntype is None:
        if len(g.ntypes) != 1:
            raise nwerr.ValueError(f"{what} must be given: the graph has several node types {g.ntypes}")
        return g.ntypes[0]
    if ntype not in g.ntypes:
        raise nwerr.ValueError(f"unknown node type {ntype!r} (the graph has {g.ntypes})")
    return ntype
