"""What the subgraph samplers (Cluster-GCN, GraphSAINT, ShaDow-KHop) share: the checks of their
graph and feature options, and the induced subgraph of a batch's nodes with the prefetched
features, ``NID`` and ``EID`` attached.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave.dataloading.base import set_edge_lazy_features, set_node_lazy_features
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms import node_subgraph
from nodeweave import errors as nwerr

__all__ = ["check_homogeneous", "cpu_relation", "feature_list", "induced_subgraph_batch"]


def check_homogeneous(g: Any, fn: str) -> HeteroGraph:
    """``g`` as a graph with one node type and one edge type (TypeError / ValueError otherwise)."""
    if not isinstance(g, HeteroGraph):
        raise nwerr.TypeError(f"{fn}: g must be a nodeweave graph, got {type(g).__name__}")
    if g.is_block:
        raise nwerr.ValueError(f"{fn}: g is a block; pass the graph the block came from")
    if len(g.ntypes) != 1 or len(g.canonical_etypes) != 1:
        raise nwerr.ValueError(f"{fn}: g must have one node type and one edge type, got node types {g.ntypes} "
                               f"and edge types {g.canonical_etypes}; convert it with nw.to_homogeneous")
    return g


def cpu_relation(g: HeteroGraph) -> Any:
    """The C++ relation graph of a homogeneous ``g`` on the CPU (a cached host copy for GPU graphs)."""
    ct = g.canonical_etypes[0]
    return g._rels[ct] if g._device == "cpu" else g._host(ct)


def feature_list(names: Any, arg: str) -> list[str] | None:
    """A feature-name option as a list (None stays None: every feature); TypeError otherwise."""
    if names is None:
        return None
    if isinstance(names, str):
        return [names]
    if isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
        return list(names)
    raise nwerr.TypeError(f"{arg} must be a feature name or a list of names, got {names!r}")


def _feature_names(names: Any, frames: list, arg: str, what: str) -> list[str]:
    """``names`` checked against ``frames`` (one per node or edge type: KeyError naming one no
    type has); None: every feature of every type."""
    if names is None:
        return list(dict.fromkeys(k for f in frames for k in f if not k.startswith("_")))
    out = feature_list(names, arg)
    missing = [n for n in out if not any(n in f for f in frames)]
    if missing:
        raise nwerr.KeyError(f"{arg}: the graph has no {what} feature {missing[0]!r}")
    return out


def induced_subgraph_batch(g: HeteroGraph, nodes: np.ndarray, prefetch_ndata: Any = None,
                           prefetch_edata: Any = None, output_device: Any = None) -> HeteroGraph:
    """The subgraph of ``g`` induced by ``nodes`` (node ``i`` of it is ``nodes[i]``; ``{ntype:
    ids}`` on a heterograph), as the subgraph samplers return it: ``ndata[nw.NID]`` / ``edata[nw.EID]`` hold the
    original ids, and the node (edge) features named by ``prefetch_ndata`` (``prefetch_edata``) are
    gathered into it; None gathers every feature, ``[]`` none. Moved to ``output_device`` (default:
    ``g``'s device).

    The structure comes from :func:`nodeweave.node_subgraph` on a feature-less view of ``g``, so
    features nobody asked for are never gathered.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
    >>> g.ndata["x"], g.ndata["y"] = nc.arange(4), nc.zeros(4)
    >>> sg = induced_subgraph_batch(g, [3, 0, 1], prefetch_ndata=["x"])
    >>> [t.tolist() for t in sg.edges()], sg.ndata["x"].tolist(), "y" in sg.ndata
    ([[1, 0], [2, 1]], [3, 0, 1], False)
    """
    node_names = _feature_names(prefetch_ndata, [g._node_frames[nt] for nt in g.ntypes], "prefetch_ndata", "node")
    edge_names = _feature_names(prefetch_edata, [g._edge_frames[ct] for ct in g.canonical_etypes],
                                "prefetch_edata", "edge")
    bare = HeteroGraph._create({nt: g.num_nodes(nt) for nt in g.ntypes}, dict(g._rels), device=g._device)
    sg = node_subgraph(bare, nodes)
    for name in node_names:
        set_node_lazy_features(sg, g, name)
    for name in edge_names:
        set_edge_lazy_features(sg, g, name)
    if output_device is not None:
        device = backend.current().canonical_device(output_device)
        if device != sg._device:
            sg = sg.to(device)
    return sg
