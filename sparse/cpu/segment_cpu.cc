// CPU segment reductions: out[s] = reduce(x[offsets[s] : offsets[s+1]]) and the Sum/Mean backward.
// Parallel over segments, balanced by rows per segment; each segment has one writer.
#include <algorithm>

#include "sparse/cpu/cpu_kernels.h"
#include "sparse/cpu/row_partition.h"

namespace nodeweave::sparse::cpu {

namespace {

constexpr int64_t kTile = 256;

template <typename T, typename I, bool kMean>
void sum_segments(const I* offsets, int64_t segs, int64_t f, const T* x, T* out) {
  detail::parallel_rows(offsets, segs, f, [&](int64_t sb, int64_t se) {
    alignas(64) T acc[kTile];
    for (int64_t s = sb; s < se; ++s) {
      const int64_t beg = offsets[s], end = offsets[s + 1];
      for (int64_t t0 = 0; t0 < f; t0 += kTile) {
        const int64_t tl = std::min(kTile, f - t0);
        std::fill(acc, acc + tl, T(0));
        for (int64_t j = beg; j < end; ++j) {
          const T* row = x + j * f + t0;
          for (int64_t k = 0; k < tl; ++k) acc[k] += row[k];
        }
        T* o = out + s * f + t0;
        if (kMean && end > beg) {
          const T n = static_cast<T>(end - beg);
          for (int64_t k = 0; k < tl; ++k) o[k] = acc[k] / n;
        } else {
          std::copy(acc, acc + tl, o);
        }
      }
    }
  });
}

// As in gSpMM: the first row initializes, later rows win only when strictly better.
template <typename T, typename I, bool kMax>
void minmax_segments(const I* offsets, int64_t segs, int64_t f, const T* x, T* out, int64_t* arg) {
  detail::parallel_rows(offsets, segs, f, [&](int64_t sb, int64_t se) {
    for (int64_t s = sb; s < se; ++s) {
      const int64_t beg = offsets[s], end = offsets[s + 1];
      T* o = out + s * f;
      int64_t* a = arg + s * f;
      if (beg == end) {
        std::fill(o, o + f, T(0));
        std::fill(a, a + f, int64_t{-1});
        continue;
      }
      std::copy(x + beg * f, x + (beg + 1) * f, o);
      std::fill(a, a + f, beg);
      for (int64_t j = beg + 1; j < end; ++j) {
        const T* row = x + j * f;
        for (int64_t k = 0; k < f; ++k) {
          const bool better = kMax ? row[k] > o[k] : row[k] < o[k];
          o[k] = better ? row[k] : o[k];
          a[k] = better ? j : a[k];
        }
      }
    }
  });
}

template <typename T, typename I, bool kMean>
void sum_segments_backward(const I* offsets, int64_t segs, int64_t f, const T* grad_out,
                           T* grad_x) {
  detail::parallel_rows(offsets, segs, f, [&](int64_t sb, int64_t se) {
    for (int64_t s = sb; s < se; ++s) {
      const int64_t beg = offsets[s], end = offsets[s + 1];
      const T* g = grad_out + s * f;
      const T scale = kMean && end > beg ? T(1) / static_cast<T>(end - beg) : T(1);
      for (int64_t j = beg; j < end; ++j) {
        T* row = grad_x + j * f;
        for (int64_t k = 0; k < f; ++k) row[k] = g[k] * scale;
      }
    }
  });
}

}  // namespace

void segment_reduce(ReduceOp reduce, const ArrayView& x, const ArrayView& offsets, ArrayView out,
                    ArrayView arg) {
  const int64_t f = feat_len(x);
  const int64_t segs = offsets.shape[0] - 1;
  if (segs <= 0 || f == 0) return;
  NW_DISPATCH_FLOAT(x.dtype, "segment_reduce", {
    using T = scalar_t;
    NW_DISPATCH_INDEX(offsets.dtype, "segment_reduce", {
      const scalar_t* o = offsets.ptr<scalar_t>();
      switch (reduce) {
        case ReduceOp::Sum:
          sum_segments<T, scalar_t, false>(o, segs, f, x.ptr<T>(), out.ptr<T>());
          break;
        case ReduceOp::Mean:
          sum_segments<T, scalar_t, true>(o, segs, f, x.ptr<T>(), out.ptr<T>());
          break;
        case ReduceOp::Max:
          minmax_segments<T, scalar_t, true>(o, segs, f, x.ptr<T>(), out.ptr<T>(),
                                             arg.ptr<int64_t>());
          break;
        case ReduceOp::Min:
          minmax_segments<T, scalar_t, false>(o, segs, f, x.ptr<T>(), out.ptr<T>(),
                                              arg.ptr<int64_t>());
          break;
      }
    });
  });
}

void segment_reduce_backward(ReduceOp reduce, const ArrayView& grad_out, const ArrayView& offsets,
                             ArrayView grad_x) {
  const int64_t f = feat_len(grad_x);
  const int64_t segs = offsets.shape[0] - 1;
  if (segs <= 0 || f == 0) return;
  NW_DISPATCH_FLOAT(grad_x.dtype, "segment_reduce_backward", {
    using T = scalar_t;
    NW_DISPATCH_INDEX(offsets.dtype, "segment_reduce_backward", {
      const scalar_t* o = offsets.ptr<scalar_t>();
      if (reduce == ReduceOp::Mean)
        sum_segments_backward<T, scalar_t, true>(o, segs, f, grad_out.ptr<T>(), grad_x.ptr<T>());
      else
        sum_segments_backward<T, scalar_t, false>(o, segs, f, grad_out.ptr<T>(), grad_x.ptr<T>());
    });
  });
}

}  // namespace nodeweave::sparse::cpu
