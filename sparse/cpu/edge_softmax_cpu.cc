// CPU softmax over groups of rows: edge softmax (groups = rows of a compressed view, entries
// mapped to edge ids through eids) and segment softmax (groups = consecutive segments, entries in
// place). Both are the same row kernel; segment softmax passes identity eids.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sparse/cpu/cpu_kernels.h"
#include "sparse/cpu/row_partition.h"

namespace nodeweave::sparse::cpu {

namespace {

// Per-feature state lives in a stack tile; each row is read a few times per tile, which stays in
// cache for all but giant rows.
constexpr int64_t kTile = 256;

// eids == nullptr means entry j is row j of the per-entry arrays.
template <typename I>
inline int64_t entry_row(const I* eids, int64_t j) {
  return eids ? static_cast<int64_t>(eids[j]) : j;
}

template <typename T, typename I>
void softmax_rows(const I* indptr, const I* eids, int64_t num_rows, int64_t f, const T* score,
                  T* out) {
  detail::parallel_rows(indptr, num_rows, f, [&](int64_t rb, int64_t re) {
    alignas(64) T mx[kTile];
    alignas(64) T sum[kTile];
    for (int64_t r = rb; r < re; ++r) {
      const int64_t beg = indptr[r], end = indptr[r + 1];
      if (beg == end) continue;
      for (int64_t t0 = 0; t0 < f; t0 += kTile) {
        const int64_t tl = std::min(kTile, f - t0);
        std::fill(mx, mx + tl, -std::numeric_limits<T>::infinity());
        std::fill(sum, sum + tl, T(0));
        for (int64_t j = beg; j < end; ++j) {
          const T* s = score + entry_row(eids, j) * f + t0;
          for (int64_t k = 0; k < tl; ++k) mx[k] = std::max(mx[k], s[k]);
        }
        for (int64_t j = beg; j < end; ++j) {
          const int64_t e = entry_row(eids, j);
          const T* s = score + e * f + t0;
          T* o = out + e * f + t0;
          for (int64_t k = 0; k < tl; ++k) {
            o[k] = std::exp(s[k] - mx[k]);
            sum[k] += o[k];
          }
        }
        for (int64_t j = beg; j < end; ++j) {
          T* o = out + entry_row(eids, j) * f + t0;
          for (int64_t k = 0; k < tl; ++k) o[k] /= sum[k];
        }
      }
    }
  });
}

template <typename T, typename I>
void softmax_backward_rows(const I* indptr, const I* eids, int64_t num_rows, int64_t f,
                           const T* out, const T* grad_out, T* grad) {
  detail::parallel_rows(indptr, num_rows, f, [&](int64_t rb, int64_t re) {
    alignas(64) T dot[kTile];
    for (int64_t r = rb; r < re; ++r) {
      const int64_t beg = indptr[r], end = indptr[r + 1];
      for (int64_t t0 = 0; t0 < f; t0 += kTile) {
        const int64_t tl = std::min(kTile, f - t0);
        std::fill(dot, dot + tl, T(0));
        for (int64_t j = beg; j < end; ++j) {
          const int64_t off = entry_row(eids, j) * f + t0;
          for (int64_t k = 0; k < tl; ++k) dot[k] += out[off + k] * grad_out[off + k];
        }
        for (int64_t j = beg; j < end; ++j) {
          const int64_t off = entry_row(eids, j) * f + t0;
          for (int64_t k = 0; k < tl; ++k)
            grad[off + k] = out[off + k] * (grad_out[off + k] - dot[k]);
        }
      }
    }
  });
}

}  // namespace

void edge_softmax_forward(const CompressedView& rows, const ArrayView& score, ArrayView out) {
  const int64_t f = feat_len(score);
  if (rows.num_rows == 0 || f == 0) return;
  NW_DISPATCH_FLOAT(score.dtype, "edge_softmax_forward", {
    using T = scalar_t;
    NW_DISPATCH_INDEX(rows.indptr.dtype, "edge_softmax_forward", {
      softmax_rows<T, scalar_t>(rows.indptr.ptr<scalar_t>(), rows.eids.ptr<scalar_t>(),
                                rows.num_rows, f, score.ptr<T>(), out.ptr<T>());
    });
  });
}

void edge_softmax_backward(const CompressedView& rows, const ArrayView& out,
                           const ArrayView& grad_out, ArrayView grad_score) {
  const int64_t f = feat_len(out);
  if (rows.num_rows == 0 || f == 0) return;
  NW_DISPATCH_FLOAT(out.dtype, "edge_softmax_backward", {
    using T = scalar_t;
    NW_DISPATCH_INDEX(rows.indptr.dtype, "edge_softmax_backward", {
      softmax_backward_rows<T, scalar_t>(rows.indptr.ptr<scalar_t>(), rows.eids.ptr<scalar_t>(),
                                         rows.num_rows, f, out.ptr<T>(), grad_out.ptr<T>(),
                                         grad_score.ptr<T>());
    });
  });
}

void segment_softmax_forward(const ArrayView& x, const ArrayView& offsets, ArrayView out) {
  const int64_t f = feat_len(x);
  const int64_t segs = offsets.shape[0] - 1;
  if (segs <= 0 || f == 0) return;
  NW_DISPATCH_FLOAT(x.dtype, "segment_softmax_forward", {
    using T = scalar_t;
    NW_DISPATCH_INDEX(offsets.dtype, "segment_softmax_forward", {
      softmax_rows<T, scalar_t>(offsets.ptr<scalar_t>(), nullptr, segs, f, x.ptr<T>(),
                                out.ptr<T>());
    });
  });
}

void segment_softmax_backward(const ArrayView& out, const ArrayView& grad_out,
                              const ArrayView& offsets, ArrayView grad_x) {
  const int64_t f = feat_len(out);
  const int64_t segs = offsets.shape[0] - 1;
  if (segs <= 0 || f == 0) return;
  NW_DISPATCH_FLOAT(out.dtype, "segment_softmax_backward", {
    using T = scalar_t;
    NW_DISPATCH_INDEX(offsets.dtype, "segment_softmax_backward", {
      softmax_backward_rows<T, scalar_t>(offsets.ptr<scalar_t>(), nullptr, segs, f, out.ptr<T>(),
                                         grad_out.ptr<T>(), grad_x.ptr<T>());
    });
  });
}

}  // namespace nodeweave::sparse::cpu
