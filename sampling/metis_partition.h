// Graph partitioning by METIS (Karypis & Kumar): the node-to-part assignment Cluster-GCN trains on
// (DGL's metis_partition_assignment) and distributed/ partitions a graph with. METIS wants an
// undirected graph without self-loops or repeated edges, so the relations are symmetrized first;
// the assignment is a pure function of the graph, the options and the seed (METIS runs serially on
// its own seeded generator).
#pragma once
#include <cstdint>
#include <vector>

#include "graph/relation_graph.h"

namespace nodeweave::sampling {

enum class MetisMode { kKway, kRecursive };  // METIS_PartGraphKway / METIS_PartGraphRecursive
// METIS_OPTION_OBJTYPE: minimise the edge cut, or the total communication volume (each node counts
// once per other part holding one of its neighbours). k-way only: recursive bisection cuts edges.
enum class MetisObjective { kCut, kVolume };

struct MetisOptions {
  int64_t num_parts = 1;
  MetisMode mode = MetisMode::kKway;
  MetisObjective objective = MetisObjective::kCut;
  // Optional node weights, row-major num_nodes x num_constraints (METIS' multi-constraint vwgt):
  // METIS balances the sum of every column over the parts. Empty: each node weighs 1.
  std::vector<int64_t> node_weights;
  int64_t num_constraints = 0;
  int64_t seed = 0;  // METIS_OPTION_SEED, in [0, 2^31 - 1)
};
// Every other METIS option keeps METIS' default (METIS_SetDefaultOptions), as `gpmetis` does when
// given only -ptype, -objtype and -seed: the two compute the same parts from the same adjacency.

// The symmetric adjacency METIS reads: for every node its distinct neighbours along either edge
// direction, self-loops dropped, rows sorted. int64 here; the partitioner narrows to METIS' idx_t.
struct SymmetricAdjacency {
  std::vector<int64_t> indptr, indices;
  int64_t num_nodes() const { return static_cast<int64_t>(indptr.size()) - 1; }
};
SymmetricAdjacency symmetric_adjacency(const graph::RelationGraph& g);

// One relation placed in a larger node-id space: source u is node src_offset + u, destination v is
// node dst_offset + v (a heterograph's relations in the ids of its homogeneous view).
struct RelationSlice {
  const graph::RelationGraph* rel = nullptr;
  int64_t src_offset = 0, dst_offset = 0;
};
// The symmetric adjacency of the union of `rels` over `num_nodes` nodes. ValueError naming the
// relation when one is not on the CPU or reaches past num_nodes.
SymmetricAdjacency symmetric_adjacency(const std::vector<RelationSlice>& rels, int64_t num_nodes);

struct MetisResult {
  std::vector<int64_t> part;    // the part (0 .. num_parts - 1) of every node
  int64_t objective_value = 0;  // METIS' objval: the edge cut or the communication volume
};

// Partitions `adj` (consumed: its memory is released before METIS runs). ValueError naming the
// argument for num_parts < 1 or above the node count, bad weights, recursive mode with the volume
// objective, or a graph too large for METIS' 32-bit indices; METIS' own failures are raised with
// its error code (ValueError for METIS_ERROR_INPUT, std::runtime_error otherwise).
MetisResult metis_partition(SymmetricAdjacency&& adj, const MetisOptions& opt);

// Partitions the union of `rels` over `num_nodes` nodes (a heterograph's homogeneous view), the
// adjacency built straight in METIS' integer type. Errors as above and as symmetric_adjacency's.
MetisResult metis_partition(const std::vector<RelationSlice>& rels, int64_t num_nodes,
                            const MetisOptions& opt);

// The part of every node of one square relation (ValueError when it is not square or not on the
// CPU), as above.
std::vector<int64_t> metis_partition(const graph::RelationGraph& g, const MetisOptions& opt);

}  // namespace nodeweave::sampling
