"""Helpers shared by the graph layers: splitting features into (source, destination) parts, degree
normalization, the zero-in-degree check and argument validation with clear messages.

Like the layers, this module reaches the tensor library only through ``_ns.py``, so it
binds to whichever backend the layers are bound to.

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.nn.native._utils import expand_as_pair, degree_norm
>>> g = nw.graph(([0, 1, 2], [1, 2, 2]), num_nodes=3)
>>> x = nc.ones(3, 2)
>>> src, dst = expand_as_pair(x, g)
>>> src is dst
True
>>> degree_norm(g, "in", -1.0, x).tolist()
[[1.0], [1.0], [0.5]]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional, Tuple

from nodeweave import backend as _backend

from ._ns import BACKEND_NAME, B, T
from nodeweave import errors as nwerr

__all__ = ["graph_tensor", "expand_as_pair", "is_block", "check_zero_in_degree", "degree_norm", "check_feat",
           "degrees", "check_pair_feats", "check_edge_weight", "check_homogeneous", "per_graph_to_nodes"]

ZERO_IN_DEGREE_MESSAGE = (
    "There are 0-in-degree nodes in the graph, output for those nodes will be invalid. "
    "This is harmful for some applications, causing silent performance regression. "
    "Adding self-loop on the input graph by calling `g = nodeweave.add_self_loop(g)` will "
    "resolve the issue. Setting ``allow_zero_in_degree`` to be `True` when constructing this "
    "module will suppress the check and let the code run.")


def graph_tensor(x: Any) -> Any:
    """A tensor the graph handed out (ids, degrees) as a tensor of these layers' backend.

    Graph queries return the *active* backend's tensors, and a layer package may be used while the
    other backend is active (``nodeweave.nn.pytorch.GraphConv`` under the native backend, say)."""
    if isinstance(x, T.Tensor):
        return x
    other = _backend.of(x)
    return B.from_numpy(other.to_numpy(x), other.device_str(x))


def is_block(graph: Any) -> bool:
    """Whether ``graph`` is a message-flow block: its destination nodes are the first
    ``num_dst_nodes()`` of its source nodes."""
    return bool(getattr(graph, "is_block", False))


def expand_as_pair(input_: Any, g: Any = None) -> Tuple[Any, Any]:
    """``(src, dst)`` views of ``input_``.

    A pair is returned as it is; on a block the destination part is the first ``num_dst_nodes()``
    rows (per node type for a dict of features); otherwise both parts are ``input_`` itself (an
    int, such as a feature size, also works).

    >>> expand_as_pair((3, 5))
    (3, 5)
    """
    if isinstance(input_, tuple):
        if len(input_) != 2:
            raise nwerr.ValueError(f"expected a (source, destination) pair, got a tuple of {len(input_)}")
        return input_
    if g is not None and is_block(g):
        if isinstance(input_, Mapping):
            return input_, {k: v[:g.num_dst_nodes(k)] for k, v in input_.items()}
        return input_, input_[:g.num_dst_nodes()]
    return input_, input_


def _compiling() -> bool:
    return BACKEND_NAME == "pytorch" and _torch_library.is_compiling()


if BACKEND_NAME == "pytorch":
    # Under torch.compile the degrees come from the structure tensors the kernels receive (the
    # graph's C++ queries cannot be traced); see nodeweave/backend/torch_library.py.
    from nodeweave.backend import torch_library as _torch_library
    from nodeweave.ops._graph import relation as _relation


if BACKEND_NAME == "native":
    from nodeweave import _C
    from nodeweave.ops._graph import relation as _relation
    from nodeweave.ops.spmm import gspmm as _gspmm


def _tracing(graph: Any) -> bool:
    """Whether a jit trace takes ``graph`` as an input (a graph the traced code captures is held by
    the program, and its host-computed degrees are constants of it, as before)."""
    if BACKEND_NAME != "native" or not _C._jit.tracing():
        return False
    try:
        rel = _relation(graph)
    except Exception:  # noqa: BLE001 - not one relation: the host path says what is wrong
        return False
    return _C._jit.traces_graph(rel)


def _traced_degrees(graph: Any, side: str) -> Any:
    """Degrees counted by a gSpMM over ones, so that a jit trace that takes ``graph`` as an input
    counts them again for the next graph (degrees read on the host would be frozen into it)."""
    rel = _relation(graph)
    if side != "in":
        rel = rel.reverse_for_kernels()
    ones = T.ones(rel.num_edges, 1)
    return _gspmm(rel, "copy_rhs", "sum", None, ones).reshape(rel.num_dst).to(getattr(T, rel.idtype))


def _has_zero_in_degree(graph: Any) -> bool:
    if _compiling():  # a cached bool of the relation, which the compiled model guards on
        return _torch_library.has_zero_in_degree(_relation(graph))
    if _tracing(graph):  # a guard of the program
        return bool((_traced_degrees(graph, "in") == 0).any())
    return bool((graph_tensor(graph.in_degrees()) == 0).any())


def degrees(graph: Any, side: str = "in") -> Any:
    """In-degrees (``side="in"``, destination nodes) or out-degrees (``"out"``, source nodes) of
    ``graph`` as a tensor of these layers' backend (int64 while torch.compile traces: counted
    from the structure tensors, in the compiled graph)."""
    if _compiling():
        s = _torch_library.structure(_relation(graph))
        return (s if side == "in" else s.reverse_for_kernels()).in_degrees()
    if _tracing(graph):
        return _traced_degrees(graph, side)
    return graph_tensor(graph.in_degrees() if side == "in" else graph.out_degrees())


def check_zero_in_degree(graph: Any, layer: str) -> None:
    """Raises ValueError (DGL's message) when some destination node has no in-edge."""
    if _has_zero_in_degree(graph):
        raise nwerr.ValueError(f"{layer}: {ZERO_IN_DEGREE_MESSAGE}")


def degree_norm(graph: Any, side: str, power: float, like: Any):
    """``clamp(degree, min=1) ** power`` shaped ``(N, 1, ..., 1)`` to broadcast against ``like``
    (same dtype and device). ``side``: ``"in"`` (destination nodes) or ``"out"`` (source nodes)."""
    degs = degrees(graph, side)
    norm = T.pow(degs.to(like).clamp(min=1), power)
    return norm.reshape((norm.shape[0],) + (1,) * (like.dim() - 1))


def _is_tensor(x: Any) -> bool:
    return isinstance(x, T.Tensor)


def check_feat(layer: str, name: str, feat: Any, rows: Optional[int], rows_what: str,
               size: Optional[int] = None, size_name: str = "in_feats") -> None:
    """Validates a feature tensor: a tensor of floats with ``rows`` rows (``rows_what`` says what
    they are, e.g. "source nodes") and, when ``size`` is given, ``size`` elements in its last
    dimension."""
    if not _is_tensor(feat):
        raise nwerr.TypeError(f"{layer}: {name} must be a tensor, got {type(feat).__name__}")
    if feat.dim() < 1:
        raise nwerr.ValueError(f"{layer}: {name} must have at least one dimension, got a scalar")
    if not feat.is_floating_point():
        raise nwerr.TypeError(f"{layer}: {name} must be a floating point tensor, got dtype {feat.dtype}")
    if rows is not None and feat.shape[0] != rows:
        raise nwerr.ValueError(f"{layer}: {name} has {feat.shape[0]} rows but the graph has {rows} "
                               f"{rows_what}")
    if size is not None and (feat.dim() < 2 or feat.shape[-1] != size):
        got = f"{feat.shape[-1]} features" if feat.dim() >= 2 else "no feature dimension"
        raise nwerr.ValueError(f"{layer}: {name} of shape {tuple(feat.shape)} has {got} in its last "
                               f"dimension, expected {size_name}={size}")


def check_pair_feats(layer: str, graph: Any, feat: Any, src_size: Optional[int] = None,
                     dst_size: Optional[int] = None, need_dst: bool = True,
                     arg: str = "feat") -> Tuple[Any, Any]:
    """Splits ``feat`` with :func:`expand_as_pair` and validates both parts against the graph's
    source and destination node counts (and feature sizes when given). ``need_dst=False`` skips
    the destination check for layers that read only the source features; ``arg`` is the
    argument's name in messages."""
    paired = isinstance(feat, tuple)
    if not paired:
        if need_dst and dst_size is not None and dst_size != src_size:
            raise nwerr.ValueError(f"{layer}: the module was built for (source, destination) feature "
                                   f"sizes ({src_size}, {dst_size}); pass {arg} as a (src_feat, "
                                   "dst_feat) pair")
        check_feat(layer, arg, feat, graph.num_src_nodes(), "source nodes", src_size)
    feat_src, feat_dst = expand_as_pair(feat, graph)
    if paired:
        check_feat(layer, f"{arg}[0]", feat_src, graph.num_src_nodes(), "source nodes", src_size)
        if need_dst:
            check_feat(layer, f"{arg}[1]", feat_dst, graph.num_dst_nodes(), "destination nodes",
                       dst_size)
    elif need_dst and not is_block(graph) and graph.num_dst_nodes() != graph.num_src_nodes():
        raise nwerr.ValueError(f"{layer}: the graph has {graph.num_src_nodes()} source and "
                               f"{graph.num_dst_nodes()} destination nodes; pass {arg} as a "
                               "(src_feat, dst_feat) pair")
    return feat_src, feat_dst


def check_edge_weight(layer: str, graph: Any, edge_weight: Any, name: str = "edge_weight") -> None:
    """Validates per-edge values: a floating point tensor with one row per edge."""
    check_feat(layer, name, edge_weight, graph.num_edges(), "edges")


def check_homogeneous(layer: str, graph: Any) -> None:
    """These layers propagate features over one node set: one node type, one edge type."""
    if is_block(graph):
        raise nwerr.ValueError(f"{layer} propagates over several hops of one node set and cannot run on a block "
                               "(a message-flow graph has separate source and destination nodes); give it a whole "
                               "graph or a sampled subgraph (ClusterGCNSampler, SAINTSampler, ShaDowKHopSampler)")
    if not graph.is_homogeneous:
        raise nwerr.ValueError(f"{layer} needs a homogeneous graph (one node type and one edge type), "
                               f"got node types {graph.ntypes} and edge types {graph.canonical_etypes}")


def per_graph_to_nodes(graph: Any, values: Any):
    """Repeats row ``b`` of ``values`` (one row per graph of a batch) once per node of graph
    ``b``. (``repeat_interleave`` is not in nodeweave.core, so it is an ``index_select``.)"""
    counts = [int(c) for c in graph.batch_num_nodes().tolist()]
    if values.shape[0] != len(counts):
        raise nwerr.ValueError(f"expected one value per graph of the batch ({len(counts)}), got "
                               f"{values.shape[0]}")
    ids = [b for b, c in enumerate(counts) for _ in range(c)]
    index = T.as_tensor(ids, dtype=T.int64, device=values.device)
    return values.index_select(0, index)

