// Per-edge sampling weights (DGL's `prob=` and `mask=`), validated once and laid out for the
// samplers. Users give one value per edge id; samplers walk a node's row of the compressed
// adjacency, whose entries are in a different order, so the weights are gathered into entry order
// as one alias table per row (Walker 1977, built by Vose's method): a weighted pick is then one
// uniform position and one biased coin, O(1) like a uniform pick, instead of a scan or a binary
// search of the row. That keeps weighted sampling near uniform sampling's speed on high-degree
// rows, where DGL's weighted path is 14x slower than its uniform one (DGL #7462).
#pragma once
#include <cstdint>
#include <vector>

#include "core_framework/runtime/array_view.h"
#include "graph/format_convert.h"

namespace nodeweave::sampling {

// Checks a weight array: 1-D, contiguous, on the CPU, `num_edges` long, float32/float64 with no
// negative, NaN or infinite value, or bool/uint8 (a mask). Throws TypeError/ValueError naming `name`.
void check_edge_weights(const char* fn, const char* name, const ArrayView& w, int64_t num_edges);

// The weight of edge `eid` as a double (a mask reads 0 or 1).
double edge_weight_at(const ArrayView& w, int64_t eid);

// Alias tables of one compressed adjacency, in entry order. For entry i of a row starting at
// entry b: draw a position j of the row uniformly, keep it with probability entry[b + j].keep, else
// take entry[b + j].alias (a position in the same row). A zero-weight entry has keep -1 (never
// kept, and how a sampler tells it apart without reading the weights again) and an alias to a
// positive one, so it is never drawn. keep and alias sit side by side: a draw touches one cache
// line. `nonzero[r]`: entries of row r with positive weight.
struct AliasEntry {
  float keep;
  uint32_t alias;
};
struct WeightedRows {
  std::vector<AliasEntry> entry;
  std::vector<int64_t> nonzero;
};

// Builds WeightedRows for `adj` (rows = the side seeds are on) from per-edge-id weights `w`
// (already checked). Parallel over rows. Rows longer than 2^32 entries are refused (ValueError).
WeightedRows build_weighted_rows(const graph::CompressedArrays& adj, int64_t num_rows,
                                 const ArrayView& w);

}  // namespace nodeweave::sampling
