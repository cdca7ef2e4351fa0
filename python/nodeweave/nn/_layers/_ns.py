"""The tensor namespace the graph layers are written against, bound per backend.

Every layer imports its tensor library only through this module, as

    from .._ns import T, nn, F

with ``T`` the tensor module, ``nn`` its module/parameter namespace and ``F`` its functional
namespace. The layer sources are loaded once per backend package (:mod:`nodeweave.nn.native`,
:mod:`nodeweave.nn.pytorch`); this module sees which one it belongs to from its own name and binds
``T, nn, F`` to ``nodeweave.core`` or to ``torch``. ``nodeweave.core`` follows PyTorch's names, so
one source serves both. ``B`` is the backend module (:mod:`nodeweave.backend`) of the same package.
Graph kernels come from :mod:`nodeweave.ops` and :mod:`nodeweave.function`, which follow the
tensors they are given.
"""

from nodeweave import backend as _backend
from nodeweave import errors as nwerr

_parts = __name__.split(".")
BACKEND_NAME = _parts[-2] if len(_parts) >= 2 else ""

if BACKEND_NAME == "pytorch":
    import torch as T  # noqa: N812 - short name on purpose: it stands for "the tensor library"

    nn = T.nn
    F = T.nn.functional
elif BACKEND_NAME == "native":
    import nodeweave.core as T  # noqa: N812

    nn = T.nn
    F = T.nn.functional
else:
    raise nwerr.ImportError(f"{__name__}: the layer sources are loaded through nodeweave.nn, "
                            "nodeweave.nn.native or nodeweave.nn.pytorch, not imported directly")

B = _backend.get(BACKEND_NAME)

__all__ = ["T", "nn", "F", "B", "BACKEND_NAME"]
