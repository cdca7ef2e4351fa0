"""Picking the one relation an op runs on, and the kernels of the backend that owns the operands."""

from __future__ import annotations

from typing import Any

from nodeweave import backend


def relation(g: Any, etype=None):
    """The ``RelationGraph`` of ``g``'s edge type ``etype`` (the only one when None)."""
    from nodeweave._C import RelationGraph

    if isinstance(g, RelationGraph):
        return g
    return g._rels[g._resolve_etype(etype)]


def kernels(*tensors: Any):
    """The backend owning ``tensors`` (the active one when none is a tensor): the module that
    provides gspmm, gsddmm, edge_softmax, ... for them."""
    return backend.for_tensors(*tensors)
