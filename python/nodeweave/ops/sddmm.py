"""Generalized SDDMM: ``out[e] = op(lhs[target(e)], rhs[target(e)])`` and its named forms.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([0, 1], [1, 2]), num_nodes=3)
>>> x = nc.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
>>> nw.ops.u_dot_v(g, x, x).tolist()
[[0.0], [2.0]]
"""

from __future__ import annotations

import itertools
from typing import Any, Optional

from nodeweave.ops._graph import kernels, relation
from nodeweave import errors as nwerr

__all__ = ["gsddmm"]

_OPS = ("add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs")
_TARGETS = ("u", "e", "v")


def gsddmm(g: Any, op: str, lhs_data: Optional[Any], rhs_data: Optional[Any],
           lhs_target: str = "u", rhs_target: str = "v", etype=None):
    """Generalized sampled dense-dense matrix multiplication on one edge type of ``g``.

    ``lhs_target``/``rhs_target`` say where each operand lives: ``u`` (source nodes), ``e``
    (edges) or ``v`` (destination nodes). ``dot`` reduces the last feature dimension and keeps it
    with size 1. Returns one row per edge, in edge-id order.
    """
    if op not in _OPS:
        raise nwerr.ValueError(f"gsddmm: op must be one of {', '.join(_OPS)}, got {op!r}")
    for name, t in (("lhs_target", lhs_target), ("rhs_target", rhs_target)):
        if t not in _TARGETS:
            raise nwerr.ValueError(f"gsddmm: {name} must be 'u', 'e' or 'v', got {t!r}")
    return kernels(lhs_data, rhs_data).gsddmm(relation(g, etype), op, lhs_data, rhs_data,
                                              lhs_target, rhs_target)


def _make(lhs: str, op: str, rhs: str):
    name = f"{lhs}_{op}_{rhs}"

    def fn(g, x, y, etype=None):
        return gsddmm(g, op, x, y, lhs, rhs, etype)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Per edge, ``{op}`` of the {lhs} feature and the {rhs} feature."
    return fn


def copy_u(g: Any, x, etype=None):
    """Per edge, the source node's feature."""
    return gsddmm(g, "copy_lhs", x, None, "u", "e", etype)


def copy_v(g: Any, x, etype=None):
    """Per edge, the destination node's feature."""
    return gsddmm(g, "copy_lhs", x, None, "v", "e", etype)


__all__ += ["copy_u", "copy_v"]
for (_l, _r), _op in itertools.product(itertools.permutations(_TARGETS, 2),
                                       ("add", "sub", "mul", "div", "dot")):
    _f = _make(_l, _op, _r)
    globals()[_f.__name__] = _f
    __all__.append(_f.__name__)
