"""Deterministic neighbour selection by weight (DGL's ``dgl.sampling.select_topk``): every seed
keeps its ``k`` in-edges (or out-edges) of largest weight.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([1, 2, 3], [0, 0, 0]))
>>> g.edata["w"] = nc.tensor([0.5, 2.0, 1.0])
>>> f = nw.sampling.select_topk(g, 2, "w", [0])
>>> f.edata[nw.EID].tolist()
[1, 2]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.id_sets import node_sets
from nodeweave.graph.transforms._common import _edge_weights, _ragged_positions
from nodeweave.sampling.neighbor import build_frontier, check_graph, fanout_value, per_etype
from nodeweave import errors as nwerr

__all__ = ["select_topk"]


def _top_per_row(rows: np.ndarray, weights: np.ndarray, eids: np.ndarray, k: int, ascending: bool) -> np.ndarray:
    """Positions of the ``k`` best entries of every row (ties: smaller edge id first)."""
    order = np.lexsort((eids, weights if ascending else -weights, rows))
    r = rows[order]
    starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]]) if len(r) else np.zeros(0, np.int64)
    rank = np.arange(len(r)) - np.repeat(starts, np.diff(np.r_[starts, len(r)]))
    return order[rank < k]


def select_topk(g: HeteroGraph, k: Any, weight: str, nodes: Any = None, edge_dir: str = "in",
                ascending: bool = False, copy_ndata: bool = True, copy_edata: bool = True,
                output_device: Any = None) -> HeteroGraph:
    """For every node of ``nodes`` (default: every node), its ``k`` in-edges (``edge_dir='in'``) or
    out-edges (``'out'``) of largest edge feature ``weight`` (smallest with ``ascending``); ties go
    to the smaller edge id. ``k`` is an int or ``{etype: int}``; -1 keeps every edge.

    Returns a graph with all of ``g``'s nodes and the selected edges, ``edata[nw.EID]`` their ids in
    ``g`` (features shared or gathered as in :func:`sample_neighbors`). An edge type without the
    feature ``weight`` raises KeyError, unless its ``k`` is 0 or it has no seeds.
    """
    fn = "select_topk"
    check_graph(g, fn)
    if edge_dir not in ("in", "out"):
        raise nwerr.ValueError(f"edge_dir must be 'in' or 'out', got {edge_dir!r}")
    if not isinstance(weight, str):
        raise nwerr.TypeError(f"{fn}: weight must be the name of an edge feature, got {type(weight).__name__}")
    out_dir = edge_dir == "out"
    seeds = node_sets(g, nodes, "nodes") if nodes is not None else \
        {nt: np.arange(g.num_nodes(nt), dtype=np.int64) for nt in g.ntypes}
    ks = per_etype(g, k, "k", lambda v: fanout_value(v, "k"))
    picked = {}
    for ct in g.canonical_etypes:
        side = ct[0] if out_dir else ct[2]
        s = seeds.get(side, np.zeros(0, np.int64))
        src, dst = g._coo(ct)
        src, dst = src.astype(np.int64), dst.astype(np.int64)
        if ks[ct] == 0 or len(s) == 0:
            e = np.zeros(0, np.int64)
        else:
            key = src if out_dir else dst
            order = np.argsort(key, kind="stable")
            indptr = np.zeros(g.num_nodes(side) + 1, np.int64)
            np.cumsum(np.bincount(key, minlength=g.num_nodes(side)), out=indptr[1:])
            e = order[_ragged_positions(indptr, s)]
            if ks[ct] > 0:
                w = _edge_weights(g, ct, weight, fn)
                e = e[_top_per_row(key[e], w[e], e, ks[ct], bool(ascending))]
        seed_ids, nbr = (src[e], dst[e]) if out_dir else (dst[e], src[e])
        picked[ct] = (seed_ids, nbr, e)
    return build_frontier(g, picked, out_dir, copy_ndata, copy_edata, output_device)
