// A map from global node ids to dense local ids 0, 1, 2 ... in order of first insertion: the
// relabelling at the heart of block compaction, subgraph extraction and visit counting. Open
// addressing with linear probing over a power-of-two table (load <= 1/2), so a lookup is one
// multiply and usually one cache line, against a node allocation per entry for std::unordered_map.
// Not thread-safe; each sampler thread keeps its own.
#pragma once
#include <cstdint>
#include <vector>

namespace nodeweave::graph {

class IdHashMap {
 public:
  explicit IdHashMap(int64_t expected = 0) { reset(expected); }

  // Empties the map, keeping room for `expected` ids without growing.
  void reset(int64_t expected);

  // The local id of `id`, inserting it (as size()) when new. `id` must be >= 0.
  int64_t insert(int64_t id) {
    if (2 * (size() + 1) > static_cast<int64_t>(keys_.size())) grow();
    uint64_t slot = slot_of(id);
    while (true) {
      const int64_t k = keys_[slot];
      if (k == id) return values_[slot];
      if (k == kEmpty) {
        keys_[slot] = id;
        values_[slot] = size();
        ids_.push_back(id);
        return values_[slot];
      }
      slot = (slot + 1) & mask_;
    }
  }
  // The local id of `id`, or -1 when absent.
  int64_t find(int64_t id) const {
    uint64_t slot = slot_of(id);
    while (true) {
      const int64_t k = keys_[slot];
      if (k == id) return values_[slot];
      if (k == kEmpty) return -1;
      slot = (slot + 1) & mask_;
    }
  }
  int64_t size() const { return static_cast<int64_t>(ids_.size()); }
  // Global ids in local-id order.
  const std::vector<int64_t>& ids() const { return ids_; }

 private:
  static constexpr int64_t kEmpty = -1;
  uint64_t slot_of(int64_t id) const {
    // Fibonacci hashing: consecutive ids (common: seeds, neighbours of a hub) spread over the table.
    return (static_cast<uint64_t>(id) * 0x9e3779b97f4a7c15ull) >> shift_;
  }
  void grow();

  std::vector<int64_t> keys_, values_, ids_;
  uint64_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace nodeweave::graph
