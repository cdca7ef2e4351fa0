"""Builtin message and reduce functions for message passing (``nodeweave.function``).

A builtin message names where its operands live (``u`` source node, ``v`` destination node,
``e`` edge), the fields it reads and the field it writes; a builtin reducer names the message
field it reduces and the node field it writes. When both are builtins,
:meth:`~nodeweave.graph.HeteroGraph.update_all` runs them as one fused gSpMM and never stores a
per-edge message.

>>> import nodeweave.function as fn
>>> fn.u_mul_e("h", "w", "m")
u_mul_e('h', 'w', 'm')
>>> fn.sum("m", "h")
sum('m', 'h')
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Optional

__all__ = ["BuiltinMessage", "BuiltinReduce", "copy_u", "copy_e", "copy_src", "copy_edge",
           "sum", "mean", "max", "min"]

_BINARY_OPS = ("add", "sub", "mul", "div", "dot")
_TARGETS = ("u", "v", "e")


@dataclass(frozen=True)
class BuiltinMessage:
    """A message ``out = op(lhs, rhs)``; ``op`` is ``copy_lhs`` for copy_u/copy_e."""

    name: str
    op: str
    lhs_target: str
    lhs_field: str
    rhs_target: Optional[str]
    rhs_field: Optional[str]
    out_field: str

    def __repr__(self) -> str:
        fields = [self.lhs_field] + ([self.rhs_field] if self.rhs_field else [])
        return f"{self.name}({', '.join(map(repr, fields + [self.out_field]))})"


@dataclass(frozen=True)
class BuiltinReduce:
    """Reduce the incoming messages ``msg_field`` of each node into ``out_field``."""

    name: str
    msg_field: str
    out_field: str

    def __repr__(self) -> str:
        return f"{self.name}({self.msg_field!r}, {self.out_field!r})"


def copy_u(u: str, out: str) -> BuiltinMessage:
    """Message = the source node's feature ``u``."""
    return BuiltinMessage("copy_u", "copy_lhs", "u", u, None, None, out)


def copy_e(e: str, out: str) -> BuiltinMessage:
    """Message = the edge's feature ``e``."""
    return BuiltinMessage("copy_e", "copy_lhs", "e", e, None, None, out)


copy_src = copy_u
copy_edge = copy_e


def _make_binary(lhs: str, op: str, rhs: str):
    name = f"{lhs}_{op}_{rhs}"

    def builtin(lhs_field: str, rhs_field: str, out: str) -> BuiltinMessage:
        return BuiltinMessage(name, op, lhs, lhs_field, rhs, rhs_field, out)

    builtin.__name__ = name
    builtin.__qualname__ = name
    builtin.__doc__ = (f"Message = {op}(feature of {lhs}, feature of {rhs})"
                       + (" over the last dimension." if op == "dot" else "."))
    return builtin


for _lhs, _rhs in itertools.permutations(_TARGETS, 2):
    for _op in _BINARY_OPS:
        _f = _make_binary(_lhs, _op, _rhs)
        globals()[_f.__name__] = _f
        __all__.append(_f.__name__)


def _make_reduce(name: str):
    def reducer(msg: str, out: str) -> BuiltinReduce:
        return BuiltinReduce(name, msg, out)

    reducer.__name__ = name
    reducer.__qualname__ = name
    reducer.__doc__ = (f"Reduce incoming messages by {name}; nodes without messages get 0.")
    return reducer


sum = _make_reduce("sum")  # noqa: A001 (DGL's names)
mean = _make_reduce("mean")
max = _make_reduce("max")  # noqa: A001
min = _make_reduce("min")  # noqa: A001
