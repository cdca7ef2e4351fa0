"""Graphs: :class:`HeteroGraph` (structure + feature frames), builders, converters and generators.

Most names are re-exported at the top level (``nw.graph``, ``nw.heterograph``, ``nw.rand_graph`` ...).
"""

from nodeweave.graph.frame import Frame, Scheme  # noqa: F401
from nodeweave.graph.heterograph import ALL, HeteroGraph, IdRangeError  # noqa: F401
from nodeweave.graph.construct import (graph, heterograph, from_scipy, from_networkx,  # noqa: F401
                                       to_networkx, read_edge_list)
from nodeweave.graph.generators import rand_graph, rmat_graph, sbm_graph  # noqa: F401

Graph = HeteroGraph
