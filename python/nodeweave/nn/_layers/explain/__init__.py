"""Explaining a trained GNN's predictions (DGL's ``dgl.nn.explain``)."""

from .gnnexplainer import GNNExplainer
from .hetero_gnnexplainer import HeteroGNNExplainer
from .pgexplainer import PGExplainer
from .hetero_pgexplainer import HeteroPGExplainer
from .subgraphx import SubgraphX, HeteroSubgraphX

__all__ = ["GNNExplainer", "HeteroGNNExplainer", "PGExplainer", "HeteroPGExplainer", "SubgraphX", "HeteroSubgraphX"]
