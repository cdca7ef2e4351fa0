"""Graph neural network layers, written once against the tensor namespace in :mod:`nodeweave.nn._ns`.

The modules take a graph and node (and sometimes edge) features, like DGL's ``dgl.nn``. A bipartite
graph (one source and one destination node type) takes a ``(src_feat, dst_feat)`` pair.
"""

from .conv import (APPNPConv, ChebConv, EdgeConv, EdgeWeightNorm, GATConv, GATv2Conv, GCN2Conv,
                   GINConv, GINEConv, GraphConv, SGConv, TAGConv)

__all__ = ["APPNPConv", "ChebConv", "EdgeConv", "EdgeWeightNorm", "GATConv", "GATv2Conv",
           "GCN2Conv", "GINConv", "GINEConv", "GraphConv", "SGConv", "TAGConv"]
