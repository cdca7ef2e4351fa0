"""LABOR block sampling (DGL's ``dgl.dataloading.LaborSampler``): :class:`NeighborSampler`'s blocks
with layer-neighbour sampling, in one C++ call per batch.

>>> import nodeweave as nw
>>> g = nw.rand_graph(200, 3000, seed=0)
>>> sampler = nw.dataloading.LaborSampler([5, 5])
>>> _, output_nodes, blocks = sampler.sample(g, [0, 1, 2, 3], random_seed=0)
>>> "edge_weights" in blocks[0].edata, output_nodes.tolist()
(True, [0, 1, 2, 3])
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave.dataloading.neighbor_sampler import NeighborSampler
from nodeweave.sampling.labor import check_importance_sampling
from nodeweave import errors as nwerr

__all__ = ["LaborSampler"]


class LaborSampler(NeighborSampler):
    """Layer-neighbour sampling into blocks (Balin & Catalyurek, NeurIPS 2023).

    Parameters
    ----------
    fanouts, edge_dir, prob, prefetch_node_feats, prefetch_labels, prefetch_edge_feats, output_device
        As :class:`NeighborSampler` (LABOR samples without replacement).
    importance_sampling : int
        Rounds of LABOR-* importance updates (0: LABOR-0; -1: until converged).
    layer_dependency : bool
        Every layer uses the same per-node variates (sampled nodes overlap across layers).
    batch_dependency : int
        Consecutive groups of this many batches share their variates in a
        :class:`~nodeweave.dataloading.DataLoader` (the paper's batch dependency, in its simplest
        form: DGL blends two seeds instead of switching every ``batch_dependency`` batches).

    Blocks carry ``edata['edge_weights']``: each edge's inverse inclusion probability.
    """

    def __init__(self, fanouts: Sequence[Any], edge_dir: str = "in", prob: str | None = None,
                 importance_sampling: int = 0, layer_dependency: bool = False, batch_dependency: int = 1,
                 prefetch_node_feats: Any = None, prefetch_labels: Any = None, prefetch_edge_feats: Any = None,
                 output_device: Any = None) -> None:
        super().__init__(fanouts, edge_dir=edge_dir, prob=prob, prefetch_node_feats=prefetch_node_feats,
                         prefetch_labels=prefetch_labels, prefetch_edge_feats=prefetch_edge_feats,
                         output_device=output_device)
        self.importance_sampling = check_importance_sampling(importance_sampling)
        self.layer_dependency = bool(layer_dependency)
        if isinstance(batch_dependency, bool) or not isinstance(batch_dependency, (int, np.integer)) \
                or batch_dependency < 1:
            raise nwerr.ValueError(f"batch_dependency must be an int >= 1, got {batch_dependency!r}")
        self.batch_dependency = int(batch_dependency)

    def native_options(self) -> dict:
        return {"kind": "labor", "importance_sampling": self.importance_sampling,
                "layer_dependency": self.layer_dependency}
