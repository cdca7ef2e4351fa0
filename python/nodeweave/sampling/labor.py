"""LABOR sampling (DGL's ``dgl.sampling.sample_labors``): the C++ sampler of
``sampling/labor_sampler.cc`` on a nodeweave graph.

Each seed expects ``fanout`` in-edges, as with :func:`sample_neighbors`, but the neighbours share
one random variate each, so seeds with common neighbours tend to pick the same ones: a layer reaches
fewer distinct nodes. Each sampled edge carries its inverse inclusion probability.

>>> import nodeweave as nw
>>> g = nw.graph(([2, 3, 4, 5, 2, 3, 4, 5], [0, 0, 0, 0, 1, 1, 1, 1]))
>>> frontier, weights = nw.sampling.sample_labors(g, [0, 1], 2, random_seed=3)
>>> src, dst = (t.numpy() for t in frontier.edges())
>>> sorted(src[dst == 0]) == sorted(src[dst == 1])  # both seeds see 2..5: they pick alike
True
>>> float(weights[0])  # each edge was kept with probability 2 / 4
2.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C, backend
from nodeweave.sampling._seed import resolve_seed
from nodeweave.graph.id_sets import edge_sets, node_sets
from nodeweave.sampling.neighbor import (build_frontier, check_graph, edge_weights, fanout_value,
                                          per_etype)
from nodeweave import errors as nwerr

__all__ = ["sample_labors", "check_importance_sampling"]


def check_importance_sampling(x: Any) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise nwerr.TypeError(f"importance_sampling must be an int (-1: until converged), got {type(x).__name__}")
    if x < -1:
        raise nwerr.ValueError(f"importance_sampling must be -1 (until converged) or a number of rounds >= 0, got {x}")
    return int(x)


def sample_labors(g: Any, nodes: Any, fanout: Any, edge_dir: str = "in", prob: str | None = None,
                  importance_sampling: int = 0, random_seed: int | None = None, copy_ndata: bool = True,
                  copy_edata: bool = True, exclude_edges: Any = None, output_device: Any = None):
    """LABOR-sampled frontier of ``nodes`` and the weights of its edges.

    Parameters are those of :func:`nodeweave.sampling.sample_neighbors` (no replacement), plus
    ``importance_sampling``: rounds of LABOR-* importance updates (0: LABOR-0; -1: until the
    per-seed rates settle). Excluded edges count as weight 0.

    Returns
    -------
    frontier : graph
        All of ``g``'s nodes and the sampled edges (``edata[nw.EID]``).
    weights : tensor, or ``{etype: tensor}``
        Per sampled edge, ``1 / P(edge sampled)``: weighting messages by it (and dividing by the
        seed's degree) estimates the full-neighbourhood mean without bias.
    """
    fn = "sample_labors"
    check_graph(g, fn)
    if edge_dir not in ("in", "out"):
        raise nwerr.ValueError(f"edge_dir must be 'in' or 'out', got {edge_dir!r}")
    out_dir = edge_dir == "out"
    rounds = check_importance_sampling(importance_sampling)
    seeds = node_sets(g, nodes, "nodes")
    fanouts = per_etype(g, fanout, "fanout", fanout_value)
    excl = edge_sets(g, exclude_edges, "exclude_edges") if exclude_edges is not None else {}
    key = resolve_seed(random_seed)
    sampled, weights = {}, {}
    for ct in g.canonical_etypes:
        st, _, dt = ct
        s = seeds.get(st if out_dir else dt, np.zeros(0, np.int64))
        rel = g._rels[ct] if g._device == "cpu" else g._host(ct)
        w = edge_weights(g, ct, prob, "prob")
        if len(excl.get(ct, ())):
            w = (np.ones(g.num_edges(ct)) if w is None else w.astype(np.float64)).copy()
            w[excl[ct]] = 0.0
        # One variate per neighbour node: relations into the same node type share it.
        nbr_type = g.ntypes.index(dt if out_dir else st)
        pos, nbr, eid, ew = _C.sampling.sample_labors(rel, s, fanouts[ct], out_dir, w, rounds,
                                                      _C.sampling.derive_key(key, nbr_type + 0x9000))
        sampled[ct] = (s[pos], nbr, eid)
        weights[ct] = ew
    frontier = build_frontier(g, sampled, out_dir, copy_ndata, copy_edata, output_device)
    B = backend.current()
    dev = frontier._device
    out = {ct: B.from_numpy(w.astype(np.float32), dev) for ct, w in weights.items()}
    return frontier, (out[g.canonical_etypes[0]] if len(out) == 1 else out)
