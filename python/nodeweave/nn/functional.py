"""Graph functions under DGL's module name ``dgl.nn.functional``: :func:`edge_softmax` is
:func:`nodeweave.ops.edge_softmax` (on either backend, following its tensor).

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.nn.functional import edge_softmax
>>> g = nw.graph(([0, 1, 2], [2, 2, 0]))
>>> edge_softmax(g, nc.zeros(3, 1)).squeeze(1).tolist()
[0.5, 0.5, 1.0]
"""

from nodeweave.ops import edge_softmax

__all__ = ["edge_softmax"]
