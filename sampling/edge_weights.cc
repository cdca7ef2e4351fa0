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

WeightedRows build_weighted_rows(const graph::CompressedArrays& adj, int64_t num_rows,
                                 const ArrayView& w) {
  WeightedRows out;
  out.cumsum.resize(static_cast<size_t>(adj.indices.length));
  out.nonzero.assign(static_cast<size_t>(num_rows), 0);
  graph::dispatch_id(adj.indptr.dtype, [&](auto* tag) {
    using Id = std::remove_pointer_t<decltype(tag)>;
    const Id* indptr = adj.indptr.data<Id>();
    const Id* eids = adj.eids.data<Id>();
    parallel_for(0, num_rows, 4096, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        double run = 0;
        int64_t nz = 0;
        for (int64_t i = indptr[r]; i < indptr[r + 1]; ++i) {
          const double v = edge_weight_at(w, static_cast<int64_t>(eids[i]));
          run += v;
          nz += v > 0;
          out.cumsum[static_cast<size_t>(i)] = run;
        }
        out.nonzero[static_cast<size_t>(r)] = nz;
      }
    });
  });
  return out;
}

}  // namespace nodeweave::sampling
