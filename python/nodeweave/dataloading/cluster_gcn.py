"""Cluster-GCN's sampler (Chiang et al., KDD 2019; DGL's ``dgl.dataloading.ClusterGCNSampler``):
METIS splits the graph into ``k`` parts once; a batch is the subgraph induced by the union of a few
parts, so most of each node's neighbours come along while the batch stays small.

The parts are computed by ``sampling/metis_partition.cc`` (METIS on the symmetrized graph) and
cached on disk; the :class:`~nodeweave.dataloading.DataLoader` then iterates over part ids:

>>> import numpy as np, nodeweave as nw, tempfile, os
>>> g = nw.sbm_graph([20, 20, 20], np.full((3, 3), 0.02) + np.eye(3) * 0.4, seed=0)
>>> path = os.path.join(tempfile.mkdtemp(), "parts.npz")
>>> sampler = nw.dataloading.ClusterGCNSampler(g, 3, cache_path=path)
>>> sorted(len(sampler.part_nodes(p)) for p in range(3))
[20, 20, 20]
>>> loader = nw.dataloading.DataLoader(g, np.arange(3), sampler, batch_size=2, shuffle=True, seed=0)
>>> [sg.num_nodes() for sg in loader]
[40, 20]
>>> nw.dataloading.ClusterGCNSampler(g, 3, cache_path=path).loaded_from_cache
True
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from typing import Any, Sequence

import numpy as np

from nodeweave import _C, backend
from nodeweave._binfile import atomic_write
from nodeweave.dataloading.base import Sampler
from nodeweave.dataloading.subgraph_batch import check_homogeneous, cpu_relation, feature_list, induced_subgraph_batch
from nodeweave.graph.heterograph import HeteroGraph, as_int_array
from nodeweave.partition import metis_node_weights
from nodeweave import errors as nwerr

__all__ = ["ClusterGCNSampler", "induced_subgraph_batch", "feature_list"]

# Bumped whenever the cache layout or the partitioning it stands for changes.
_CACHE_VERSION = 1


def _graph_digest(g: HeteroGraph) -> str:
    """sha256 of the edge list (int64 src then dst, in edge-id order) and the node count."""
    h = hashlib.sha256()
    h.update(np.int64(g.num_nodes()).tobytes())
    for t in g.edges():
        h.update(np.ascontiguousarray(backend.of(t).to_numpy(t), dtype=np.int64).tobytes())
    return h.hexdigest()


def _write_cache(path: str, arrays: dict[str, np.ndarray]) -> None:
    """Writes ``arrays`` as an .npz file at ``path`` atomically (never half-written; on a failure
    ``path`` keeps its old content or stays absent)."""
    atomic_write(path, lambda f: np.savez(f, **arrays))


def _read_cache(path: str, fingerprint: dict, n: int, k: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``(partition_offset, partition_node_ids)`` from the cache at ``path`` when it holds the
    partitions of this very graph and these options, else None (absent, unreadable, another graph
    or inconsistent arrays). Never unpickles: the file is read with ``allow_pickle=False``."""
    try:
        with np.load(path, allow_pickle=False) as z:
            stored = json.loads(str(z["fingerprint"][()]))
            offset = np.asarray(z["partition_offset"], dtype=np.int64)
            node_ids = np.asarray(z["partition_node_ids"], dtype=np.int64)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, TypeError):
        return None
    if stored != fingerprint or offset.shape != (k + 1,) or node_ids.shape != (n,):
        return None
    if offset[0] != 0 or offset[-1] != n or np.any(np.diff(offset) < 0):
        return None
    if not np.array_equal(np.sort(node_ids), np.arange(n)):
        return None
    return offset, node_ids


class ClusterGCNSampler(Sampler):
    """Subgraphs induced by unions of METIS parts (Cluster-GCN).

    Parameters
    ----------
    g : graph
        A graph with one node type and one edge type. It is symmetrized for METIS (edges are read
        in both directions; self-loops and repeats dropped).
    k : int
        Number of parts, ``1 <= k <= g.num_nodes()``.
    cache_path : str or None
        Where the parts are kept between runs (an ``.npz`` file whatever its name; DGL's default
        name is kept). It also stores a fingerprint of the graph and the options (node and edge
        counts, ``k``, a sha256 of the edge arrays, the balance options, ``mode``, ``seed``): a
        cache of another graph or other options is recomputed and replaced. Written atomically.
        None: no cache.
    balance_ntypes : array of int, optional
        A type per node (e.g. the training mask): METIS balances the count of every type over the
        parts (one weight constraint per distinct value), as DGL.
    balance_edges : bool
        Also balance the in-degree sum (per type, when ``balance_ntypes`` is given).
    mode : 'k-way' or 'recursive'
        METIS' multilevel k-way partitioning or recursive bisection.
    prefetch_ndata, prefetch_edata : list of str, optional
        Node / edge features gathered into each subgraph (None: every feature; ``[]``: none).
    output_device : optional
        Device of the subgraphs (default: the graph's).
    seed : int
        METIS' random seed (``METIS_OPTION_SEED``), in ``[0, 2**31 - 1)``.

    ``sample(g, partition_ids)`` returns the subgraph induced by the nodes of those parts, part by
    part in the given order and by increasing node id within a part, with the original ids in
    ``ndata[nw.NID]`` and ``edata[nw.EID]``.
    """

    def __init__(self, g: Any, k: int, cache_path: str | None = "cluster_gcn.pkl", balance_ntypes: Any = None,
                 balance_edges: bool = False, mode: str = "k-way", prefetch_ndata: Sequence[str] | None = None,
                 prefetch_edata: Sequence[str] | None = None, output_device: Any = None, *, seed: int = 0) -> None:
        fn = "ClusterGCNSampler"
        g = check_homogeneous(g, fn)
        n = g.num_nodes()
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise nwerr.TypeError(f"{fn}: k must be an int, got {type(k).__name__}")
        if k < 1:
            raise nwerr.ValueError(f"{fn}: k (the number of parts) must be >= 1, got {k}")
        if k > n:
            raise nwerr.ValueError(f"{fn}: k (the number of parts) must be at most the number of nodes, {n}, got {k}")
        if mode not in ("k-way", "recursive"):
            raise nwerr.ValueError(f"{fn}: mode must be 'k-way' or 'recursive', got {mode!r}")
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**31 - 1:
            raise nwerr.ValueError(f"{fn}: seed must be an int in [0, 2**31 - 1), got {seed!r}")
        self.k = int(k)
        self.prefetch_ndata = feature_list(prefetch_ndata, "prefetch_ndata")
        self.prefetch_edata = feature_list(prefetch_edata, "prefetch_edata")
        self.output_device = output_device
        self.cache_path = None if cache_path is None else os.fspath(cache_path)
        weights = metis_node_weights(g, balance_ntypes, bool(balance_edges), fn)
        fingerprint = {
            "version": _CACHE_VERSION, "num_nodes": n, "num_edges": g.num_edges(), "k": self.k,
            "edges_sha256": _graph_digest(g), "mode": mode, "balance_edges": bool(balance_edges),
            "weights_sha256": None if weights is None else hashlib.sha256(weights.tobytes()).hexdigest(),
            "seed": int(seed),
        }
        cached = None if self.cache_path is None else _read_cache(self.cache_path, fingerprint, n, self.k)
        self.loaded_from_cache = cached is not None
        if cached is None:
            part = _C.sampling.metis_partition(cpu_relation(g), self.k, mode, weights, int(seed))
            node_ids = np.argsort(part, kind="stable").astype(np.int64)
            offset = np.zeros(self.k + 1, np.int64)
            np.cumsum(np.bincount(part, minlength=self.k), out=offset[1:])
            if self.cache_path is not None:
                _write_cache(self.cache_path, {"fingerprint": np.array(json.dumps(fingerprint, sort_keys=True)),
                                               "partition_offset": offset, "partition_node_ids": node_ids})
            cached = (offset, node_ids)
        self.partition_offset, self.partition_node_ids = cached
        self._num_nodes = n

    def part_nodes(self, part: int) -> np.ndarray:
        """Node ids of part ``part`` in increasing order (a NumPy view)."""
        if not 0 <= part < self.k:
            raise nwerr.IndexError(f"part must be in [0, {self.k}), got {part}")
        return self.partition_node_ids[self.partition_offset[part]:self.partition_offset[part + 1]]

    def sample(self, g: Any, partition_ids: Any, *, random_seed: int | None = None) -> HeteroGraph:
        """The subgraph induced by the union of parts ``partition_ids`` (distinct ids in
        ``[0, k)``). ``random_seed`` is accepted for the sampler protocol and unused: the batch is
        a pure function of the parts."""
        fn = "ClusterGCNSampler.sample"
        g = check_homogeneous(g, fn)
        if g.num_nodes() != self._num_nodes:
            raise nwerr.ValueError(f"{fn}: g has {g.num_nodes()} nodes but the parts were computed for a graph "
                                   f"of {self._num_nodes}")
        ids, _ = as_int_array(partition_ids, "partition_ids")
        bad = (ids < 0) | (ids >= self.k)
        if bad.any():
            raise nwerr.IndexError(f"{fn}: partition_ids must be in [0, {self.k}), got {int(ids[bad][0])}")
        if len(np.unique(ids)) != len(ids):
            raise nwerr.ValueError(f"{fn}: partition_ids must be distinct, got {ids.tolist()}")
        nodes = np.concatenate([self.part_nodes(int(p)) for p in ids]) if len(ids) else np.zeros(0, np.int64)
        return induced_subgraph_batch(g, nodes, self.prefetch_ndata, self.prefetch_edata, self.output_device)
