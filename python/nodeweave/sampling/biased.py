"""Neighbour sampling with a weight per neighbour tag (DGL's ``dgl.sampling.sample_neighbors_biased``)
on a graph sorted by :func:`nodeweave.sort_csc_by_tag` (in-edges) or :func:`nodeweave.sort_csr_by_tag`
(out-edges): a neighbour of tag ``t`` is drawn with probability proportional to ``bias[t]``.

The tag of every edge is read back from the sorted rows and their tag offsets, and the weights
go to the sampler of :func:`nodeweave.sampling.sample_neighbors`.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([1, 2, 3, 4], [0, 0, 0, 0]))
>>> g = nw.sort_csc_by_tag(g, nc.tensor([0, 0, 1, 1, 1]))      # nodes 1 and 2 have tag 0
>>> f = nw.sampling.sample_neighbors_biased(g, [0], 2, nc.tensor([0.0, 1.0]), random_seed=0)
>>> sorted(f.edges()[0].tolist())                               # only tag-1 neighbours
[3, 4]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.id_sets import node_sets
from nodeweave.sampling._seed import resolve_seed
from nodeweave.sampling.neighbor import build_frontier, check_graph, fanout_value
from nodeweave import errors as nwerr

__all__ = ["sample_neighbors_biased"]


def sample_neighbors_biased(g: HeteroGraph, nodes: Any, fanout: int, bias: Any, edge_dir: str = "in",
                            tag_offset_name: str = "_TAG_OFFSET", replace: bool = False, copy_ndata: bool = True,
                            copy_edata: bool = True, output_device: Any = None, *,
                            random_seed: int | None = None) -> HeteroGraph:
    """Samples up to ``fanout`` in-edges (``edge_dir='in'``) or out-edges (``'out'``) of each seed,
    an edge whose neighbour has tag ``t`` with weight ``bias[t]`` (non-negative; 0 never drawn).

    ``g`` has one edge type and was sorted by tag for that direction (:func:`nodeweave.
    sort_csc_by_tag` for ``'in'``, :func:`nodeweave.sort_csr_by_tag` for ``'out'``), which stored
    the tag offsets of every row as node feature ``tag_offset_name``. ``nodes`` are ids of the
    destination type (``'in'``) or source type (``'out'``), plain or as ``{ntype: ids}``. Returns
    the frontier as :func:`sample_neighbors` does.
    """
    fn = "sample_neighbors_biased"
    check_graph(g, fn)
    if len(g.canonical_etypes) != 1:
        raise nwerr.ValueError(f"{fn}: g must have one edge type, got {g.canonical_etypes}")
    if edge_dir not in ("in", "out"):
        raise nwerr.ValueError(f"edge_dir must be 'in' or 'out', got {edge_dir!r}")
    out_dir = edge_dir == "out"
    ct = g.canonical_etypes[0]
    row_type = ct[0] if out_dir else ct[2]
    frame = g._node_frames[g._node_key("src" if out_dir else "dst", row_type)]
    if tag_offset_name not in frame:
        sorter = "sort_csr_by_tag" if out_dir else "sort_csc_by_tag"
        raise nwerr.KeyError(f"{fn}: the graph has no node feature {tag_offset_name!r}; sort it with nw.{sorter} "
                             f"for edge_dir={edge_dir!r} first")
    offsets = backend.of(frame[tag_offset_name]).to_numpy(frame[tag_offset_name]).astype(np.int64)
    b = backend.of(bias)
    weights_per_tag = np.asarray(b.to_numpy(bias) if b is not None else bias, np.float64).reshape(-1)
    if offsets.ndim != 2 or len(weights_per_tag) != offsets.shape[1] - 1:
        raise nwerr.ValueError(f"{fn}: bias must hold one weight per tag ({offsets.shape[-1] - 1}), got "
                               f"{len(weights_per_tag)}")
    rel = g._rels[ct] if g._device == "cpu" else g._host(ct)
    indptr, _, eids = (np.asarray(a, np.int64) for a in (rel.csr() if out_dir else rel.csc()))
    counts = np.diff(offsets, axis=1)
    if not np.array_equal(counts.sum(1), np.diff(indptr)):
        raise nwerr.ValueError(f"{fn}: {tag_offset_name!r} does not match the graph's rows; the graph changed "
                               "after it was sorted by tag")
    # the rows are sorted by tag: entry k of row r has the tag whose offset range holds k
    tag_of_entry = np.repeat(np.tile(np.arange(counts.shape[1]), counts.shape[0]), counts.reshape(-1))
    weights = np.empty(rel.num_edges, np.float64)
    weights[eids] = weights_per_tag[tag_of_entry]
    # the seeds are nodes of the rows' type, so a plain id list is unambiguous even on a bipartite graph
    seeds = node_sets(g, nodes if isinstance(nodes, dict) else {row_type: nodes}, "nodes").get(
        row_type, np.zeros(0, np.int64))
    pos, nbr, eid = _C.sampling.sample_neighbors(rel, seeds, fanout_value(fanout), out_dir, bool(replace), weights,
                                                 None, _C.sampling.derive_key(resolve_seed(random_seed), 0))
    return build_frontier(g, {ct: (seeds[pos], nbr, eid)}, out_dir, copy_ndata, copy_edata, output_device)
