"""GCN, GAT and GraphSAGE written once for both nodeweave backends, in the style of
bench/models/epoch_time.py (same sizes as models_torch.py).

The tensor library is passed in as a :class:`Namespace` (``nodeweave.core`` or ``torch``), the way
nodeweave's own layers are written against ``nodeweave/nn/_layers/_ns.py``; the layers come from
``nodeweave.nn``, which resolves to the active backend (select the backend before importing it).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable

import numpy as np

HIDDEN = {"GCN": 16, "GAT": 8, "GraphSAGE": 16}
HEADS = 8


@dataclass
class Namespace:
    """What a benchmark needs from a tensor library, named as in PyTorch."""

    name: str                                # "nodeweave-native" or "nodeweave-pytorch"
    T: ModuleType                            # tensor module: nodeweave.core or torch
    nn: Any                                  # modules and parameters
    F: Any                                   # functional ops
    optim: Any                               # optimizers (Adam)
    tensor: Callable[[np.ndarray], Any]      # NumPy array -> tensor of this library
    to_numpy: Callable[[Any], np.ndarray]    # and back
    set_num_threads: Callable[[int], None]
    manual_seed: Callable[[int], None]
    no_grad: Callable[[], Any]


def namespace(system: str, threads: int) -> Namespace:
    """The namespace of ``system`` (``nodeweave-native`` or ``nodeweave-pytorch``), with the backend
    selected and ``threads`` threads set in every thread pool the system uses."""
    import nodeweave as nw
    import nodeweave.core as nc

    nc.set_num_threads(threads)  # nodeweave's kernels run on its own OpenMP pool in both backends
    if system == "nodeweave-native":
        nw.set_backend("native")
        return Namespace(system, nc, nc.nn, nc.nn.functional, nc.optim,
                         tensor=nc.tensor, to_numpy=lambda t: t.detach().numpy(),
                         set_num_threads=nc.set_num_threads, manual_seed=nc.manual_seed,
                         no_grad=nc.no_grad)
    if system == "nodeweave-pytorch":
        import torch

        torch.set_num_threads(threads)
        nw.set_backend("pytorch")
        return Namespace(system, torch, torch.nn, torch.nn.functional, torch.optim,
                         tensor=lambda a: torch.from_numpy(np.ascontiguousarray(a)),
                         to_numpy=lambda t: t.detach().numpy(),
                         set_num_threads=torch.set_num_threads, manual_seed=torch.manual_seed,
                         no_grad=torch.no_grad)
    raise ValueError(f"unknown nodeweave system {system!r}")


def build(ns: Namespace, name: str, in_feats: int, n_classes: int) -> Any:
    """Model ``name`` (``GCN``, ``GAT`` or ``GraphSAGE``) on the backend of ``ns``; call it as
    ``model(g, x)``."""
    from nodeweave.nn import GATConv, GraphConv, SAGEConv

    nn, F, hidden = ns.nn, ns.F, HIDDEN[name]

    class GCN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1 = GraphConv(in_feats, hidden, activation=F.relu)
            self.c2 = GraphConv(hidden, n_classes)
            self.drop = nn.Dropout(0.5)

        def forward(self, g: Any, x: Any) -> Any:
            return self.c2(g, self.drop(self.c1(g, self.drop(x))))

    class GAT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1 = GATConv(in_feats, hidden, HEADS, feat_drop=0.6, attn_drop=0.6, activation=F.elu)
            self.c2 = GATConv(hidden * HEADS, n_classes, 1, feat_drop=0.6, attn_drop=0.6)

        def forward(self, g: Any, x: Any) -> Any:
            return self.c2(g, self.c1(g, x).flatten(1)).mean(1)

    class SAGE(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1 = SAGEConv(in_feats, hidden, "mean")
            self.c2 = SAGEConv(hidden, n_classes, "mean")
            self.drop = nn.Dropout(0.5)

        def forward(self, g: Any, x: Any) -> Any:
            return self.c2(g, self.drop(F.relu(self.c1(g, self.drop(x)))))

    return {"GCN": GCN, "GAT": GAT, "GraphSAGE": SAGE}[name]()
