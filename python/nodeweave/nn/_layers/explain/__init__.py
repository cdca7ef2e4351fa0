"""Explaining a trained GNN's predictions (DGL's ``dgl.nn.explain``)."""

from .gnnexplainer import GNNExplainer
from .hetero_gnnexplainer import HeteroGNNExplainer

__all__ = ["GNNExplainer", "HeteroGNNExplainer"]
