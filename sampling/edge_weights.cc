// Validation and entry-order layout of per-edge sampling weights.
#include "sampling/edge_weights.h"

#include <cmath>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::sampling {

void check_edge_weights(const char* fn, const char* name, const ArrayView& w, int64_t num_edges) {
  NW_CHECK(w.device.is_cpu(), ValueError, fn, ": ", name, " must be on the CPU, got ", w.device.str());
  NW_CHECK(w.shape.size() == 1, ValueError, fn, ": ", name,
           " must be one-dimensional (one value per edge), got shape ", shape_str(w.shape));
  NW_CHECK(w.shape[0] == num_edges, ValueError, fn, ": ", name, " has ", w.shape[0],
           " values but the relation has ", num_edges, " edges");
  NW_CHECK(w.is_contiguous(), ValueError, fn, ": ", name, " must be contiguous");
  const bool ok_type = w.dtype == DType::Float32 || w.dtype == DType::Float64 ||
                       w.dtype == DType::Bool || w.dtype == DType::UInt8;
  NW_CHECK(ok_type, TypeError, fn, ": ", name,
           " must be float32/float64 probabilities or a bool mask, got ", dtype_name(w.dtype));
  if (w.dtype == DType::Float32 || w.dtype == DType::Float64) {
    for (int64_t e = 0; e < num_edges; ++e) {
      const double v = edge_weight_at(w, e);
      NW_CHECK(std::isfinite(v) && v >= 0, ValueError, fn, ": ", name,
               " must be finite and non-negative, got ", v, " for edge ", e);
    }
  }
}

double edge_weight_at(const ArrayView& w, int64_t eid) {
  switch (w.dtype) {
    case DType::Float32:
      return static_cast<const float*>(w.data)[eid];
    case DType::Float64:
      return static_cast<const double*>(w.data)[eid];
    default:
      return static_cast<const uint8_t*>(w.data)[eid] != 0 ? 1.0 : 0.0;
  }
}

namespace {

// Vose's alias method over one row's weights w[0..d) (sum > 0): O(d), exact up to rounding.
void build_row(const double* w, int64_t d, AliasEntry* out, std::vector<double>& scaled,
               std::vector<int64_t>& small, std::vector<int64_t>& large) {
  double total = 0;
  for (int64_t j = 0; j < d; ++j) total += w[j];
  scaled.resize(static_cast<size_t>(d));
  small.clear();
  large.clear();
  for (int64_t j = 0; j < d; ++j) {
    scaled[static_cast<size_t>(j)] = w[j] * static_cast<double>(d) / total;
    (scaled[static_cast<size_t>(j)] < 1.0 ? small : large).push_back(j);
  }
  while (!small.empty() && !large.empty()) {
    const int64_t s = small.back(), l = large.back();
    small.pop_back();
    out[s] = {static_cast<float>(scaled[static_cast<size_t>(s)]), static_cast<uint32_t>(l)};
    scaled[static_cast<size_t>(l)] -= 1.0 - scaled[static_cast<size_t>(s)];
    if (scaled[static_cast<size_t>(l)] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Leftovers are 1 up to rounding. A zero-weight leftover (only from rounding) must still never
  // be drawn: it points at a positive entry instead.
  int64_t positive = 0;
  while (positive < d && !(w[positive] > 0)) ++positive;
  for (auto* rest : {&small, &large})
    for (int64_t j : *rest) out[j] = {1.0f, static_cast<uint32_t>(positive)};
  // keep -1 marks zero weights (their alias, set above, still carries their slot's mass).
  for (int64_t j = 0; j < d; ++j)
    if (!(w[j] > 0)) out[j].keep = -1.0f;
}

}  // namespace

WeightedRows build_weighted_rows(const graph::CompressedArrays& adj, int64_t num_rows,
                                 const ArrayView& w) {
  WeightedRows out;
  out.entry.resize(static_cast<size_t>(adj.indices.length));
  out.nonzero.assign(static_cast<size_t>(num_rows), 0);
  graph::dispatch_id(adj.indptr.dtype, [&](auto* tag) {
    using Id = std::remove_pointer_t<decltype(tag)>;
    const Id* indptr = adj.indptr.data<Id>();
    const Id* eids = adj.eids.data<Id>();
    for (int64_t r = 0; r < num_rows; ++r)
      NW_CHECK(static_cast<int64_t>(indptr[r + 1] - indptr[r]) <= int64_t{1} << 32, ValueError,
               "weighted sampling: node ", r, " has more than 2^32 edges");
    parallel_for(0, num_rows, 4096, [&](int64_t b, int64_t e) {
      std::vector<double> weight, scaled;
      std::vector<int64_t> small, large;
      for (int64_t r = b; r < e; ++r) {
        const int64_t begin = static_cast<int64_t>(indptr[r]);
        const int64_t d = static_cast<int64_t>(indptr[r + 1]) - begin;
        weight.resize(static_cast<size_t>(d));
        int64_t nz = 0;
        for (int64_t j = 0; j < d; ++j) {
          weight[static_cast<size_t>(j)] = edge_weight_at(w, static_cast<int64_t>(eids[begin + j]));
          nz += weight[static_cast<size_t>(j)] > 0;
        }
        out.nonzero[static_cast<size_t>(r)] = nz;
        AliasEntry* row = out.entry.data() + begin;
        if (nz == 0) {
          for (int64_t j = 0; j < d; ++j) row[j] = {-1.0f, 0};
          continue;
        }
        build_row(weight.data(), d, row, scaled, small, large);
      }
    });
  });
  return out;
}

}  // namespace nodeweave::sampling
