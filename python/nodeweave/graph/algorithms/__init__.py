"""Graph algorithms DGL offers as functions: traversal frontiers (``bfs_nodes_generator`` ...),
shortest distances (``shortest_dist``), message propagation along traversal orders
(``prop_nodes_bfs`` ..., and the methods ``g.prop_nodes`` / ``g.prop_edges``), the homophily
measures and label informativeness, and the largest eigenvalue of the normalized Laplacian.
docs/graph_algorithms.md describes them together.

One module per idea:

- :mod:`~nodeweave.graph.algorithms.traversal`: BFS, topological and DFS frontiers (C++,
  ``graph/traversal.h``);
- :mod:`~nodeweave.graph.algorithms.shortest_dist`: unweighted shortest distances and paths (C++,
  ``graph/shortest_dist.h``);
- :mod:`~nodeweave.graph.algorithms.propagate`: ``pull`` / ``send_and_recv`` frontier by frontier;
- :mod:`~nodeweave.graph.algorithms.homophily`: node, edge, LINKX and adjusted homophily;
- :mod:`~nodeweave.graph.algorithms.label_informativeness`: edge and node label informativeness;
- :mod:`~nodeweave.graph.algorithms.spectral`: ``laplacian_lambda_max``.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1, 2], [1, 2, 3]))
>>> nw.shortest_dist(g, root=0).tolist()
[0, 1, 2, 3]
"""

from nodeweave.graph.algorithms.traversal import (bfs_nodes_generator, bfs_edges_generator,  # noqa: F401
                                                  topological_nodes_generator, dfs_edges_generator,
                                                  dfs_labeled_edges_generator)
from nodeweave.graph.algorithms.shortest_dist import shortest_dist  # noqa: F401
from nodeweave.graph.algorithms import propagate
from nodeweave.graph.algorithms.propagate import (prop_nodes, prop_edges, prop_nodes_bfs, prop_nodes_topo,  # noqa: F401
                                                  prop_edges_dfs)
from nodeweave.graph.algorithms.homophily import (node_homophily, edge_homophily, linkx_homophily,  # noqa: F401
                                                  adjusted_homophily)
from nodeweave.graph.algorithms.label_informativeness import (edge_label_informativeness,  # noqa: F401
                                                              node_label_informativeness)
from nodeweave.graph.algorithms.spectral import laplacian_lambda_max  # noqa: F401
from nodeweave.graph.heterograph import HeteroGraph

# g.prop_nodes / g.prop_edges (attached here: propagation uses the traversals, which nodeweave.graph
# itself does not load; see nodeweave.graph.transform_methods for why methods are attached).
propagate.install(HeteroGraph)

__all__ = ["bfs_nodes_generator", "bfs_edges_generator", "topological_nodes_generator", "dfs_edges_generator",
           "dfs_labeled_edges_generator", "shortest_dist", "prop_nodes", "prop_edges", "prop_nodes_bfs",
           "prop_nodes_topo", "prop_edges_dfs", "node_homophily", "edge_homophily", "linkx_homophily",
           "adjusted_homophily", "edge_label_informativeness", "node_label_informativeness",
           "laplacian_lambda_max"]
