// IdHashMap sizing: the table is rebuilt at twice the size when half full.
#include "graph/id_hash_map.h"

#include <algorithm>

namespace nodeweave::graph {

namespace {
int log2_capacity_for(int64_t expected) {
  int bits = 4;
  while ((int64_t{1} << bits) < 2 * std::max<int64_t>(expected, 1)) ++bits;
  return bits;
}
}  // namespace

void IdHashMap::reset(int64_t expected) {
  const int bits = log2_capacity_for(expected);
  const size_t capacity = size_t{1} << bits;
  if (keys_.size() == capacity) {
    // Clearing only what was used keeps a reused map O(entries), not O(table), per batch.
    if (ids_.size() * 8 < capacity) {
      for (int64_t id : ids_) {
        uint64_t slot = slot_of(id);
        while (keys_[slot] != id) slot = (slot + 1) & mask_;
        keys_[slot] = kEmpty;
      }
    } else {
      std::fill(keys_.begin(), keys_.end(), kEmpty);
    }
  } else {
    keys_.assign(capacity, kEmpty);
    values_.assign(capacity, 0);
  }
  mask_ = capacity - 1;
  shift_ = 64 - bits;
  ids_.clear();
  ids_.reserve(static_cast<size_t>(std::max<int64_t>(expected, 0)));
}

void IdHashMap::grow() {
  const std::vector<int64_t> ids = ids_;
  const int bits = 64 - shift_ + 1;
  const size_t capacity = size_t{1} << bits;
  keys_.assign(capacity, kEmpty);
  values_.assign(capacity, 0);
  mask_ = capacity - 1;
  shift_ = 64 - bits;
  ids_.clear();
  for (int64_t id : ids) insert(id);
}

}  // namespace nodeweave::graph
