"""Graph readouts: per-graph sums, means, maxima, softmax, broadcast and top-k of node or edge
features on a batched graph (DGL's ``dgl.readout``; also exported as ``nodeweave.sum_nodes`` etc.).

Every function works graph by graph through ``graph.batch_num_nodes()`` / ``batch_num_edges()``
and one segment kernel (:func:`nodeweave.ops.segment_reduce`, :func:`~nodeweave.ops.segment_softmax`)
or one gather, never a Python loop over the graphs. An unbatched graph is a batch of one.

``feat`` (and ``weight``) name a feature stored on the graph, as in DGL, or are a tensor with one row
per node (edge).

>>> import nodeweave as nw, nodeweave.core as nc
>>> bg = nw.batch([nw.graph(([0], [1])), nw.graph(([0, 1], [1, 2]))])
>>> bg.ndata["h"] = nc.tensor([[1.0], [2.0], [3.0], [4.0], [5.0]])
>>> nw.sum_nodes(bg, "h").tolist()
[[3.0], [12.0]]
>>> nw.mean_nodes(bg, "h").tolist(), nw.max_nodes(bg, "h").tolist()
([[1.5], [4.0]], [[2.0], [5.0]])
>>> nw.broadcast_nodes(bg, nc.tensor([[10.0], [20.0]])).tolist()
[[10.0], [10.0], [20.0], [20.0], [20.0]]
"""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import numpy as np

from nodeweave import ops

from ._ns import T
from ._checks import check_rows, id_tensor, positive_int, resolve_ntype
from nodeweave import errors as nwerr

__all__ = ["readout_nodes", "readout_edges", "sum_nodes", "sum_edges", "mean_nodes", "mean_edges",
           "max_nodes", "max_edges", "softmax_nodes", "softmax_edges", "broadcast_nodes",
           "broadcast_edges", "topk_nodes", "topk_edges"]

Feat = Union[str, Any]
_OPS = ("sum", "mean", "max", "min")


# ---------------------------------------------------------------- where the values and counts come from
def _node_side(graph: Any, ntype: Optional[str]) -> Tuple[Any, int, Any]:
    nt = resolve_ntype(graph, ntype)
    return nt, graph.num_nodes(nt), graph.batch_num_nodes(nt)


def _edge_side(graph: Any, etype: Any) -> Tuple[Any, int, Any]:
    ct = graph.to_canonical_etype(etype)
    return ct, graph.num_edges(ct), graph.batch_num_edges(ct)


def _values(graph: Any, kind: str, key: Any, feat: Feat, rows: int, name: str) -> Any:
    """The tensor ``feat`` names (or is), checked to have one row per node/edge."""
    if isinstance(feat, str):
        data = graph.nodes[key].data if kind == "node" else graph.edges[key].data
        if feat not in data:
            raise nwerr.KeyError(f"{name}: the graph has no {kind} feature {feat!r} (it has {sorted(data.keys())})")
        return data[feat]
    what = kind if kind == "edge" or len(graph.ntypes) == 1 else f"node of type {key!r}"
    check_rows(feat, rows, name, what)
    return feat


def _weighted(graph: Any, kind: str, key: Any, feat: Feat, weight: Optional[Feat], rows: int) -> Any:
    x = _values(graph, kind, key, feat, rows, "feat")
    if weight is None:
        return x
    w = _values(graph, kind, key, weight, rows, "weight")
    if w.dim() == 1 and x.dim() > 1:
        w = w.reshape(rows, *([1] * (x.dim() - 1)))
    return x * w


def _readout(graph: Any, kind: str, feat: Feat, weight: Optional[Feat], op: str, key: Any) -> Any:
    if op not in _OPS:
        raise nwerr.ValueError(f"op must be one of {', '.join(_OPS)}, got {op!r}")
    key, rows, counts = (_node_side if kind == "node" else _edge_side)(graph, key)
    return ops.segment_reduce(counts, _weighted(graph, kind, key, feat, weight, rows), op)


# ---------------------------------------------------------------- reductions
def readout_nodes(graph: Any, feat: Feat, weight: Optional[Feat] = None, *, op: str = "sum",
                  ntype: Optional[str] = None) -> Any:
    """Reduce node features graph by graph with ``op`` (``sum``, ``mean``, ``max``, ``min``):
    returns ``(batch_size, *feat_shape)``. With ``weight`` (shape ``(N, 1)`` or ``(N,)``) the
    features are first multiplied by it. A graph without nodes gives zeros.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0], [1]), num_nodes=3)
    >>> nw.readout_nodes(g, nc.tensor([[1.0], [5.0], [3.0]]), op="min").tolist()
    [[1.0]]
    """
    return _readout(graph, "node", feat, weight, op, ntype)


def readout_edges(graph: Any, feat: Feat, weight: Optional[Feat] = None, *, op: str = "sum",
                  etype: Any = None) -> Any:
    """:func:`readout_nodes` over the edges of ``etype``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1], [1, 2]))
    >>> nw.readout_edges(g, nc.tensor([[1.0], [5.0]]), op="max").tolist()
    [[5.0]]
    """
    return _readout(graph, "edge", feat, weight, op, etype)


def sum_nodes(graph: Any, feat: Feat, weight: Optional[Feat] = None, *, ntype: Optional[str] = None) -> Any:
    """Per-graph sum of node features (optionally times ``weight``): ``(batch_size, ...)``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0], [1]))
    >>> nw.sum_nodes(g, nc.tensor([[1.0], [2.0]]), nc.tensor([[3.0], [0.5]])).tolist()
    [[4.0]]
    """
    return _readout(graph, "node", feat, weight, "sum", ntype)


def mean_nodes(graph: Any, feat: Feat, weight: Optional[Feat] = None, *, ntype: Optional[str] = None) -> Any:
    """Per-graph mean of node features (of ``feat * weight`` when weighted, as DGL).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> nw.mean_nodes(nw.graph(([0], [1])), nc.tensor([[1.0], [2.0]])).tolist()
    [[1.5]]
    """
    return _readout(graph, "node", feat, weight, "mean", ntype)


def max_nodes(graph: Any, feat: Feat, weight: Optional[Feat] = None, *, ntype: Optional[str] = None) -> Any:
    """Per-graph elementwise maximum of node features.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> nw.max_nodes(nw.graph(([0], [1])), nc.tensor([[1.0, 7.0], [2.0, 0.0]])).tolist()
    [[2.0, 7.0]]
    """
    return _readout(graph, "node", feat, weight, "max", ntype)


def sum_edges(graph: Any, feat: Feat, weight: Optional[Feat] = None, *, etype: Any = None) -> Any:
    """Per-graph sum of edge features.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> nw.sum_edges(nw.graph(([0, 1], [1, 0])), nc.tensor([[1.0], [2.0]])).tolist()
    [[3.0]]
    """
    return _readout(graph, "edge", feat, weight, "sum", etype)


def mean_edges(graph: Any, feat: Feat, weight: Optional[Feat] = None, *, etype: Any = None) -> Any:
    """Per-graph mean of edge features.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> nw.mean_edges(nw.graph(([0, 1], [1, 0])), nc.tensor([[1.0], [2.0]])).tolist()
    [[1.5]]
    """
    return _readout(graph, "edge", feat, weight, "mean", etype)


def max_edges(graph: Any, feat: Feat, weight: Optional[Feat] = None, *, etype: Any = None) -> Any:
    """Per-graph maximum of edge features.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> nw.max_edges(nw.graph(([0, 1], [1, 0])), nc.tensor([[1.0], [2.0]])).tolist()
    [[2.0]]
    """
    return _readout(graph, "edge", feat, weight, "max", etype)


# ---------------------------------------------------------------- softmax and broadcast
def softmax_nodes(graph: Any, feat: Feat, *, ntype: Optional[str] = None) -> Any:
    """Softmax over the nodes of each graph, per feature column: same shape as ``feat``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> bg = nw.batch([nw.graph(([0], [1])), nw.graph(([], []), num_nodes=1)])
    >>> nw.softmax_nodes(bg, nc.tensor([[0.0], [0.0], [3.0]])).tolist()
    [[0.5], [0.5], [1.0]]
    """
    key, rows, counts = _node_side(graph, ntype)
    return ops.segment_softmax(counts, _values(graph, "node", key, feat, rows, "feat"))


def softmax_edges(graph: Any, feat: Feat, *, etype: Any = None) -> Any:
    """Softmax over the edges of each graph.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> nw.softmax_edges(nw.graph(([0, 1], [1, 0])), nc.tensor([[1.0], [1.0]])).tolist()
    [[0.5], [0.5]]
    """
    key, rows, counts = _edge_side(graph, etype)
    return ops.segment_softmax(counts, _values(graph, "edge", key, feat, rows, "feat"))


def _broadcast(counts: Any, graph_feat: Any, batch_size: int) -> Any:
    if not isinstance(graph_feat, T.Tensor):
        raise nwerr.TypeError(f"graph_feat must be a tensor, got {type(graph_feat).__name__}")
    if graph_feat.dim() == 0 or graph_feat.shape[0] != batch_size:
        raise nwerr.ValueError(f"graph_feat must have one row per graph ({batch_size}), got shape "
                               f"{tuple(graph_feat.shape)}")
    c = counts.detach().cpu().numpy() if isinstance(counts, T.Tensor) else np.asarray(counts)
    seg = np.repeat(np.arange(len(c), dtype=np.int64), c)
    return graph_feat.index_select(0, id_tensor(seg, graph_feat))


def broadcast_nodes(graph: Any, graph_feat: Any, *, ntype: Optional[str] = None) -> Any:
    """Copies row ``b`` of ``graph_feat`` (``(batch_size, ...)``) to every node of graph ``b``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> nw.broadcast_nodes(nw.graph(([0], [1])), nc.tensor([[1.0, 2.0]])).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    _, _, counts = _node_side(graph, ntype)
    return _broadcast(counts, graph_feat, graph.batch_size)


def broadcast_edges(graph: Any, graph_feat: Any, *, etype: Any = None) -> Any:
    """Copies row ``b`` of ``graph_feat`` to every edge of graph ``b``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> nw.broadcast_edges(nw.graph(([0, 1], [1, 0])), nc.tensor([[3.0]])).tolist()
    [[3.0], [3.0]]
    """
    _, _, counts = _edge_side(graph, etype)
    return _broadcast(counts, graph_feat, graph.batch_size)


# ---------------------------------------------------------------- top-k
def _topk(counts_t: Any, x: Any, k: int, descending: bool, sortby: Optional[int]) -> Tuple[Any, Any]:
    """Top-k rows per segment of consecutive rows; see :func:`topk_nodes`."""
    if x.dim() != 2:
        raise nwerr.ValueError(f"feat must be 2-D (num_items, feature_size) for top-k, got shape {tuple(x.shape)}")
    counts = counts_t.detach().cpu().numpy().astype(np.int64)
    B, D = len(counts), x.shape[1]
    if sortby is not None:
        if isinstance(sortby, bool) or not isinstance(sortby, (int, np.integer)) or not -D <= sortby < D:
            raise nwerr.ValueError(f"sortby must be a column index in [{-D}, {D}), got {sortby!r}")
        sortby = int(sortby) % D
    K = max(int(counts.max()) if B else 0, k)
    # Scatter the ragged rows into a (B, K, D) block padded with a value that never wins.
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    local = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(offsets, counts)
    flat = np.repeat(np.arange(B, dtype=np.int64), counts) * K + local
    pad = float("-inf") if descending else float("inf")
    block = T.full((B * K, D), pad, dtype=x.dtype, device=x.device).index_copy(0, id_tensor(flat, x), x)
    block = block.reshape(B, K, D)
    valid_n = id_tensor(counts, x).reshape(B, 1)
    if sortby is None:
        vals, idx = T.topk(block, k, dim=1, largest=descending, sorted=True)
        valid = idx < valid_n.reshape(B, 1, 1)
    else:
        _, idx = T.topk(block[:, :, sortby], k, dim=1, largest=descending, sorted=True)
        rows = (idx + id_tensor(np.arange(B, dtype=np.int64) * K, x).reshape(B, 1)).reshape(B * k)
        vals = block.reshape(B * K, D).index_select(0, rows).reshape(B, k, D)
        valid = idx < valid_n
    zero = T.zeros((), dtype=x.dtype, device=x.device)
    vals = T.where(valid.unsqueeze(-1) if sortby is not None else valid, vals, zero)
    idx = T.where(valid, idx, T.full((), -1, dtype=idx.dtype, device=x.device))
    return vals, idx


def topk_nodes(graph: Any, feat: Feat, k: int, *, descending: bool = True, sortby: Optional[int] = None,
               ntype: Optional[str] = None) -> Tuple[Any, Any]:
    """The ``k`` largest (``descending``) or smallest node features of each graph.

    With ``sortby=None`` every feature column is ranked on its own: values and indices are
    ``(batch_size, k, D)``. With ``sortby=c`` nodes are ranked by column ``c`` and whole rows are
    returned: values ``(batch_size, k, D)``, indices ``(batch_size, k)``. Indices count nodes within
    their graph. A graph with fewer than ``k`` nodes is padded with zero values and index -1.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> bg = nw.batch([nw.graph(([0], [1])), nw.graph(([], []), num_nodes=1)])
    >>> vals, idx = nw.topk_nodes(bg, nc.tensor([[1.0, 9.0], [2.0, 0.0], [5.0, 5.0]]), 2, sortby=0)
    >>> vals.tolist(), idx.tolist()
    ([[[2.0, 0.0], [1.0, 9.0]], [[5.0, 5.0], [0.0, 0.0]]], [[1, 0], [0, -1]])
    """
    k = positive_int(k, "k", "topk_nodes")
    key, rows, counts = _node_side(graph, ntype)
    return _topk(counts, _values(graph, "node", key, feat, rows, "feat"), k, descending, sortby)


def topk_edges(graph: Any, feat: Feat, k: int, *, descending: bool = True, sortby: Optional[int] = None,
               etype: Any = None) -> Tuple[Any, Any]:
    """:func:`topk_nodes` over edges.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> vals, idx = nw.topk_edges(nw.graph(([0, 1], [1, 0])), nc.tensor([[1.0], [4.0]]), 1)
    >>> vals.tolist(), idx.tolist()
    ([[[4.0]]], [[[1]]])
    """
    k = positive_int(k, "k", "topk_edges")
    key, rows, counts = _edge_side(graph, etype)
    return _topk(counts, _values(graph, "edge", key, feat, rows, "feat"), k, descending, sortby)
