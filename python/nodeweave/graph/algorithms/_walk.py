"""What the traversals, shortest paths and propagation share: the one relation they walk and the
node lists they start from, checked at the boundary with the caller's function name in the error.

DGL walks graphs with exactly one edge type whose source and destination node types are the same
(a homogeneous graph, or a heterograph with a single such relation); so do these.

>>> import nodeweave as nw
>>> walk_relation(nw.graph(([0, 1], [1, 2])), "bfs_nodes_generator")[0]
('_N', '_E', '_N')
>>> walk_relation(nw.heterograph({("u", "buys", "i"): ([0], [0])}), "bfs_nodes_generator")
Traceback (most recent call last):
...
nodeweave.errors.ValueError: bfs_nodes_generator: the edge type ('u', 'buys', 'i') must go from a node type to itself
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave.graph.heterograph import HeteroGraph, RelationGraph, as_int_array, check_range
from nodeweave import errors as nwerr


def walk_relation(g: Any, fn: str) -> tuple[tuple, RelationGraph]:
    """The canonical edge type of ``g``'s only relation and that relation on the CPU with every
    format allowed (what the C++ walks read)."""
    if not isinstance(g, HeteroGraph):
        raise nwerr.TypeError(f"{fn}: graph must be a nodeweave graph, got {type(g).__name__}")
    if len(g.canonical_etypes) != 1:
        raise nwerr.ValueError(f"{fn}: the graph must have exactly one edge type, got {g.canonical_etypes}; "
                               "walk one relation with g[etype]")
    ct = g.canonical_etypes[0]
    if ct[0] != ct[2]:
        raise nwerr.ValueError(f"{fn}: the edge type {ct} must go from a node type to itself")
    return ct, g._host(ct)


def walk_nodes(g: HeteroGraph, ct: tuple, nodes: Any, name: str, fn: str) -> np.ndarray:
    """``nodes`` (an int, a sequence or a tensor of either backend) as int64 node ids of ``ct``'s
    node type; TypeError / IndexError naming ``name``."""
    if nodes is None:
        raise nwerr.TypeError(f"{fn}: {name} must be a node id or a list/tensor of node ids, got None")
    arr, _ = as_int_array(nodes, f"{fn}: {name}")
    check_range(arr, g.num_nodes(ct[0]), f"{fn}: {name}", "nodes")
    return arr
