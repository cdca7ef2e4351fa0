"""Mini-batches of edges over a :class:`DistGraph` for link prediction (DGL's
``DistEdgeDataLoader``): each rank cuts its share of the edges into batches, and each batch becomes
the pair graph of its edges, a negative pair graph, and the blocks that compute every node either
touches, sampled over the whole graph with the batch's edges excluded.

The sampler is what a DGL script passes: ``nw.dataloading.as_edge_prediction_sampler`` around a
:class:`DistNeighborSampler`. Every rank's batch is *exactly* what that edge-prediction sampler
returns on the whole graph (in the partitioned numbering) for the same edges and key: the edges'
endpoints come from their owners (``DistGraph.find_edges``), per-source negatives are drawn per
position of the batch, as the single-process sampler draws them, and the blocks come from the
distributed sampler with this rank's exclusions.

>>> import os, tempfile
>>> import numpy as np
>>> import nodeweave as nw
>>> from nodeweave.distributed import DistEdgeDataLoader, DistGraph, DistNeighborSampler, partition_graph
>>> g = nw.graph(([0, 1, 2, 3, 1, 2, 3, 0], [1, 2, 3, 0, 0, 1, 2, 3]))
>>> out = tempfile.mkdtemp()
>>> partition_graph(g, 1, out, graph_name="ring")
>>> dg = DistGraph(os.path.join(out, "ring.json"))
>>> sampler = nw.dataloading.as_edge_prediction_sampler(
...     DistNeighborSampler([2]), exclude="self", negative_sampler=nw.dataloading.negative_sampler.Uniform(1))
>>> loader = DistEdgeDataLoader(dg, np.arange(8), sampler, batch_size=4, seed=0)
>>> input_nodes, pair, neg_pair, blocks = next(iter(loader))
>>> pair.num_edges(), neg_pair.num_edges(), len(loader)
(4, 4, 2)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave import _C, backend
from nodeweave import errors as nwerr
from nodeweave.dataloading.edge_prediction import EdgePredictionSampler
from nodeweave.dataloading.negative_sampler import PerSourceUniform
from nodeweave.distributed.dist_dataloader import DistBatchLoader, prefetch_node_features
from nodeweave.distributed.dist_graph import DistGraph
from nodeweave.distributed.dist_sampler import DistNeighborSampler
from nodeweave.graph.heterograph import HeteroGraph, RelationGraph
from nodeweave.graph.transforms import EID, NID, compact_graphs

__all__ = ["DistEdgeDataLoader"]


class DistEdgeDataLoader(DistBatchLoader):
    """Batches of this rank's edges for link prediction, sampled over the whole graph.

    Parameters
    ----------
    g : DistGraph
        With one node type and one edge type.
    eids : ids
        This rank's seed edges, global ids (split them among the ranks, e.g. ``np.array_split``).
    graph_sampler : EdgePredictionSampler
        ``nw.dataloading.as_edge_prediction_sampler(DistNeighborSampler(...), exclude=None |
        'self' | 'reverse_id' | a callable, reverse_eids=<global array>, negative_sampler=None |
        Uniform(k), prefetch_labels=[edge features])``.
    batch_size, shuffle, drop_last, seed
        As for :class:`~nodeweave.distributed.DistNodeDataLoader`.
    prefetch_node_feats, prefetch_labels : list of str
        Node features fetched into ``blocks[0].srcdata``, and node labels into
        ``blocks[-1].dstdata``, for every batch.

    Iterating yields ``(input_nodes, pair_graph, blocks)``, or ``(input_nodes, pair_graph,
    neg_pair_graph, blocks)`` with a negative sampler; the pair graphs share one compact node
    numbering (``ndata[nw.NID]``: global ids, the blocks' output nodes) and ``pair_graph.edata
    [nw.EID]`` holds the batch's edge ids.
    """

    _what = "edges"

    def __init__(self, g: DistGraph, eids: Any, graph_sampler: EdgePredictionSampler, batch_size: int,
                 shuffle: bool = False, drop_last: bool = False, seed: int | None = None,
                 prefetch_node_feats: Sequence[str] = (), prefetch_labels: Sequence[str] = ()) -> None:
        name = "DistEdgeDataLoader"
        if not isinstance(g, DistGraph):
            raise nwerr.TypeError(f"{name}: g must be a DistGraph, got {type(g).__name__}")
        if not isinstance(graph_sampler, EdgePredictionSampler) or \
                not isinstance(graph_sampler.sampler, DistNeighborSampler):
            raise nwerr.TypeError(f"{name}: graph_sampler must be as_edge_prediction_sampler(DistNeighborSampler(...), "
                                  f"...), got {type(graph_sampler).__name__}")
        if len(g.ntypes) != 1 or len(g.canonical_etypes) != 1:
            raise nwerr.ValueError(f"{name}: graphs with one node type and one edge type only (this one has "
                                   f"{len(g.ntypes)} and {len(g.canonical_etypes)})")
        neg = graph_sampler.negative_sampler
        if neg is not None and not isinstance(neg, PerSourceUniform):
            # GlobalUniform must know every edge of the graph to reject existing ones.
            raise nwerr.ValueError(f"{name}: negative_sampler must be None or Uniform(k) / PerSourceUniform(k) on a "
                                   f"DistGraph, got {type(neg).__name__}")
        if graph_sampler.exclude == "reverse_types":
            raise nwerr.ValueError(f"{name}: exclude='reverse_types' needs several edge types")
        if graph_sampler.exclude == "reverse_id":
            _check_reverse_eids(graph_sampler.reverse_eids, g.num_edges())
        for feat in list(prefetch_node_feats) + list(prefetch_labels):
            g.ndata[feat]  # KeyError now, naming the feature, rather than at the first batch
        for feat in graph_sampler.prefetch_labels:
            g.edata[feat]
        self.graph_sampler = graph_sampler
        self.prefetch_node_feats, self.prefetch_labels = list(prefetch_node_feats), list(prefetch_labels)
        super().__init__(g, eids, g.num_edges(), batch_size, shuffle, drop_last, seed)

    @property
    def eids(self) -> np.ndarray:
        return self.items

    def sample_batch(self, ids: np.ndarray, key: int) -> tuple:
        return sample_edge_batch(self.graph_sampler, self.graph, ids, key, self.prefetch_node_feats,
                                 self.prefetch_labels)


def sample_edge_batch(sampler: EdgePredictionSampler, g: DistGraph, ids: np.ndarray, key: int,
                      node_feats: Sequence[str] = (), labels: Sequence[str] = ()) -> tuple:
    """One batch of edge ids ``ids`` (collective), as ``EdgePredictionSampler.sample`` gives it on
    the whole graph for ``random_seed=key``."""
    B = backend.current()
    ct = g.canonical_etypes[0]
    src, dst = g.find_edges(ids)
    graphs = [_pair_graph(g, src, dst)]
    if sampler.negative_sampler is not None:
        # The negatives of edge i depend only on its source, the position i and the key, so the
        # batch's own pair graph stands in for the whole graph.
        nsrc, ndst = sampler.negative_sampler(graphs[0], np.arange(len(ids)),
                                              random_seed=_C.sampling.derive_key(key, 1))
        graphs.append(_pair_graph(g, B.to_numpy(nsrc).astype(np.int64), B.to_numpy(ndst).astype(np.int64)))
    compacted = compact_graphs(graphs)
    pair = compacted[0]
    pair.edata[EID] = g._ids_out(ids)
    for name in sampler.prefetch_labels:
        pair.edata[name] = g.edata[name][ids]
    seed_nodes = pair.ndata[NID]
    exclude = sampler._excluded(g, {ct: ids})   # the single-process rules ('self', 'reverse_id', a callable)
    input_nodes, output_nodes, blocks = sampler.sampler.sample_blocks(g, seed_nodes, exclude,
                                                                      random_seed=_C.sampling.derive_key(key, 2))
    prefetch_node_features(g, blocks, input_nodes, output_nodes, node_feats, labels)
    if sampler.negative_sampler is not None:
        return input_nodes, pair, compacted[1], blocks
    return input_nodes, pair, blocks


def _pair_graph(g: DistGraph, src: np.ndarray, dst: np.ndarray) -> HeteroGraph:
    ct = g.canonical_etypes[0]
    rel = RelationGraph.from_coo(g.num_nodes(ct[0]), g.num_nodes(ct[2]), src, dst, g._idtype_name)
    return HeteroGraph._create({nt: g.num_nodes(nt) for nt in g.ntypes}, {ct: rel})


def _check_reverse_eids(rev: Any, num_edges: int) -> None:
    """``reverse_eids`` must give one id per edge: the owners are asked for ``rev[batch ids]``."""
    if isinstance(rev, dict):
        rev = next(iter(rev.values()))
    shape = tuple(backend.of(rev).shape(rev)) if backend.of(rev) is not None else np.shape(rev)
    if shape != (num_edges,):
        raise nwerr.ValueError(f"reverse_eids must hold one id per edge of the graph ({num_edges}), got shape {shape}")
