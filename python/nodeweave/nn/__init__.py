"""Graph neural network layers, for whichever backend is active.

Every layer is written once (``nodeweave/nn/_layers``) and loaded once per backend:

- :mod:`nodeweave.nn.native` — subclasses of ``nodeweave.core.nn.Module`` on ``nodeweave.core``
  tensors;
- :mod:`nodeweave.nn.pytorch` — subclasses of ``torch.nn.Module`` on ``torch.Tensor``\\ s.

``nodeweave.nn.GraphConv`` (and every other layer) resolves to the *active* backend's class when it
is looked up, as DGL's ``dgl.nn`` does: set ``NODEWEAVE_BACKEND=pytorch`` or call
``nw.set_backend("pytorch")`` before ``from nodeweave.nn import GraphConv`` to get the torch module.
The readout functions (``sum_nodes`` ...) instead follow the tensor they are given, so
``nw.sum_nodes(g, torch_tensor)`` works whatever the active backend.

>>> import nodeweave as nw
>>> nw.nn.GraphConv is nw.nn.native.GraphConv
True
>>> nw.set_backend("pytorch")  # doctest: +ELLIPSIS
<module 'nodeweave.backend.pytorch' ...>
>>> nw.nn.GraphConv is nw.nn.pytorch.GraphConv
True
>>> _ = nw.set_backend("native")
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Any, Callable

from nodeweave import backend as _backend
from nodeweave import errors as nwerr

_READOUTS = ("readout_nodes", "readout_edges", "sum_nodes", "sum_edges", "mean_nodes", "mean_edges",
             "max_nodes", "max_edges", "softmax_nodes", "softmax_edges", "broadcast_nodes",
             "broadcast_edges", "topk_nodes", "topk_edges")


def variant(name: str | None = None) -> ModuleType:
    """The layer package of backend ``name`` (default: the active backend).

    >>> variant("native").__name__
    'nodeweave.nn.native'
    """
    key = _backend.current().name if name is None else _backend.get(name).name
    return importlib.import_module(f"nodeweave.nn.{key}")


def _by_tensor(fname: str) -> Callable[..., Any]:
    """A readout function that runs the implementation of the backend owning its tensor args."""
    impl = getattr(variant("native"), fname)

    @functools.wraps(impl)
    def run(*args: Any, **kwargs: Any) -> Any:
        b = _backend.for_tensors(*args, *kwargs.values())
        return getattr(variant(b.name), fname)(*args, **kwargs)

    return run


for _name in _READOUTS:
    globals()[_name] = _by_tensor(_name)

# Graphs from point coordinates (nodeweave.knn_graph ...): like the readouts, they follow their tensor.
_POINT_GRAPHS = ("knn_graph", "segmented_knn_graph", "radius_graph")
for _name in _POINT_GRAPHS:
    globals()[_name] = _by_tensor(_name)


def __getattr__(attr: str) -> Any:
    if attr in _backend.BACKENDS:
        return importlib.import_module(f"nodeweave.nn.{attr}")
    if attr.startswith("__") and attr != "__all__":
        raise nwerr.AttributeError(attr)
    mod = variant()
    try:
        return getattr(mod, attr)
    except AttributeError:
        raise nwerr.AttributeError(f"module 'nodeweave.nn' has no attribute {attr!r} (active backend: "
                                   f"{_backend.current().name})") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(variant().__all__) | set(_backend.BACKENDS))
