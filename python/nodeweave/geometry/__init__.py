"""Geometry operations (DGL's ``dgl.geometry``): farthest point sampling of point clouds and the
neighbour matching of graph coarsening (graclus pooling). Both run as C++ kernels of ``graph/``;
docs/graph_algorithms.md describes them with the other graph algorithms.

- :mod:`~nodeweave.geometry.farthest_point`: :func:`farthest_point_sampler`;
- :mod:`~nodeweave.geometry.edge_coarsening`: :func:`neighbor_matching`.

The k-nearest-neighbour graphs DGL's geometry tests use are :func:`nodeweave.knn_graph`,
:func:`nodeweave.segmented_knn_graph` and the modules ``nodeweave.nn.KNNGraph`` /
``SegmentedKNNGraph``.

>>> import nodeweave as nw
>>> from nodeweave.geometry import farthest_point_sampler, neighbor_matching
>>> neighbor_matching(nw.graph(([0, 1], [1, 0]))).tolist()
[0, 0]
"""

from nodeweave.geometry.farthest_point import farthest_point_sampler
from nodeweave.geometry.edge_coarsening import neighbor_matching

__all__ = ["farthest_point_sampler", "neighbor_matching"]
