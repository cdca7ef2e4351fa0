"""Several edge types as one relation, for the operations that run over all edge types at once.

``update_all`` without ``etype=`` on a graph with several edge types reduces, at each node, the
messages of every edge type that arrives there (the max is the max over all of them, not of
per-type maxima padded with zeros), and ``edge_softmax`` of a dict of per-type logits normalises over
all of a node's edges whatever their type. Both are one kernel call on a relation that holds the
edges of those types: :func:`merged_relation` numbers the nodes of each source type after those of
the types before it (likewise for destination types) and lists the edges type by type, in the order
given, each type's edges in edge-id order. Operands are concatenated in the same orders.

>>> import nodeweave as nw
>>> g = nw.heterograph({("user", "plays", "game"): ([0, 1], [0, 1]),
...                     ("dev", "makes", "game"): ([0], [1])})
>>> m = merged_relation(g, g.canonical_etypes[::-1])
>>> m.src_types, m.src_offsets, m.edge_offsets
(['user', 'dev'], [0, 2, 3], [0, 2, 3])
>>> [a.tolist() for a in m.relation.coo()]
[[0, 1, 2], [0, 1, 1]]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from nodeweave import _C

__all__ = ["MergedRelation", "merged_relation"]


@dataclass(frozen=True)
class MergedRelation:
    """One relation over the edges of ``etypes`` (see the module docstring).

    ``src_offsets[i]`` is where the nodes of ``src_types[i]`` start (the last entry is the number
    of source nodes); likewise for destinations and for the edges of ``etypes[i]``.
    """

    relation: Any
    etypes: tuple
    src_types: list
    src_offsets: list
    dst_types: list
    dst_offsets: list
    edge_offsets: list


def _types_and_offsets(types: list[str], count) -> tuple[list[str], list[int]]:
    order = list(dict.fromkeys(types))
    offsets = [0]
    for t in order:
        offsets.append(offsets[-1] + count(t))
    return order, offsets


def merged_relation(g: Any, etypes: Sequence[tuple]) -> MergedRelation:
    """The edges of the canonical edge types ``etypes`` of ``g`` as one relation (cached on the
    graph until its structure changes)."""
    etypes = tuple(etypes)
    key = ("merged_relation", etypes)
    hit = g._cache.get(key)
    if hit is not None:
        return hit
    src_types, src_off = _types_and_offsets([ct[0] for ct in etypes], lambda t: g._side_count("src", t))
    dst_types, dst_off = _types_and_offsets([ct[2] for ct in etypes], lambda t: g._side_count("dst", t))
    srcs, dsts, edge_off = [], [], [0]
    for ct in etypes:
        s, d = g._coo(ct)
        srcs.append(s.astype(np.int64) + src_off[src_types.index(ct[0])])
        dsts.append(d.astype(np.int64) + dst_off[dst_types.index(ct[2])])
        edge_off.append(edge_off[-1] + len(s))
    rel = _C.RelationGraph.from_coo(src_off[-1], dst_off[-1],
                                    np.ascontiguousarray(np.concatenate(srcs) if srcs else np.zeros(0, np.int64)),
                                    np.ascontiguousarray(np.concatenate(dsts) if dsts else np.zeros(0, np.int64)),
                                    g._idtype_name)
    if g._device != "cpu":
        rel = rel.to(g._device)
    out = MergedRelation(rel, etypes, src_types, src_off, dst_types, dst_off, edge_off)
    g._cache[key] = out
    return out
