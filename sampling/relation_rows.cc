// The registry of relation rows: weak references keyed by the adjacency's arrays and the weights'
// values. A live entry's samplers hold the graph, so the adjacency memory behind a key cannot be
// freed and reused by another graph while the entry lives.
#include "sampling/relation_rows.h"

#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

namespace nodeweave::sampling {

namespace {

// (indptr, indices, eids, entries, weighted, weight dtype, weight hashes)
using Key =
    std::tuple<const void*, const void*, const void*, int64_t, bool, int, uint64_t, uint64_t>;

// Two independent 64-bit hashes of the weights' bytes (FNV-1a and a multiply-xorshift mix, word
// by word). The tables depend only on the values, and the weights handed to a sampler are often a
// fresh copy of the edge feature (another address, the same values), so the values are the key;
// an in-place change of the feature gives new tables.
std::pair<uint64_t, uint64_t> content_hash(const ArrayView& w) {
  if (!w.data) return {0, 0};
  const auto* p = static_cast<const unsigned char*>(w.data);
  const size_t n = static_cast<size_t>(w.shape[0]) * dtype_size(w.dtype);
  uint64_t a = 1469598103934665603ull, b = 0x9e3779b97f4a7c15ull;
  auto mix = [&](uint64_t word) {
    a = (a ^ word) * 1099511628211ull;
    b = (b ^ word) * 0xbf58476d1ce4e5b9ull;
    b ^= b >> 31;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {  // the weights of 17.8M edges hash in ~20 ms
    uint64_t word;
    std::memcpy(&word, p + i, 8);
    mix(word);
  }
  for (; i < n; ++i) mix(p[i]);
  return {a, b};
}

}  // namespace

std::shared_ptr<const RelationRows> shared_relation_rows(const graph::CompressedArrays& adj,
                                                         int64_t num_rows, int64_t num_cols,
                                                         const ArrayView& w) {
  static std::mutex mu;
  static std::map<Key, std::weak_ptr<const RelationRows>> live;
  const auto [h1, h2] = content_hash(w);
  const Key key{adj.indptr.data<void>(),
                adj.indices.data<void>(),
                adj.eids.data<void>(),
                adj.indices.length,
                w.data != nullptr,
                static_cast<int>(w.dtype),
                h1,
                h2};
  std::lock_guard<std::mutex> lock(mu);
  for (auto it = live.begin(); it != live.end();) it = it->second.expired() ? live.erase(it) : ++it;
  if (auto found = live.find(key); found != live.end())
    if (auto rows = found->second.lock()) return rows;
  auto rows = std::make_shared<RelationRows>();
  if (w.data)
    rows->weighted = std::make_unique<WeightedRows>(build_weighted_rows(adj, num_rows, w));
  if (PackedRows::packable(adj, num_cols)) {
    rows->packed = std::make_unique<PackedRows>(PackedRows::pack(adj, rows->weighted.get()));
    if (rows->weighted) rows->weighted->entry = {};  // the packed copy holds them
  }
  live[key] = rows;
  return rows;
}

}  // namespace nodeweave::sampling
