// COO <-> compressed conversions. The counting sort is parallel: each thread histograms its own
// slice of edges, an exclusive scan over (row, thread) gives every thread its own write cursor per
// row, so the scatter needs no atomics and stays stable (thread t's edges precede thread t+1's).
#include "graph/format_convert.h"

#include <omp.h>

#include <vector>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::graph {

namespace {

template <typename I>
CompressedArrays counting_sort(const IdArray& rows_arr, const IdArray& cols_arr, int64_t num_rows) {
  const int64_t n = rows_arr.length;
  const I* rows = rows_arr.data<I>();
  const I* cols = cols_arr.data<I>();
  CompressedArrays out;
  out.indptr = IdArray::empty(num_rows + 1, rows_arr.dtype);
  out.indices = IdArray::empty(n, rows_arr.dtype);
  out.eids = IdArray::empty(n, rows_arr.dtype);
  I* indptr = out.indptr.data<I>();
  I* indices = out.indices.data<I>();
  I* eids = out.eids.data<I>();

  // Per-thread histograms cost num_rows * threads memory: only worth it for many edges per row.
  int nt = get_num_threads();
  if (n < 4 * kGrainSize || num_rows * 4 > n) nt = 1;
  std::vector<int64_t> counts(static_cast<size_t>(num_rows) * nt, 0);  // [row][thread]
  const int64_t chunk = (n + nt - 1) / nt;
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    const int t = omp_get_thread_num();
    const int64_t b = t * chunk, e = std::min(n, b + chunk);
    for (int64_t i = b; i < e; ++i) ++counts[static_cast<size_t>(rows[i]) * nt + t];
  }
  int64_t running = 0;
  for (int64_t r = 0; r < num_rows; ++r) {
    indptr[r] = static_cast<I>(running);
    for (int t = 0; t < nt; ++t) {
      int64_t c = counts[static_cast<size_t>(r) * nt + t];
      counts[static_cast<size_t>(r) * nt + t] = running;
      running += c;
    }
  }
  indptr[num_rows] = static_cast<I>(running);
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    const int t = omp_get_thread_num();
    const int64_t b = t * chunk, e = std::min(n, b + chunk);
    for (int64_t i = b; i < e; ++i) {
      int64_t pos = counts[static_cast<size_t>(rows[i]) * nt + t]++;
      indices[pos] = cols[i];
      eids[pos] = static_cast<I>(i);
    }
  }
  return out;
}

template <typename I>
CooArrays expand(const CompressedArrays& c, int64_t num_rows) {
  const int64_t n = c.indices.length;
  CooArrays out;
  out.src = IdArray::empty(n, c.indices.dtype);
  out.dst = IdArray::empty(n, c.indices.dtype);
  const I* indptr = c.indptr.data<I>();
  const I* indices = c.indices.data<I>();
  const I* eids = c.eids.data<I>();
  I* rows = out.src.data<I>();
  I* cols = out.dst.data<I>();
  parallel_for(0, num_rows, 1024, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      for (I k = indptr[r]; k < indptr[r + 1]; ++k) {
        rows[eids[k]] = static_cast<I>(r);
        cols[eids[k]] = indices[k];
      }
    }
  });
  return out;
}

}  // namespace

CompressedArrays coo_to_compressed(const IdArray& rows, const IdArray& cols, int64_t num_rows) {
  NW_CHECK(rows.device().is_cpu() && cols.device().is_cpu(), ValueError,
           "graph format conversion runs on the CPU");
  return dispatch_id(rows.dtype, [&](auto* p) {
    using I = std::remove_pointer_t<decltype(p)>;
    return counting_sort<I>(rows, cols, num_rows);
  });
}

CooArrays compressed_to_coo(const CompressedArrays& c, int64_t num_rows) {
  NW_CHECK(c.indptr.device().is_cpu(), ValueError, "graph format conversion runs on the CPU");
  return dispatch_id(c.indices.dtype, [&](auto* p) {
    using I = std::remove_pointer_t<decltype(p)>;
    return expand<I>(c, num_rows);
  });
}

IdArray degrees_from_indptr(const IdArray& indptr) {
  const int64_t n = indptr.length - 1;
  IdArray out = IdArray::empty(n, DType::Int64);
  int64_t* d = out.data<int64_t>();
  dispatch_id(indptr.dtype, [&](auto* p) {
    using I = std::remove_pointer_t<decltype(p)>;
    const I* ip = indptr.data<I>();
    parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) d[i] = static_cast<int64_t>(ip[i + 1] - ip[i]);
    });
  });
  return out;
}

}  // namespace nodeweave::graph
