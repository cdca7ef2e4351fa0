"""Explaining a trained GNN's predictions (DGL's ``dgl.nn.explain``)."""

from .gnnexplainer import GNNExplainer, HeteroGNNExplainer

__all__ = ["GNNExplainer", "HeteroGNNExplainer"]
