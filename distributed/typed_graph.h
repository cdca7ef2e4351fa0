// A heterograph as the partitioner sees it: a node count per node type and one relation per
// canonical edge type, naming its source and destination node types. Partitioning works in the
// ids of the graph's homogeneous view (DGL's to_homogeneous order): node i of type t is
// node_offsets[t] + i, edge j of relation r is edge_offsets[r] + j.
#pragma once
#include <cstdint>
#include <vector>

#include "graph/relation_graph.h"
#include "sampling/metis_partition.h"

namespace nodeweave::distributed {

struct TypedRelation {
  graph::RelationGraphPtr rel;
  int64_t src_type = 0, dst_type = 0;
};

struct TypedGraph {
  std::vector<int64_t> num_nodes;  // per node type
  std::vector<TypedRelation> relations;

  // ValueError naming `fn` and the relation when a type index is out of range, a relation's node
  // counts differ from its types', or a relation is not on the CPU.
  void check(const char* fn) const;
  std::vector<int64_t> node_offsets() const;  // num_types + 1 prefix sums of num_nodes
  std::vector<int64_t> edge_offsets() const;  // num_relations + 1 prefix sums of edge counts
  int64_t total_nodes() const { return node_offsets().back(); }
  // The relations placed in the homogeneous node ids, for METIS' symmetric adjacency.
  std::vector<sampling::RelationSlice> homogeneous_slices() const;
};

// Which of the `offsets.size() - 1` consecutive ranges holds `id` (offsets ascending from 0).
int64_t range_of(const std::vector<int64_t>& offsets, int64_t id);

}  // namespace nodeweave::distributed
