"""Everything a backend's layer package exports (``nodeweave.nn.native``, ``nodeweave.nn.pytorch``).

The layers are written once against the tensor namespace in ``_ns.py`` and loaded once per backend
(see :mod:`nodeweave.nn`). The modules take a graph and node (and sometimes edge) features, like
DGL's ``dgl.nn``. A bipartite graph (one source and one destination node type) takes a
``(src_feat, dst_feat)`` pair.
"""

from .conv import (APPNPConv, ChebConv, EdgeConv, EdgeWeightNorm, GATConv, GATv2Conv, GCN2Conv,
                   GINConv, GINEConv, GraphConv, SGConv, TAGConv)

__all__ = ["APPNPConv", "ChebConv", "EdgeConv", "EdgeWeightNorm", "GATConv", "GATv2Conv",
           "GCN2Conv", "GINConv", "GINEConv", "GraphConv", "SGConv", "TAGConv"]

from .readout import (readout_nodes, readout_edges, sum_nodes, sum_edges, mean_nodes,  # noqa: E402
                      mean_edges, max_nodes, max_edges, softmax_nodes, softmax_edges, broadcast_nodes,
                      broadcast_edges, topk_nodes, topk_edges)
from .glob import (SumPooling, AvgPooling, MaxPooling, SortPooling, GlobalAttentionPooling,  # noqa: E402
                   Set2Set)
from .linear import TypedLinear  # noqa: E402
from .conv import SAGEConv, GatedGraphConv, NNConv, RelGraphConv  # noqa: E402
from .hetero import HeteroGraphConv, HeteroLinear, HeteroEmbedding  # noqa: E402

__all__ += ["readout_nodes", "readout_edges", "sum_nodes", "sum_edges", "mean_nodes", "mean_edges",
            "max_nodes", "max_edges", "softmax_nodes", "softmax_edges", "broadcast_nodes", "broadcast_edges",
            "topk_nodes", "topk_edges", "SumPooling", "AvgPooling", "MaxPooling", "SortPooling",
            "GlobalAttentionPooling", "Set2Set", "TypedLinear", "SAGEConv", "GatedGraphConv", "NNConv",
            "RelGraphConv", "HeteroGraphConv", "HeteroLinear", "HeteroEmbedding"]

# More of DGL's convolutions: attention, edge features, principal aggregation; JK, label propagation
from .conv import (GMMConv, DotGatConv, AGNNConv, EGATConv, EdgeGATConv, GatedGCNConv, CFConv,  # noqa: E402
                   PNAConv, DGNConv)
from .jumpingknowledge import JumpingKnowledge  # noqa: E402
from .labelpropagation import LabelPropagation  # noqa: E402

__all__ += ["GMMConv", "DotGatConv", "AGNNConv", "EGATConv", "EdgeGATConv", "GatedGCNConv", "CFConv", "PNAConv",
            "DGNConv", "JumpingKnowledge", "LabelPropagation"]

# More of DGL's layers: HGT, TWIRLS, EGNN, AtomicConv, dense-adjacency convs, GroupRevRes, graph transformer
from .conv import (AtomicConv, DenseChebConv, DenseGraphConv, DenseSAGEConv, EGNNConv,  # noqa: E402
                   GroupRevRes, HGTConv, TWIRLSConv, TWIRLSUnfoldingAndAttention)
from .gt import (BiasedMHA, DegreeEncoder, GraphormerLayer, PathEncoder, SpatialEncoder,  # noqa: E402
                 SpatialEncoder3d)

__all__ += ["AtomicConv", "DenseChebConv", "DenseGraphConv", "DenseSAGEConv", "EGNNConv", "GroupRevRes", "HGTConv",
            "TWIRLSConv", "TWIRLSUnfoldingAndAttention", "BiasedMHA", "DegreeEncoder", "GraphormerLayer", "PathEncoder",
            "SpatialEncoder", "SpatialEncoder3d"]

# DGL's remaining nn modules: Laplacian positional encoder, edge predictor, point-cloud graphs, set
# transformer, weighted sum readout, graph-passing Sequential
from .gt import LapPosEncoder  # noqa: E402
from .link import EdgePredictor  # noqa: E402
from .point_graphs import (KNNGraph, SegmentedKNNGraph, RadiusGraph, knn_graph, segmented_knn_graph,  # noqa: E402
                           radius_graph)
from .set_transformer import SetTransformerEncoder, SetTransformerDecoder  # noqa: E402
from .weight_and_sum import WeightAndSum  # noqa: E402
from .sequential import Sequential  # noqa: E402
from .explain import GNNExplainer, HeteroGNNExplainer  # noqa: E402

__all__ += ["LapPosEncoder", "EdgePredictor", "KNNGraph", "SegmentedKNNGraph", "RadiusGraph", "knn_graph",
            "segmented_knn_graph", "radius_graph", "SetTransformerEncoder", "SetTransformerDecoder", "WeightAndSum",
            "Sequential", "GNNExplainer", "HeteroGNNExplainer"]

# Knowledge-graph triple scores
from .link import TransE, TransR  # noqa: E402

__all__ += ["TransE", "TransR"]

# Random-walk node embeddings
from .network_emb import DeepWalk, MetaPath2Vec  # noqa: E402

__all__ += ["DeepWalk", "MetaPath2Vec"]

# Parameterized and search-based explainers
from .explain import PGExplainer, HeteroPGExplainer, SubgraphX, HeteroSubgraphX  # noqa: E402

__all__ += ["PGExplainer", "HeteroPGExplainer", "SubgraphX", "HeteroSubgraphX"]
