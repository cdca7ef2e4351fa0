"""Reading an id type argument: the one parser behind every ``idtype=`` (graph builders,
generators, ``create_block``) and ``g.astype``.

An id type is int32 or int64, spelled any way a user of either backend would spell it: the
backend's own dtype (``nodeweave.core.int64``, ``torch.int64``: so ``g.idtype`` of a graph goes
straight back into ``idtype=``), a NumPy dtype (``np.int64``, ``np.dtype('int64')``) or a string
(``'int64'``). Anything else is a TypeError naming the argument and these spellings.

>>> import numpy as np
>>> import nodeweave as nw
>>> from nodeweave.graph.idtypes import idtype_name
>>> idtype_name(np.int32), idtype_name(np.dtype("int64")), idtype_name("int32")
('int32', 'int64', 'int32')
>>> idtype_name(nw.graph(([0], [1])).idtype)
'int64'
>>> idtype_name("float32")
Traceback (most recent call last):
...
nodeweave.errors.TypeError: idtype must be int32 or int64, as a backend dtype (nodeweave.core.int32/int64, torch.int32/int64), a NumPy dtype (np.int32, np.dtype('int64')) or a string ('int32', 'int64'); got 'float32'
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from nodeweave import _C
from nodeweave import errors as nwerr

__all__ = ["idtype_name", "ACCEPTED_IDTYPES"]

ACCEPTED_IDTYPES = ("backend dtype (nodeweave.core.int32/int64, torch.int32/int64), a NumPy dtype "
                    "(np.int32, np.dtype('int64')) or a string ('int32', 'int64')")


def _dtype_name(d: Any) -> str | None:
    """The plain name (``'int32'``...) of a dtype in any accepted spelling; None for anything else.

    Only dtype objects are read: a Python ``int`` (which NumPy would take as the platform's long)
    or an arbitrary object with a ``name`` attribute is not an id type."""
    if isinstance(d, str):
        return d
    if isinstance(d, _C.dtype):
        return d.name
    if isinstance(d, np.dtype):
        return d.name
    if isinstance(d, type) and issubclass(d, np.generic):
        return np.dtype(d).name
    torch = sys.modules.get("torch")  # a torch dtype can only exist once torch is imported
    if torch is not None and isinstance(d, torch.dtype):
        return str(d).replace("torch.", "")
    return None


def idtype_name(idtype: Any, arg: str = "idtype") -> str:
    """``'int32'`` or ``'int64'`` for ``idtype`` in any accepted spelling; ``'int64'`` for None
    (the builders' default). TypeError naming ``arg`` otherwise."""
    if idtype is None:
        return "int64"
    name = _dtype_name(idtype)
    if name in ("int32", "int64"):
        return name
    raise nwerr.TypeError(f"{arg} must be int32 or int64, as a {ACCEPTED_IDTYPES}; got {idtype!r}")
