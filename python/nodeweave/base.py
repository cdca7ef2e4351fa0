"""Library-wide names in one place (DGL's ``dgl.base``): the "every node / edge" symbol, the
feature names nodeweave reserves for ids and types, and the library's error and warning classes.

Each is declared where it is used and only gathered here; ``nodeweave.base.NID is nodeweave.NID``.
Under ``nodeweave.compat.dgl``, ``import dgl.base`` gives this module, with DGL's names for the
classes (``DGLError``, ``DGLWarning``, ``dgl_warning``) added by the alias.

>>> import nodeweave as nw
>>> from nodeweave import base
>>> base.ALL is nw.ALL, base.NID is nw.NID, base.is_all(base.ALL)
(True, True, True)
>>> g = nw.to_homogeneous(nw.heterograph({("a", "r", "b"): ([0], [0])}))
>>> sorted(k for k in g.ndata if not base.is_internal_column(k))
[]
>>> sorted(g.ndata)
['_ID', '_TYPE']
"""

from __future__ import annotations

from typing import Any

from nodeweave.errors import NodeweaveError, NodeweaveWarning, warn
from nodeweave.graph.heterograph import ALL, is_all
from nodeweave.graph.transforms import EID, ETYPE, NID, NTYPE

__all__ = ["ALL", "is_all", "NID", "EID", "NTYPE", "ETYPE", "INTERNAL_COLUMNS", "is_internal_column",
           "NodeweaveError", "NodeweaveWarning", "warn"]

INTERNAL_COLUMNS = frozenset({NID, EID, NTYPE, ETYPE})
"""Feature names nodeweave writes itself (original ids, type indices), as opposed to user features."""


def is_internal_column(name: Any) -> bool:
    """Whether ``name`` is a feature name nodeweave reserves (:data:`INTERNAL_COLUMNS`), e.g. to
    leave out of a comparison of user features.

    >>> is_internal_column("_ID"), is_internal_column("feat"), is_internal_column(3)
    (True, False, False)
    """
    return isinstance(name, str) and name in INTERNAL_COLUMNS
