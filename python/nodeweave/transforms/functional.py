"""The functional transforms under DGL's module name ``dgl.transforms.functional``, so that code
calling ``dgl.transforms.functional.to_half(g)`` (through :mod:`nodeweave.compat.dgl`) or
``nodeweave.transforms.functional.khop_graph(g, 2)`` finds them. Every name here is defined
elsewhere: the graph transforms (positional encodings included) in :mod:`nodeweave.graph.transforms`,
``shortest_dist`` and ``laplacian_lambda_max`` in :mod:`nodeweave.graph.algorithms`.

>>> import nodeweave as nw
>>> from nodeweave.transforms import functional as F
>>> F.shortest_dist is nw.shortest_dist, F.to_half is nw.to_half, F.khop_graph is nw.khop_graph
(True, True, True)
"""

from nodeweave.graph.transforms import *  # noqa: F401,F403
from nodeweave.graph.transforms import __all__ as _graph_transforms
from nodeweave.graph.algorithms import shortest_dist, laplacian_lambda_max  # noqa: F401

__all__ = [*_graph_transforms, "shortest_dist", "laplacian_lambda_max"]
