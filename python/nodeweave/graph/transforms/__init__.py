"""Graph transforms: functions that take a graph and return a new one (graphs are immutable).

Semantics follow DGL's functions of the same names; where DGL leaves an order unspecified, the order
chosen here is stated in the docstring. One module per idea:

- :mod:`~nodeweave.graph.transforms.structure`: ``reverse``, ``add_self_loop``,
  ``remove_self_loop``, ``to_simple``, ``to_bidirected``, ``add_reverse_edges``;
- :mod:`~nodeweave.graph.transforms.subgraph`: ``node_subgraph``, ``edge_subgraph``,
  ``in_subgraph``, ``out_subgraph``, ``compact_graphs`` (computed by the C++ subgraph primitives of
  ``graph/``);
- :mod:`~nodeweave.graph.transforms.khop`: ``khop_in_subgraph``, ``khop_out_subgraph``,
  ``khop_graph``, ``khop_adj``;
- :mod:`~nodeweave.graph.transforms.line_graph`: ``line_graph``;
- :mod:`~nodeweave.graph.transforms.homogeneous`: ``to_homogeneous``, ``to_heterogeneous``;
- :mod:`~nodeweave.graph.transforms.reorder`: ``reorder_graph``;
- :mod:`~nodeweave.graph.transforms.metapath`: ``metapath_reachable_graph``;
- :mod:`~nodeweave.graph.transforms.positional_encoding`: ``random_walk_pe``, ``lap_pe`` /
  ``laplacian_pe``, ``svd_pe`` (per-node encodings, returned as tensors);
- :mod:`~nodeweave.graph.transforms.clone`: ``clone``;
- :mod:`~nodeweave.graph.transforms.edit`: ``add_nodes``, ``add_edges``, ``remove_nodes``, ``remove_edges`` (copies);
- :mod:`~nodeweave.graph.transforms.type_subgraph`: ``node_type_subgraph``, ``edge_type_subgraph``;
- :mod:`~nodeweave.graph.transforms.feature_cast`: ``to_half``, ``to_float``, ``to_double``,
  ``to_bfloat16`` (every floating-point feature cast at once);
- :mod:`~nodeweave.graph.transforms.edge_norm`: ``norm_by_dst`` (per-edge ``1 / in-degree``, a tensor);
- :mod:`~nodeweave.graph.transforms._common`: the helpers they share (see there for why nothing here
  imports the graph class lazily).

Transforms that act on each graph of a batch separately (``reverse``, ``add_self_loop``,
``remove_self_loop``, ``to_simple``, ``to_bidirected``, ``add_reverse_edges``, ``khop_graph``,
``line_graph``) keep a batched graph's per-graph counts: the result equals
``batch([f(x) for x in unbatch(g)])``. Subgraph extraction, compaction, type conversion and
reordering return unbatched graphs.

Original ids are stored as ``ndata['_ID']`` / ``edata['_ID']`` (DGL's ``dgl.NID`` / ``dgl.EID``).

>>> import nodeweave as nw
>>> g = nw.graph(([0, 0, 1], [1, 1, 2]))
>>> sg = nw.to_simple(g)
>>> [t.tolist() for t in sg.edges()], sg.edata["count"].tolist()
([[0, 1], [1, 2]], [2, 1])
"""

from nodeweave.graph.transforms._common import EID, ETYPE, NID, NTYPE  # noqa: F401
# Helpers nodeweave.graph.batch builds graphs with (they predate the split into modules).
from nodeweave.graph.transforms._common import (_bne, _bnn, _build, _check_graph, _coo,  # noqa: F401
                                                _segment_ids)
from nodeweave.graph.transforms.structure import (reverse, add_self_loop, remove_self_loop,  # noqa: F401
                                                  to_simple, to_bidirected, add_reverse_edges)
from nodeweave.graph.transforms.subgraph import (node_subgraph, edge_subgraph, in_subgraph,  # noqa: F401
                                                 out_subgraph, compact_graphs)
from nodeweave.graph.transforms.khop import khop_in_subgraph, khop_out_subgraph, khop_graph, khop_adj  # noqa: F401
from nodeweave.graph.transforms.line_graph import line_graph  # noqa: F401
from nodeweave.graph.transforms.homogeneous import to_homogeneous, to_heterogeneous  # noqa: F401
from nodeweave.graph.transforms.reorder import reorder_graph  # noqa: F401
from nodeweave.graph.transforms.metapath import metapath_reachable_graph  # noqa: F401
from nodeweave.graph.transforms.positional_encoding import (random_walk_pe, lap_pe, laplacian_pe,  # noqa: F401
                                                            svd_pe)
from nodeweave.graph.transforms.clone import clone  # noqa: F401
from nodeweave.graph.transforms.edit import add_nodes, add_edges, remove_nodes, remove_edges  # noqa: F401
from nodeweave.graph.transforms.type_subgraph import node_type_subgraph, edge_type_subgraph  # noqa: F401
from nodeweave.graph.transforms.feature_cast import to_half, to_float, to_double, to_bfloat16  # noqa: F401
from nodeweave.graph.transforms.edge_norm import norm_by_dst  # noqa: F401
from nodeweave.graph.transforms.tag_sort import sort_csr_by_tag, sort_csc_by_tag  # noqa: F401
from nodeweave.graph.transforms.merge import merge  # noqa: F401

__all__ = ["NID", "EID", "reverse", "add_self_loop", "remove_self_loop", "to_simple", "to_bidirected",
           "add_reverse_edges", "node_subgraph", "edge_subgraph", "in_subgraph", "out_subgraph",
           "khop_in_subgraph", "khop_out_subgraph", "khop_graph", "line_graph", "compact_graphs",
           "to_homogeneous", "to_heterogeneous", "reorder_graph", "NTYPE", "ETYPE", "metapath_reachable_graph",
           "random_walk_pe", "lap_pe", "laplacian_pe", "svd_pe", "clone", "add_nodes", "add_edges",
           "remove_nodes", "remove_edges", "node_type_subgraph", "edge_type_subgraph", "khop_adj", "to_half",
           "to_float", "to_double", "to_bfloat16", "norm_by_dst", "sort_csr_by_tag", "sort_csc_by_tag", "merge"]
