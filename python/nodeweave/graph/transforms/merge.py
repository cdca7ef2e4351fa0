"""Several graphs of the same types overlaid into one (DGL's ``dgl.merge``): node ``i`` of every
graph is node ``i`` of the result, edges are all the graphs' edges one graph after the other.

>>> import nodeweave as nw, nodeweave.core as nc
>>> a, b = nw.graph(([0], [1])), nw.graph(([1, 2], [2, 0]))
>>> a.ndata["h"], b.ndata["h"] = nc.tensor([1.0, 1.0]), nc.tensor([2.0, 2.0, 2.0])
>>> m = nw.merge([a, b])
>>> [t.tolist() for t in m.edges()], m.ndata["h"].tolist()
([[0, 1, 2], [1, 2, 0]], [2.0, 2.0, 2.0])
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from nodeweave import backend
from nodeweave.graph.frame import Frame
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms._common import _build, _check_graph, _coo, _full_rows
from nodeweave import errors as nwerr

__all__ = ["merge"]


def merge(graphs: Sequence[HeteroGraph]) -> HeteroGraph:
    """The union of ``graphs`` (all with the first graph's node and edge types), as DGL merges:

    - a node type has as many nodes as in the graph that has most, and node ``i`` of each graph is
      node ``i`` of the result; its features are written graph after graph, so where graphs share
      a node and a feature the later graph's value stays (rows no graph gives a feature are 0);
    - the edges of each edge type are the graphs' edges in graph order (repeated edges stay), with
      the first graph's edge features concatenated over the graphs (each graph must have them).

    The result has the first graph's idtype and device.
    """
    graphs = list(graphs)
    if not graphs:
        raise nwerr.ValueError("merge: graphs must not be empty")
    for i, g in enumerate(graphs):
        _check_graph(g, f"graphs[{i}]")
    ref = graphs[0]
    for i, g in enumerate(graphs[1:], 1):
        if g.ntypes != ref.ntypes or g.canonical_etypes != ref.canonical_etypes:
            raise nwerr.ValueError(f"merge: graphs[{i}] has node types {g.ntypes} and edge types "
                                   f"{g.canonical_etypes}, graphs[0] {ref.ntypes} and {ref.canonical_etypes}")
    num_nodes = {nt: max(g.num_nodes(nt) for g in graphs) for nt in ref.ntypes}
    coo, edge_frames = {}, {}
    for ct in ref.canonical_etypes:
        parts = [_coo(g, ct) for g in graphs]
        coo[ct] = (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
        frame = Frame(len(coo[ct][0]), name="edata", row_name="edge", device=ref._device)
        for name in ref._edge_frames[ct]:
            missing = [i for i, g in enumerate(graphs) if name not in g._edge_frames[ct]]
            if missing:
                raise nwerr.KeyError(f"merge: graphs[{missing[0]}] has no edge feature {name!r} of type {ct!r} "
                                     "(every graph needs the first graph's edge features)")
            cols = [g._edge_frames[ct][name] for g in graphs]
            frame[name] = backend.of(cols[0]).cat([backend.of(c).to_device(c, ref._device) for c in cols], 0)
        edge_frames[ct] = frame
    node_frames = {}
    for nt in ref.ntypes:
        frame = Frame(num_nodes[nt], name="ndata", row_name="node", device=ref._device)
        for g in graphs:
            rows = np.arange(g.num_nodes(nt))
            for name, col in g._node_frames[nt].items():
                B = backend.of(col)
                col = B.to_device(col, ref._device)
                base = frame[name] if name in frame else _full_rows(col, num_nodes[nt], 0, ref._device)
                frame[name] = B.index_copy(base, B.int_tensor(rows, ref._device, "int64"), col)
        node_frames[nt] = frame
    return _build(num_nodes, coo, ref._idtype_name, ref._device, node_frames, edge_frames)
