"""Feature initializers (DGL's ``dgl.init``): what a feature holds in rows nobody wrote.

A graph fills such rows when nodes or edges are added without that feature, when a feature is first
set on some rows only (``g.nodes[ids].data['h'] = x``), and when a user-defined reduce function
leaves nodes without in-edges out. By default the rows are zeros; ``g.set_n_initializer(fn)`` and
``g.set_e_initializer(fn)`` choose another function, for every feature or for one ``field``.

An initializer is called as ``fn(shape, dtype, ctx, id_range)`` and returns a tensor of ``shape``:
``dtype`` and ``ctx`` are the backend's dtype and device objects of the feature (``torch.float32``
and ``torch.device('cpu')`` on the pytorch backend), and ``id_range`` is the slice of the node or edge
ids being filled.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([0], [1]))
>>> g.ndata["h"] = nc.tensor([[1.0], [2.0]])
>>> g.set_n_initializer(lambda shape, dtype, ctx, ids: nc.full(shape, -1.0, dtype=dtype))
>>> g.add_nodes(2)
>>> g.ndata["h"].tolist()
[[1.0], [2.0], [-1.0], [-1.0]]
>>> g.set_n_initializer(nw.init.zero_initializer)
>>> g.add_nodes(1)
>>> g.ndata["h"].tolist()
[[1.0], [2.0], [-1.0], [-1.0], [0.0]]
"""

from __future__ import annotations

import sys
from typing import Any

from nodeweave import backend

__all__ = ["zero_initializer"]


def _backend_of_dtype(dtype: Any):
    """The backend whose dtype objects ``dtype`` belongs to (torch dtypes -> pytorch; anything
    else, nodeweave.core dtypes, NumPy dtypes and names, -> the active backend unless that cannot
    hold it)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(dtype, torch.dtype):
        return backend.get("pytorch")
    import nodeweave.core as nc

    if isinstance(dtype, type(nc.float32)):
        return backend.get("native")
    return backend.current()


def zero_initializer(shape: tuple, dtype: Any, ctx: Any, id_range: slice) -> Any:
    """Zeros of ``shape`` with ``dtype`` on ``ctx`` (the default initializer).

    >>> import torch
    >>> zero_initializer((2, 3), torch.float64, torch.device("cpu"), slice(4, 6)).dtype
    torch.float64
    """
    return _backend_of_dtype(dtype).zeros(tuple(shape), dtype, ctx)
