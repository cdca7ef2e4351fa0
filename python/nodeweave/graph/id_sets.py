"""Node and edge id arguments as the graph API takes them: ids (ints, sequences, NumPy arrays or
tensors of either backend) or a bool mask, given directly for a graph with one node (edge) type or as
``{type: ids}``; turned into range-checked int64 NumPy arrays per type. Transforms and samplers read
their ``nodes=`` / ``edges=`` arguments through these, so every API accepts the same forms and says
the same things about bad ones.

>>> import nodeweave as nw
>>> g = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 2])})
>>> edge_sets(g, [1], "edges")
{('user', 'follows', 'user'): array([1])}
>>> node_sets(g, {"user": [5]}, "nodes")
Traceback (most recent call last):
...
nodeweave.graph.heterograph.IdRangeError: nodes['user'][0] = 5 is out of range: the graph has 3 nodes
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave.graph.heterograph import HeteroGraph, as_int_array, check_range
from nodeweave import errors as nwerr

Canonical = tuple

__all__ = ["ids_or_mask", "node_sets", "edge_sets"]


def ids_or_mask(x: Any, n: int, name: str, what: str) -> np.ndarray:
    """Ids from an int id sequence/tensor or a bool mask of length ``n``, range-checked."""
    B = backend.of(x)
    mask = None
    if B is not None and B.dtype_name(x) == "bool":
        mask = B.to_numpy(x)
    elif isinstance(x, (list, tuple, np.ndarray)):
        a = np.asarray(x) if not isinstance(x, np.ndarray) else x
        if a.dtype == np.bool_:
            mask = a
    if mask is not None:
        # A mask longer than n selects nothing past the end: DGL reads masks as the ids they hold, and
        # such masks (padded with False) occur in DGL code; a True past the end is out of range.
        if mask.ndim != 1 or mask.shape[0] < n or mask[n:].any():
            raise nwerr.ValueError(f"{name}: a bool mask must have one entry for each of the {n} {what}, got shape "
                                   f"{tuple(mask.shape)}" + (" with True past the end" if mask.ndim == 1 and
                                                              mask.shape[0] > n else ""))
        return np.flatnonzero(mask[:n]).astype(np.int64)
    ids, _ = as_int_array(x, name)
    check_range(ids, n, name, what)
    return ids


def node_sets(g: HeteroGraph, nodes: Any, name: str) -> dict[str, np.ndarray]:
    """``{ntype: ids}`` from a dict (missing types: no nodes) or, for one node type, ids/mask."""
    if isinstance(nodes, dict):
        out = {nt: np.zeros(0, np.int64) for nt in g._ntypes}
        for nt, v in nodes.items():
            if nt not in g._num_nodes:
                raise nwerr.ValueError(f"{name}: unknown node type {nt!r} (the graph has {g._ntypes})")
            out[nt] = ids_or_mask(v, g._num_nodes[nt], f"{name}[{nt!r}]",
                                  "nodes" if len(g._ntypes) == 1 else f"nodes of type {nt!r}")
        return out
    if len(g._ntypes) != 1:
        raise nwerr.ValueError(f"{name} must be a dict {{ntype: ids}} for a graph with several node types "
                               f"{g._ntypes}, got {type(nodes).__name__}")
    nt = g._ntypes[0]
    return {nt: ids_or_mask(nodes, g._num_nodes[nt], name, "nodes")}


def edge_sets(g: HeteroGraph, edges: Any, name: str) -> dict[Canonical, np.ndarray]:
    """``{canonical etype: ids}`` from a dict keyed by etype names/tuples, or ids for one etype."""
    if isinstance(edges, dict):
        out = {ct: np.zeros(0, np.int64) for ct in g._etypes}
        for et, v in edges.items():
            try:
                ct = g.to_canonical_etype(et)
            except (ValueError, TypeError) as e:
                raise nwerr.ValueError(f"{name}: {e}") from None
            out[ct] = ids_or_mask(v, g._rels[ct].num_edges, f"{name}[{et!r}]",
                                  "edges" if len(g._etypes) == 1 else f"edges of type {ct!r}")
        return out
    if len(g._etypes) != 1:
        raise nwerr.ValueError(f"{name} must be a dict {{etype: ids}} for a graph with "
                               f"{len(g._etypes)} edge types, got {type(edges).__name__}")
    ct = g._etypes[0]
    return {ct: ids_or_mask(edges, g._rels[ct].num_edges, name, "edges")}
