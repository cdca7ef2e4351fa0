"""Neighbour sampling per edge type on a homogenized graph (DGL's
``dgl.sampling.sample_etype_neighbors``): the graph has one node and one edge type, the edge type
of every edge is the integer feature ``edata[nw.ETYPE]`` (as :func:`nodeweave.to_homogeneous`
writes it), and every seed gets up to ``fanout[t]`` edges of each type ``t``.

Each edge type's edges form a relation of their own on which the C++ sampler of
:func:`nodeweave.sampling.sample_neighbors` runs; the draws of type ``t`` come from the stream
keyed by ``(random_seed, t)``.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([1, 2, 3, 4], [0, 0, 0, 0]))
>>> g.edata[nw.ETYPE] = nc.tensor([0, 0, 1, 1])
>>> f = nw.sampling.sample_etype_neighbors(g, [0], [0, 2, 4], nc.tensor([1, 2]), random_seed=0)
>>> f.edata[nw.ETYPE].tolist()
[0, 1, 1]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.heterograph import HeteroGraph, RelationGraph, as_int_array
from nodeweave.graph.id_sets import node_sets
from nodeweave.graph.transforms import ETYPE
from nodeweave.sampling._seed import resolve_seed
from nodeweave.sampling.neighbor import build_frontier, check_graph, fanout_value
from nodeweave import errors as nwerr

__all__ = ["sample_etype_neighbors"]


def _to_numpy(x: Any) -> np.ndarray:
    B = backend.of(x)
    return B.to_numpy(x) if B is not None else np.asarray(x)


def _type_weights(prob: Any, t: int, local: np.ndarray) -> np.ndarray | None:
    """The weights of edge type ``t``'s edges from ``prob[t]`` (None: uniform); ``local`` holds
    the edges' positions in it (``edge id - etype_offset[t]``)."""
    if prob is None or prob[t] is None:
        return None
    w = _to_numpy(prob[t]).reshape(-1)
    if w.dtype.kind not in "fiub":
        raise nwerr.TypeError(f"prob[{t}] must be numeric or bool, got {w.dtype}")
    if len(local) and (local.min() < 0 or local.max() >= len(w)):
        raise nwerr.ValueError(f"prob[{t}] has {len(w)} entries, but edge type {t} has edges at positions "
                               f"{int(local.min())}..{int(local.max())} from etype_offset[{t}]")
    w = w[local]
    return np.ascontiguousarray(w if w.dtype == np.bool_ else w.astype(np.float64))


def sample_etype_neighbors(g: HeteroGraph, nodes: Any, etype_offset: Sequence[int], fanout: Any,
                           edge_dir: str = "in", prob: Sequence[Any] | None = None, replace: bool = False,
                           copy_ndata: bool = True, copy_edata: bool = True, etype_sorted: bool = False,
                           output_device: Any = None, *, random_seed: int | None = None) -> HeteroGraph:
    """Samples up to ``fanout[t]`` edges of every edge type ``t`` into (``edge_dir='in'``) or out
    of (``'out'``) each seed of the homogeneous graph ``g``, whose ``edata[nw.ETYPE]`` gives each
    edge's type.

    Parameters
    ----------
    etype_offset : list of int
        ``T + 1`` offsets for ``T`` edge types, as DGL takes them: the edges of type ``t`` have
        ids ``etype_offset[t] .. etype_offset[t+1]-1`` (the layout of
        :func:`nodeweave.to_homogeneous`); it fixes ``T`` and indexes ``prob``.
    fanout : tensor or list of int
        One count per edge type; -1 takes every edge of that type.
    prob : list, optional
        Per edge type, None or the weights (non-negative, or a bool mask) of its edges in id
        order: edge ``e`` of type ``t`` weighs ``prob[t][e - etype_offset[t]]``.
    etype_sorted : bool
        DGL's hint that each node's edges are grouped by type; nodeweave does not need it.

    Returns a graph with all of ``g``'s nodes and the sampled edges (``edata[nw.EID]``: their ids in
    ``g``; features shared or gathered as in :func:`sample_neighbors`).
    """
    fn = "sample_etype_neighbors"
    check_graph(g, fn)
    if len(g.ntypes) != 1 or len(g.canonical_etypes) != 1:
        raise nwerr.ValueError(f"{fn}: g must have one node type and one edge type (a homogenized graph), got "
                               f"{g.ntypes} and {g.canonical_etypes}")
    if edge_dir not in ("in", "out"):
        raise nwerr.ValueError(f"edge_dir must be 'in' or 'out', got {edge_dir!r}")
    ct, nt = g.canonical_etypes[0], g.ntypes[0]
    if ETYPE not in g._edge_frames[ct]:
        raise nwerr.KeyError(f"{fn}: g has no edge feature nw.ETYPE ({ETYPE!r}) with the type of every edge")
    etypes = _to_numpy(g._edge_frames[ct][ETYPE]).reshape(-1).astype(np.int64)
    offsets, _ = as_int_array(etype_offset, "etype_offset")
    num_types = len(offsets) - 1
    if num_types < 1 or np.any(np.diff(offsets) < 0):
        raise nwerr.ValueError(f"{fn}: etype_offset must be T + 1 non-decreasing offsets, got {offsets.tolist()}")
    fanouts = [fanout_value(int(f), f"fanout[{i}]") for i, f in enumerate(_to_numpy(fanout).reshape(-1))]
    if len(fanouts) != num_types:
        raise nwerr.ValueError(f"{fn}: fanout must give one count per edge type ({num_types}), got {len(fanouts)}")
    if len(etypes) and (etypes.min() < 0 or etypes.max() >= num_types):
        raise nwerr.ValueError(f"{fn}: edata[nw.ETYPE] must hold edge types in [0, {num_types}), got "
                               f"{int(etypes.min())}..{int(etypes.max())}")
    if prob is not None and len(prob) != num_types:
        raise nwerr.ValueError(f"{fn}: prob must give an entry per edge type ({num_types}), got {len(prob)}")
    seeds = node_sets(g, nodes, "nodes").get(nt, np.zeros(0, np.int64))
    out_dir = edge_dir == "out"
    src, dst = g._coo(ct)
    key = resolve_seed(random_seed)
    n = g.num_nodes()
    picked = []
    for t in range(num_types):
        ids = np.flatnonzero(etypes == t)
        rel = RelationGraph.from_coo(n, n, np.ascontiguousarray(src[ids], np.int64),
                                     np.ascontiguousarray(dst[ids], np.int64), g._idtype_name)
        w = _type_weights(prob, t, ids - offsets[t])
        pos, nbr, eid = _C.sampling.sample_neighbors(rel, seeds, fanouts[t], out_dir, bool(replace), w, None,
                                                     _C.sampling.derive_key(key, t))
        picked.append((seeds[pos], nbr, ids[eid]))
    merged = tuple(np.concatenate([p[i] for p in picked]) for i in range(3))
    return build_frontier(g, {ct: merged}, out_dir, copy_ndata, copy_edata, output_device)
