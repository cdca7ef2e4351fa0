// CPU softmax over groups of rows: edge softmax (groups = rows of a compressed view, entries
// mapped to edge ids through eids) and segment softmax (groups = consecutive segments, entries in
// place). Both are the same row kernel; segment softmax passes identity eids.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

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

// Rows longer than this many elements (degree x features) are not gathered into a buffer but
// processed in place, tile by tile: the buffer would otherwise grow to the size of the output.
constexpr int64_t kMaxGather = int64_t{1} << 20;

// Softmax of one row, entries read and written in place through eids (several passes over
// scattered entries, but no extra memory): the fallback for giant rows.
template <typename T, typename I>
void softmax_row_in_place(const I* eids, int64_t beg, int64_t end, int64_t f, const T* score,
                          T* out) {
  alignas(64) T mx[kTile];
  alignas(64) T sum[kTile];
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

// Softmax over each row's entries. With eids (edge softmax) a row's scores sit at scattered edge
// ids, so each is a cache-line miss: they are gathered once into a contiguous buffer, normalized
// there, and scattered once to the output — two scattered touches per entry instead of five for
// the in-place passes (measured 3% of STREAM in place on R-MAT). Segment softmax (no eids) has its
// rows contiguous already: the output row itself serves as the buffer, so nothing is copied twice.
template <typename T, typename I>
void softmax_rows(const I* indptr, const I* eids, int64_t num_rows, int64_t f, const T* score,
                  T* out) {
  detail::parallel_rows(indptr, num_rows, f, [&](int64_t rb, int64_t re) {
    std::vector<T> buf, mx(f), sum(f);
    for (int64_t r = rb; r < re; ++r) {
      const int64_t beg = indptr[r], end = indptr[r + 1], deg = end - beg;
      if (deg == 0) continue;
      if (eids && deg * f > kMaxGather) {
        softmax_row_in_place(eids, beg, end, f, score, out);
        continue;
      }
      if (eids && static_cast<int64_t>(buf.size()) < deg * f) buf.resize(deg * f);
      std::fill(mx.begin(), mx.end(), -std::numeric_limits<T>::infinity());
      std::fill(sum.begin(), sum.end(), T(0));
      T* b = eids ? buf.data() : out + beg * f;
      for (int64_t j = 0; j < deg; ++j) {
        const T* s = score + entry_row(eids, beg + j) * f;
        T* bj = b + j * f;
        for (int64_t k = 0; k < f; ++k) {
          bj[k] = s[k];
          mx[k] = std::max(mx[k], s[k]);
        }
      }
      for (int64_t j = 0; j < deg; ++j) {
        T* bj = b + j * f;
        for (int64_t k = 0; k < f; ++k) {
          bj[k] = std::exp(bj[k] - mx[k]);
          sum[k] += bj[k];
        }
      }
      for (int64_t k = 0; k < f; ++k) sum[k] = T(1) / sum[k];
      for (int64_t j = 0; j < deg; ++j) {
        const T* bj = b + j * f;
        T* o = out + entry_row(eids, beg + j) * f;
        for (int64_t k = 0; k < f; ++k) o[k] = bj[k] * sum[k];
      }
    }
  });
}

// grad_x = out * (grad_out - sum_row(out * grad_out)), with the same gather-once scheme: a row's
// (out, grad_out) pairs are read from their scattered edge ids once, and grad written once.
template <typename T, typename I>
void softmax_backward_rows(const I* indptr, const I* eids, int64_t num_rows, int64_t f,
                           const T* out, const T* grad_out, T* grad) {
  detail::parallel_rows(indptr, num_rows, f, [&](int64_t rb, int64_t re) {
    std::vector<T> ob, gb, dot(f);
    for (int64_t r = rb; r < re; ++r) {
      const int64_t beg = indptr[r], end = indptr[r + 1], deg = end - beg;
      if (deg == 0) continue;
      std::fill(dot.begin(), dot.end(), T(0));
      if (!eids || deg * f > kMaxGather) {  // contiguous (segment) or giant row: two passes in place
        for (int64_t j = beg; j < end; ++j) {
          const int64_t off = entry_row(eids, j) * f;
          for (int64_t k = 0; k < f; ++k) dot[k] += out[off + k] * grad_out[off + k];
        }
        for (int64_t j = beg; j < end; ++j) {
          const int64_t off = entry_row(eids, j) * f;
          for (int64_t k = 0; k < f; ++k)
            grad[off + k] = out[off + k] * (grad_out[off + k] - dot[k]);
        }
        continue;
      }
      if (static_cast<int64_t>(ob.size()) < deg * f) {
        ob.resize(deg * f);
        gb.resize(deg * f);
      }
      for (int64_t j = 0; j < deg; ++j) {
        const int64_t off = entry_row(eids, beg + j) * f;
        T* oj = ob.data() + j * f;
        T* gj = gb.data() + j * f;
        for (int64_t k = 0; k < f; ++k) {
          oj[k] = out[off + k];
          gj[k] = grad_out[off + k];
          dot[k] += oj[k] * gj[k];
        }
      }
      for (int64_t j = 0; j < deg; ++j) {
        const T* oj = ob.data() + j * f;
        const T* gj = gb.data() + j * f;
        T* g = grad + entry_row(eids, beg + j) * f;
        for (int64_t k = 0; k < f; ++k) g[k] = oj[k] * (gj[k] - dot[k]);
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
