"""Renumbering a graph's nodes and edges (DGL's ``reorder_graph``).

>>> import nodeweave as nw
>>> nw.reorder_graph(nw.graph(([1, 0], [2, 1]))).edata["_ID"].tolist()
[1, 0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave.graph.heterograph import HeteroGraph, as_int_array
from nodeweave.graph.transforms._common import EID, NID, _build, _check_graph, _coo, _homo_types, _ids
from nodeweave import errors as nwerr

__all__ = ["reorder_graph"]


def _check_perm(p: Any, n: int, name: str) -> np.ndarray:
    arr, _ = as_int_array(p, name)
    if len(arr) != n or not np.array_equal(np.sort(arr), np.arange(n)):
        raise nwerr.ValueError(f"{name} must be a permutation of 0..{n - 1} ({n} distinct ids), got "
                               f"{len(arr)} ids" + ("" if len(arr) != n else " that are not distinct"))
    return arr


def reorder_graph(g: HeteroGraph, node_permute_algo: str | None = None, edge_permute_algo: str = "src",
                  store_ids: bool = True, permute_config: dict | None = None) -> HeteroGraph:
    """The same graph with nodes and edges renumbered (features permuted along).

    Parameters
    ----------
    node_permute_algo : None, 'rcmk', 'metis' or 'custom'
        None keeps node ids; 'rcmk' uses reverse Cuthill-McKee
        (``scipy.sparse.csgraph.reverse_cuthill_mckee``); 'metis' groups the nodes by their
        METIS part (:func:`nodeweave.metis_partition_assignment` with ``permute_config['k']``
        parts), keeping their order within a part; 'custom' uses
        ``permute_config['nodes_perm']``. New node ``i`` is old node ``perm[i]``.
    edge_permute_algo : 'src', 'dst' or 'custom'
        Sort edges stably by new source ('src') or destination ('dst') id, or use
        ``permute_config['edges_perm']`` (new edge ``j`` is old edge ``perm[j]``).
    store_ids : bool
        Store the original ids in ``ndata['_ID']`` and ``edata['_ID']``.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
    >>> rg = nw.reorder_graph(g, "custom", permute_config={"nodes_perm": [2, 0, 1]})
    >>> rg.ndata["_ID"].tolist(), [t.tolist() for t in rg.edges()], rg.edata["_ID"].tolist()
    ([2, 0, 1], [[0, 1, 2], [1, 2, 0]], [2, 0, 1])
    """
    _check_graph(g)
    nt, ct = _homo_types(g, "reorder_graph")
    n = g._num_nodes[nt]
    src, dst = _coo(g, ct)
    cfg = permute_config or {}
    if node_permute_algo is None:
        perm = np.arange(n, dtype=np.int64)
    elif node_permute_algo == "rcmk":
        import scipy.sparse as sp
        from scipy.sparse.csgraph import reverse_cuthill_mckee

        a = sp.csr_matrix((np.ones(len(src), np.float64), (src, dst)), shape=(n, n))
        perm = np.asarray(reverse_cuthill_mckee(a), np.int64) if n else np.zeros(0, np.int64)
    elif node_permute_algo == "metis":
        if "k" not in cfg:
            raise nwerr.ValueError("reorder_graph: node_permute_algo='metis' needs permute_config['k'] (the number "
                                   "of parts)")
        from nodeweave.partition import metis_partition_assignment  # partition builds on these transforms

        part = metis_partition_assignment(g, cfg["k"])
        perm = np.argsort(backend.of(part).to_numpy(part), kind="stable").astype(np.int64)
    elif node_permute_algo == "custom":
        if "nodes_perm" not in cfg:
            raise nwerr.ValueError("reorder_graph: node_permute_algo='custom' needs permute_config['nodes_perm']")
        perm = _check_perm(cfg["nodes_perm"], n, "permute_config['nodes_perm']")
    else:
        raise nwerr.ValueError(f"reorder_graph: node_permute_algo must be None, 'rcmk', 'metis' or 'custom', got "
                               f"{node_permute_algo!r}")
    inv = np.empty(n, np.int64)
    inv[perm] = np.arange(n, dtype=np.int64)
    ns, nd = inv[src], inv[dst]
    if edge_permute_algo == "src":
        eperm = np.argsort(ns, kind="stable")
    elif edge_permute_algo == "dst":
        eperm = np.argsort(nd, kind="stable")
    elif edge_permute_algo == "custom":
        if "edges_perm" not in cfg:
            raise nwerr.ValueError("reorder_graph: edge_permute_algo='custom' needs permute_config['edges_perm']")
        eperm = _check_perm(cfg["edges_perm"], len(src), "permute_config['edges_perm']")
    else:
        raise nwerr.ValueError(f"reorder_graph: edge_permute_algo must be 'src', 'dst' or 'custom', got "
                               f"{edge_permute_algo!r}")
    nf = g._node_frames[nt].subframe(perm)
    ef = g._edge_frames[ct].subframe(eperm)
    if store_ids:
        nf[NID] = _ids(perm, g)
        ef[EID] = _ids(eperm, g)
    return _build({nt: n}, {ct: (ns[eperm], nd[eperm])}, g._idtype_name, g._device, {nt: nf}, {ct: ef})
