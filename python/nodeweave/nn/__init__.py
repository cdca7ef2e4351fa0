"""Graph neural network layers, written once against the tensor namespace in :mod:`nodeweave.nn._ns`.

The modules take a graph and node (and sometimes edge) features, like DGL's ``dgl.nn``. A bipartite
graph (one source and one destination node type) takes a ``(src_feat, dst_feat)`` pair.
"""

# ---- nn-b: relational / heterogeneous layers, readout and pooling (keep this block separate) ----
from .readout import (readout_nodes, readout_edges, sum_nodes, sum_edges, mean_nodes,  # noqa: E402,F401
                      mean_edges, max_nodes, max_edges, softmax_nodes, softmax_edges, broadcast_nodes,
                      broadcast_edges, topk_nodes, topk_edges)
from .glob import (SumPooling, AvgPooling, MaxPooling, SortPooling, GlobalAttentionPooling,  # noqa: E402,F401
                   Set2Set)
from .linear import TypedLinear  # noqa: E402,F401
from .conv import SAGEConv, GatedGraphConv, NNConv, RelGraphConv  # noqa: E402,F401
from .hetero import HeteroGraphConv, HeteroLinear, HeteroEmbedding  # noqa: E402,F401
# ---- end of nn-b block ----
