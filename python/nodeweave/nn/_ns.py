"""The tensor namespace the graph layers are written against.

Every layer in :mod:`nodeweave.nn` imports its tensor library only through this module, as

    from ._ns import T, nn, F

where ``T`` is the tensor module (``nodeweave.core`` here), ``nn`` its module/parameter namespace and ``F``
its functional namespace. The names follow PyTorch, so the same layer source can later be bound to
``torch`` / ``torch.nn`` / ``torch.nn.functional`` for the PyTorch backend (issue #5) instead of keeping
a copy of every layer per backend. Graph kernels come from :mod:`nodeweave.ops` and
:mod:`nodeweave.function`, which already dispatch on the active backend.
"""

import nodeweave.core as T  # noqa: N812 - short name on purpose: it stands for "the tensor library"

nn = T.nn
F = T.nn.functional

__all__ = ["T", "nn", "F"]
