"""Generalized SpMM: ``out[v] = reduce_{e=(u,v)} op(lhs[u], rhs[e])`` and its named forms.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([0, 1, 2], [1, 2, 2]), num_nodes=3)
>>> x = nc.tensor([[1.0], [2.0], [4.0]])
>>> nw.ops.copy_u_sum(g, x).tolist()
[[0.0], [1.0], [6.0]]
>>> w = nc.tensor([[1.0], [10.0], [100.0]])
>>> nw.ops.u_mul_e_max(g, x, w).tolist()
[[0.0], [1.0], [400.0]]
"""

from __future__ import annotations

import itertools
from typing import Any, Optional

from nodeweave.ops._graph import kernels, relation
from nodeweave import errors as nwerr

__all__ = ["gspmm"]

_OPS = ("add", "sub", "mul", "div", "copy_lhs", "copy_rhs")
_REDUCES = ("sum", "max", "min", "mean")


def gspmm(g: Any, op: str, reduce_op: str, lhs_data: Optional[Any], rhs_data: Optional[Any],
          etype=None):
    """Generalized sparse-dense matrix multiplication on one edge type of ``g``.

    Parameters
    ----------
    g : graph with one edge type (or pass ``etype``), or a ``RelationGraph``.
    op : ``add``, ``sub``, ``mul``, ``div``, ``copy_lhs`` or ``copy_rhs``.
    reduce_op : ``sum``, ``max``, ``min`` or ``mean``; nodes without in-edges get 0.
    lhs_data : source-node features ``(num_src, ...)`` (None for ``copy_rhs``).
    rhs_data : edge features ``(num_edges, ...)`` (None for ``copy_lhs``). Feature dims of the two
        operands broadcast like NumPy.

    Gradients flow to both operands (max/min route them to the winning edge).
    """
    if op not in _OPS:
        raise nwerr.ValueError(f"gspmm: op must be one of {', '.join(_OPS)}, got {op!r}")
    if reduce_op not in _REDUCES:
        raise nwerr.ValueError(f"gspmm: reduce_op must be one of {', '.join(_REDUCES)}, got {reduce_op!r}")
    return kernels(lhs_data, rhs_data).gspmm(relation(g, etype), op, reduce_op, lhs_data, rhs_data)


def _swap_e_u(op: str, reduce_op: str, e_data, u_data):
    """``op(e, u)`` rewritten as an ``op'(u', e)`` gspmm (exact for every reducer)."""
    if op in ("add", "mul"):
        return op, reduce_op, u_data, e_data
    if op == "sub":  # e - u = (-u) + e
        return "add", reduce_op, -u_data, e_data
    return "mul", reduce_op, 1.0 / u_data, e_data  # e / u = (1/u) * e


def _make(name: str, lhs: str, op: str, rhs: Optional[str], reduce_op: str):
    if rhs is None:
        def fn(g, x, etype=None):
            kop = "copy_lhs" if lhs == "u" else "copy_rhs"
            return gspmm(g, kop, reduce_op, x if lhs == "u" else None, x if lhs == "e" else None,
                         etype)
    elif lhs == "u":
        def fn(g, x, y, etype=None):
            return gspmm(g, op, reduce_op, x, y, etype)
    else:
        def fn(g, x, y, etype=None):
            kop, red, a, b = _swap_e_u(op, reduce_op, x, y)
            return gspmm(g, kop, red, a, b, etype)
    fn.__name__ = fn.__qualname__ = name
    operands = f"{lhs} feature" if rhs is None else f"{op}({lhs} feature, {rhs} feature)"
    fn.__doc__ = f"``{reduce_op}`` over in-edges of {operands}: one fused gspmm."
    return fn


for _red in _REDUCES:
    for _src in ("u", "e"):
        _f = _make(f"copy_{_src}_{_red}", _src, "copy", None, _red)
        globals()[_f.__name__] = _f
        __all__.append(_f.__name__)
    for (_l, _r), _op in itertools.product((("u", "e"), ("e", "u")), ("add", "sub", "mul", "div")):
        _f = _make(f"{_l}_{_op}_{_r}_{_red}", _l, _op, _r, _red)
        globals()[_f.__name__] = _f
        __all__.append(_f.__name__)
