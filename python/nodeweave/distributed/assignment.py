"""Which part owns each node: METIS (k-way, edge cut or communication volume, vertex weights that
balance chosen node sets and edges) or a balanced random assignment, on the ids of a graph's
homogeneous view (node types one after another, as :func:`nodeweave.to_homogeneous` numbers them).

Balancing follows DGL's ``partition_graph``: nodes fall into *classes*, and every class's node
count is balanced over the parts. A homogeneous graph has one class, or one per distinct value of
``balance_ntypes`` (say, a training mask); a heterograph has one class per node type, split further
per value where ``balance_ntypes[ntype]`` is given. ``balance_edges`` adds each class's in-degree
sum as one more balance constraint per class.

>>> import numpy as np, nodeweave as nw
>>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
>>> part = random_assignment(balance_classes(g, [1, 1, 0, 0], "f"), 4, 2, seed=0)
>>> sorted(part[:2].tolist()), sorted(part[2:].tolist())    # each class split evenly
([0, 1], [0, 1])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C, backend
from nodeweave import errors as nwerr
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.partition import balance_weight_columns

__all__ = ["typed_relations", "balance_classes", "metis_assignment", "random_assignment"]


def typed_relations(g: HeteroGraph) -> list[tuple[Any, int, int]]:
    """``(CPU relation graph, source type index, destination type index)`` per canonical edge type,
    in ``g.canonical_etypes`` order: what ``nodeweave._C.distributed`` takes."""
    index = {nt: i for i, nt in enumerate(g.ntypes)}
    return [(g._host(ct), index[ct[0]], index[ct[2]]) for ct in g.canonical_etypes]


def _values(x: Any, n: int, what: str) -> np.ndarray:
    b = backend.of(x)
    arr = np.asarray(b.to_numpy(x) if b is not None else x).reshape(-1)
    if arr.shape != (n,):
        raise nwerr.ValueError(f"{what} must hold one value per node ({n}), got {arr.size} values")
    return arr


def balance_classes(g: HeteroGraph, balance_ntypes: Any, fn: str) -> np.ndarray | None:
    """The balance class of every node in homogeneous ids (module docstring), or None for a
    homogeneous graph without ``balance_ntypes``. ``balance_ntypes``: for a homogeneous graph one
    value per node (or ``{ntype: values}``); for a heterograph ``{ntype: values}`` for some types."""
    ntypes = g.ntypes
    if len(ntypes) == 1:
        if balance_ntypes is None:
            return None
        if isinstance(balance_ntypes, dict):
            if set(balance_ntypes) != {ntypes[0]}:
                raise nwerr.ValueError(f"{fn}: balance_ntypes must have the key {ntypes[0]!r}, got {sorted(balance_ntypes)}")
            balance_ntypes = balance_ntypes[ntypes[0]]
        return np.unique(_values(balance_ntypes, g.num_nodes(), f"{fn}: balance_ntypes"), return_inverse=True)[1]
    if balance_ntypes is not None and not isinstance(balance_ntypes, dict):
        raise nwerr.TypeError(f"{fn}: balance_ntypes must be a dict ntype -> values for a graph with several node "
                              f"types ({ntypes}), got {type(balance_ntypes).__name__}")
    given = balance_ntypes or {}
    unknown = sorted(set(given) - set(ntypes))
    if unknown:
        raise nwerr.ValueError(f"{fn}: balance_ntypes has unknown node types {unknown} (the graph has {ntypes})")
    out, offset = [], 0
    for nt in ntypes:
        n = g.num_nodes(nt)
        if nt in given:
            cls = np.unique(_values(given[nt], n, f"{fn}: balance_ntypes[{nt!r}]"), return_inverse=True)[1]
            out.append(cls.reshape(-1) + offset)
            offset += int(cls.max()) + 1 if n else 0
        else:
            out.append(np.full(n, offset, np.int64))
            offset += 1
    return np.concatenate(out).astype(np.int64) if out else np.zeros(0, np.int64)


def _in_degrees(g: HeteroGraph) -> np.ndarray:
    """Every node's in-degree over all edge types, in homogeneous ids."""
    offsets = np.concatenate([[0], np.cumsum([g.num_nodes(nt) for nt in g.ntypes])])
    deg = np.zeros(int(offsets[-1]), np.int64)
    for rel, _, dt in typed_relations(g):
        deg[offsets[dt]:offsets[dt + 1]] += np.asarray(rel.in_degrees(), np.int64)
    return deg


def metis_assignment(g: HeteroGraph, num_parts: int, objtype: str, classes: np.ndarray | None,
                     balance_edges: bool, seed: int) -> tuple[np.ndarray, int]:
    """``(part of every node, METIS' objective value)``: k-way METIS on the symmetrized union of all
    edge types, with :func:`~nodeweave.partition.balance_weight_columns` of ``classes`` (and the
    in-degrees when ``balance_edges``) as vertex weights. Other METIS options keep METIS' defaults,
    so ``gpmetis -ptype=kway -objtype=... -seed=...`` on the same adjacency gives the same parts."""
    weights = balance_weight_columns(classes, _in_degrees(g) if balance_edges else None)
    part, objval = _C.distributed.metis_assignment(typed_relations(g), [g.num_nodes(nt) for nt in g.ntypes],
                                                   int(num_parts), "k-way", objtype, weights, int(seed))
    return np.asarray(part, np.int64), int(objval)


def random_assignment(classes: np.ndarray | None, num_nodes: int, num_parts: int, seed: int) -> np.ndarray:
    """A random assignment that balances every class exactly: nodes sorted by class in a random
    order (NumPy's generator seeded by ``seed``) and dealt to the parts in turn, so that each
    class, and the whole, differs by at most one node between parts."""
    rng = np.random.default_rng(seed)
    cls = np.zeros(num_nodes, np.int64) if classes is None else classes
    order = np.lexsort((rng.random(num_nodes), cls))
    part = np.empty(num_nodes, np.int64)
    part[order] = np.arange(num_nodes, dtype=np.int64) % num_parts
    return part
