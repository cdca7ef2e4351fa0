"""ShaDow-GNN's sampler (Zeng et al., NeurIPS 2021; DGL's ``dgl.dataloading.ShaDowKHopSampler``):
sample a k-hop neighbourhood of the seeds, then train on the subgraph *induced* by every sampled
node, so a GNN of any depth runs on a small, shallow subgraph around its targets.

The hops are drawn by the neighbour sampler of :class:`~nodeweave.dataloading.NeighborSampler`
(one C++ call samples every hop, ``fanouts[-1]`` for the hop from the seeds as DGL); the subgraph
is :func:`nodeweave.node_subgraph` of the sampled nodes, seeds first.

>>> import nodeweave as nw
>>> g = nw.graph(([1, 2, 3, 4, 5, 2], [0, 0, 1, 1, 2, 1]))
>>> sampler = nw.dataloading.ShaDowKHopSampler([-1, 2])
>>> input_nodes, output_nodes, sg = sampler.sample(g, [0], random_seed=0)
>>> output_nodes.tolist(), sorted(input_nodes.tolist())
([0], [0, 1, 2, 3, 4, 5])
>>> sg.ndata[nw.NID].tolist() == input_nodes.tolist(), sg.num_edges()
(True, 6)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave import backend
from nodeweave.dataloading.base import Sampler
from nodeweave.dataloading.subgraph_batch import check_homogeneous, feature_list, induced_subgraph_batch
from nodeweave.dataloading.neighbor_sampler import NeighborSampler
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms import EID, edge_subgraph
from nodeweave.graph.id_sets import edge_sets

__all__ = ["ShaDowKHopSampler"]


class ShaDowKHopSampler(Sampler):
    """Subgraphs induced by the sampled k-hop neighbourhood of the seeds (ShaDow-GNN).

    Parameters
    ----------
    fanouts : list of int
        Neighbours sampled per node and hop, ``fanouts[-1]`` for the hop from the seeds (as
        :class:`NeighborSampler`); -1 takes every neighbour.
    replace : bool
        Sample with replacement.
    prob : str, optional
        Edge feature of non-negative sampling weights.
    prefetch_node_feats, prefetch_edge_feats : list of str, optional
        Node / edge features gathered into the subgraph (None: every feature; ``[]``: none).
    output_device : optional
        Device of the subgraph and the node ids (default: the graph's).

    ``sample(g, seed_nodes, exclude_eids=None, random_seed=None)`` returns ``(input_nodes,
    output_nodes, subgraph)``: ``input_nodes`` are the sampled nodes, the seeds first, and node
    ``i`` of ``subgraph`` is ``input_nodes[i]`` (so the seeds are its first
    ``len(output_nodes)`` nodes); on a heterograph all three are per node type (``{ntype: ids}``).
    Edges in ``exclude_eids`` are neither sampled nor kept in the subgraph.
    """

    def __init__(self, fanouts: Sequence[int], replace: bool = False, prob: str | None = None,
                 prefetch_node_feats: Sequence[str] | None = None, prefetch_edge_feats: Sequence[str] | None = None,
                 output_device: Any = None) -> None:
        self._hops = NeighborSampler(fanouts, prob=prob, replace=replace)
        self.fanouts = self._hops.fanouts
        self.prefetch_node_feats = feature_list(prefetch_node_feats, "prefetch_node_feats")
        self.prefetch_edge_feats = feature_list(prefetch_edge_feats, "prefetch_edge_feats")
        self.output_device = output_device

    def sample(self, g: Any, seed_nodes: Any, exclude_eids: Any = None, *,
               random_seed: int | None = None) -> tuple[Any, Any, HeteroGraph]:
        if not isinstance(g, HeteroGraph) or g.is_block:
            check_homogeneous(g, "ShaDowKHopSampler")  # the error for a non-graph or a block
        input_nodes, output_nodes, _ = self._hops.sample_blocks(g, seed_nodes, exclude_eids,
                                                                random_seed=random_seed)
        as_np = lambda t: backend.of(t).to_numpy(t).astype(np.int64)  # noqa: E731
        nodes = {k: as_np(v) for k, v in input_nodes.items()} if isinstance(input_nodes, dict) else as_np(input_nodes)
        sg = induced_subgraph_batch(g, nodes, self.prefetch_node_feats, self.prefetch_edge_feats, None)
        if exclude_eids is not None:
            excl = edge_sets(g, exclude_eids, "exclude_eids")
            keep = {}
            for ct in sg.canonical_etypes:
                eid = sg._edge_frames[ct][EID]
                drop = np.isin(backend.of(eid).to_numpy(eid), excl.get(ct, np.zeros(0, np.int64)))
                keep[ct] = np.flatnonzero(~drop)
            if any(len(k) < sg.num_edges(ct) for ct, k in keep.items()):
                # store_ids=False: the kept rows of edata[EID] already hold the ids in g.
                sg = edge_subgraph(sg, keep if len(keep) > 1 else next(iter(keep.values())), relabel_nodes=False,
                                   store_ids=False)
        if self.output_device is not None:
            device = backend.current().canonical_device(self.output_device)
            if device != sg._device:
                sg = sg.to(device)
            input_nodes = backend.of(input_nodes).to_device(input_nodes, device)
            output_nodes = backend.of(output_nodes).to_device(output_nodes, device)
        return input_nodes, output_nodes, sg
