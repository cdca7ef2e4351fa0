"""Random walks (DGL's ``dgl.sampling.random_walk`` and ``node2vec_random_walk``).

The walks run in C++ (``sampling/random_walk.cc``, ``sampling/node2vec_walk.cc``) over the graph's
out-edge CSRs, in parallel and without the GIL. Walk ``i`` draws only from a stream keyed by
``(random_seed, i)``, so a given seed returns the same traces at any thread count.

>>> import nodeweave as nw, nodeweave.sampling
>>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))           # a directed 4-cycle
>>> traces, types = nw.sampling.random_walk(g, [0, 2], length=3, random_seed=0)
>>> traces.tolist(), types.tolist()
([[0, 1, 2, 3], [2, 3, 0, 1]], [0, 0, 0, 0])
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.heterograph import as_int_array
from nodeweave.sampling._seed import resolve_seed
from nodeweave import errors as nwerr

__all__ = ["random_walk", "node2vec_random_walk", "pack_traces"]


def _feature_numpy(t: Any) -> np.ndarray:
    B = backend.of(t)
    return B.to_numpy(t) if B is not None else np.asarray(t)


def walk_relations(g: Any, cts: Sequence[tuple], prob: str | None) -> tuple[list, list[int]]:
    """The distinct relations of ``cts`` as the C++ walkers take them — ``(RelationGraph, src type
    id, dst type id, probabilities or None, name)`` — and each step's index among them.

    ``prob`` names an edge feature; a relation without it is walked uniformly (as DGL), but a name
    that no relation of the walk has raises ValueError (a typo would otherwise walk uniformly)."""
    if prob is not None and not isinstance(prob, str):
        raise nwerr.TypeError(f"prob must be the name of an edge feature (a str) or None, got "
                              f"{type(prob).__name__}")
    distinct = list(dict.fromkeys(cts))
    rels, found = [], False
    for ct in distinct:
        p = None
        if prob is not None and prob in g.edges[ct].data:
            p = _feature_numpy(g.edges[ct].data[prob])
            found = True
        rels.append((g._host(ct), g.get_ntype_id(ct[0]), g.get_ntype_id(ct[2]), p, repr(ct)))
    if prob is not None and not found:
        raise nwerr.ValueError(f"prob: no edge type of the walk has a feature {prob!r}")
    index = {ct: i for i, ct in enumerate(distinct)}
    return rels, [index[ct] for ct in cts]


def _restart_arg(restart_prob: Any) -> Any:
    if restart_prob is None:
        return None
    if isinstance(restart_prob, (bool, np.bool_)):
        raise nwerr.TypeError("restart_prob must be a float or a 1-D array of floats, got a bool")
    if isinstance(restart_prob, (int, float, np.integer, np.floating)):
        return float(restart_prob)
    arr = np.asarray(_feature_numpy(restart_prob))
    if arr.dtype.kind not in "fiu":
        raise nwerr.TypeError(f"restart_prob must be a float or a 1-D array of floats, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise nwerr.ValueError(f"restart_prob must be a float or a 1-D array, got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.float64)


def _check_length(value: Any, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise nwerr.TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise nwerr.ValueError(f"{name} must be >= 0, got {value}")
    return int(value)


def random_walk(g: Any, nodes: Any, *, metapath: Sequence[Any] | None = None, length: int | None = None,
                prob: str | None = None, restart_prob: Any = None, return_eids: bool = False,
                random_seed: int | None = None):
    """Random walk traces from each of ``nodes`` (DGL's ``dgl.sampling.random_walk``).

    Step ``k`` follows an out-edge of edge type ``metapath[k]``, picked uniformly or, with
    ``prob``, in proportion to that edge feature. A walk ends early at a node without such an
    out-edge (of positive weight), or, before each step, with probability ``restart_prob``; the
    rest of its trace is ``-1``.

    Parameters
    ----------
    g : HeteroGraph
    nodes : ids (tensor, array or list)
        Start nodes, of the source type of ``metapath[0]``. Repeat a node for several walks.
    metapath : list of edge types, optional
        One edge type per step. Omitted on a graph with one node and one edge type; then give
        ``length``.
    length : int, optional
        Number of steps of a homogeneous walk (exclusive with ``metapath``).
    prob : str, optional
        Name of an edge feature of non-negative, finite unnormalized probabilities (float32 or
        float64, one per edge). Edge types without it are walked uniformly.
    restart_prob : float or 1-D array, optional
        Probability of ending the walk before each step: one value, or one per step.
    return_eids : bool
        Also return the edge id taken at each step.
    random_seed : int, optional
        Fixes the walks bit for bit at any thread count; by default drawn from nodeweave's
        generator (see :mod:`nodeweave.sampling._seed`).

    Returns
    -------
    traces : id tensor, shape ``(len(nodes), len(metapath) + 1)``
        Node ids; column 0 is the start, ``-1`` after a walk ended.
    eids : id tensor, shape ``(len(nodes), len(metapath))``
        Only with ``return_eids``: the edge id of each step (of that step's edge type), or ``-1``.
    types : int64 tensor, shape ``(len(metapath) + 1,)``
        The node type id (index into ``g.ntypes``) of each column of ``traces``.

    >>> import nodeweave as nw, nodeweave.sampling
    >>> g = nw.heterograph({("user", "buys", "item"): ([0, 1], [1, 0]),
    ...                     ("item", "bought-by", "user"): ([1, 0], [0, 1])})
    >>> traces, eids, types = nw.sampling.random_walk(
    ...     g, [0, 1], metapath=["buys", "bought-by", "buys"], return_eids=True, random_seed=1)
    >>> traces.tolist(), eids.tolist(), [g.ntypes[t] for t in types.tolist()]
    ([[0, 1, 0, 1], [1, 0, 1, 0]], [[0, 0, 0], [1, 1, 1]], ['user', 'item', 'user', 'item'])
    """
    if metapath is None:
        if len(g.ntypes) != 1 or len(g.canonical_etypes) != 1:
            raise nwerr.ValueError("metapath must be given: the graph has node types "
                                   f"{g.ntypes} and edge types {g.canonical_etypes}")
        if length is None:
            raise nwerr.ValueError("give either metapath or length")
        cts = [g.canonical_etypes[0]] * _check_length(length, "length")
        rel_cts = cts or [g.canonical_etypes[0]]  # a length-0 walk still needs the start type
    else:
        if length is not None:
            raise nwerr.ValueError("metapath and length are exclusive: the walk length is len(metapath)")
        if isinstance(metapath, (str, tuple)):
            raise nwerr.TypeError("metapath must be a list of edge types, got a single "
                                  f"{type(metapath).__name__} {metapath!r}")
        cts = [g.to_canonical_etype(e) for e in metapath]
        rel_cts = cts
        if not cts:
            raise nwerr.ValueError("metapath must hold at least one edge type")
    rels, steps = walk_relations(g, rel_cts, prob)
    ids, _ = as_int_array(nodes, "nodes")
    traces, eids, types = _C.sampling.random_walk(rels, steps[:len(cts)], ids, _restart_arg(restart_prob),
                                                  bool(return_eids), resolve_seed(random_seed))
    types_out = backend.current().int_tensor(types, g._device, "int64")
    if return_eids:
        return g._ids_out(traces), g._ids_out(eids), types_out
    return g._ids_out(traces), types_out


def node2vec_random_walk(g: Any, nodes: Any, p: float, q: float, walk_length: int, prob: str | None = None,
                         return_eids: bool = False, random_seed: int | None = None):
    """node2vec's biased second-order random walks (Grover & Leskovec, KDD 2016; DGL's
    ``dgl.sampling.node2vec_random_walk``) on a graph with one node and one edge type.

    The first step from a start picks an out-edge uniformly (or by ``prob``). Each later step, at
    node ``v`` having arrived from ``t``, picks the out-edge ``v -> x`` with probability
    proportional to ``w(v, x) * a(t, x)``, where ``a = 1/p`` when ``x == t`` (going back),
    ``a = 1`` when the edge ``t -> x`` exists, and ``a = 1/q`` otherwise. Sampled exactly, by
    rejection against ``max(1/p, 1, 1/q)``, without precomputed per-edge tables.

    Parameters
    ----------
    g : HeteroGraph
        One node type, one edge type.
    nodes : ids
        Start nodes.
    p, q : float
        Return and in-out parameters, finite and > 0.
    walk_length : int
        Steps per walk (>= 0).
    prob : str, optional
        Edge feature of unnormalized first-order weights ``w``.
    return_eids : bool
    random_seed : int, optional

    Returns
    -------
    traces : id tensor ``(len(nodes), walk_length + 1)``, ``-1`` after a walk ended at a node
    without out-edges; and with ``return_eids`` the edge ids ``(len(nodes), walk_length)``.

    >>> import nodeweave as nw, nodeweave.sampling
    >>> g = nw.graph(([0, 1, 1, 2], [1, 0, 2, 1]))         # the path 0 - 1 - 2, both directions
    >>> t = nw.sampling.node2vec_random_walk(g, [0] * 4, p=1e-6, q=1.0, walk_length=4, random_seed=0)
    >>> t.tolist()                                         # p -> 0: always go straight back
    [[0, 1, 0, 1, 0], [0, 1, 0, 1, 0], [0, 1, 0, 1, 0], [0, 1, 0, 1, 0]]
    """
    if len(g.ntypes) != 1 or len(g.canonical_etypes) != 1:
        raise nwerr.ValueError("node2vec_random_walk needs a graph with one node type and one edge type, got "
                               f"node types {g.ntypes} and edge types {g.canonical_etypes}")
    for name, v in (("p", p), ("q", q)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise nwerr.TypeError(f"{name} must be a number, got {type(v).__name__}")
    walk_length = _check_length(walk_length, "walk_length")
    rels, _ = walk_relations(g, [g.canonical_etypes[0]], prob)
    ids, _ = as_int_array(nodes, "nodes")
    traces, eids = _C.sampling.node2vec_random_walk(rels[0], ids, float(p), float(q), walk_length,
                                                    bool(return_eids), resolve_seed(random_seed))
    if return_eids:
        return g._ids_out(traces), g._ids_out(eids)
    return g._ids_out(traces)


def pack_traces(traces: Any, types: Any) -> tuple[Any, Any, Any, Any]:
    """Pack the traces of :func:`random_walk` (DGL's ``pack_traces``): drops the ``-1`` padding of
    restarted walks and concatenates the rest.

    Returns ``(concat_vids, concat_types, lengths, offsets)``: every trace's node ids one after the
    other, the node type of each of them (``types[j]`` for the ``j``-th step of a trace), the
    length of each trace and where each starts in ``concat_vids``. All int64, on the device of
    ``traces``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> vids, vtypes, lengths, offsets = nw.sampling.pack_traces(
    ...     nc.tensor([[0, 1, -1], [2, 0, 1]]), nc.tensor([0, 1, 0]))
    >>> vids.tolist(), vtypes.tolist(), lengths.tolist(), offsets.tolist()
    ([0, 1, 2, 0, 1], [0, 1, 0, 1, 0], [2, 3], [0, 2])
    """
    tr, ty = _feature_numpy(traces), _feature_numpy(types)
    if tr.ndim != 2 or tr.dtype.kind not in "iu":
        raise nwerr.ValueError(f"pack_traces: traces must be a 2-D integer array (num_traces, length), got "
                               f"shape {tr.shape} and dtype {tr.dtype}")
    if ty.ndim != 1 or ty.dtype.kind not in "iu" or len(ty) != tr.shape[1]:
        raise nwerr.ValueError(f"pack_traces: types must be a 1-D integer array with one type per step "
                               f"({tr.shape[1]}), got shape {ty.shape} and dtype {ty.dtype}")
    keep = tr != -1
    lengths = keep.sum(1).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if len(lengths) else lengths
    vids = tr[keep].astype(np.int64)
    vtypes = np.broadcast_to(ty, tr.shape)[keep].astype(np.int64)
    B = backend.of(traces) or backend.current()
    dev = B.device_str(traces) if backend.of(traces) is not None else "cpu"
    return tuple(B.from_numpy(np.ascontiguousarray(a), dev) for a in (vids, vtypes, lengths, offsets))
