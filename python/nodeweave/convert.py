"""Graph construction and conversion gathered under one name (DGL's ``dgl.convert``): building
graphs, heterographs and blocks, and converting to and from SciPy, NetworkX and the homogeneous
form. Each function lives where nodeweave defines it and is only gathered here;
``nodeweave.convert.heterograph is nodeweave.heterograph``.

>>> import nodeweave as nw
>>> g = nw.convert.heterograph({("_U", "_E", "_V"): ([0, 1], [1, 1])}, num_nodes_dict={"_U": 2, "_V": 3})
>>> g.num_nodes("_V"), nw.convert.heterograph is nw.heterograph
(3, True)
"""

from nodeweave.graph import (graph, heterograph, from_scipy, from_networkx,  # noqa: F401
                             bipartite_from_scipy, bipartite_from_networkx, to_networkx)
from nodeweave.graph.block import create_block, block_to_graph  # noqa: F401
from nodeweave.graph.transforms import to_heterogeneous, to_homogeneous  # noqa: F401

__all__ = ["graph", "heterograph", "create_block", "block_to_graph", "to_heterogeneous", "to_homogeneous",
           "from_scipy", "bipartite_from_scipy", "from_networkx", "bipartite_from_networkx", "to_networkx"]
