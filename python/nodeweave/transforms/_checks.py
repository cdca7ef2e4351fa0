"""Argument checks shared by the transform classes: each raises naming the class and the argument.

>>> probability(0.3, "p", "DropEdge")
0.3
>>> probability(1.5, "p", "DropEdge")
Traceback (most recent call last):
...
nodeweave.errors.ValueError: DropEdge: p must be a probability in [0, 1], got 1.5
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from nodeweave import errors as nwerr

__all__ = ["probability", "number", "positive_int", "feature_names", "flag", "name_or_none",
           "graph", "homogeneous"]


def number(value: Any, name: str, cls: str, low: float | None = None) -> float:
    """``value`` as a float (a finite real number, at least ``low`` when given)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(value)):
        raise nwerr.TypeError(f"{cls}: {name} must be a finite number, got {value!r}")
    if low is not None and value < low:
        raise nwerr.ValueError(f"{cls}: {name} must be at least {low}, got {value!r}")
    return float(value)


def probability(value: Any, name: str, cls: str) -> float:
    """``value`` as a float in ``[0, 1]``."""
    v = number(value, name, cls)
    if not 0.0 <= v <= 1.0:
        raise nwerr.ValueError(f"{cls}: {name} must be a probability in [0, 1], got {value!r}")
    return v


def positive_int(value: Any, name: str, cls: str, allow_zero: bool = False) -> int:
    """``value`` if it is a positive (or, with ``allow_zero``, non-negative) int."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < (0 if allow_zero else 1):
        raise nwerr.ValueError(f"{cls}: {name} must be a {'non-negative' if allow_zero else 'positive'} int, "
                               f"got {value!r}")
    return int(value)


def flag(value: Any, name: str, cls: str) -> bool:
    """``value`` if it is a bool (NumPy's included); TypeError naming ``name`` otherwise (also used
    by the datasets' and loaders' switches)."""
    if not isinstance(value, (bool, np.bool_)):
        raise nwerr.TypeError(f"{cls}: {name} must be True or False, got {value!r}")
    return bool(value)


def name_or_none(value: Any, name: str, cls: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise nwerr.TypeError(f"{cls}: {name} must be a feature name (str) or None, got {value!r}")
    return value


def feature_names(value: Any, name: str, cls: str) -> list[str]:
    """A list of feature names from None (no names) or a sequence of strings (not a bare string,
    which would otherwise be read as a list of one-letter names)."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence) or \
            not all(isinstance(v, str) for v in value):
        raise nwerr.TypeError(f"{cls}: {name} must be a list of feature names or None, got {value!r}")
    return list(value)


def graph(g: Any, cls: str) -> Any:
    """``g`` if it is a nodeweave graph; TypeError otherwise."""
    from nodeweave.graph.heterograph import HeteroGraph

    if not isinstance(g, HeteroGraph):
        raise nwerr.TypeError(f"{cls} takes a nodeweave graph, got {type(g).__name__}")
    return g


def homogeneous(g: Any, cls: str) -> tuple[str, tuple]:
    """The node type and canonical edge type of a nodeweave graph with one of each; TypeError /
    ValueError naming ``cls`` otherwise."""
    from nodeweave.graph.transforms._common import _homo_types

    return _homo_types(graph(g, cls), cls)
