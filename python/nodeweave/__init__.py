"""nodeweave: graph neural networks on a native tensor + autograd engine, or on PyTorch.

The engine lives in :mod:`nodeweave.core` (``import nodeweave.core as nc``).
"""

__version__ = "0.1.0"

from nodeweave import core  # noqa: F401
