// Block compaction (DGL's to_block): turns edges that point at a set of destination nodes into a
// message-flow block, relabelling every node type's sources to 0..n-1 with the destination nodes
// of that type first ("destination nodes come first among the sources", so a layer's output for
// the destination nodes is the first rows of its input). Sources that are not destinations follow
// in order of first appearance over the relations, then the edges, which makes the relabelling a
// pure function of the input.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "graph/relation_graph.h"

namespace nodeweave::graph {

// The edges of one relation of the block, in global ids.
struct BlockEdgesIn {
  int src_type = 0, dst_type = 0;
  const int64_t* src = nullptr;  // global source ids
  const int64_t* dst = nullptr;  // global destination ids, or positions in dst_nodes[dst_type]
  int64_t num_edges = 0;
};

struct BlockCompaction {
  std::vector<std::vector<int64_t>> src_nodes;  // per node type, global ids (dst nodes first)
  std::vector<std::vector<int64_t>> src_local;  // per relation
  std::vector<std::vector<int64_t>> dst_local;  // per relation
};

// `dst_nodes[t]`: the destination nodes of type t (unique, else ValueError). `dst_is_position`:
// the edges' dst are already positions in dst_nodes (a sampler's output) instead of global ids.
// `include_dst_in_src`: dst nodes start every type's source list (DGL's default); without it a
// type's sources are only the nodes that send an edge. Throws ValueError when an edge's
// destination is not among dst_nodes.
// `num_nodes` (optional, per type): node ids are below it, which lets the relabelling use a dense
// table (reused by the calling thread) instead of a hash map; ids at or beyond it raise ValueError.
BlockCompaction compact_block(const std::vector<std::vector<int64_t>>& dst_nodes,
                              const std::vector<BlockEdgesIn>& relations, bool dst_is_position,
                              bool include_dst_in_src = true,
                              const std::vector<int64_t>* num_nodes = nullptr);

// compact_block's source relabelling, fed edge by edge: a sampler hands it each chunk of sampled
// sources as soon as the chunk is ready, in edge order, and the result is that of compact_block
// over all of them. Calls must not overlap, but may come from different threads: the dense tables
// are those of the constructing thread, which must stay inside the call that uses the compactor.
class SourceCompactor {
 public:
  // `dst_nodes` (unique, else ValueError) start every type's sources when `include_dst_in_src`.
  // `num_nodes` as for compact_block (null: hash maps sized for `expected_edges`).
  SourceCompactor(const std::vector<std::vector<int64_t>>& dst_nodes, bool include_dst_in_src,
                  const std::vector<int64_t>* num_nodes, int64_t expected_edges);
  ~SourceCompactor();
  SourceCompactor(const SourceCompactor&) = delete;
  SourceCompactor& operator=(const SourceCompactor&) = delete;
  // Appends the local ids of `n` sources of type `src_type` to `out`.
  void add(int src_type, const int64_t* src, int64_t n, std::vector<int64_t>& out);
  // Every type's sources in local-id order (global ids); ends the compaction.
  std::vector<std::vector<int64_t>> take_src_nodes();

 private:
  class Maps;
  std::unique_ptr<Maps> maps_;
  int num_types_;
};

// The relation graph of one block relation from compacted edges grouped by destination (as the
// samplers emit them: dst_local non-decreasing). Its in-edge CSC is built straight from the groups,
// without a sort; edge ids are the entry positions 0..E-1.
RelationGraphPtr block_relation(int64_t num_src, int64_t num_dst, const std::vector<int64_t>& src_local,
                                const std::vector<int64_t>& dst_local, DType idtype);

}  // namespace nodeweave::graph
