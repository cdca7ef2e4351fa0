"""Adjacency rows sorted by a tag (DGL's ``sort_csr_by_tag`` / ``sort_csc_by_tag``): the same graph,
edges and edge ids, whose out-edge CSR (in-edge CSC) lists each node's neighbours grouped by tag in
increasing order, with the group boundaries stored per node. :func:`nodeweave.sampling.
sample_neighbors_biased` samples from such a graph with a weight per tag.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([0, 0, 0, 1], [1, 2, 3, 2]))
>>> sg = nw.sort_csr_by_tag(g, nc.tensor([0, 1, 0, 1]))        # tag of each node
>>> sg.adj_external(scipy_fmt="csr").indices.tolist()          # node 0: tag-0 node 2 before 1, 3
[2, 1, 3, 2]
>>> sg.ndata["_TAG_OFFSET"].tolist()[0], [t.tolist() for t in sg.edges()] == [t.tolist() for t in g.edges()]
([0, 1, 3], True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import backend
from nodeweave.graph.heterograph import HeteroGraph, RelationGraph
from nodeweave.graph.transforms._common import _check_graph
from nodeweave import errors as nwerr

__all__ = ["sort_csr_by_tag", "sort_csc_by_tag"]


def _tags(tag: Any, n: int, what: str, fn: str) -> np.ndarray:
    B = backend.of(tag)
    arr = np.asarray(B.to_numpy(tag) if B is not None else tag).reshape(-1)
    if arr.dtype.kind not in "iu":
        raise nwerr.TypeError(f"{fn}: tag must hold integers, got dtype {arr.dtype}")
    if len(arr) != n:
        raise nwerr.ValueError(f"{fn}: tag must hold one value per {what} ({n}), got {len(arr)}")
    if n and arr.min() < 0:
        raise nwerr.ValueError(f"{fn}: tag values must be >= 0, got {int(arr.min())}")
    return arr.astype(np.int64)


def _sort(g: HeteroGraph, tag: Any, tag_offset_name: str, tag_type: str, by_dst: bool, fn: str) -> HeteroGraph:
    _check_graph(g)
    if len(g.canonical_etypes) != 1:
        raise nwerr.ValueError(f"{fn}: g must have one edge type, got {g.canonical_etypes}")
    if tag_type not in ("node", "edge"):
        raise nwerr.ValueError(f"{fn}: tag_type must be 'node' or 'edge', got {tag_type!r}")
    ct = g.canonical_etypes[0]
    rel = g._rels[ct] if g._device == "cpu" else g._host(ct)
    indptr, indices, eids = (np.asarray(a, np.int64) for a in (rel.csc() if by_dst else rel.csr()))
    row_type, nbr_type = (ct[2], ct[0]) if by_dst else (ct[0], ct[2])
    if tag_type == "node":
        tags = _tags(tag, g.num_nodes(nbr_type), f"node of type {nbr_type!r}", fn)
        per_entry = tags[indices]
    else:
        tags = _tags(tag, rel.num_edges, "edge", fn)
        per_entry = tags[eids]
    num_tags = int(tags.max(initial=-1)) + 1
    rows = np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))
    order = np.lexsort((per_entry, rows))  # within a row: by tag, ties in the row's old order
    indices, eids, per_entry = indices[order], eids[order], per_entry[order]
    # offsets[r, t] = entries of row r with a tag below t (0 .. degree), one column per tag plus the end
    counts = np.zeros((len(indptr) - 1, num_tags), np.int64)
    np.add.at(counts, (rows, per_entry), 1)
    offsets = np.zeros((len(indptr) - 1, num_tags + 1), np.int64)
    np.cumsum(counts, axis=1, out=offsets[:, 1:])
    num_src, num_dst = g.num_nodes(ct[0]), g.num_nodes(ct[2])
    if by_dst:  # a CSC is the CSR of the reverse relation
        new = RelationGraph.from_csr(num_dst, num_src, indptr, indices, eids, g._idtype_name).reverse()
    else:
        new = RelationGraph.from_csr(num_src, num_dst, indptr, indices, eids, g._idtype_name)
    out = g._derive({ct: new if g._device == "cpu" else new.to(g._device)})
    out._node_frames[out._node_key("dst" if by_dst else "src", row_type)][tag_offset_name] = \
        backend.current().int_tensor(offsets, g._device, "int64")
    return out


def sort_csr_by_tag(g: HeteroGraph, tag: Any, tag_offset_name: str = "_TAG_OFFSET",
                    tag_type: str = "node") -> HeteroGraph:
    """``g`` (one edge type; features shared) with every source node's out-edges in its CSR sorted
    by tag, stably: the tag of the destination node (``tag_type='node'``, one tag per destination
    node) or of the edge (``'edge'``, one tag per edge). Edges keep their ids.
    ``srcdata[tag_offset_name]`` gets, per source node, ``T + 1`` offsets within its row (``T`` =
    largest tag + 1): the out-edges with tag ``t`` are row entries ``offset[t] .. offset[t+1]-1``.
    """
    return _sort(g, tag, tag_offset_name, tag_type, False, "sort_csr_by_tag")


def sort_csc_by_tag(g: HeteroGraph, tag: Any, tag_offset_name: str = "_TAG_OFFSET",
                    tag_type: str = "node") -> HeteroGraph:
    """Like :func:`sort_csr_by_tag` for in-edges: every destination node's in-edges in its CSC
    sorted by the tag of the source node (or of the edge), the offsets in
    ``dstdata[tag_offset_name]``."""
    return _sort(g, tag, tag_offset_name, tag_type, True, "sort_csc_by_tag")
