// Block compaction: one IdHashMap per node type for the sources (seeded with the destinations),
// and one per destination type when the edges carry global destination ids.
#include "graph/to_block.h"

#include <algorithm>

#include "core_framework/runtime/error.h"
#include "graph/id_hash_map.h"

namespace nodeweave::graph {

BlockCompaction compact_block(const std::vector<std::vector<int64_t>>& dst_nodes,
                              const std::vector<BlockEdgesIn>& relations, bool dst_is_position,
                              bool include_dst_in_src) {
  const int num_types = static_cast<int>(dst_nodes.size());
  std::vector<IdHashMap> dst_maps(dst_is_position ? 0 : num_types);
  std::vector<IdHashMap> src_maps(num_types);
  int64_t edges_of_type_guess = 0;
  for (const BlockEdgesIn& r : relations) edges_of_type_guess += r.num_edges;
  for (int t = 0; t < num_types; ++t) {
    const auto& dst = dst_nodes[static_cast<size_t>(t)];
    const int64_t n = static_cast<int64_t>(dst.size());
    src_maps[static_cast<size_t>(t)].reset(n + edges_of_type_guess / std::max(num_types, 1));
    if (!dst_is_position) dst_maps[static_cast<size_t>(t)].reset(n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = dst[static_cast<size_t>(i)];
      NW_CHECK(v >= 0, ValueError, "to_block: dst_nodes hold a negative id ", v);
      if (!dst_is_position) {
        NW_CHECK(dst_maps[static_cast<size_t>(t)].insert(v) == i, ValueError,
                 "to_block: dst_nodes must be unique, but node ", v, " appears twice");
      }
      // Sources start with the destinations, position for position: a repeated destination
      // would shift every later one, so it is refused whatever the edges' form.
      if (include_dst_in_src) {
        NW_CHECK(src_maps[static_cast<size_t>(t)].insert(v) == i, ValueError,
                 "to_block: dst_nodes must be unique, but node ", v, " appears twice");
      }
    }
  }
  BlockCompaction out;
  out.src_local.resize(relations.size());
  out.dst_local.resize(relations.size());
  for (size_t r = 0; r < relations.size(); ++r) {
    const BlockEdgesIn& rel = relations[r];
    IdHashMap& src_map = src_maps[static_cast<size_t>(rel.src_type)];
    auto& sl = out.src_local[r];
    auto& dl = out.dst_local[r];
    sl.resize(static_cast<size_t>(rel.num_edges));
    dl.resize(static_cast<size_t>(rel.num_edges));
    for (int64_t e = 0; e < rel.num_edges; ++e) sl[static_cast<size_t>(e)] = src_map.insert(rel.src[e]);
    if (dst_is_position) {
      dl.assign(rel.dst, rel.dst + rel.num_edges);
    } else {
      const IdHashMap& dst_map = dst_maps[static_cast<size_t>(rel.dst_type)];
      for (int64_t e = 0; e < rel.num_edges; ++e) {
        const int64_t local = dst_map.find(rel.dst[e]);
        NW_CHECK(local >= 0, ValueError, "to_block: edge ", e, " of relation ", r,
                 " points at node ", rel.dst[e], ", which is not among dst_nodes");
        dl[static_cast<size_t>(e)] = local;
      }
    }
  }
  out.src_nodes.resize(static_cast<size_t>(num_types));
  for (int t = 0; t < num_types; ++t) out.src_nodes[static_cast<size_t>(t)] = src_maps[static_cast<size_t>(t)].ids();
  return out;
}

RelationGraphPtr block_relation(int64_t num_src, int64_t num_dst, const std::vector<int64_t>& src_local,
                                const std::vector<int64_t>& dst_local, DType idtype) {
  const int64_t n = static_cast<int64_t>(src_local.size());
  NW_CHECK(static_cast<int64_t>(dst_local.size()) == n, ValueError,
           "block_relation: src and dst lengths differ");
  std::vector<int64_t> indptr(static_cast<size_t>(num_dst + 1), 0);
  for (int64_t e = 0; e < n; ++e) {
    const int64_t d = dst_local[static_cast<size_t>(e)];
    NW_CHECK(d >= 0 && d < num_dst && (e == 0 || d >= dst_local[static_cast<size_t>(e - 1)]),
             ValueError, "block_relation: destinations must be grouped in increasing order");
    ++indptr[static_cast<size_t>(d + 1)];
  }
  for (int64_t r = 0; r < num_dst; ++r) indptr[static_cast<size_t>(r + 1)] += indptr[static_cast<size_t>(r)];
  IdArray ip = IdArray::from_host(indptr.data(), DType::Int64, num_dst + 1, idtype);
  IdArray idx = IdArray::from_host(src_local.data(), DType::Int64, n, idtype);
  // A CSR whose rows are the destinations is the in-edge CSC of the reversed graph.
  return RelationGraph::from_csr(num_dst, num_src, ip, idx, IdArray::empty(0, idtype))->reverse();
}

}  // namespace nodeweave::graph
