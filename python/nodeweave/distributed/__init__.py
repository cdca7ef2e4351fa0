"""Partition-and-train (DGL's ``dgl.distributed``): partitioning a graph for multi-process
training, reading the parts back, and training over them in an MPI job (docs/distributed.md).

- :func:`partition_graph` cuts a graph with METIS (or at random) into parts whose nodes and edges
  have contiguous ids per type, each with its HALO, and writes them with a JSON manifest;
- :func:`load_partition` / :func:`load_partition_book` read one part and its
  :class:`RangePartitionBook` back, checking every file against the manifest;
- ``nodeweave-partition`` is the command line (:mod:`nodeweave.distributed.partition_cli`);
- :func:`init`, :func:`all_reduce`, :func:`all_to_all`, :func:`barrier`: the MPI job the training
  processes form (:mod:`nodeweave.distributed.mpi`); :func:`all_reduce_gradients` averages
  gradients over it for data-parallel training;
- :class:`DistGraph` presents the whole graph to every rank (features fetched from their owners),
  :class:`DistNeighborSampler` samples it exactly as the single-process sampler samples the whole
  graph; :class:`DistNodeDataLoader` and :func:`node_split` batch each rank's share of the seeds,
  :class:`DistEdgeDataLoader` and :func:`edge_split` its share of the edges for link prediction;
  :func:`save_checkpoint` / :func:`load_checkpoint` make a job resumable.
"""

from nodeweave.distributed.partition import partition_graph
from nodeweave.distributed.part_files import FORMAT_VERSION, PartitionFormatError, load_partition, \
    load_partition_book
from nodeweave.distributed.partition_book import RangePartitionBook
from nodeweave.distributed.mpi import all_reduce, all_to_all, barrier, comm_stats, init, is_initialized, rank, \
    reset_comm_stats, world_size
from nodeweave.distributed.grad_sync import all_reduce_gradients
from nodeweave.distributed.dist_graph import DistGraph, DistTensor
from nodeweave.distributed.dist_sampler import DistNeighborSampler
from nodeweave.distributed.dist_dataloader import DistNodeDataLoader, edge_split, node_split
from nodeweave.distributed.dist_edge_dataloader import DistEdgeDataLoader
from nodeweave.distributed.checkpoint import load_checkpoint, save_checkpoint

__all__ = ["partition_graph", "load_partition", "load_partition_book", "RangePartitionBook", "PartitionFormatError",
           "FORMAT_VERSION", "init", "is_initialized", "rank", "world_size", "all_reduce", "all_to_all", "barrier",
           "comm_stats", "reset_comm_stats", "all_reduce_gradients", "DistGraph", "DistTensor", "DistNeighborSampler",
           "DistNodeDataLoader", "DistEdgeDataLoader", "node_split", "edge_split", "save_checkpoint", "load_checkpoint"]
