// The neighbour and the edge id of every entry of a compressed adjacency, side by side in one
// 8-byte word, and for weighted sampling the entry's alias-table slot beside them (16 bytes). A
// sampled entry of a large graph is a cache miss wherever it is read: read from the adjacency's
// separate `indices` and `eids` arrays (and the alias table) it is two misses (three), read from
// here it is one, and a weighted draw that keeps its position finds the pick on the line it
// already loaded. On R-MAT 2^20 (17.8M edges) the neighbour sampler spends most of its time
// waiting on those misses, so the block sampler packs each relation it samples once and reads
// only this copy.
#pragma once
#include <cstdint>
#include <memory>

#include "core_framework/runtime/storage.h"
#include "graph/format_convert.h"
#include "sampling/edge_weights.h"

namespace nodeweave::sampling {

struct PackedEntry {
  uint32_t neighbor;
  uint32_t eid;
};

struct PackedWeightedEntry {
  AliasEntry alias;  // as WeightedRows::entry
  PackedEntry pair;
};

// Either layout, in the adjacency's entry order; read through pair() and alias().
class PackedRows {
 public:
  int64_t size() const { return size_; }
  bool weighted() const { return weighted_ != nullptr; }
  const PackedEntry* pair_ptr(int64_t i) const {
    return weighted_ ? &weighted_[i].pair : &plain_[i];
  }
  PackedEntry pair(int64_t i) const { return *pair_ptr(i); }
  // Only when weighted().
  const AliasEntry& alias(int64_t i) const { return weighted_[i].alias; }

  // Whether `adj` (whose neighbour ids are below `num_cols`) fits 32-bit neighbour and edge ids.
  static bool packable(const graph::CompressedArrays& adj, int64_t num_cols);
  // The packed copy of `adj` (packable must hold), with the alias entries of `weighted` (built for
  // the same adjacency) when given. Parallel over entries.
  static PackedRows pack(const graph::CompressedArrays& adj,
                         const WeightedRows* weighted = nullptr);

 private:
  // Through the runtime's allocator, whose blocks of 8 MiB and more sit on transparent huge pages:
  // a sampled entry is a random read, and on 4 KiB pages nearly every one of them also misses the
  // TLB (measured on R-MAT 2^20, see sampling/README.md).
  std::shared_ptr<Storage> storage_;
  PackedEntry* plain_ = nullptr;
  PackedWeightedEntry* weighted_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace nodeweave::sampling
