"""A new graph object over the same structure and features (DGL's ``DGLGraph.clone``).

Relation storage is immutable, so the clone shares it (and its cached formats) with the original;
its feature tables are copies holding the same tensors. Setting or deleting a feature of one graph
leaves the other unchanged, while writing into a tensor in place shows through both.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([0, 1], [1, 2]))
>>> g.ndata["h"] = nc.ones(3)
>>> c = nw.graph.transforms.clone(g)
>>> c.ndata["h"] = nc.zeros(3)
>>> g.ndata["h"].tolist(), c.num_edges()
([1.0, 1.0, 1.0], 2)
"""

from __future__ import annotations

from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms._common import _check_graph

__all__ = ["clone"]


def clone(g: HeteroGraph) -> HeteroGraph:
    """A graph with ``g``'s structure, features (the same tensors) and batch information, whose
    feature tables can be changed without changing ``g``'s.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1], [1, 2]))
    >>> g.clone() is g, g.clone().num_nodes()
    (False, 3)
    """
    _check_graph(g)
    return g._derive()
