// What the block sampler reads of one relation besides its adjacency: the weights' alias tables
// and per-row counts, and the packed (neighbour, edge id[, alias entry]) copy (packed_rows.h).
// Built once and shared by every live sampler on the same adjacency and the same weights: a
// script that makes one NeighborSampler per fanout list (or per epoch) keeps one copy, not one per
// sampler (on R-MAT 2^20 that copy is 143 MB, 285 MB weighted).
#pragma once
#include <cstdint>
#include <memory>

#include "graph/format_convert.h"
#include "sampling/edge_weights.h"
#include "sampling/packed_rows.h"

namespace nodeweave::sampling {

struct RelationRows {
  // Null when unweighted. When `packed` is weighted, its entry table is empty (the alias entries
  // live in `packed`) and only `nonzero` is read.
  std::unique_ptr<WeightedRows> weighted;
  // Null when the ids do not fit 32 bits: the sampler then reads the adjacency itself.
  std::unique_ptr<PackedRows> packed;
};

// The rows for `adj` (`num_rows` rows, neighbour ids below `num_cols`) and the checked weights `w`
// (data null: unweighted). A live entry is reused when the adjacency's arrays are the same and
// the weights have the same type and their values hash the same (two 64-bit hashes; an in-place
// change of a weight tensor gives new tables). Thread-safe.
std::shared_ptr<const RelationRows> shared_relation_rows(const graph::CompressedArrays& adj,
                                                         int64_t num_rows, int64_t num_cols,
                                                         const ArrayView& w);

}  // namespace nodeweave::sampling
