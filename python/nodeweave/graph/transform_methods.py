"""Graph transforms as methods (``g.reverse()``, ``g.subgraph(nodes)``), as DGL offers them.

Each method calls the function of the same name in :mod:`nodeweave.graph.transforms`; the
functions hold the documentation and the tests.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1], [1, 2]), num_nodes=3)
>>> src, dst = g.reverse().edges()
>>> src.tolist(), dst.tolist()
([1, 2], [0, 1])
>>> g.subgraph([1, 2]).num_edges()
1
"""

from __future__ import annotations


def _transforms():
    from nodeweave.graph import transforms  # imported late: transforms imports the graph class

    return transforms


class TransformMethods:
    """Transform methods mixed into :class:`nodeweave.graph.HeteroGraph`."""

    def reverse(self, *args, **kwargs):
        return _transforms().reverse(self, *args, **kwargs)

    def add_self_loop(self, *args, **kwargs):
        return _transforms().add_self_loop(self, *args, **kwargs)

    def remove_self_loop(self, *args, **kwargs):
        return _transforms().remove_self_loop(self, *args, **kwargs)

    def to_simple(self, *args, **kwargs):
        return _transforms().to_simple(self, *args, **kwargs)

    def line_graph(self, *args, **kwargs):
        return _transforms().line_graph(self, *args, **kwargs)

    def subgraph(self, nodes, *args, **kwargs):
        return _transforms().node_subgraph(self, nodes, *args, **kwargs)

    def edge_subgraph(self, edges, *args, **kwargs):
        return _transforms().edge_subgraph(self, edges, *args, **kwargs)

    def in_subgraph(self, nodes, *args, **kwargs):
        return _transforms().in_subgraph(self, nodes, *args, **kwargs)

    def out_subgraph(self, nodes, *args, **kwargs):
        return _transforms().out_subgraph(self, nodes, *args, **kwargs)
