"""Graphs: :class:`HeteroGraph` (structure + feature frames), builders, converters and generators.

Most names are re-exported at the top level (``nw.heterograph``, ``nw.rand_graph`` ...). This package
is itself callable: ``nw.graph((src, dst), num_nodes=n)`` is :func:`nodeweave.graph.construct.graph`.
The package and the function share the name the way DGL users expect to write it, and making the
package callable (rather than binding the function over the package name) keeps
``import nodeweave.graph.transforms`` working.

>>> import nodeweave as nw
>>> nw.graph(([0, 1], [1, 2])).num_edges()
2
>>> import nodeweave.graph.transforms as T
>>> T.reverse(nw.graph(([0, 1], [1, 2]))).edges()[0].tolist()
[1, 2]
"""

import sys
import types

from nodeweave.graph.frame import Frame, Scheme  # noqa: F401
from nodeweave.graph.heterograph import ALL, HeteroGraph, IdRangeError  # noqa: F401
from nodeweave.graph.construct import (graph, heterograph, from_scipy, from_networkx,  # noqa: F401
                                       to_networkx, read_edge_list, bipartite_from_scipy,
                                       bipartite_from_networkx)
from nodeweave.graph.generators import rand_graph, rand_bipartite, rmat_graph, sbm_graph  # noqa: F401
from nodeweave.graph import incidence, mutation, pickling, slicing, transform_methods

# The graph class gets its transform methods, mutators, relation slicing and pickling once the
# transforms are loaded (see transform_methods).
transform_methods.install(HeteroGraph)
mutation.install(HeteroGraph)
slicing.install(HeteroGraph)
pickling.install(HeteroGraph)
incidence.install(HeteroGraph)
HeteroGraph.to_networkx = to_networkx  # DGL has the method beside the function

Graph = HeteroGraph


class _CallableModule(types.ModuleType):
    """The type of this package: calling it builds a graph (see the module docstring)."""

    def __call__(self, *args, **kwargs):
        return graph(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
