// Graph partitioning by METIS (Karypis & Kumar): the node-to-part assignment Cluster-GCN trains on
// (DGL's metis_partition_assignment). METIS wants an undirected graph without self-loops or
// repeated edges, so the relation is symmetrized first; the assignment is a pure function of the
// graph, the options and the seed (METIS runs serially on its own seeded generator).
#pragma once
#include <cstdint>
#include <vector>

#include "graph/relation_graph.h"

namespace nodeweave::sampling {

enum class MetisMode { kKway, kRecursive };  // METIS_PartGraphKway / METIS_PartGraphRecursive

struct MetisOptions {
  int64_t num_parts = 1;
  MetisMode mode = MetisMode::kKway;
  // Optional node weights, row-major num_nodes x num_constraints (METIS' multi-constraint vwgt):
  // METIS balances the sum of every column over the parts. Empty: each node weighs 1.
  std::vector<int64_t> node_weights;
  int64_t num_constraints = 0;
  int64_t seed = 0;  // METIS_OPTION_SEED, in [0, 2^31 - 1)
};

// The symmetric adjacency METIS reads: for every node its distinct neighbours along either edge
// direction, self-loops dropped, rows sorted. int64 here; the partitioner narrows to METIS' idx_t.
struct SymmetricAdjacency {
  std::vector<int64_t> indptr, indices;
};
SymmetricAdjacency symmetric_adjacency(const graph::RelationGraph& g);

// The part (0 .. num_parts - 1) of every node. ValueError naming the argument for num_parts < 1 or
// above the node count, a graph that is not square (num_src != num_dst) or not on the CPU, bad
// weights, or a graph too large for METIS' 32-bit indices; METIS' own failures are raised with
// its error code (ValueError for METIS_ERROR_INPUT, std::runtime_error otherwise).
std::vector<int64_t> metis_partition(const graph::RelationGraph& g, const MetisOptions& opt);

}  // namespace nodeweave::sampling
