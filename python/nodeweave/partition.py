"""Graph partitioning (DGL's ``dgl.partition``): the METIS node-to-part assignment, the partitions
of a graph with their HALO nodes, and renumbering a graph's nodes.

A partition holds its own ("inner") nodes first, then HALO nodes: nodes of other parts that reach an
inner node over at most ``extra_cached_hops`` in-edges, and the out-neighbours of the inner nodes.
Its edges are every in-edge and out-edge of its inner nodes, and the in-edges among HALO nodes up to
the hop limit. An edge *belongs* to the partition of its destination (``edata['inner_edge']``), so
every edge of the graph is an inner edge of exactly one partition. These are DGL's rules; the
partitions carry only the bookkeeping features (``NID``, ``EID``, ``inner_node``, ``part_id``,
``inner_edge`` and, after a reshuffle, ``orig_id``), not the graph's own features.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
>>> parts, _, _ = nw.partition_graph_with_halo(g, [0, 0, 1, 1], 1)
>>> p0 = parts[0]
>>> p0.ndata[nw.NID].tolist(), p0.ndata["inner_node"].tolist()
([0, 1, 3, 2], [1, 1, 0, 0])
>>> [p0.edata[nw.EID].tolist(), p0.edata["inner_edge"].tolist()]
[[3, 0, 1], [1, 1, 0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.heterograph import HeteroGraph, as_int_array
from nodeweave.graph.transforms._common import EID, NID, _build, _check_graph, _coo, _homo_types, _ids, \
    _ragged_positions
from nodeweave import errors as nwerr

__all__ = ["metis_partition_assignment", "metis_partition", "partition_graph_with_halo", "reorder_nodes"]


def _int_tensor(arr: np.ndarray, g: HeteroGraph) -> Any:
    """A host array as a tensor of its own dtype on ``g``'s device."""
    return backend.current().from_numpy(np.ascontiguousarray(arr), g._device)


def balance_weight_columns(classes: np.ndarray | None, in_degrees: np.ndarray | None) -> np.ndarray | None:
    """METIS' multi-constraint node weights as DGL builds them: a 0/1 column per distinct value of
    ``classes`` (one value per node), then, given ``in_degrees``, the in-degree (one column per
    distinct class when ``classes`` is given, degree counted for that class's nodes). A degree
    column that is zero everywhere (a class without in-edges) is left out: there is nothing to
    balance, and METIS refuses such a constraint. None when neither is given (METIS then balances
    node counts).

    >>> balance_weight_columns(np.array([0, 1, 1]), np.array([2, 0, 5])).tolist()
    [[1, 0, 2, 0], [0, 1, 0, 0], [0, 1, 0, 5]]
    """
    values = [] if classes is None else np.unique(classes)
    cols: list[np.ndarray] = [(classes == t).astype(np.int64) for t in values]
    if in_degrees is not None:
        deg = np.asarray(in_degrees, np.int64)
        degs = [deg] if classes is None else [np.where(classes == t, deg, 0) for t in values]
        cols += [c for c in degs if c.any()]
    return np.ascontiguousarray(np.stack(cols, 1)) if cols else None


def metis_node_weights(g: HeteroGraph, balance_ntypes: Any, balance_edges: bool, fn: str) -> np.ndarray | None:
    """:func:`balance_weight_columns` of the homogeneous ``g``: classes from ``balance_ntypes`` (one
    value per node), in-degrees when ``balance_edges``."""
    n = g.num_nodes()
    types = None
    if balance_ntypes is not None:
        b = backend.of(balance_ntypes)
        types = np.asarray(b.to_numpy(balance_ntypes) if b is not None else balance_ntypes).reshape(-1)
        if types.shape != (n,):
            raise nwerr.ValueError(f"{fn}: balance_ntypes must hold one value per node ({n}), got shape {types.shape}")
    deg = None
    if balance_edges:
        d = g.in_degrees()
        deg = backend.of(d).to_numpy(d)
    return balance_weight_columns(types, deg)


def metis_partition_assignment(g: HeteroGraph, k: int, balance_ntypes: Any = None, balance_edges: bool = False,
                               mode: str = "k-way", objtype: str = "cut", *, seed: int = 0) -> Any:
    """The part (``0 .. k-1``) of every node of the homogeneous graph ``g``, computed by METIS on
    ``g`` made symmetric (edge directions, self-loops and repeated edges do not matter).

    Parameters
    ----------
    k : int
        Number of parts, ``1 <= k <= g.num_nodes()``.
    balance_ntypes : sequence or tensor, optional
        One type value per node: METIS balances every type's node count over the parts.
    balance_edges : bool
        Also balance the in-degree sums (per type when ``balance_ntypes`` is given).
    mode : 'k-way' or 'recursive'
        METIS' multilevel k-way partitioning or recursive bisection.
    objtype : 'cut' or 'vol'
        The objective METIS minimises: the edge cut (DGL's default) or the total communication
        volume (k-way mode only).
    seed : int
        METIS' random seed: the assignment is a pure function of the graph, options and seed.

    Returns an int64 tensor with one part id per node, on ``g``'s device.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3, 4, 5], [1, 2, 0, 4, 5, 3]))   # two triangles
    >>> part = nw.metis_partition_assignment(g, 2).tolist()
    >>> part[0] == part[1] == part[2] != part[3] == part[4] == part[5]
    True
    """
    fn = "metis_partition_assignment"
    _check_graph(g)
    _homo_types(g, fn)
    n = g.num_nodes()
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise nwerr.TypeError(f"{fn}: k must be an int, got {type(k).__name__}")
    if not 1 <= k <= max(n, 1):
        raise nwerr.ValueError(f"{fn}: k (the number of parts) must be in [1, {n}] (the number of nodes), got {k}")
    if mode not in ("k-way", "recursive"):
        raise nwerr.ValueError(f"{fn}: mode must be 'k-way' or 'recursive', got {mode!r}")
    if objtype not in ("cut", "vol"):
        raise nwerr.ValueError(f"{fn}: objtype must be 'cut' (edge cut) or 'vol' (communication volume), "
                               f"got {objtype!r}")
    if objtype == "vol" and mode != "k-way":
        raise nwerr.ValueError(f"{fn}: objtype='vol' needs mode='k-way' (recursive bisection minimises the edge cut)")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**31 - 1:
        raise nwerr.ValueError(f"{fn}: seed must be an int in [0, 2**31 - 1), got {seed!r}")
    from nodeweave.dataloading.subgraph_batch import cpu_relation  # dataloading imports this module

    weights = metis_node_weights(g, balance_ntypes, bool(balance_edges), fn)
    part = np.asarray(_C.sampling.metis_partition(cpu_relation(g), int(k), mode, weights, int(seed), objtype),
                      np.int64)
    return _int_tensor(part, g)


def reorder_nodes(g: HeteroGraph, new_node_ids: Any) -> HeteroGraph:
    """A copy of the homogeneous graph ``g`` whose node ``i`` is renamed ``new_node_ids[i]`` (a
    permutation of ``0 .. N-1``); edges keep their ids and order. Like DGL's, the result carries no
    features of ``g``, only ``ndata['orig_id']``: the old id of every new node.

    >>> import nodeweave as nw
    >>> rg = nw.partition.reorder_nodes(nw.graph(([0, 1], [1, 2])), [2, 0, 1])
    >>> [t.tolist() for t in rg.edges()], rg.ndata["orig_id"].tolist()
    ([[2, 0], [0, 1]], [1, 2, 0])
    """
    _check_graph(g)
    nt, ct = _homo_types(g, "reorder_nodes")
    n = g._num_nodes[nt]
    new, _ = as_int_array(new_node_ids, "new_node_ids")
    if len(new) != n or not np.array_equal(np.sort(new), np.arange(n)):
        raise nwerr.ValueError(f"reorder_nodes: new_node_ids must be a permutation of 0..{n - 1} ({n} distinct "
                               f"ids), got {len(new)} ids" + ("" if len(new) != n else " that are not distinct"))
    src, dst = _coo(g, ct)
    out = _build({nt: n}, {ct: (new[src], new[dst])}, g._idtype_name, g._device)
    old = np.empty(n, np.int64)
    old[new] = np.arange(n, dtype=np.int64)
    out.ndata["orig_id"] = _ids(old, g)
    return out


def _grouped(keys: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr, order)``: edge ids grouped by ``keys`` (a node per edge), ids ascending in a group."""
    order = np.argsort(keys, kind="stable")
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=indptr[1:])
    return indptr, order


def _first_seen(ids: np.ndarray) -> np.ndarray:
    """The distinct values of ``ids`` in the order they first appear."""
    u, first = np.unique(ids, return_index=True)
    return u[np.argsort(first, kind="stable")]


def _halo_part(inner: np.ndarray, hops: int, src: np.ndarray, dst: np.ndarray, n: int,
               in_csr: tuple[np.ndarray, np.ndarray], out_csr: tuple[np.ndarray, np.ndarray]
               ) -> tuple[np.ndarray, np.ndarray]:
    """Node ids (inner first, then HALO nodes in the order they are reached) and edge ids of the
    partition of ``inner`` (see the module docstring)."""
    is_inner = np.zeros(n, bool)
    is_inner[inner] = True
    seen = is_inner.copy()
    nodes, edges = [inner], []
    frontier = inner
    for hop in range(max(hops, 1)):
        e = in_csr[1][_ragged_positions(in_csr[0], frontier)]
        s = src[e]
        if hops == 0:        # only the edges among the inner nodes
            edges.append(e[is_inner[s]])
            break
        # hop 0: every in-edge of the inner nodes; later hops: those not leaving an inner node
        # (an edge inner -> HALO is taken once, with the out-edges below)
        edges.append(e if hop == 0 else e[~is_inner[s]])
        frontier = _first_seen(s[~seen[s]])
        seen[frontier] = True
        nodes.append(frontier)
    if hops > 0:             # out-edges of the inner nodes into other parts, not expanded further
        e = out_csr[1][_ragged_positions(out_csr[0], inner)]
        e = e[~is_inner[dst[e]]]
        edges.append(e)
        d = dst[e]
        new = _first_seen(d[~seen[d]])
        seen[new] = True
        nodes.append(new)
    return np.concatenate(nodes), np.concatenate(edges)


def partition_graph_with_halo(g: HeteroGraph, node_part: Any, extra_cached_hops: int, reshuffle: bool = False
                              ) -> tuple[dict[int, HeteroGraph], Any, Any]:
    """Split the homogeneous graph ``g`` into one graph per part of ``node_part`` (one part id per
    node), each with its HALO nodes up to ``extra_cached_hops`` in-edge hops away (rules in the
    module docstring).

    Every partition has ``ndata[nw.NID]`` / ``edata[nw.EID]`` (ids in the partitioned graph),
    ``ndata['inner_node']`` (int32 1/0, the inner nodes first), ``ndata['part_id']`` and
    ``edata['inner_edge']`` (int8: 1 for the edges into an inner node; all 1 when
    ``extra_cached_hops`` is 0, where only edges among inner nodes are kept).

    With ``reshuffle``, ``g`` is renumbered first so that every part's nodes, and the edges into
    them, have contiguous ids (parts in increasing order); the ``NID`` / ``EID`` of the partitions
    are then the new ids, ``ndata['orig_id']`` / ``edata['orig_id']`` the ids in ``g``, and a
    partition's inner edges come first. Returns ``(partitions, orig_nids, orig_eids)`` where the
    last two map new ids to ``g``'s (None without ``reshuffle``); ``partitions`` is a dict from part
    id to graph, one entry per part id present.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
    >>> parts, nids, eids = nw.partition_graph_with_halo(g, [1, 0, 1, 0], 0, reshuffle=True)
    >>> nids.tolist(), eids.tolist(), parts[1].ndata["orig_id"].tolist()
    ([1, 3, 0, 2], [0, 2, 3, 1], [0, 2])
    """
    fn = "partition_graph_with_halo"
    _check_graph(g)
    nt, ct = _homo_types(g, fn)
    n = g._num_nodes[nt]
    part, _ = as_int_array(node_part, "node_part")
    if len(part) != n:
        raise nwerr.ValueError(f"{fn}: node_part must hold one part id per node ({n}), got {len(part)}")
    if n and part.min() < 0:
        raise nwerr.ValueError(f"{fn}: node_part must hold part ids >= 0, got {int(part.min())}")
    if isinstance(extra_cached_hops, (bool, np.bool_)) or not isinstance(extra_cached_hops, (int, np.integer)) \
            or extra_cached_hops < 0:
        raise nwerr.ValueError(f"{fn}: extra_cached_hops must be an int >= 0, got {extra_cached_hops!r}")
    src, dst = _coo(g, ct)
    orig_nids = orig_eids = None
    if reshuffle:
        new2old = np.argsort(part, kind="stable")           # nodes grouped by part
        old2new = np.empty(n, np.int64)
        old2new[new2old] = np.arange(n, dtype=np.int64)
        src, dst, part = old2new[src], old2new[dst], part[new2old]
        orig_eids = np.argsort(dst, kind="stable")          # edges grouped by their destination's part
        src, dst, orig_nids = src[orig_eids], dst[orig_eids], new2old
    in_csr, out_csr = _grouped(dst, n), _grouped(src, n)
    hops = int(extra_cached_hops)
    parts: dict[int, HeteroGraph] = {}
    for p in np.unique(part):
        inner = np.flatnonzero(part == p)
        nodes, eids = _halo_part(inner, hops, src, dst, n, in_csr, out_csr)
        pos = np.empty(n, np.int64)
        pos[nodes] = np.arange(len(nodes), dtype=np.int64)
        inner_edge = np.ones(len(eids), np.int8) if hops == 0 else (part[dst[eids]] == p).astype(np.int8)
        if reshuffle:   # the partition's own edges first, each group in edge-id order
            order = np.lexsort((eids, 1 - inner_edge))
            eids, inner_edge = eids[order], inner_edge[order]
        sg = _build({nt: len(nodes)}, {ct: (pos[src[eids]], pos[dst[eids]])}, g._idtype_name, g._device)
        sg.ndata[NID], sg.edata[EID] = _ids(nodes, g), _ids(eids, g)
        sg.ndata["inner_node"] = _int_tensor((np.arange(len(nodes)) < len(inner)).astype(np.int32), g)
        sg.ndata["part_id"] = _int_tensor(part[nodes], g)
        sg.edata["inner_edge"] = _int_tensor(inner_edge, g)
        if reshuffle:
            sg.ndata["orig_id"], sg.edata["orig_id"] = _ids(orig_nids[nodes], g), _ids(orig_eids[eids], g)
        parts[int(p)] = sg
    if reshuffle:
        return parts, _ids(orig_nids, g), _ids(orig_eids, g)
    return parts, None, None


def metis_partition(g: HeteroGraph, k: int, extra_cached_hops: int = 0, reshuffle: bool = False,
                    balance_ntypes: Any = None, balance_edges: bool = False, mode: str = "k-way"
                    ) -> dict[int, HeteroGraph]:
    """:func:`metis_partition_assignment` followed by :func:`partition_graph_with_halo`: a dict
    from part id to partition graph (with ``orig_id`` features when ``reshuffle``).

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3, 4, 5], [1, 2, 0, 4, 5, 3]))
    >>> parts = nw.metis_partition(g, 2, extra_cached_hops=1)
    >>> sorted(int(p.ndata["inner_node"].sum()) for p in parts.values())
    [3, 3]
    """
    part = metis_partition_assignment(g, k, balance_ntypes, balance_edges, mode)
    return partition_graph_with_halo(g, part, extra_cached_hops, reshuffle)[0]
