"""PinSAGE's random-walk neighbourhoods (Ying et al., KDD 2018; DGL's
``dgl.sampling.RandomWalkNeighborSampler`` and ``PinSAGESampler``).

The neighbours of a seed are the nodes of its type that short random walks from it visit most
often. Walks, visit counting and the top-k choice run fused in C++ (``sampling/pinsage.cc``), one
hash map per thread, without materializing the traces.

Walk ``w`` of the ``i``-th seed is exactly the walk number ``i * num_random_walks + w`` that
:func:`nodeweave.sampling.random_walk` returns for the same ``random_seed`` over the metapath
repeated ``num_traversals`` times, with ``restart_prob`` equal to ``termination_prob`` before
every traversal but the first: the node ending each traversal counts as a visit unless it is the
seed itself or the walk has ended.

>>> import nodeweave as nw, nodeweave.sampling
>>> g = nw.heterograph({("item", "bought-by", "user"): ([0, 0, 1, 2], [0, 1, 0, 1]),
...                     ("user", "buys", "item"): ([0, 1, 0, 1], [0, 0, 1, 2])})
>>> sampler = nw.sampling.PinSAGESampler(g, "item", "user", num_traversals=2,
...                                      termination_prob=0.5, num_random_walks=50, num_neighbors=2)
>>> frontier = sampler([0], random_seed=0)
>>> frontier.ntypes, frontier.num_nodes()
(['item'], 3)
>>> sorted(frontier.edges()[0].tolist()), frontier.edges()[1].tolist()   # items 1 and 2 -> item 0
([1, 2], [0, 0])
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.heterograph import as_int_array
from nodeweave.sampling._seed import resolve_seed
from nodeweave.sampling.randomwalks import walk_relations
from nodeweave import errors as nwerr

__all__ = ["RandomWalkNeighborSampler", "PinSAGESampler"]


def _count(value: Any, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise nwerr.TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise nwerr.ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


class RandomWalkNeighborSampler:
    """PinSAGE-style neighbour sampler on any graph (DGL's ``RandomWalkNeighborSampler``).

    Calling it with seed nodes returns a graph on the seeds' node type whose edges go from each
    seed's ``num_neighbors`` most visited nodes to the seed, with the visit counts as the edge
    feature ``weight_column``. A walk makes up to ``num_traversals`` traversals of ``metapath``
    (which must end at the node type it starts from) and stops before each traversal after the
    first with probability ``termination_prob``; each seed gets ``num_random_walks`` walks. Ties
    between equal counts go to the smaller node id.

    Parameters
    ----------
    G : HeteroGraph
    num_traversals : int
    termination_prob : float in [0, 1]
    num_random_walks : int
    num_neighbors : int
    metapath : list of edge types, optional
        One traversal. Omitted on a graph with one node and one edge type (one step).
    weight_column : str
        Name of the edge feature of visit counts (int64) in the returned graph.

    The returned graph keeps every node of the seeds' type under its original id (as DGL), so it
    has no ``nodeweave.NID`` feature; compact it with ``to_block(frontier, seeds)``.

    >>> import nodeweave as nw, nodeweave.sampling
    >>> star = nw.graph(([0, 0, 0, 1, 2, 3], [1, 2, 3, 0, 0, 0]))   # hub 0, leaves 1..3
    >>> sampler = nw.sampling.RandomWalkNeighborSampler(star, num_traversals=2, termination_prob=0.0,
    ...                                                 num_random_walks=10, num_neighbors=1)
    >>> frontier = sampler([1], random_seed=0)
    >>> frontier.edges()[0].tolist(), frontier.edata["weights"].tolist()   # every walk's first hop
    ([0], [10])
    """

    def __init__(self, G: Any, num_traversals: int, termination_prob: float, num_random_walks: int,
                 num_neighbors: int, metapath: Sequence[Any] | None = None,
                 weight_column: str = "weights") -> None:
        if metapath is None:
            if len(G.ntypes) != 1 or len(G.canonical_etypes) != 1:
                raise nwerr.ValueError("metapath must be given: the graph has node types "
                                       f"{G.ntypes} and edge types {G.canonical_etypes}")
            metapath = [G.canonical_etypes[0]]
        if isinstance(metapath, (str, tuple)) or len(metapath) == 0:
            raise nwerr.ValueError(f"metapath must be a non-empty list of edge types, got {metapath!r}")
        self.G = G
        self.metapath = [G.to_canonical_etype(e) for e in metapath]
        if self.metapath[0][0] != self.metapath[-1][2]:
            raise nwerr.ValueError(f"the metapath must end at the node type it starts from: it goes from "
                                   f"{self.metapath[0][0]!r} to {self.metapath[-1][2]!r}")
        self.ntype = self.metapath[0][0]
        self.num_traversals = _count(num_traversals, "num_traversals")
        self.num_random_walks = _count(num_random_walks, "num_random_walks")
        self.num_neighbors = _count(num_neighbors, "num_neighbors")
        if isinstance(termination_prob, (bool, np.bool_)) or not isinstance(
                termination_prob, (int, float, np.integer, np.floating)):
            raise nwerr.TypeError(f"termination_prob must be a float, got {type(termination_prob).__name__}")
        if not 0.0 <= float(termination_prob) <= 1.0:
            raise nwerr.ValueError(f"termination_prob must be in [0, 1], got {termination_prob}")
        self.termination_prob = float(termination_prob)
        if not isinstance(weight_column, str):
            raise nwerr.TypeError(f"weight_column must be a str, got {type(weight_column).__name__}")
        self.weight_column = weight_column

    def __call__(self, seed_nodes: Any, *, random_seed: int | None = None):
        """The neighbour graph of ``seed_nodes`` (ids of the sampler's node type). ``random_seed``
        fixes the result at any thread count (nodeweave's addition to DGL's signature)."""
        import nodeweave as nw

        G = self.G
        rels, steps = walk_relations(G, self.metapath, None)
        ids, _ = as_int_array(seed_nodes, "seed_nodes")
        src, dst, counts = _C.sampling.pinsage_neighbors(
            rels, steps, ids, self.num_traversals, self.termination_prob, self.num_random_walks,
            self.num_neighbors, resolve_seed(random_seed))
        out = nw.heterograph({(self.ntype, "_E", self.ntype): (src, dst)},
                             {self.ntype: G.num_nodes(self.ntype)}, idtype=G._idtype_name,
                             device=G._device)
        out.edata[self.weight_column] = backend.current().int_tensor(counts, out._device, "int64")
        return out


class PinSAGESampler(RandomWalkNeighborSampler):
    """PinSAGE's neighbour sampler on a bipartite graph (DGL's ``PinSAGESampler``): walks go
    ``ntype -> other_type -> ntype`` through the graph's two edge types between them, and the
    most visited ``ntype`` nodes become each seed's neighbours (see
    :class:`RandomWalkNeighborSampler`).

    Parameters
    ----------
    G : HeteroGraph
        Two node types, with one edge type ``ntype -> other_type`` and one back.
    ntype, other_type : str
    num_traversals, termination_prob, num_random_walks, num_neighbors, weight_column
        As :class:`RandomWalkNeighborSampler`.

    >>> import nodeweave as nw, nodeweave.sampling
    >>> g = nw.heterograph({("item", "bought-by", "user"): ([0, 1, 1, 2], [0, 0, 1, 1]),
    ...                     ("user", "buys", "item"): ([0, 0, 1, 1], [0, 1, 1, 2])})
    >>> frontier = nw.sampling.PinSAGESampler(g, "item", "user", 3, 0.5, 100, 1)([0, 2], random_seed=0)
    >>> frontier.edges()[0].tolist(), frontier.edges()[1].tolist()   # item 1 is the bridge
    ([1, 1], [0, 2])
    """

    def __init__(self, G: Any, ntype: str, other_type: str, num_traversals: int, termination_prob: float,
                 num_random_walks: int, num_neighbors: int, weight_column: str = "weights") -> None:
        fw = [ct for ct in G.canonical_etypes if ct[0] == ntype and ct[2] == other_type]
        bw = [ct for ct in G.canonical_etypes if ct[0] == other_type and ct[2] == ntype]
        if len(fw) != 1 or len(bw) != 1:
            raise nwerr.ValueError(f"PinSAGESampler needs exactly one edge type {ntype!r} -> {other_type!r} "
                                   f"and one back, the graph has {G.canonical_etypes}")
        super().__init__(G, num_traversals, termination_prob, num_random_walks, num_neighbors,
                         metapath=[fw[0], bw[0]], weight_column=weight_column)
