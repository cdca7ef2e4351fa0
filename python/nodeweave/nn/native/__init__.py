"""nodeweave's GNN layers on the native engine: subclasses of ``nodeweave.core.nn.Module`` taking
``nodeweave.core`` tensors.

The sources live in ``nodeweave/nn/_layers`` and are shared with :mod:`nodeweave.nn.pytorch`: this
package points its ``__path__`` there, so its submodules (``nodeweave.nn.native.conv`` ...) are
those sources loaded with the native tensor namespace.

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.nn.native import GraphConv
>>> GraphConv(4, 2)(nw.graph(([0, 1], [1, 0])), nc.ones(2, 4)).shape
(2, 2)
"""

import os as _os

__path__ = [_os.path.join(_os.path.dirname(_os.path.dirname(__file__)), "_layers")]

from ._exports import *  # noqa: E402,F401,F403
from ._exports import __all__  # noqa: E402,F401

# DGL scripts import edge_softmax from here (`from dgl.nn.pytorch import edge_softmax`); it is the
# functional op, not a layer, so it stays out of __all__ (the layer list).
from nodeweave.ops import edge_softmax  # noqa: E402,F401
