"""Mini-batch training (DGL's ``dgl.dataloading``): samplers that turn a batch of seed nodes or
edges into message-flow blocks or subgraphs, and the :class:`DataLoader` that runs them ahead of the
training loop.
"""

from nodeweave.dataloading.base import (Sampler, BlockSampler, set_node_lazy_features,  # noqa: E402,F401
                                        set_edge_lazy_features, set_src_lazy_features,
                                        set_dst_lazy_features)
from nodeweave.dataloading.neighbor_sampler import (NeighborSampler, MultiLayerFullNeighborSampler,  # noqa: E402,F401
                                                    MultiLayerNeighborSampler)
from nodeweave.dataloading.dataloader import DataLoader  # noqa: E402,F401
from nodeweave.dataloading import negative_sampler  # noqa: E402,F401
from nodeweave.dataloading.labor_sampler import LaborSampler  # noqa: E402,F401
from nodeweave.dataloading.edge_prediction import EdgePredictionSampler, as_edge_prediction_sampler  # noqa: E402,F401
from nodeweave.dataloading.cluster_gcn import ClusterGCNSampler  # noqa: E402,F401
from nodeweave.dataloading.saint import SAINTSampler  # noqa: E402,F401
from nodeweave.dataloading.shadow import ShaDowKHopSampler  # noqa: E402,F401
# DGL keeps the graph-classification loader in dgl.dataloading too
from nodeweave.data.dataloader import GraphDataLoader  # noqa: E402,F401
