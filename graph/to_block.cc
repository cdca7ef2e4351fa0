// Block compaction: one relabelling map per node type for the sources (seeded with the
// destinations), and one per destination type when the edges carry global destination ids. The
// source maps are dense tables when the node counts are known: one array access per edge, where a
// hash map probes a table twice the size of the batch (compaction is the serial part of sampling).
#include "graph/to_block.h"

#include <algorithm>
#include <limits>

#include "core_framework/runtime/error.h"
#include "graph/id_hash_map.h"

namespace nodeweave::graph {

namespace {

// Global -> local ids through a table indexed by global id. The table belongs to the thread and is
// reused across calls: only the entries a call set are reset, so a call costs O(ids it saw). Its
// entries are 32-bit: the table is read at random, and half the bytes keep more of it in cache
// (a batch with 2^31 distinct sources of one type is refused).
class DenseIdMap {
 public:
  void start(int64_t num_nodes) {
    if (static_cast<int64_t>(local_.size()) < num_nodes) local_.resize(static_cast<size_t>(num_nodes), -1);
    limit_ = num_nodes;
    ids_.clear();
  }
  int64_t insert(int64_t id) {
    NW_CHECK(id >= 0 && id < limit_, ValueError, "to_block: node id ", id, " is out of range [0, ",
             limit_, ")");
    int32_t& l = local_[static_cast<size_t>(id)];
    if (l < 0) {
      NW_CHECK(ids_.size() < static_cast<size_t>(std::numeric_limits<int32_t>::max()), ValueError,
               "to_block: a block may have at most 2^31 - 1 source nodes of one type");
      l = static_cast<int32_t>(ids_.size());
      ids_.push_back(id);
    }
    return l;
  }
  void prefetch(int64_t id) const {
    if (id >= 0 && id < limit_) __builtin_prefetch(local_.data() + id);
  }
  std::vector<int64_t> take_ids() {
    for (int64_t id : ids_) local_[static_cast<size_t>(id)] = -1;
    return std::move(ids_);
  }
  void clear() {
    for (int64_t id : ids_) local_[static_cast<size_t>(id)] = -1;
    ids_.clear();
  }

 private:
  std::vector<int32_t> local_;
  std::vector<int64_t> ids_;
  int64_t limit_ = 0;
};

}  // namespace

// The source maps of one compaction: dense tables of the constructing thread when node counts are
// known, else hash maps. Dense tables are reset on the way out, also when a check throws.
class SourceCompactor::Maps {
 public:
  Maps(int num_types, const std::vector<int64_t>* num_nodes, int64_t expected)
      : dense_(num_nodes != nullptr), num_types_(num_types) {
    if (dense_) {
      thread_local std::vector<DenseIdMap> pool;
      if (static_cast<int>(pool.size()) < num_types) pool.resize(static_cast<size_t>(num_types));
      pool_ = &pool;
      for (int t = 0; t < num_types; ++t) pool[static_cast<size_t>(t)].start((*num_nodes)[static_cast<size_t>(t)]);
    } else {
      hashed_.resize(static_cast<size_t>(num_types));
      for (auto& m : hashed_) m.reset(expected);
    }
  }
  ~Maps() {
    if (dense_)
      for (int t = 0; t < num_types_; ++t) (*pool_)[static_cast<size_t>(t)].clear();
  }
  int64_t insert(int t, int64_t id) {
    return dense_ ? (*pool_)[static_cast<size_t>(t)].insert(id) : hashed_[static_cast<size_t>(t)].insert(id);
  }
  void prefetch(int t, int64_t id) const {
    if (dense_) (*pool_)[static_cast<size_t>(t)].prefetch(id);
  }
  std::vector<int64_t> ids(int t) {
    return dense_ ? (*pool_)[static_cast<size_t>(t)].take_ids() : hashed_[static_cast<size_t>(t)].ids();
  }

 private:
  bool dense_;
  int num_types_;
  std::vector<DenseIdMap>* pool_ = nullptr;
  std::vector<IdHashMap> hashed_;
};

SourceCompactor::SourceCompactor(const std::vector<std::vector<int64_t>>& dst_nodes,
                                 bool include_dst_in_src, const std::vector<int64_t>* num_nodes,
                                 int64_t expected_edges)
    : num_types_(static_cast<int>(dst_nodes.size())) {
  NW_CHECK(!num_nodes || static_cast<int>(num_nodes->size()) == num_types_, ValueError,
           "to_block: num_nodes must give one count per node type");
  maps_ = std::make_unique<Maps>(num_types_, num_nodes, expected_edges / std::max(num_types_, 1));
  if (!include_dst_in_src) return;
  // Sources start with the destinations, position for position: a repeated destination would
  // shift every later one, so it is refused whatever the edges' form.
  for (int t = 0; t < num_types_; ++t) {
    const auto& dst = dst_nodes[static_cast<size_t>(t)];
    for (size_t i = 0; i < dst.size(); ++i) {
      NW_CHECK(dst[i] >= 0, ValueError, "to_block: dst_nodes hold a negative id ", dst[i]);
      NW_CHECK(maps_->insert(t, dst[i]) == static_cast<int64_t>(i), ValueError,
               "to_block: dst_nodes must be unique, but node ", dst[i], " appears twice");
    }
  }
}

SourceCompactor::~SourceCompactor() = default;

void SourceCompactor::add(int src_type, const int64_t* src, int64_t n, std::vector<int64_t>& out) {
  const size_t base = out.size();
  out.resize(base + static_cast<size_t>(n));
  int64_t* sl = out.data() + base;
  // The table is larger than the cache and the ids are scattered: look 16 edges ahead.
  for (int64_t e = 0; e < n; ++e) {
    if (e + 16 < n) maps_->prefetch(src_type, src[e + 16]);
    sl[e] = maps_->insert(src_type, src[e]);
  }
}

std::vector<std::vector<int64_t>> SourceCompactor::take_src_nodes() {
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(num_types_));
  for (int t = 0; t < num_types_; ++t) out[static_cast<size_t>(t)] = maps_->ids(t);
  return out;
}

BlockCompaction compact_block(const std::vector<std::vector<int64_t>>& dst_nodes,
                              const std::vector<BlockEdgesIn>& relations, bool dst_is_position,
                              bool include_dst_in_src, const std::vector<int64_t>* num_nodes) {
  const int num_types = static_cast<int>(dst_nodes.size());
  int64_t edges = 0;
  for (const BlockEdgesIn& r : relations) edges += r.num_edges;
  SourceCompactor sources(dst_nodes, include_dst_in_src, num_nodes, edges);
  std::vector<IdHashMap> dst_maps(dst_is_position ? 0 : num_types);
  for (int t = 0; t < num_types && !dst_is_position; ++t) {
    const auto& dst = dst_nodes[static_cast<size_t>(t)];
    const int64_t n = static_cast<int64_t>(dst.size());
    dst_maps[static_cast<size_t>(t)].reset(n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = dst[static_cast<size_t>(i)];
      NW_CHECK(v >= 0, ValueError, "to_block: dst_nodes hold a negative id ", v);
      NW_CHECK(dst_maps[static_cast<size_t>(t)].insert(v) == i, ValueError,
               "to_block: dst_nodes must be unique, but node ", v, " appears twice");
    }
  }
  BlockCompaction out;
  out.src_local.resize(relations.size());
  out.dst_local.resize(relations.size());
  for (size_t r = 0; r < relations.size(); ++r) {
    const BlockEdgesIn& rel = relations[r];
    sources.add(rel.src_type, rel.src, rel.num_edges, out.src_local[r]);
    auto& dl = out.dst_local[r];
    if (dst_is_position) {
      dl.assign(rel.dst, rel.dst + rel.num_edges);
    } else {
      dl.resize(static_cast<size_t>(rel.num_edges));
      const IdHashMap& dst_map = dst_maps[static_cast<size_t>(rel.dst_type)];
      for (int64_t e = 0; e < rel.num_edges; ++e) {
        const int64_t local = dst_map.find(rel.dst[e]);
        NW_CHECK(local >= 0, ValueError, "to_block: edge ", e, " of relation ", r,
                 " points at node ", rel.dst[e], ", which is not among dst_nodes");
        dl[static_cast<size_t>(e)] = local;
      }
    }
  }
  out.src_nodes = sources.take_src_nodes();
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
