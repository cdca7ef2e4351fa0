"""nodeweave: graph neural networks on a native tensor + autograd engine, or on PyTorch.

The engine lives in :mod:`nodeweave.core` (``import nodeweave.core as nc``).
"""

__version__ = "0.1.0"

from nodeweave import core  # noqa: F401

# Graph API (graph/ layer, Python side)
from nodeweave.backend import set_backend  # noqa: E402,F401
from nodeweave.graph import (ALL, Graph, HeteroGraph, graph, heterograph, from_scipy,  # noqa: E402,F401
                             from_networkx, to_networkx, read_edge_list, rand_graph, rmat_graph,
                             sbm_graph)

# Message passing builtins and functional kernels
from nodeweave import function, ops  # noqa: E402,F401
