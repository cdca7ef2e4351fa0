// Compaction (DGL's compact_graphs): renumbers the nodes of several relations that share node
// types so that only the nodes with an edge in some relation remain, numbered 0..n-1 per type the
// same way in every relation. The edges themselves, and their order, are unchanged.
//
// New ids of a type: its `always_preserve` nodes first, in the given order (repeats ignored), then
// every other node with an edge in increasing original id. Increasing id (rather than order of
// first appearance, as to_block uses) makes the numbering independent of edge order, so the
// compaction of edge_subgraph / in_subgraph results lists nodes the way DGL does.
//
// A type whose endpoints cover a good part of its nodes is numbered through a dense id -> new id
// array (marking in parallel); a type with few endpoints against many nodes through a sort of its
// endpoints and an IdHashMap, so a mini-batch-sized compaction costs nothing per graph node.
#pragma once
#include <cstdint>
#include <vector>

#include "graph/relation_graph.h"

namespace nodeweave::graph {

// The edges of one relation between node types src_type and dst_type (indices into num_nodes).
struct TypedEdges {
  int src_type = 0, dst_type = 0;
  CooArrays edges;  // original node ids; the id dtype of the compaction
};

struct CompactedEdges {
  std::vector<CooArrays> edges;                // per relation, new ids, same edge order
  std::vector<std::vector<int64_t>> node_ids;  // per type: original id of each new node
};

// `always_preserve`: empty, or one list per node type (empty lists preserve nothing). Throws
// ValueError for a type index out of range or src/dst of different lengths, TypeError for edge
// arrays not of `idtype`, IndexError naming the first endpoint or preserved id out of range.
CompactedEdges compact_edges(const std::vector<int64_t>& num_nodes,
                             const std::vector<TypedEdges>& relations,
                             const std::vector<std::vector<int64_t>>& always_preserve,
                             DType idtype);

struct TypedRelation {
  int src_type = 0, dst_type = 0;
  RelationGraphPtr graph;
};

struct CompactedRelations {
  std::vector<RelationGraphPtr> graphs;        // per relation, new ids, same edge order
  std::vector<std::vector<int64_t>> node_ids;  // per type: original id of each new node
};

// compact_edges on relation graphs, which must agree with num_nodes (ValueError otherwise) and
// share `idtype` (TypeError). The graphs returned allow every format.
CompactedRelations compact_relations(const std::vector<int64_t>& num_nodes,
                                     const std::vector<TypedRelation>& relations,
                                     const std::vector<std::vector<int64_t>>& always_preserve,
                                     DType idtype);

}  // namespace nodeweave::graph
