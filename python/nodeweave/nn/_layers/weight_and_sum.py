"""WeightAndSum: a readout that weighs each node by a learned gate before summing (the molecule
readout of DGL-LifeSci's predictors), DGL's ``WeightAndSum``."""

from __future__ import annotations

from typing import Any

from ._ns import nn
from ._checks import check_feat_dim, check_rows, positive_int
from .readout import sum_nodes

__all__ = ["WeightAndSum"]


class WeightAndSum(nn.Module):
    r"""Per graph :math:`r_b = \sum_{i \in b} \sigma(w^\top x_i + c)\, x_i`; the gate is
    ``atom_weighting`` (``Sequential(Linear(in_feats, 1), Sigmoid())``, DGL's name).

    ``forward(g, feats)`` with ``feats`` ``(N, in_feats)``; returns ``(batch_size, in_feats)``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import WeightAndSum
    >>> ws = WeightAndSum(2)
    >>> bg = nw.batch([nw.graph(([0], [1])), nw.graph(([], []), num_nodes=1)])
    >>> tuple(ws(bg, nc.randn(3, 2)).shape)
    (2, 2)
    """

    def __init__(self, in_feats: int) -> None:
        super().__init__()
        self.in_feats = positive_int(in_feats, "in_feats", "WeightAndSum")
        self.atom_weighting = nn.Sequential(nn.Linear(in_feats, 1), nn.Sigmoid())

    def forward(self, g: Any, feats: Any) -> Any:
        check_rows(feats, g.num_nodes(), "feats", "node")
        check_feat_dim(feats, self.in_feats, "feats", "WeightAndSum")
        return sum_nodes(g, feats, self.atom_weighting(feats))
