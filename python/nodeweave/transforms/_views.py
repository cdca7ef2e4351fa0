"""How the transforms defined on one adjacency matrix reach heterographs, in two ways:

- :func:`relation_graph`: one relation whose source and destination types are the same, as a
  homogeneous graph (structure transforms such as :class:`~nodeweave.transforms.KHopGraph` or the
  diffusions rewrite each such relation and leave the others alone, as DGL's ``AddSelfLoop`` and
  ``GCNNorm`` do);
- :func:`node_outputs`: node-level results (positional encodings, SIGN's diffused features) computed
  on the homogeneous view of the whole graph (every node and edge type as one graph, nodes numbered
  type by type, :func:`nodeweave.to_homogeneous`), then split back into one tensor per node type.

>>> import nodeweave as nw
>>> hg = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 2]),
...                      ("user", "plays", "game"): ([0], [0])})
>>> same_type_relations(hg)
[('user', 'follows', 'user')]
>>> out = node_outputs(hg, lambda h: {"deg": h.in_degrees()}, "Demo")
>>> out["game"]["deg"].tolist(), out["user"]["deg"].tolist()
([1], [0, 1, 1])
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from nodeweave.graph.transforms._common import _coo
from nodeweave import errors as nwerr

__all__ = ["same_type_relations", "relation_graph", "node_outputs", "is_homogeneous"]


def is_homogeneous(g: Any) -> bool:
    """One node type and one edge type."""
    return len(g.ntypes) == 1 and len(g.canonical_etypes) == 1


def same_type_relations(g: Any) -> list[tuple]:
    """The canonical edge types whose source and destination node types are the same."""
    return [ct for ct in g.canonical_etypes if ct[0] == ct[2]]


def relation_graph(g: Any, ct: tuple, edata: Sequence[str] = ()) -> Any:
    """Relation ``ct`` (source type = destination type) as a homogeneous graph over every node of
    that type, with the relation's edge features ``edata`` (no node features)."""
    import nodeweave as nw

    src, dst = _coo(g, ct)
    out = nw.graph((src, dst), num_nodes=g.num_nodes(ct[0]), idtype=g._idtype_name, device=g.device)
    for key in edata:
        out.edata[key] = g.edges[ct].data[key]
    return out


def node_outputs(g: Any, compute: Callable[[Any], dict[str, Any]], cls: str,
                 ndata: Sequence[str] = (), edata: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """``compute`` run on the homogeneous view of ``g`` (carrying the node features ``ndata`` and
    edge features ``edata``, which every type must then have), its per-node outputs
    ``{name: tensor of N rows}`` split into ``{ntype: {name: rows of that type}}``.

    On a graph with one node and one edge type ``compute`` gets ``g`` itself."""
    import nodeweave as nw

    if is_homogeneous(g):
        return {g.ntypes[0]: compute(g)}
    try:
        hom = nw.to_homogeneous(g, ndata=list(ndata), edata=list(edata), store_type=False)
    except ValueError as e:
        raise nwerr.ValueError(f"{cls} on a heterograph works on all its node and edge types as one graph, which "
                               f"needs the features {list(ndata) + list(edata)} on every type: {e}") from None
    outs = compute(hom)
    bounds = np.concatenate([[0], np.cumsum([g.num_nodes(nt) for nt in g.ntypes])]).astype(np.int64)
    return {nt: {k: v[int(bounds[i]):int(bounds[i + 1])] for k, v in outs.items()}
            for i, nt in enumerate(g.ntypes)}
