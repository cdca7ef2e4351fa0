"""Casting every floating-point feature of a graph at once (DGL's ``to_half``, ``to_float``,
``to_double``, ``to_bfloat16``): node and edge features of all types; integer and bool features
are left as they are.

Each returns a shallow copy: the structure is shared, the cast features are new tensors, and the
original graph keeps its features.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([0, 1], [1, 2]))
>>> g.ndata["h"] = nc.ones((3, 2))
>>> g.ndata["label"] = nc.tensor([0, 1, 2])
>>> h = nw.to_half(g)
>>> h.ndata["h"].dtype, h.ndata["label"].dtype, g.ndata["h"].dtype
(nodeweave.core.float16, nodeweave.core.int64, nodeweave.core.float32)
"""

from __future__ import annotations

import copy

from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms._common import _check_graph

__all__ = ["to_half", "to_float", "to_double", "to_bfloat16"]


def _cast(g: HeteroGraph, method: str) -> HeteroGraph:
    """A shallow copy of ``g`` whose floating-point features went through ``tensor.<method>()``
    (the same method name on native and torch tensors)."""
    _check_graph(g)
    out = copy.copy(g)  # any graph class (blocks too), relations shared
    frames = []
    for side in ("_node_frames", "_edge_frames"):
        new = {k: f.clone_shallow() for k, f in getattr(g, side).items()}
        setattr(out, side, new)
        frames.extend(new.values())
    for frame in frames:
        for name in list(frame):
            t = frame[name]
            if t.is_floating_point():
                frame[name] = getattr(t, method)()
    return out


def to_half(g: HeteroGraph) -> HeteroGraph:
    """``g`` with its floating-point node and edge features cast to float16 (a shallow copy)."""
    return _cast(g, "half")


def to_float(g: HeteroGraph) -> HeteroGraph:
    """``g`` with its floating-point node and edge features cast to float32 (a shallow copy)."""
    return _cast(g, "float")


def to_double(g: HeteroGraph) -> HeteroGraph:
    """``g`` with its floating-point node and edge features cast to float64 (a shallow copy)."""
    return _cast(g, "double")


def to_bfloat16(g: HeteroGraph) -> HeteroGraph:
    """``g`` with its floating-point node and edge features cast to bfloat16 (a shallow copy)."""
    return _cast(g, "bfloat16")
