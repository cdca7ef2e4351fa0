"""Picking the one relation an op runs on, and the active backend's kernels."""

from __future__ import annotations

from typing import Any

from nodeweave import backend


def relation(g: Any, etype=None):
    """The ``RelationGraph`` of ``g``'s edge type ``etype`` (the only one when None)."""
    from nodeweave._C import RelationGraph

    if isinstance(g, RelationGraph):
        return g
    return g._rels[g._resolve_etype(etype)]


def kernels():
    """The active backend module, which provides gspmm, gsddmm, edge_softmax, ... ."""
    return backend.current()
