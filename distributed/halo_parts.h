// The partitions of a typed graph, each with its HALO, in the numbering of a range partition book
// (range_relabel.h). A partition holds its inner nodes (the ones it owns) and:
//   - every in-edge of an inner node (its inner edges: an edge belongs to its destination's part);
//   - HALO nodes up to `num_hops` in-edge hops away: ring 1 is the sources of the inner edges,
//     ring h + 1 the sources of the in-edges of ring h, and the in-edges of rings 1 .. num_hops - 1
//     come along too;
//   - the out-edges of the inner nodes into other parts, and their destinations as HALO nodes.
// These are DGL's rules for distributed partitions (nodeweave.partition.partition_graph_with_halo
// applies the same ones in memory), so messages along in-edges, or out-edges of owned nodes, are
// computed without leaving the part. Local ids: per node type the inner nodes first, in new-id
// order (local id = new id - the part's range start), then the HALO nodes ascending by new id; per
// relation the inner edges first, in new-id order, then the HALO edges ascending by new id.
#pragma once
#include <cstdint>
#include <vector>

#include "distributed/range_relabel.h"
#include "distributed/typed_graph.h"

namespace nodeweave::distributed {

struct LocalPart {
  int64_t part_id = 0;
  std::vector<int64_t> num_inner_nodes;             // [type]
  std::vector<std::vector<int64_t>> node_ids;       // [type][local id] = new (global) id
  std::vector<std::vector<int64_t>> orig_node_ids;  // [type][local id] = the input graph's id
  std::vector<int64_t> num_inner_edges;             // [relation]
  std::vector<std::vector<int64_t>> edge_ids;       // [relation][local edge] = new (global) id
  std::vector<std::vector<int64_t>> orig_edge_ids;  // [relation][local edge] = the input's id
  std::vector<std::vector<int64_t>> src, dst;       // [relation][local edge] = local node ids
};

class HaloParts {
 public:
  // `part`: the part of every node in homogeneous ids, as for relabel_by_part. The relations are
  // shared, not copied. ValueError naming the argument for num_hops < 1 or a bad `part`.
  HaloParts(TypedGraph g, std::vector<int64_t> part, int64_t num_parts, int64_t num_hops);

  const RangeRelabel& relabel() const { return relabel_; }
  const TypedGraph& graph() const { return g_; }
  int64_t num_hops() const { return hops_; }
  // Partition p (IndexError naming part_id when out of range). Const and independent of other
  // calls: parts may be extracted in any order, one at a time, to bound memory.
  LocalPart extract(int64_t p) const;

 private:
  // Raw endpoint arrays of one relation, with the homogeneous offsets of its two node types.
  struct Ends {
    const void* src = nullptr;
    const void* dst = nullptr;
    bool int32 = false;
    int64_t src_offset = 0, dst_offset = 0, src_type = 0, dst_type = 0;
    int64_t u(int64_t e) const {  // homogeneous source of edge e
      return src_offset +
             (int32 ? static_cast<const int32_t*>(src)[e] : static_cast<const int64_t*>(src)[e]);
    }
    int64_t v(int64_t e) const {  // homogeneous destination of edge e
      return dst_offset +
             (int32 ? static_cast<const int32_t*>(dst)[e] : static_cast<const int64_t*>(dst)[e]);
    }
  };

  TypedGraph g_;
  std::vector<int64_t> part_;  // homogeneous node -> part
  RangeRelabel relabel_;
  int64_t hops_;
  std::vector<int64_t> noff_, eoff_;  // homogeneous node / edge offsets of the types
  std::vector<Ends> ends_;            // [relation]
  // Edges whose two ends lie in different parts, as homogeneous edge ids grouped by the source's
  // part: the out-edges each part adds to its inner nodes'. Few after METIS.
  std::vector<int64_t> cut_indptr_, cut_eids_;
  // In-edges of every node (homogeneous edge ids grouped by homogeneous destination); built only
  // for num_hops >= 2, where HALO nodes' own in-edges are followed.
  std::vector<int64_t> in_indptr_, in_eids_;
};

}  // namespace nodeweave::distributed
