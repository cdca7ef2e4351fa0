"""GCN, GAT and GraphSAGE written with DGL and with PyTorch Geometric, at the sizes of
bench/models/epoch_time.py (and of models_nodeweave.py):

- GCN: two graph convolutions, hidden 16, ReLU, dropout 0.5 before each; symmetric normalization
  ``D^-1/2 A D^-1/2`` on a graph that already holds its self-loops.
- GAT: 8 heads x 8 hidden then 1 head, feature and attention dropout 0.6, ELU; the output of the
  one-head layer is averaged over heads (a no-op shape change), as in epoch_time.py.
- GraphSAGE: two 'mean' SAGE convolutions, hidden 16, ReLU, dropout 0.5 before each.

Every model is called as ``model(graph, x)``; the graph is a ``DGLGraph`` for DGL and an
``edge_index`` tensor for PyG. PyG's layers need no graph object, so its models take the
``edge_index`` first only to keep one calling convention across systems.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import nn

HIDDEN = {"GCN": 16, "GAT": 8, "GraphSAGE": 16}
HEADS = 8


# ---------------------------------------------------------------- DGL
def dgl_model(name: str, in_feats: int, n_classes: int) -> nn.Module:
    """DGL's model ``name`` (``GCN``, ``GAT`` or ``GraphSAGE``); call it as ``model(g, x)``."""
    from dgl.nn import GATConv, GraphConv, SAGEConv

    hidden = HIDDEN[name]

    class GCN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            # norm='both' is D^-1/2 A D^-1/2 (degrees recomputed on every call, DGL's default).
            self.c1 = GraphConv(in_feats, hidden, norm="both", activation=F.relu)
            self.c2 = GraphConv(hidden, n_classes, norm="both")
            self.drop = nn.Dropout(0.5)

        def forward(self, g: Any, x: torch.Tensor) -> torch.Tensor:
            return self.c2(g, self.drop(self.c1(g, self.drop(x))))

    class GAT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1 = GATConv(in_feats, hidden, HEADS, feat_drop=0.6, attn_drop=0.6, activation=F.elu)
            self.c2 = GATConv(hidden * HEADS, n_classes, 1, feat_drop=0.6, attn_drop=0.6)

        def forward(self, g: Any, x: torch.Tensor) -> torch.Tensor:
            return self.c2(g, self.c1(g, x).flatten(1)).mean(1)

    class SAGE(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1 = SAGEConv(in_feats, hidden, "mean")
            self.c2 = SAGEConv(hidden, n_classes, "mean")
            self.drop = nn.Dropout(0.5)

        def forward(self, g: Any, x: torch.Tensor) -> torch.Tensor:
            return self.c2(g, self.drop(F.relu(self.c1(g, self.drop(x)))))

    return {"GCN": GCN, "GAT": GAT, "GraphSAGE": SAGE}[name]()


# ---------------------------------------------------------------- PyG
def pyg_model(name: str, in_feats: int, n_classes: int) -> nn.Module:
    """PyG's model ``name``; call it as ``model(edge_index, x)`` (graph first, like the others)."""
    from torch_geometric.nn import GATConv, GCNConv, SAGEConv

    hidden = HIDDEN[name]

    class GCN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            # The graph already has its self-loops, so add_self_loops=False gives the same
            # D^-1/2 (A+I) D^-1/2 as DGL/nodeweave. cached=False (the default): the normalization is
            # recomputed on every call, as DGL and nodeweave do.
            self.c1 = GCNConv(in_feats, hidden, add_self_loops=False, normalize=True)
            self.c2 = GCNConv(hidden, n_classes, add_self_loops=False, normalize=True)

        def forward(self, ei: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
            x = F.dropout(x, 0.5, self.training)
            x = F.relu(self.c1(x, ei))
            return self.c2(F.dropout(x, 0.5, self.training), ei)

    class GAT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            # PyG's `dropout` is the attention dropout; DGL's feat_drop is the F.dropout before each.
            self.c1 = GATConv(in_feats, hidden, heads=HEADS, dropout=0.6, add_self_loops=False)
            self.c2 = GATConv(hidden * HEADS, n_classes, heads=1, concat=False, dropout=0.6,
                              add_self_loops=False)

        def forward(self, ei: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
            x = F.elu(self.c1(F.dropout(x, 0.6, self.training), ei))
            return self.c2(F.dropout(x, 0.6, self.training), ei)

    class SAGE(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1 = SAGEConv(in_feats, hidden, aggr="mean")
            self.c2 = SAGEConv(hidden, n_classes, aggr="mean")

        def forward(self, ei: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
            x = F.relu(self.c1(F.dropout(x, 0.5, self.training), ei))
            return self.c2(F.dropout(x, 0.5, self.training), ei)

    return {"GCN": GCN, "GAT": GAT, "GraphSAGE": SAGE}[name]()


def build(library: str, name: str, in_feats: int, n_classes: int) -> nn.Module:
    """``library`` is ``dgl`` or ``pyg``."""
    make: Callable[[str, int, int], nn.Module] = dgl_model if library == "dgl" else pyg_model
    return make(name, in_feats, n_classes)
