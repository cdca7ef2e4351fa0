// Per-edge sampling weights (DGL's `prob=` and `mask=`), validated once and laid out for the
// samplers. Users give one value per edge id; samplers walk a node's row of the compressed
// adjacency, whose entries are in a different order, so the weights are gathered into entry order
// with per-row running sums: a weighted pick is then a binary search in one contiguous row instead
// of a scan, which keeps weighted sampling near uniform sampling's speed on high-degree rows
// (DGL's weighted path scans every row, DGL #7462).
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

// Weights of one compressed adjacency in entry order, as inclusive running sums per row:
// cumsum[indptr[r] + j] = sum of the weights of entries 0..j of row r. `nonzero[r]` counts the
// entries of row r with positive weight.
struct WeightedRows {
  std::vector<double> cumsum;
  std::vector<int64_t> nonzero;
};

// Builds WeightedRows for `adj` (rows = the side seeds are on) from per-edge-id weights `w`
// (already checked). Parallel over rows.
WeightedRows build_weighted_rows(const graph::CompressedArrays& adj, int64_t num_rows,
                                 const ArrayView& w);

}  // namespace nodeweave::sampling
