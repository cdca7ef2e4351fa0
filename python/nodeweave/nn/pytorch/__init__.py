"""nodeweave's GNN layers for PyTorch: ``torch.nn.Module`` subclasses taking ``torch.Tensor``\\ s.

They are the very sources of :mod:`nodeweave.nn.native` (``nodeweave/nn/_layers``), loaded a second
time with ``torch`` as the tensor namespace; the graph kernels receive the torch tensors zero-copy
through DLPack (:mod:`nodeweave.backend.pytorch`). Parameters, ``state_dict``, ``.to(device)``,
torch optimizers and ``DistributedDataParallel`` work as for any torch module.

>>> import torch, nodeweave as nw
>>> from nodeweave.nn.pytorch import GraphConv
>>> conv = GraphConv(4, 2)
>>> isinstance(conv, torch.nn.Module)
True
>>> conv(nw.graph(([0, 1], [1, 0])), torch.ones(2, 4)).shape
torch.Size([2, 2])
"""

import os as _os

__path__ = [_os.path.join(_os.path.dirname(_os.path.dirname(__file__)), "_layers")]

from ._exports import *  # noqa: E402,F401,F403
from ._exports import __all__  # noqa: E402,F401

# DGL scripts import edge_softmax from here (`from dgl.nn.pytorch import edge_softmax`); it is the
# functional op, not a layer, so it stays out of __all__ (the layer list).
from nodeweave.ops import edge_softmax  # noqa: E402,F401
