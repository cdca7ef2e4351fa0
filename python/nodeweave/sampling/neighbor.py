"""Neighbour sampling (DGL's ``dgl.sampling.sample_neighbors``): the C++ sampler of
``sampling/neighbor_sampler.cc`` on a nodeweave graph, returning the sampled *frontier*.

>>> import nodeweave as nw
>>> g = nw.graph(([1, 2, 3, 4, 0, 0], [0, 0, 0, 0, 1, 2]))
>>> frontier = nw.sampling.sample_neighbors(g, [0, 1], 2, random_seed=0)
>>> frontier.num_nodes(), frontier.num_edges()
(5, 3)
>>> sorted(frontier.in_degrees().tolist())
[0, 0, 0, 1, 2]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.heterograph import HeteroGraph, RelationGraph
from nodeweave.graph.id_sets import edge_sets, node_sets
from nodeweave.graph.transforms import EID
from nodeweave.sampling._seed import resolve_seed
from nodeweave import errors as nwerr

__all__ = ["sample_neighbors", "sample_neighbors_fused"]


def check_graph(g: Any, fn: str) -> HeteroGraph:
    if not isinstance(g, HeteroGraph):
        raise nwerr.TypeError(f"{fn}: g must be a nodeweave graph, got {type(g).__name__}")
    if g.is_block:
        raise nwerr.ValueError(f"{fn}: g is a block; sample from the graph the block came from")
    return g


def per_etype(g: HeteroGraph, value: Any, name: str, check: Any) -> dict[tuple, Any]:
    """A per-edge-type option given once or as ``{etype: value}`` (every edge type must appear)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            out[g.to_canonical_etype(k)] = check(v)
        missing = [ct for ct in g.canonical_etypes if ct not in out]
        if missing:
            raise nwerr.ValueError(f"{name} must give a value for every edge type; missing {missing}")
        return out
    v = check(value)
    return {ct: v for ct in g.canonical_etypes}


def fanout_value(f: Any, name: str = "fanout") -> int:
    if isinstance(f, (bool, np.bool_)) or not isinstance(f, (int, np.integer)):
        raise nwerr.TypeError(f"{name} must be an int (-1 for every neighbour), got {type(f).__name__} {f!r}")
    if f < -1:
        raise nwerr.ValueError(f"{name} must be -1 (every neighbour) or a non-negative count, got {f}")
    return int(f)


def edge_weights(g: HeteroGraph, ct: tuple, feature: Any, arg: str) -> np.ndarray | None:
    """The edge feature ``feature`` of ``ct`` as a 1-D NumPy array of weights (float or bool), or
    None (uniform). (The samplers reject negative, NaN or infinite values, naming ``prob``.)

    On a graph with several edge types an edge type without the feature is sampled uniformly, as
    in DGL; a name no edge type has is a KeyError (a typo must not turn into uniform sampling)."""
    if feature is None:
        return None
    if not isinstance(feature, str):
        raise nwerr.TypeError(f"{arg} must be the name of an edge feature, got {type(feature).__name__}")
    frame = g._edge_frames[ct]
    if feature not in frame:
        if any(feature in g._edge_frames[other] for other in g.canonical_etypes):
            return None
        where = "" if len(g.canonical_etypes) == 1 else " on any edge type"
        raise nwerr.KeyError(f"{arg}: the graph has no edge feature {feature!r}{where}")
    col = frame[feature]
    return weights_array(backend.of(col).to_numpy(col), feature, arg)


def weights_array(arr: np.ndarray, feature: str, arg: str) -> np.ndarray:
    """The values of edge feature ``feature`` as the samplers read them: 1-D, bool or float32 /
    float64 (an ``(E, 1)`` column is flattened). TypeError / ValueError naming ``arg`` otherwise."""
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise nwerr.ValueError(f"{arg}: edge feature {feature!r} must hold one value per edge, got shape {arr.shape}")
    if arr.dtype == np.bool_:
        return np.ascontiguousarray(arr)
    if arr.dtype.kind not in "fiu":
        raise nwerr.TypeError(f"{arg}: edge feature {feature!r} must be numeric or bool, got {arr.dtype}")
    # Finite, non-negative values are checked by the C++ sampler that reads them (once per call,
    # or once per NeighborSampler and graph).
    return np.ascontiguousarray(arr, dtype=np.float32 if arr.dtype == np.float32 else np.float64)


def sample_neighbors(g: HeteroGraph, nodes: Any, fanout: Any, edge_dir: str = "in", prob: str | None = None,
                     replace: bool = False, copy_ndata: bool = True, copy_edata: bool = True,
                     exclude_edges: Any = None, output_device: Any = None, *, mask: str | None = None,
                     random_seed: int | None = None) -> HeteroGraph:
    """Samples up to ``fanout`` edges into (``edge_dir='in'``) or out of (``'out'``) each node of
    ``nodes`` and returns them as a graph with all of ``g``'s nodes (DGL's frontier).

    Parameters
    ----------
    g : graph
    nodes : ids, or ``{ntype: ids}``
        Seed nodes.
    fanout : int or ``{etype: int}``
        Edges per seed and edge type; -1 takes every edge. Without replacement a seed with fewer
        edges keeps them all; with ``replace=True`` exactly ``fanout`` are drawn.
    prob : str, optional
        Edge feature with non-negative weights (or a bool mask): edges are drawn with probability
        proportional to it, and weight-0 edges never.
    mask : str, optional
        A bool edge feature: only edges where it is True are sampled, uniformly (DGL's
        NeighborSampler ``mask=``). Cannot be combined with ``prob``.
    exclude_edges : edge ids, or ``{etype: ids}``
        Edges never sampled (link prediction's exclusion of the batch's edges).
    random_seed : int, optional
        Fixes the sample, at any thread count. Default: drawn from nodeweave's generator.

    Returns
    -------
    A graph with the same node types and counts as ``g`` whose edges are the sampled ones;
    ``edata[nw.EID]`` holds their ids in ``g``. Node features are shared with ``g`` when
    ``copy_ndata``; edge features gathered when ``copy_edata``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([1, 2, 3], [0, 0, 0]))
    >>> g.edata["p"] = nc.tensor([0.0, 1.0, 0.0])
    >>> f = nw.sampling.sample_neighbors(g, [0], 1, prob="p", random_seed=3)
    >>> f.edata[nw.EID].tolist()
    [1]
    """
    fn = "sample_neighbors"
    check_graph(g, fn)
    if edge_dir not in ("in", "out"):
        raise nwerr.ValueError(f"edge_dir must be 'in' or 'out', got {edge_dir!r}")
    if prob is not None and mask is not None:
        raise nwerr.ValueError("pass either prob or mask, not both")
    out_dir = edge_dir == "out"
    seeds = node_sets(g, nodes, "nodes")
    fanouts = per_etype(g, fanout, "fanout", fanout_value)
    excl = edge_sets(g, exclude_edges, "exclude_edges") if exclude_edges is not None else {}
    key = resolve_seed(random_seed)
    sampled = {}
    for r, ct in enumerate(g.canonical_etypes):
        st, _, dt = ct
        s = seeds.get(st if out_dir else dt, np.zeros(0, np.int64))
        rel = g._rels[ct] if g._device == "cpu" else g._host(ct)
        weights = edge_weights(g, ct, prob if prob is not None else mask, "prob" if prob is not None else "mask")
        if mask is not None and weights is not None and weights.dtype != np.bool_:
            raise nwerr.TypeError(f"mask: edge feature {mask!r} must be bool, got {weights.dtype}")
        pos, nbr, eid = _C.sampling.sample_neighbors(rel, s, fanouts[ct], out_dir, bool(replace), weights,
                                                     excl.get(ct), _C.sampling.derive_key(key, r))
        sampled[ct] = (s[pos], nbr, eid)
    return build_frontier(g, sampled, out_dir, copy_ndata, copy_edata, output_device)


def sample_neighbors_fused(g: HeteroGraph, nodes: Any, fanout: Any, edge_dir: str = "in", prob: str | None = None,
                           replace: bool = False, copy_ndata: bool = True, copy_edata: bool = True,
                           exclude_edges: Any = None, mapping: dict | None = None, *, mask: str | None = None,
                           random_seed: int | None = None) -> Any:
    """:func:`sample_neighbors` and :func:`nodeweave.to_block` in one call (DGL's
    ``sample_neighbors_fused``): the block whose destination nodes are ``nodes`` (in that order,
    per type; a repeated seed once) and whose source nodes are those seeds followed by the sampled
    neighbours in order of first appearance. ``srcdata[nw.NID]`` / ``dstdata[nw.NID]`` /
    ``edata[nw.EID]`` are ids in ``g``; node features are gathered onto both sides when
    ``copy_ndata``, edge features when ``copy_edata``. The other arguments are
    :func:`sample_neighbors`'.

    Only ``edge_dir='in'`` is offered: DGL's fused ``'out'`` result is a block whose edges start
    in its destination set, which a block cannot hold; sample with :func:`sample_neighbors` and
    ``edge_dir='out'`` instead. ``mapping`` (DGL's reusable buffer for the relabelling) is accepted
    and not needed: the C++ compaction allocates what it uses.

    >>> import nodeweave as nw
    >>> g = nw.graph(([1, 2, 3, 0, 2, 3, 0], [0, 0, 0, 1, 1, 1, 2]))
    >>> b = nw.sampling.sample_neighbors_fused(g, [0, 1], -1)
    >>> b.dstdata[nw.NID].tolist(), b.srcdata[nw.NID].tolist(), b.num_edges()
    ([0, 1], [0, 1, 2, 3], 6)
    """
    from nodeweave.graph.block import to_block  # the block module builds on the sampling layer

    check_graph(g, "sample_neighbors_fused")
    if edge_dir != "in":
        raise nwerr.ValueError(f"sample_neighbors_fused: edge_dir must be 'in' (use sample_neighbors for "
                               f"edge_dir='out'), got {edge_dir!r}")
    if mapping is not None and not isinstance(mapping, dict):
        raise nwerr.TypeError(f"sample_neighbors_fused: mapping must be a dict or None, got {type(mapping).__name__}")
    # a seed given twice is one destination node (its first position counts)
    seeds = {nt: ids[np.sort(np.unique(ids, return_index=True)[1])] for nt, ids in node_sets(g, nodes, "nodes").items()}
    frontier = sample_neighbors(g, seeds, fanout, "in", prob, replace, copy_ndata, copy_edata, exclude_edges,
                                mask=mask, random_seed=random_seed)
    return to_block(frontier, seeds)


def build_frontier(g: HeteroGraph, sampled: dict, out_dir: bool, copy_ndata: bool, copy_edata: bool,
                   output_device: Any) -> HeteroGraph:
    """The frontier graph of sampled edges ``{etype: (seed ids, neighbour ids, edge ids)}``: every
    node of ``g``, the sampled edges with ``edata[EID]``, features shared or gathered."""
    rels, eids = {}, {}
    for ct, (seed_ids, nbr, eid) in sampled.items():
        src, dst = (seed_ids, nbr) if out_dir else (nbr, seed_ids)
        rel = g._rels[ct]
        rels[ct] = RelationGraph.from_coo(rel.num_src, rel.num_dst, src, dst, g._idtype_name)
        eids[ct] = eid
    frontier = HeteroGraph._create({nt: g.num_nodes(nt) for nt in g.ntypes}, rels)
    B = backend.current()
    for ct, e in eids.items():
        frame = frontier._edge_frames[ct]
        if copy_edata:
            for name, col in g._edge_frames[ct].items():
                b = backend.of(col)
                frame[name] = b.index_select(col, b.int_tensor(e, b.device_str(col), "int64"))
        frame[EID] = B.int_tensor(e, "cpu", g._idtype_name)
    device = g._device if output_device is None else B.canonical_device(output_device)
    if device != "cpu":
        frontier = frontier.to(device)
    if copy_ndata:
        for nt in g.ntypes:
            for name, col in g._node_frames[nt].items():
                frontier._node_frames[nt][name] = col if device == g._device else backend.of(col).to_device(col, device)
    return frontier
