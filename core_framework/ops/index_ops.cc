// The indexing ops of the op table — IndexSelect, IndexAdd, IndexCopy, Gather, Scatter,
// ScatterAdd, MaskedFill, MaskedSelect, Nonzero — with CPU kernels and gradient rules, and the
// composites and in-place forms built on them (embedding, index_add_, scatter_, masked_fill_, ...).
//
// Every kernel validates all index values before it writes anything, reads and writes strided
// tensors in place (no hidden copies of x), and parallelizes only where no two threads can write
// the same element: scatters split the outer or feature dims, or own target rows.
#include <algorithm>
#include <cmath>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/ops/convert.h"
#include "core_framework/ops/elementwise_loop.h"
#include "core_framework/ops/index_util.h"
#include "core_framework/ops/op_helpers.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave {

namespace {

// out <- src (broadcast, same dtype), bypassing the dispatcher so a kernel records no autograd
// node or tracer event of its own.
void copy_raw(const Tensor& out, const Tensor& src) {
  dispatch_by_size(out.itemsize(), [&](auto tag) {
    using U = decltype(tag);
    elementwise_kernel<U, U>(out, {src}, [](U v) { return v; });
  });
}
Tensor fresh_copy(const Tensor& t) {
  Tensor c = empty(t.shape(), t.dtype(), t.device());
  copy_raw(c, t);
  return c;
}
Tensor contiguous_raw(const Tensor& t) { return t.is_contiguous() ? t : fresh_copy(t); }

// Kernels treat a 0-d tensor as shape [1]: same memory, one code path.
Tensor at_least_1d(const Tensor& t) {
  return t.dim() == 0 ? make_view(t, {1}, {1}, t.offset()) : t;
}

void check_index_dtype(const Tensor& index, const char* op, const char* arg) {
  NW_CHECK(index.dtype() == DType::Int32 || index.dtype() == DType::Int64, TypeError, op, ": ", arg,
           " must be an int32 or int64 tensor, got ", dtype_name(index.dtype()));
}

// Every value must lie in [0, size). One vectorized min/max pass; the slow scan only names the
// first offender.
template <typename I>
void check_range(const I* p, int64_t n, int64_t size, const char* op, const char* arg,
                 int64_t dim) {
  if (n == 0) return;
  I lo = p[0], hi = p[0];
#pragma omp simd reduction(min : lo) reduction(max : hi)
  for (int64_t i = 0; i < n; ++i) {  // by value: std::min's reference return vectorizes as gathers
    const I v = p[i];
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  if (lo >= 0 && static_cast<int64_t>(hi) < size) return;
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = p[i];
    if (v < 0 || v >= size) {
      throw IndexError(str_cat(op, ": ", arg, " ", v, " is out of bounds for dimension ", dim,
                               " with size ", size,
                               v < 0 ? " (negative indices are not accepted here)" : ""));
    }
  }
}

// Each index value once: dims an expand() broadcast (stride 0) collapse to size 1, then every
// value is range-checked before a kernel reads through the index.
void check_index_values(const Tensor& index, int64_t size, const char* op, int64_t dim) {
  Shape sh = index.shape();
  for (int64_t e = 0; e < index.dim(); ++e)
    if (index.stride(e) == 0) sh[e] = std::min<int64_t>(sh[e], 1);
  Tensor distinct = contiguous_raw(make_view(index, sh, index.strides(), index.offset()));
  NW_DISPATCH_INDEX(distinct.dtype(), op, {
    check_range(distinct.data<scalar_t>(), distinct.numel(), size, op, "index", dim);
  });
}

// What one element update does: assign, or accumulate alpha * src (computed in float for halves).
template <typename T, bool kAdd>
struct RowOp {
  using Acc = typename CanonicalT<T>::type;
  Acc alpha{};
  void operator()(T& dst, T src) const {
    if constexpr (kAdd) {
      dst = convert_value<T>(load_value(dst) + alpha * load_value(src));
    } else {
      dst = src;
    }
  }
};

// out[o, index[k], f] op= src[o, k, f] (o over dims before `dim`, f over dims after it). Sources
// that share a target row would race, so threads split the outer dim, or the feature dim, or —
// when both are small — own ranges of target rows. Every strategy applies a row's sources in
// index order, so results match a serial loop.
template <typename T, typename I, typename Op>
void index_rows(T* out, const DimGroup& oo, int64_t os, const DimGroup& oi, const T* src,
                const DimGroup& so, int64_t ss, const DimGroup& si, const I* idx, int64_t K,
                int64_t N, const Op& op) {
  const int64_t O = oo.size, F = oi.size;
  const bool unit = oi.unit() && si.unit();
  auto row = [&](int64_t o, int64_t k, int64_t f0, int64_t f1) {
    T* dst = out + oo.at(o) + static_cast<int64_t>(idx[k]) * os;
    const T* s = src + so.at(o) + k * ss;
    if (unit) {
      for (int64_t f = f0; f < f1; ++f) op(dst[f], s[f]);
    } else {
      for (int64_t f = f0; f < f1; ++f) op(dst[oi.at(f)], s[si.at(f)]);
    }
  };
  const int64_t work = O * K * F;
  const int nt = get_num_threads();
  if (O == 1 && F == 1) {  // scalar rows (1-D scatters): a tight loop, in target ranges per thread
    T* dst = out + oo.at(0) + oi.at(0);
    const T* s = src + so.at(0) + si.at(0);
    if (work <= kGrainSize || nt == 1) {
      for (int64_t k = 0; k < K; ++k) op(dst[static_cast<int64_t>(idx[k]) * os], s[k * ss]);
      return;
    }
    parallel_for(0, nt, 1, [&](int64_t b, int64_t e) {
      const int64_t lo = N * b / nt, hi = N * e / nt;
      for (int64_t k = 0; k < K; ++k) {
        const int64_t v = idx[k];
        if (v >= lo && v < hi) op(dst[v * os], s[k * ss]);
      }
    });
    return;
  }
  if (work <= kGrainSize || nt == 1) {
    for (int64_t o = 0; o < O; ++o)
      for (int64_t k = 0; k < K; ++k) row(o, k, 0, F);
    return;
  }
  if (O >= nt) {
    parallel_for(0, O, 1, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o)
        for (int64_t k = 0; k < K; ++k) row(o, k, 0, F);
    });
    return;
  }
  if (F >= 32 * nt) {
    parallel_for(0, F, 32, [&](int64_t b, int64_t e) {
      for (int64_t o = 0; o < O; ++o)
        for (int64_t k = 0; k < K; ++k) row(o, k, b, e);
    });
    return;
  }
  // Narrow rows: each thread owns a range of target rows and applies, in index order, the
  // sources landing there. Every thread reads the whole index, which costs far less than the
  // rows it skips.
  parallel_for(0, nt, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t lo = N * t / nt, hi = N * (t + 1) / nt;
      for (int64_t o = 0; o < O; ++o)
        for (int64_t k = 0; k < K; ++k) {
          const int64_t v = idx[k];
          if (v >= lo && v < hi) row(o, k, 0, F);
        }
    }
  });
}

// Positions i in [0, n) where pred(i) holds, in increasing order: counted per chunk in parallel,
// then each chunk emits from its prefix offset, so the order never depends on the thread count.
template <typename Pred, typename Alloc, typename Emit>
void compact(int64_t n, const Pred& pred, const Alloc& alloc, const Emit& emit) {
  const int64_t nc = std::max<int64_t>(1, std::min<int64_t>(4 * get_num_threads(), n / kGrainSize));
  std::vector<int64_t> off(nc + 1, 0);
  auto bound = [&](int64_t c) { return c * (n / nc) + std::min(c, n % nc); };
  parallel_for(0, nc, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t cnt = 0;
      for (int64_t i = bound(c); i < bound(c + 1); ++i) cnt += pred(i) ? 1 : 0;
      off[c + 1] = cnt;
    }
  });
  for (int64_t c = 0; c < nc; ++c) off[c + 1] += off[c];
  alloc(off[nc]);
  parallel_for(0, nc, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t w = off[c];
      for (int64_t i = bound(c); i < bound(c + 1); ++i)
        if (pred(i)) emit(w++, i);
    }
  });
}

// ---- shape checks shared by infer functions and composites ----

// index_add / index_copy: source is self's shape with `dim` resized to index.numel().
void check_index_source(const char* op, const Tensor& x, const Tensor& index, const Tensor& src,
                        int64_t d) {
  check_index_dtype(index, op, "index");
  NW_CHECK(index.dim() <= 1, ValueError, op, ": index must be 0-d or 1-D, got shape ",
           shape_str(index.shape()));
  NW_CHECK(src.dtype() == x.dtype(), TypeError, op, ": source dtype ", dtype_name(src.dtype()),
           " must match the dtype of self, ", dtype_name(x.dtype()));
  Shape want = x.shape();
  if (x.dim() == 0) {
    NW_CHECK(index.numel() == 1, ValueError, op,
             ": indexing a 0-d tensor takes exactly one index, got ", index.numel());
  } else {
    want[d] = index.numel();
  }
  NW_CHECK(src.shape() == want, ValueError, op, ": source must have shape ", shape_str(want),
           " (self's shape ", shape_str(x.shape()), " with dim ", d,
           " of size index.numel() = ", index.numel(), "), got ", shape_str(src.shape()));
}

// gather / scatter: index has self's rank and is no larger than self outside `dim`.
void check_gather_index(const char* op, const Tensor& x, const Tensor& index, int64_t d) {
  check_index_dtype(index, op, "index");
  NW_CHECK(index.dim() == x.dim(), ValueError, op, ": index must have as many dims as self (",
           x.dim(), "), got shape ", shape_str(index.shape()));
  for (int64_t e = 0; e < x.dim(); ++e) {
    NW_CHECK(e == d || index.size(e) <= x.size(e), ValueError, op, ": index.size(", e,
             ") = ", index.size(e), " exceeds self.size(", e, ") = ", x.size(e), " (index shape ",
             shape_str(index.shape()), ", self shape ", shape_str(x.shape()), ")");
  }
}

void check_add_dtype(const char* op, DType dt, double alpha) {
  NW_CHECK(dt != DType::Bool, TypeError, op,
           ": bool tensors can't be accumulated; use an integer or float dtype");
  NW_CHECK(!is_integral(dt) || alpha == std::floor(alpha), ValueError, op,
           ": alpha must be a whole number for integer tensors, got ", alpha);
}

// ---- IndexSelect(x, index; dim) ----
std::vector<TensorMeta> index_select_infer(const TensorList& in, const Attrs& a) {
  const Tensor &x = in[0], &index = in[1];
  int64_t d = wrap_dim(a.i(0), x.dim(), "dim");
  check_index_dtype(index, "index_select", "index");
  NW_CHECK(index.dim() <= 1, ValueError, "index_select: index must be 0-d or 1-D, got shape ",
           shape_str(index.shape()));
  Shape s = x.shape();
  if (x.dim() == 0) {
    NW_CHECK(index.numel() == 1, ValueError,
             "index_select: indexing a 0-d tensor takes exactly one index, got ", index.numel());
  } else {
    s[d] = index.numel();
  }
  return {TensorMeta{s, x.dtype(), x.device()}};
}

template <typename T, typename I>
void index_select_loop(const Tensor& x, const I* idx, int64_t K, int64_t d, const Tensor& out) {
  const DimGroup xo = group_dims(x.shape(), x.strides(), 0, d);
  const DimGroup xi = group_dims(x.shape(), x.strides(), d + 1, x.dim());
  const int64_t F = xi.size, sd = x.stride(d);
  const T* xp = x.data<T>();
  T* op = out.data<T>();
  if (xo.size == 1 && F == 1) {  // one element per index: a tight gather loop
    const T* s = xp + xo.at(0);
    parallel_for(0, K, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) op[k] = s[static_cast<int64_t>(idx[k]) * sd];
    });
    return;
  }
  const bool unit = xi.unit();
  parallel_for(0, xo.size * K, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(F, 1)),
               [&](int64_t b, int64_t e) {
                 int64_t q = b / K,
                         k = b % K;  // row r = (q, k), advanced without a division per row
                 for (int64_t r = b; r < e; ++r) {
                   const T* s = xp + xo.at(q) + static_cast<int64_t>(idx[k]) * sd;
                   T* dst = op + r * F;
                   if (unit) {
                     for (int64_t f = 0; f < F; ++f) dst[f] = s[f];
                   } else {
                     for (int64_t f = 0; f < F; ++f) dst[f] = s[xi.at(f)];
                   }
                   if (++k == K) {
                     k = 0;
                     ++q;
                   }
                 }
               });
}

void index_select_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  Tensor x = at_least_1d(in[0]);
  int64_t d = wrap_dim(a.i(0), x.dim(), "dim");
  Tensor index = contiguous_raw(in[1]);
  const int64_t K = index.numel();
  NW_DISPATCH_INDEX(index.dtype(), "index_select", {
    const scalar_t* idx = index.data<scalar_t>();
    check_range(idx, K, x.size(d), "index_select", "index", d);
    dispatch_by_size(x.itemsize(),
                     [&](auto tag) { index_select_loop<decltype(tag)>(x, idx, K, d, out[0]); });
  });
}

// ---- IndexAdd(x, index, src; dim, alpha) and IndexCopy(x, index, src; dim) ----
template <bool kAdd>
std::vector<TensorMeta> index_add_copy_infer(const TensorList& in, const Attrs& a) {
  const char* op = kAdd ? "index_add" : "index_copy";
  int64_t d = wrap_dim(a.i(0), in[0].dim(), "dim");
  check_index_source(op, in[0], in[1], in[2], d);
  if (kAdd) check_add_dtype(op, in[0].dtype(), a.f(1));
  return {TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()}};
}

template <bool kAdd>
void index_add_copy_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  const char* op = kAdd ? "index_add" : "index_copy";
  const bool in_place = in[0].is_same(out[0]);
  Tensor o = at_least_1d(out[0]);
  int64_t d = wrap_dim(a.i(0), o.dim(), "dim");
  Tensor index = contiguous_raw(in[1]);
  Tensor src = at_least_1d(in[2]);
  // In place, a source that shares memory with self must be read before anything is written.
  if (in_place && src.storage() == o.storage()) src = fresh_copy(src);
  const int64_t K = index.numel(), N = o.size(d);
  const DimGroup oo = group_dims(o.shape(), o.strides(), 0, d);
  const DimGroup oi = group_dims(o.shape(), o.strides(), d + 1, o.dim());
  const DimGroup so = group_dims(src.shape(), src.strides(), 0, d);
  const DimGroup si = group_dims(src.shape(), src.strides(), d + 1, src.dim());
  NW_DISPATCH_INDEX(index.dtype(), op, {
    using I = scalar_t;
    const I* idx = index.data<I>();
    check_range(idx, K, N, op, "index", d);
    if (!in_place) copy_raw(out[0], in[0]);
    if constexpr (kAdd) {
      NW_DISPATCH_ANY(o.dtype(), op, {
        RowOp<scalar_t, true> f{static_cast<typename RowOp<scalar_t, true>::Acc>(a.f(1))};
        index_rows(o.data<scalar_t>(), oo, o.stride(d), oi, src.data<scalar_t>(), so, src.stride(d),
                   si, idx, K, N, f);
      });
    } else {
      dispatch_by_size(o.itemsize(), [&](auto tag) {
        using U = decltype(tag);
        index_rows(o.data<U>(), oo, o.stride(d), oi, src.data<U>(), so, src.stride(d), si, idx, K,
                   N, RowOp<U, false>{});
      });
    }
  });
}

// ---- Gather(x, index; dim) ----
std::vector<TensorMeta> gather_infer(const TensorList& in, const Attrs& a) {
  int64_t d = wrap_dim(a.i(0), in[0].dim(), "dim");
  check_gather_index("gather", in[0], in[1], d);
  return {TensorMeta{in[1].shape(), in[0].dtype(), in[0].device()}};
}

// out[o, k, f] = x[o, index[o, k, f], f]. The index is read through its strides: an index
// expanded along the feature dims (the usual GNN form) is one value per row, and the row is a
// contiguous copy.
template <typename T, typename I>
void gather_loop(const Tensor& x, const Tensor& index, const I* idx, int64_t d, T* out) {
  const Shape& isz = index.shape();
  const int64_t n = index.dim();
  const DimGroup xo = group_dims(isz, x.strides(), 0, d),
                 xi = group_dims(isz, x.strides(), d + 1, n);
  const DimGroup io = group_dims(isz, index.strides(), 0, d),
                 ii = group_dims(isz, index.strides(), d + 1, n);
  const int64_t K = isz[d], F = xi.size, xs = x.stride(d), is = index.stride(d);
  const bool row_index = ii.table.empty() && ii.stride == 0;
  const T* xp = x.data<T>();
  if (xo.size == 1 && F == 1) {  // one element per index: a tight gather loop
    const T* s = xp + xo.at(0);
    const I* ip = idx + io.at(0);
    parallel_for(0, K, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) out[k] = s[static_cast<int64_t>(ip[k * is]) * xs];
    });
    return;
  }
  const bool x_unit = xi.unit(), both_unit = xi.unit() && ii.unit();
  parallel_for(0, xo.size * K, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(F, 1)),
               [&](int64_t b, int64_t e) {
                 int64_t q = b / K,
                         k = b % K;  // row r = (q, k), advanced without a division per row
                 for (int64_t r = b; r < e; ++r) {
                   const T* base = xp + xo.at(q);
                   const I* ir = idx + io.at(q) + k * is;
                   T* dst = out + r * F;
                   if (row_index) {
                     const T* s = base + static_cast<int64_t>(ir[0]) * xs;
                     if (x_unit) {
                       for (int64_t f = 0; f < F; ++f) dst[f] = s[f];
                     } else {
                       for (int64_t f = 0; f < F; ++f) dst[f] = s[xi.at(f)];
                     }
                   } else if (both_unit) {
                     for (int64_t f = 0; f < F; ++f)
                       dst[f] = base[static_cast<int64_t>(ir[f]) * xs + f];
                   } else {
                     for (int64_t f = 0; f < F; ++f)
                       dst[f] = base[static_cast<int64_t>(ir[ii.at(f)]) * xs + xi.at(f)];
                   }
                   if (++k == K) {
                     k = 0;
                     ++q;
                   }
                 }
               });
}

void gather_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  Tensor x = at_least_1d(in[0]);
  Tensor index = at_least_1d(in[1]);
  int64_t d = wrap_dim(a.i(0), x.dim(), "dim");
  check_index_values(index, x.size(d), "gather", d);
  NW_DISPATCH_INDEX(index.dtype(), "gather", {
    const scalar_t* idx = index.data<scalar_t>();
    dispatch_by_size(x.itemsize(), [&](auto tag) {
      using U = decltype(tag);
      gather_loop<U>(x, index, idx, d, out[0].data<U>());
    });
  });
}

// ---- Scatter(x, index, src; dim) and ScatterAdd(x, index, src; dim) ----
template <bool kAdd>
std::vector<TensorMeta> scatter_infer(const TensorList& in, const Attrs& a) {
  const char* op = kAdd ? "scatter_add" : "scatter";
  const Tensor &x = in[0], &index = in[1], &src = in[2];
  int64_t d = wrap_dim(a.i(0), x.dim(), "dim");
  check_gather_index(op, x, index, d);
  NW_CHECK(src.dtype() == x.dtype(), TypeError, op, ": src dtype ", dtype_name(src.dtype()),
           " must match the dtype of self, ", dtype_name(x.dtype()));
  NW_CHECK(src.shape() == index.shape(), ValueError, op, ": src must have the index's shape ",
           shape_str(index.shape()), ", got ", shape_str(src.shape()));
  if (kAdd) check_add_dtype(op, x.dtype(), 1.0);
  return {TensorMeta{x.shape(), x.dtype(), x.device()}};
}

// out[o, index[o, k, f], f] op= src[o, k, f]. Distinct (o, f) pairs never share a target, so
// threads split o or f. With o trivial and one index value per row (a 1-D scatter, or an index
// expanded along the features) this is index_rows, which also parallelizes narrow rows.
template <typename T, typename I, typename Op>
void scatter_loop(const Tensor& o, const Tensor& src, const Tensor& index, const I* idx, int64_t d,
                  const Op& op) {
  const Shape& isz = index.shape();
  const int64_t n = index.dim();
  const DimGroup oo = group_dims(isz, o.strides(), 0, d),
                 oi = group_dims(isz, o.strides(), d + 1, n);
  const DimGroup so = group_dims(isz, src.strides(), 0, d),
                 si = group_dims(isz, src.strides(), d + 1, n);
  const DimGroup io = group_dims(isz, index.strides(), 0, d),
                 ii = group_dims(isz, index.strides(), d + 1, n);
  const int64_t O = oo.size, K = isz[d], F = oi.size, os = o.stride(d), ss = src.stride(d),
                is = index.stride(d);
  const bool row_index = ii.table.empty() && ii.stride == 0;
  T* out = o.data<T>();
  const T* sp = src.data<T>();
  if (O == 1 && row_index) {
    std::vector<I> rows;
    const I* ip = idx + io.at(0);
    if (is != 1) {
      rows.resize(K);
      for (int64_t k = 0; k < K; ++k) rows[k] = ip[k * is];
      ip = rows.data();
    }
    index_rows(out, oo, os, oi, sp, so, ss, si, ip, K, o.size(d), op);
    return;
  }
  const bool unit = oi.unit() && si.unit();
  auto lines = [&](int64_t o0, int64_t o1, int64_t f0, int64_t f1) {
    for (int64_t q = o0; q < o1; ++q) {
      T* dst = out + oo.at(q);
      for (int64_t k = 0; k < K; ++k) {
        const I* ir = idx + io.at(q) + k * is;
        const T* s = sp + so.at(q) + k * ss;
        if (row_index) {
          T* drow = dst + static_cast<int64_t>(ir[0]) * os;
          if (unit) {
            for (int64_t f = f0; f < f1; ++f) op(drow[f], s[f]);
          } else {
            for (int64_t f = f0; f < f1; ++f) op(drow[oi.at(f)], s[si.at(f)]);
          }
        } else if (unit && ii.unit()) {
          for (int64_t f = f0; f < f1; ++f) op(dst[static_cast<int64_t>(ir[f]) * os + f], s[f]);
        } else {
          for (int64_t f = f0; f < f1; ++f) {
            op(dst[static_cast<int64_t>(ir[ii.at(f)]) * os + oi.at(f)], s[si.at(f)]);
          }
        }
      }
    }
  };
  const int nt = get_num_threads();
  if (O * K * F <= kGrainSize || nt == 1 || (O < nt && F < 32 * nt)) {
    lines(0, O, 0, F);
  } else if (O >= nt) {
    parallel_for(0, O, 1, [&](int64_t b, int64_t e) { lines(b, e, 0, F); });
  } else {
    parallel_for(0, F, 32, [&](int64_t b, int64_t e) { lines(0, O, b, e); });
  }
}

template <bool kAdd>
void scatter_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  const char* op = kAdd ? "scatter_add" : "scatter";
  const bool in_place = in[0].is_same(out[0]);
  Tensor o = at_least_1d(out[0]);
  Tensor index = at_least_1d(in[1]);
  Tensor src = at_least_1d(in[2]);
  if (in_place && src.storage() == o.storage()) src = fresh_copy(src);
  int64_t d = wrap_dim(a.i(0), o.dim(), "dim");
  check_index_values(index, o.size(d), op, d);
  if (!in_place) copy_raw(out[0], in[0]);
  NW_DISPATCH_INDEX(index.dtype(), op, {
    using I = scalar_t;
    const I* idx = index.data<I>();
    if constexpr (kAdd) {
      NW_DISPATCH_ANY(o.dtype(), op,
                      { scatter_loop<scalar_t>(o, src, index, idx, d, RowOp<scalar_t, true>{1}); });
    } else {
      dispatch_by_size(o.itemsize(), [&](auto tag) {
        using U = decltype(tag);
        scatter_loop<U>(o, src, index, idx, d, RowOp<U, false>{});
      });
    }
  });
}

// ---- MaskedFill(x, mask; value): mask broadcasts with x ----
std::vector<TensorMeta> masked_fill_infer(const TensorList& in, const Attrs& a) {
  const Tensor &x = in[0], &mask = in[1];
  NW_CHECK(mask.dtype() == DType::Bool, TypeError, "masked_fill: mask must be a bool tensor, got ",
           dtype_name(mask.dtype()));
  double v = a.f(0);
  NW_CHECK(is_floating(x.dtype()) || std::isfinite(v), ValueError, "masked_fill: value ", v,
           " can't be stored in a ", dtype_name(x.dtype()), " tensor");
  return {
      TensorMeta{broadcast_shapes(x.shape(), mask.shape(), "masked_fill"), x.dtype(), x.device()}};
}

void masked_fill_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  const double v = a.f(0);
  NW_DISPATCH_ANY(out[0].dtype(), "masked_fill", {
    const scalar_t fill = convert_value<scalar_t>(v);
    elementwise_kernel<scalar_t, bool, scalar_t>(
        out[0], {in[1], in[0]}, [fill](bool m, scalar_t x) { return m ? fill : x; });
  });
}

// ---- MaskedSelect(x, mask): the elements of x where mask (broadcast together) is true ----
Shape masked_select_shape(const Tensor& x, const Tensor& mask) {
  NW_CHECK(mask.dtype() == DType::Bool, TypeError,
           "masked_select: mask must be a bool tensor, got ", dtype_name(mask.dtype()));
  return broadcast_shapes(x.shape(), mask.shape(), "masked_select");
}

void masked_select_cpu(const TensorList& in, const Attrs&, TensorList& out) {
  const Tensor &x = in[0], &mask = in[1];
  const Shape b = masked_select_shape(x, mask);
  Tensor m = contiguous_raw(make_view(mask, b, broadcast_strides(mask, b), mask.offset()));
  const Shape xst = broadcast_strides(x, b);
  const DimGroup xg = group_dims(b, xst, 0, static_cast<int64_t>(b.size()));
  const bool* mp = m.data<bool>();
  Tensor r;
  dispatch_by_size(x.itemsize(), [&](auto tag) {
    using U = decltype(tag);
    const U* xp = x.data<U>();
    U* rp = nullptr;
    compact(
        shape_numel(b), [&](int64_t i) { return mp[i]; },
        [&](int64_t cnt) {
          r = empty({cnt}, x.dtype(), x.device());
          rp = r.data<U>();
        },
        [&](int64_t w, int64_t i) { rp[w] = xp[xg.at(i)]; });
  });
  out = {r};
}

// ---- Nonzero(x): (n, ndim) int64 coordinates of the nonzero elements, row-major order ----
void nonzero_cpu(const TensorList& in, const Attrs&, TensorList& out) {
  Tensor x = contiguous_raw(in[0]);
  const Shape sh = x.shape();
  const int64_t nd = x.dim();
  Tensor r;
  NW_DISPATCH_ANY(x.dtype(), "nonzero", {
    const scalar_t* p = x.data<scalar_t>();
    int64_t* rp = nullptr;
    compact(
        x.numel(), [&](int64_t i) { return load_value(p[i]) != 0; },
        [&](int64_t cnt) {
          r = empty({cnt, nd}, DType::Int64, x.device());
          rp = r.data<int64_t>();
        },
        [&](int64_t w, int64_t i) {
          for (int64_t j = nd - 1; j >= 0; --j) {
            rp[w * nd + j] = i % sh[j];
            i /= sh[j];
          }
        });
  });
  out = {r};
}

// ---- gradient rules (engine ops, so second derivatives come for free) ----
#define G c.grad_outputs[0]
#define INDEX c.inputs[1]
TensorList index_select_bw(const GradCtx& c) {
  return {index_add(zeros(c.input_meta[0].shape, G.dtype(), G.device()), c.attrs.i(0), INDEX, G)};
}
TensorList index_add_bw(const GradCtx& c) {
  Tensor gs;
  if (c.needs_input_grad[2]) {
    gs = index_select(G, c.attrs.i(0), INDEX);
    if (c.attrs.f(1) != 1.0) gs = mul(gs, c.attrs.f(1));
  }
  return {G, Tensor(), gs};
}
TensorList index_copy_bw(const GradCtx& c) {
  int64_t d = c.attrs.i(0);
  Tensor gx, gs;
  // Overwritten positions of x get no gradient; the source gets what flowed to its targets.
  if (c.needs_input_grad[0])
    gx = index_copy(G, d, INDEX, zeros(c.input_meta[2].shape, G.dtype(), G.device()));
  if (c.needs_input_grad[2]) gs = index_select(G, d, INDEX);
  return {gx, Tensor(), gs};
}
TensorList gather_bw(const GradCtx& c) {
  return {scatter_add(zeros(c.input_meta[0].shape, G.dtype(), G.device()), c.attrs.i(0), INDEX, G)};
}
TensorList scatter_bw(const GradCtx& c) {
  int64_t d = c.attrs.i(0);
  Tensor gx = c.needs_input_grad[0] ? scatter(G, d, INDEX, 0.0) : Tensor();
  Tensor gs = c.needs_input_grad[2] ? gather(G, d, INDEX) : Tensor();
  return {gx, Tensor(), gs};
}
TensorList scatter_add_bw(const GradCtx& c) {
  return {G, Tensor(), c.needs_input_grad[2] ? gather(G, c.attrs.i(0), INDEX) : Tensor()};
}
TensorList masked_fill_bw(const GradCtx& c) { return {masked_fill(G, INDEX, 0.0)}; }
TensorList masked_select_bw(const GradCtx& c) {
  // Scatter the selected gradients back to their flat positions in the broadcast shape.
  const Shape b = broadcast_shapes(c.input_meta[0].shape, INDEX.shape(), "masked_select");
  Tensor pos = reshape(nonzero(reshape(expand(INDEX, b), {-1})), {-1});
  Tensor flat = index_add(zeros({shape_numel(b)}, G.dtype(), G.device()), 0, pos, G);
  return {reshape(flat, b)};
}
#undef G
#undef INDEX

// Narrows src to index's shape (scatter reads only that corner of src, as in PyTorch).
Tensor src_for_index(const char* op, const Tensor& src, const Tensor& index) {
  NW_CHECK(src.dim() == index.dim(), ValueError, op, ": src must have as many dims as index (",
           index.dim(), "), got shape ", shape_str(src.shape()));
  Tensor s = src;
  for (int64_t e = 0; e < index.dim(); ++e) {
    NW_CHECK(index.size(e) <= src.size(e), ValueError, op, ": index.size(", e,
             ") = ", index.size(e), " exceeds src.size(", e, ") = ", src.size(e));
    if (index.size(e) < src.size(e)) s = slice(s, e, 0, index.size(e), 1);
  }
  return s;
}

}  // namespace

void register_index_ops() {
  const uint32_t idx = kSaveInput(1);
  const uint32_t x_and_src = 0b101;
  define_op(OpKind::IndexSelect, 0, index_select_infer, index_select_cpu, index_select_bw, idx,
            0b01);
  define_op(OpKind::IndexAdd, kInPlaceCapable, index_add_copy_infer<true>, index_add_copy_cpu<true>,
            index_add_bw, idx, x_and_src);
  define_op(OpKind::IndexCopy, kInPlaceCapable, index_add_copy_infer<false>,
            index_add_copy_cpu<false>, index_copy_bw, idx, x_and_src);
  define_op(OpKind::Gather, 0, gather_infer, gather_cpu, gather_bw, idx, 0b01);
  define_op(OpKind::Scatter, kInPlaceCapable, scatter_infer<false>, scatter_cpu<false>, scatter_bw,
            idx, x_and_src);
  define_op(OpKind::ScatterAdd, kInPlaceCapable, scatter_infer<true>, scatter_cpu<true>,
            scatter_add_bw, idx, x_and_src);
  define_op(OpKind::MaskedFill, kInPlaceCapable, masked_fill_infer, masked_fill_cpu, masked_fill_bw,
            idx, 0b01);
  define_op(OpKind::MaskedSelect, kDynamicShape, nullptr, masked_select_cpu, masked_select_bw, idx,
            0b01);
  define_op(OpKind::Nonzero, kDynamicShape, nullptr, nonzero_cpu, nullptr, 0, 0);
}

// ---- composites ----

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  return dispatch1(OpKind::IndexSelect, {x, index}, {wrap_dim(dim, x.dim(), "dim")});
}
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                 double alpha) {
  return dispatch1(OpKind::IndexAdd, {x, index, src}, {wrap_dim(dim, x.dim(), "dim"), alpha});
}
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return dispatch1(OpKind::IndexCopy, {x, index, src}, {wrap_dim(dim, x.dim(), "dim")});
}
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  return dispatch1(OpKind::Gather, {x, index}, {wrap_dim(dim, x.dim(), "dim")});
}
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  int64_t d = wrap_dim(dim, x.dim(), "dim");
  return dispatch1(OpKind::Scatter, {x, index, src_for_index("scatter", src, index)}, {d});
}
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, double value) {
  return scatter(x, dim, index, full(index.shape(), value, x.dtype(), x.device()));
}
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  int64_t d = wrap_dim(dim, x.dim(), "dim");
  return dispatch1(OpKind::ScatterAdd, {x, index, src_for_index("scatter_add", src, index)}, {d});
}
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  return dispatch1(OpKind::MaskedFill, {x, mask}, {value});
}
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  NW_CHECK(value.dim() == 0, ValueError,
           "masked_fill: value must be a number or a 0-d tensor, got shape ",
           shape_str(value.shape()));
  if (!(GradMode::is_enabled() && value.requires_grad())) return masked_fill(x, mask, value.item());
  NW_CHECK(mask.dtype() == DType::Bool, TypeError, "masked_fill: mask must be a bool tensor, got ",
           dtype_name(mask.dtype()));
  return where(mask, as_dtype(value, x.dtype()), x);  // differentiable in value too
}
Tensor masked_select(const Tensor& x, const Tensor& mask) {
  masked_select_shape(x, mask);  // fail on bad input before dispatch
  return dispatch1(OpKind::MaskedSelect, {x, mask});
}
Tensor nonzero(const Tensor& x) { return dispatch1(OpKind::Nonzero, {x}); }

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  NW_CHECK(weight.dim() == 2, ValueError,
           "embedding: weight must be 2-D (num_embeddings, embedding_dim), got shape ",
           shape_str(weight.shape()));
  check_index_dtype(indices, "embedding", "indices");
  Tensor flat = contiguous_raw(reshape(indices, {-1}));
  NW_DISPATCH_INDEX(flat.dtype(), "embedding", {
    check_range(flat.data<scalar_t>(), flat.numel(), weight.size(0), "embedding", "indices", 0);
  });
  Shape out_shape = indices.shape();
  out_shape.push_back(weight.size(1));
  return reshape(index_select(weight, 0, flat), out_shape);
}

// ---- in-place forms ----

Tensor& index_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, double alpha) {
  return dispatch_inplace(OpKind::IndexAdd, x, {index, src},
                          {wrap_dim(dim, x.dim(), "dim"), alpha});
}
Tensor& index_copy_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return dispatch_inplace(OpKind::IndexCopy, x, {index, src}, {wrap_dim(dim, x.dim(), "dim")});
}
Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  int64_t d = wrap_dim(dim, x.dim(), "dim");
  return dispatch_inplace(OpKind::Scatter, x, {index, src_for_index("scatter_", src, index)}, {d});
}
Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, double value) {
  return scatter_(x, dim, index, full(index.shape(), value, x.dtype(), x.device()));
}
Tensor& scatter_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  int64_t d = wrap_dim(dim, x.dim(), "dim");
  return dispatch_inplace(OpKind::ScatterAdd, x, {index, src_for_index("scatter_add_", src, index)},
                          {d});
}
Tensor& masked_fill_(Tensor& x, const Tensor& mask, double value) {
  return dispatch_inplace(OpKind::MaskedFill, x, {mask}, {value});
}
Tensor& masked_fill_(Tensor& x, const Tensor& mask, const Tensor& value) {
  NW_CHECK(value.dim() == 0, ValueError,
           "masked_fill_: value must be a number or a 0-d tensor, got shape ",
           shape_str(value.shape()));
  if (!(GradMode::is_enabled() && value.requires_grad()))
    return masked_fill_(x, mask, value.item());
  // Compute out of place, then write through Copy, whose in-place form carries the autograd edge.
  Tensor r = masked_fill(x, mask, value);
  NW_CHECK(r.shape() == x.shape(), ValueError, "masked_fill_: mask of shape ",
           shape_str(mask.shape()), " does not broadcast to the shape of self, ",
           shape_str(x.shape()));
  return dispatch_inplace(OpKind::Copy, x, {r});
}

}  // namespace nodeweave
