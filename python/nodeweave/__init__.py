"""nodeweave: graph neural networks on a native tensor + autograd engine, or on PyTorch.

The engine lives in :mod:`nodeweave.core` (``import nodeweave.core as nc``).
"""

__version__ = "0.1.0"

import os as _os

# GNU OpenMP threads spin for a while after each parallel region before sleeping (GOMP_SPINCOUNT,
# default 300,000). A tenth of that keeps the native engine as fast (measured, docs/backends.md).
# PyTorch wheels up to 2.2 bundle their own renamed libgomp, so with the pytorch backend two OpenMP
# runtimes share the cores and each one's spinning threads steal the CPU the other needs: there a
# hundredth (3000) takes the 2-thread mini-batch epoch on DBLP from 0.37 to 0.25 s, at a few percent
# on the native engine's smallest kernels. Set before the extension loads libgomp (torch's too, when
# it is imported after nodeweave); a user's OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.


def _torch_bundles_libgomp() -> bool:
    """Whether the installed torch ships its own libgomp copy (found without importing torch)."""
    import glob
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return False
    locations = (spec.submodule_search_locations or []) if spec else []
    return any(glob.glob(_os.path.join(loc, "lib", "libgomp-*.so*")) for loc in locations)


if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["GOMP_SPINCOUNT"] = "3000" if _torch_bundles_libgomp() else "30000"

# One base class for every error the library raises (nodeweave.errors; DGLError for ported code), one
# class for every warning it emits
from nodeweave.errors import NodeweaveError, DGLError, NodeweaveWarning  # noqa: F401

from nodeweave import core  # noqa: F401

# Graph API (graph/ layer, Python side). `nw.graph` is the nodeweave.graph package, which is callable:
# nw.graph((src, dst)) builds a graph (see nodeweave/graph/__init__.py for why).
from nodeweave.backend import set_backend  # noqa: E402,F401
from nodeweave.graph import (ALL, Graph, HeteroGraph, heterograph, from_scipy,  # noqa: E402,F401
                             from_networkx, to_networkx, read_edge_list, rand_graph, rmat_graph,
                             sbm_graph)

# Message passing builtins and functional kernels
from nodeweave import function, ops  # noqa: E402,F401

# Graph transforms, batching and graph files (graph/transforms.py, batch.py, io.py)
from nodeweave.graph.transforms import (reverse, add_self_loop, remove_self_loop, to_simple,  # noqa: E402,F401
                                        to_bidirected, add_reverse_edges, node_subgraph, edge_subgraph,
                                        in_subgraph, out_subgraph, khop_in_subgraph, khop_out_subgraph,
                                        khop_graph, line_graph, compact_graphs, to_homogeneous,
                                        to_heterogeneous, reorder_graph, NID, EID, NTYPE, ETYPE, add_nodes,
                                        add_edges, remove_nodes, remove_edges, node_type_subgraph,
                                        edge_type_subgraph)
from nodeweave.graph.block import Block, to_block, create_block  # noqa: E402,F401
from nodeweave.graph.batch import batch, unbatch, batch_num_nodes, batch_num_edges  # noqa: E402,F401
from nodeweave.graph.io import save_graphs, load_graphs  # noqa: E402,F401

# Graph readouts at top level, as dgl.sum_nodes etc.; each follows the backend of its tensor argument
from nodeweave.nn import (readout_nodes, readout_edges, sum_nodes, sum_edges,  # noqa: E402,F401
                                  mean_nodes, mean_edges, max_nodes, max_edges, softmax_nodes,
                                  softmax_edges, broadcast_nodes, broadcast_edges, topk_nodes, topk_edges)
# Graphs from point coordinates at top level, as dgl.knn_graph etc.; each follows its tensor's backend
from nodeweave.nn import knn_graph, segmented_knn_graph, radius_graph  # noqa: E402,F401
# Dataset loaders (nodeweave.data)
from nodeweave import data  # noqa: E402,F401
# Sampling and mini-batch training (nodeweave.sampling, nodeweave.dataloading)
from nodeweave import sampling, dataloading  # noqa: E402,F401
# One seed for nodeweave's generator, as dgl.seed (nodeweave/random.py)
from nodeweave import random  # noqa: E402,F401
from nodeweave.random import seed  # noqa: E402,F401
# Transform objects and the functional transforms added with them (nodeweave.transforms), at top level
# as dgl.AddSelfLoop, dgl.lap_pe etc.
from nodeweave import transforms  # noqa: E402,F401
from nodeweave.transforms import (BaseTransform, Compose, AddSelfLoop, RemoveSelfLoop, AddReverse,  # noqa: E402,F401
                                  ToSimple, LineGraph, KHopGraph, AddMetaPaths, ToLevi, GCNNorm,
                                  RowFeatNormalizer, PPR, HeatKernel, GDC, SIGNDiffusion, DropNode, DropEdge,
                                  AddEdge, FeatMask, NodeShuffle, LapPE, LaplacianPE, RandomWalkPE, SVDPE,
                                  random_walk_pe, lap_pe, laplacian_pe, svd_pe, metapath_reachable_graph)
# Feature initializers (nodeweave.init, as dgl.init) and DGL's top-level edge-wise message ops
# (dgl.copy_u, dgl.u_add_v ...: per-edge results, distinct from the builtins in nodeweave.function)
from nodeweave import init  # noqa: E402,F401
from nodeweave.ops.sddmm import (copy_u, copy_v, u_add_v, u_sub_v, u_mul_v, u_div_v,  # noqa: E402,F401
                                 u_dot_v)
# Graph algorithms (nodeweave.graph.algorithms, docs/graph_algorithms.md), random bipartite graphs,
# bipartite converters, khop_adj and feature casting, at top level as in DGL
from nodeweave.graph.algorithms import (bfs_nodes_generator, bfs_edges_generator,  # noqa: E402,F401
                                        topological_nodes_generator, dfs_edges_generator,
                                        dfs_labeled_edges_generator, shortest_dist, prop_nodes, prop_edges,
                                        prop_nodes_bfs, prop_nodes_topo, prop_edges_dfs, node_homophily,
                                        edge_homophily, linkx_homophily, adjusted_homophily,
                                        edge_label_informativeness, node_label_informativeness,
                                        laplacian_lambda_max)
from nodeweave.graph import rand_bipartite, bipartite_from_scipy, bipartite_from_networkx  # noqa: E402,F401
from nodeweave.graph.transforms import (khop_adj, to_half, to_float, to_double, to_bfloat16,  # noqa: E402,F401
                                        norm_by_dst)
# Farthest point sampling and neighbour matching (nodeweave.geometry, as dgl.geometry)
from nodeweave import geometry  # noqa: E402,F401
# graph partitioning (DGL's dgl.partition and its top-level names); dgl.utils helpers; dgl.convert
from nodeweave import partition, utils, convert  # noqa: E402,F401
from nodeweave.partition import metis_partition, metis_partition_assignment, partition_graph_with_halo  # noqa: E402,F401
from nodeweave.graph.transforms import sort_csr_by_tag, sort_csc_by_tag, merge  # noqa: E402,F401
from nodeweave.graph.block import block_to_graph  # noqa: E402,F401
from nodeweave.graph.batch import slice_batch  # noqa: E402,F401
# partitioning for multi-process training (nodeweave.distributed, as dgl.distributed)
from nodeweave import distributed  # noqa: E402,F401
