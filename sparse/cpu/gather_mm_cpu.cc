// CPU typed matmuls. gather_mm groups rows by their weight matrix (a counting sort of idx_b) and
// runs one GEMM per relation on the gathered rows; with few rows per relation a GEMM call costs
// more than it saves, so small groups use a per-row loop instead. segment_mm is one GEMM per
// segment directly on the input.
#include <algorithm>
#include <vector>

#include "core_framework/runtime/parallel.h"
#include "sparse/cpu/blas.h"
#include "sparse/cpu/cpu_kernels.h"
#include "sparse/cpu/float32_staging.h"

namespace nodeweave::sparse::cpu {

namespace {

// Average rows per relation from which gathering + GEMM beats the per-row loop.
constexpr int64_t kMinRowsPerGemm = 16;

// Rows grouped by relation: rows of relation r are order[start[r] : start[r+1]].
struct Groups {
  std::vector<int64_t> start, order;
};

template <typename I>
Groups group_by(const I* idx, int64_t n, int64_t num_rel) {
  Groups g;
  g.start.assign(num_rel + 1, 0);
  for (int64_t i = 0; i < n; ++i) ++g.start[idx[i] + 1];
  for (int64_t r = 0; r < num_rel; ++r) g.start[r + 1] += g.start[r];
  std::vector<int64_t> next(g.start.begin(), g.start.end() - 1);
  g.order.resize(n);
  for (int64_t i = 0; i < n; ++i) g.order[next[idx[i]]++] = i;
  return g;
}

template <typename I>
inline int64_t a_row(const I* idx_a, int64_t i) {
  return idx_a ? static_cast<int64_t>(idx_a[i]) : i;
}

// dst[p] = src[rows(p)] for p in [0, count): copies whole rows of length len, in parallel.
template <typename T, typename RowOf>
void gather_rows(const T* src, int64_t len, int64_t count, const RowOf& row_of, T* dst) {
  parallel_for(0, count, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(len, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p)
                   std::copy(src + row_of(p) * len, src + (row_of(p) + 1) * len, dst + p * len);
               });
}

template <typename T, typename I>
void gather_mm_typed(const ArrayView& a_v, const ArrayView& b_v, const ArrayView& idx_a_v,
                     const ArrayView& idx_b_v, ArrayView out_v) {
  const T* a = a_v.ptr<T>();
  const T* b = b_v.ptr<T>();
  const I* idx_a = idx_a_v.ptr<I>();  // null: row i of a
  const I* idx_b = idx_b_v.ptr<I>();
  T* out = out_v.ptr<T>();
  const int64_t n_rows = idx_b_v.shape[0], num_rel = b_v.shape[0];
  const int64_t k = b_v.shape[1], n = b_v.shape[2];

  if (n_rows < kMinRowsPerGemm * num_rel) {
    parallel_for(0, n_rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(k * n, 1)),
                 [&](int64_t rb, int64_t re) {
                   for (int64_t i = rb; i < re; ++i) {
                     const T* arow = a + a_row(idx_a, i) * k;
                     const T* w = b + static_cast<int64_t>(idx_b[i]) * k * n;
                     T* o = out + i * n;
                     std::fill(o, o + n, T(0));
                     // Row times matrix as k axpys keeps the inner loop contiguous over n.
                     for (int64_t kk = 0; kk < k; ++kk) {
                       const T s = arow[kk];
                       const T* wr = w + kk * n;
                       for (int64_t j = 0; j < n; ++j) o[j] += s * wr[j];
                     }
                   }
                 });
    return;
  }

  const Groups g = group_by(idx_b, n_rows, num_rel);
  std::vector<T> a_sorted(n_rows * k), c_sorted(n_rows * n);
  gather_rows(
      a, k, n_rows, [&](int64_t p) { return a_row(idx_a, g.order[p]); }, a_sorted.data());
  for (int64_t r = 0; r < num_rel; ++r) {
    const int64_t s = g.start[r], m = g.start[r + 1] - s;
    detail::gemm(false, false, m, n, k, a_sorted.data() + s * k, b + r * k * n, T(0),
                 c_sorted.data() + s * n);
  }
  parallel_for(0, n_rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)),
               [&](int64_t pb, int64_t pe) {
                 for (int64_t p = pb; p < pe; ++p)
                   std::copy(c_sorted.data() + p * n, c_sorted.data() + (p + 1) * n,
                             out + g.order[p] * n);
               });
}

template <typename T, typename I>
void gather_mm_grad_b_typed(const ArrayView& a_v, const ArrayView& grad_out_v,
                            const ArrayView& idx_a_v, const ArrayView& idx_b_v,
                            ArrayView grad_b_v) {
  const T* a = a_v.ptr<T>();
  const T* go = grad_out_v.ptr<T>();
  const I* idx_a = idx_a_v.ptr<I>();
  const I* idx_b = idx_b_v.ptr<I>();
  T* gb = grad_b_v.ptr<T>();
  const int64_t n_rows = idx_b_v.shape[0], num_rel = grad_b_v.shape[0];
  const int64_t k = grad_b_v.shape[1], n = grad_b_v.shape[2];
  const Groups g = group_by(idx_b, n_rows, num_rel);

  if (n_rows < kMinRowsPerGemm * num_rel) {
    // Grouping gives each relation's gradient a single writer.
    parallel_for(0, num_rel, 1, [&](int64_t rb, int64_t re) {
      for (int64_t r = rb; r < re; ++r) {
        T* w = gb + r * k * n;
        for (int64_t p = g.start[r]; p < g.start[r + 1]; ++p) {
          const int64_t i = g.order[p];
          const T* arow = a + a_row(idx_a, i) * k;
          const T* grow = go + i * n;
          for (int64_t kk = 0; kk < k; ++kk) {
            const T s = arow[kk];
            T* wr = w + kk * n;
            for (int64_t j = 0; j < n; ++j) wr[j] += s * grow[j];
          }
        }
      }
    });
    return;
  }

  std::vector<T> a_sorted(n_rows * k), g_sorted(n_rows * n);
  gather_rows(
      a, k, n_rows, [&](int64_t p) { return a_row(idx_a, g.order[p]); }, a_sorted.data());
  gather_rows(
      go, n, n_rows, [&](int64_t p) { return g.order[p]; }, g_sorted.data());
  for (int64_t r = 0; r < num_rel; ++r) {
    const int64_t s = g.start[r], m = g.start[r + 1] - s;
    if (m == 0) continue;
    // grad_b[r] += A_r^T G_r: the caller zeroed grad_b, so accumulate (beta = 1).
    detail::gemm(true, false, k, n, m, a_sorted.data() + s * k, g_sorted.data() + s * n, T(1),
                 gb + r * k * n);
  }
}

}  // namespace

void gather_mm(const ArrayView& a, const ArrayView& b, const ArrayView& idx_a,
               const ArrayView& idx_b, ArrayView out) {
  if (out.numel() == 0) return;
  if (is_half(a.dtype)) {  // computed in float32, rounded once
    const Float32Staged a32(a), b32(b), out32(out, /*read=*/false);
    gather_mm(a32.view(), b32.view(), idx_a, idx_b, out32.view());
    out32.narrow_into(out);
    return;
  }
  NW_DISPATCH_FLOAT(a.dtype, "gather_mm", {
    using T = scalar_t;
    NW_DISPATCH_INDEX(idx_b.dtype, "gather_mm",
                      { gather_mm_typed<T, scalar_t>(a, b, idx_a, idx_b, out); });
  });
}

void gather_mm_grad_b(const ArrayView& a, const ArrayView& grad_out, const ArrayView& idx_a,
                      const ArrayView& idx_b, ArrayView grad_b) {
  if (grad_b.numel() == 0 || idx_b.shape[0] == 0) return;
  if (is_half(a.dtype)) {  // accumulated in float32 (onto the caller's zeros), rounded once
    const Float32Staged a32(a), g32(grad_out), gb32(grad_b);
    gather_mm_grad_b(a32.view(), g32.view(), idx_a, idx_b, gb32.view());
    gb32.narrow_into(grad_b);
    return;
  }
  NW_DISPATCH_FLOAT(a.dtype, "gather_mm_grad_b", {
    using T = scalar_t;
    NW_DISPATCH_INDEX(idx_b.dtype, "gather_mm_grad_b",
                      { gather_mm_grad_b_typed<T, scalar_t>(a, grad_out, idx_a, idx_b, grad_b); });
  });
}

void segment_mm(const ArrayView& a, const ArrayView& b, const ArrayView& seglen, ArrayView out) {
  if (is_half(a.dtype)) {
    const Float32Staged a32(a), b32(b), out32(out, /*read=*/false);
    segment_mm(a32.view(), b32.view(), seglen, out32.view());
    out32.narrow_into(out);
    return;
  }
  const int64_t num_rel = b.shape[0], k = b.shape[1], n = b.shape[2];
  const int64_t* len = seglen.ptr<int64_t>();
  NW_DISPATCH_FLOAT(a.dtype, "segment_mm", {
    using T = scalar_t;
    int64_t s = 0;
    for (int64_t r = 0; r < num_rel; ++r) {
      detail::gemm(false, false, len[r], n, k, a.ptr<T>() + s * k, b.ptr<T>() + r * k * n, T(0),
                   out.ptr<T>() + s * n);
      s += len[r];
    }
  });
}

void segment_mm_grad_b(const ArrayView& a, const ArrayView& grad_out, const ArrayView& seglen,
                       ArrayView grad_b) {
  if (is_half(a.dtype)) {
    const Float32Staged a32(a), g32(grad_out), gb32(grad_b, /*read=*/false);
    segment_mm_grad_b(a32.view(), g32.view(), seglen, gb32.view());
    gb32.narrow_into(grad_b);
    return;
  }
  const int64_t num_rel = grad_b.shape[0], k = grad_b.shape[1], n = grad_b.shape[2];
  const int64_t* len = seglen.ptr<int64_t>();
  NW_DISPATCH_FLOAT(a.dtype, "segment_mm_grad_b", {
    using T = scalar_t;
    int64_t s = 0;
    for (int64_t r = 0; r < num_rel; ++r) {
      // An empty segment's gradient is zero (gemm with an empty inner dimension writes beta * C).
      detail::gemm(true, false, k, n, len[r], a.ptr<T>() + s * k, grad_out.ptr<T>() + s * n, T(0),
                   grad_b.ptr<T>() + r * k * n);
      s += len[r];
    }
  });
}

}  // namespace nodeweave::sparse::cpu
