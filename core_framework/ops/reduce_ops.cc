// Reductions other than sum: the primitives Prod, Max and Min over one dimension, and the
// composites built on them and on sum (amax/amin, argmax/argmin, var/std, logsumexp, norm).
// Kernels view the input as [outer, reduced, inner]: a row loop when inner == 1, otherwise a
// loop over contiguous inner vectors that the compiler vectorizes.
#include <cmath>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/engine/op_registry.h"
#include "core_framework/ops/along_dim.h"
#include "core_framework/ops/dim_util.h"
#include "core_framework/ops/op_helpers.h"
#include "core_framework/ops/reduce_util.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave {

namespace {

Tensor wrapped(double v, DType d) { return scalar_tensor(v, d, Device{}, true); }

// Runs body(o0, o1, i0, i1) over disjoint blocks of the [outer, inner] plane: split over outer rows
// when there are enough of them, else over inner columns, so both tall and wide shapes use all
// cores.
template <typename F>
void parallel_blocks(const DimSplit& s, const F& body) {
  const int64_t per_outer = std::max<int64_t>(s.size * s.inner, 1);
  if (s.outer >= get_num_threads() || s.inner < 256) {
    parallel_for(0, s.outer, std::max<int64_t>(1, kGrainSize / per_outer),
                 [&](int64_t b, int64_t e) { body(b, e, 0, s.inner); });
  } else {
    for (int64_t o = 0; o < s.outer; ++o) {
      parallel_for(0, s.inner, std::max<int64_t>(256, kGrainSize / std::max<int64_t>(s.size, 1)),
                   [&](int64_t b, int64_t e) { body(o, o + 1, b, e); });
    }
  }
}

std::vector<TensorMeta> one_dim_infer(const TensorList& in, const Attrs& a, DType out_dtype) {
  const Tensor& x = in[0];
  return {TensorMeta{reduced_shape(x.shape(), {a.i(0)}, a.b(1)), out_dtype, x.device()}};
}

// ---- Prod(x; dim, keepdim); integer inputs arrive as int64 ----
std::vector<TensorMeta> prod_infer(const TensorList& in, const Attrs& a) {
  return one_dim_infer(in, a, in[0].dtype());
}

// Integer products wrap around like PyTorch's; unsigned arithmetic keeps that defined.
template <typename T>
inline T mul_wrap(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

template <typename T>
void prod_kernel(const T* x, T* out, const DimSplit& s) {
  const int64_t R = s.size, I = s.inner;
  parallel_blocks(s, [&](int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    for (int64_t o = o0; o < o1; ++o) {
      const T* src = x + o * R * I;
      if (I == 1) {
        T acc = 1;
        if constexpr (std::is_floating_point_v<T>) {
#pragma omp simd reduction(* : acc)
          for (int64_t r = 0; r < R; ++r) acc *= src[r];
        } else {
          for (int64_t r = 0; r < R; ++r) acc = mul_wrap(acc, src[r]);
        }
        out[o] = acc;
        continue;
      }
      T* dst = out + o * I;
      for (int64_t i = i0; i < i1; ++i) dst[i] = 1;
      for (int64_t r = 0; r < R; ++r) {
        const T* row = src + r * I;
        for (int64_t i = i0; i < i1; ++i) dst[i] = mul_wrap(dst[i], row[i]);
      }
    }
  });
}

void prod_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  Tensor x = dense(in[0]);
  const DimSplit s = split_at_dim(x.shape(), a.i(0));
  switch (x.dtype()) {
    case DType::Int64:
      prod_kernel(x.data<int64_t>(), out[0].data<int64_t>(), s);
      break;
    case DType::Float32:
      prod_kernel(x.data<float>(), out[0].data<float>(), s);
      break;
    case DType::Float64:
      prod_kernel(x.data<double>(), out[0].data<double>(), s);
      break;
    default:
      throw_unsupported_dtype("prod", x.dtype(), "int64, float32 or float64");
  }
}

// d prod / d x_j is the product of the other elements; dividing the product by x_j fails at
// zeros. With q the product of the non-zero elements and z the product of the zero ones (value 0
// or 1, but carrying their gradient): non-zero x_j get q / x_j * z; a zero x_j gets q when it is
// its line's only zero, else 0. Built from engine ops, so it is itself differentiable (exactly so
// except for the second derivative between two zeros of one line).
TensorList prod_bw(const GradCtx& c) {
  const Tensor& x = c.inputs[0];
  const int64_t dim = c.attrs.i(0);
  Tensor g = c.attrs.b(1) ? c.grad_outputs[0] : unsqueeze(c.grad_outputs[0], dim);
  Tensor zero = wrapped(0.0, x.dtype()), one = wrapped(1.0, x.dtype());
  Tensor is_zero = eq(x, zero);
  Tensor x_safe = where(is_zero, one, x);
  Tensor q = dispatch1(OpKind::Prod, {x_safe}, {dim, true});
  Tensor z = dispatch1(OpKind::Prod, {where(is_zero, x, one)}, {dim, true});
  Tensor only_zero = eq(sum(is_zero, {dim}, true), wrapped(1, DType::Int64));
  Tensor others = where(is_zero, where(only_zero, q, zero), mul(div(q, x_safe), z));
  return {mul(g, others)};
}

// ---- Max / Min(x; dim, keepdim, even_ties) -> (values, int64 indices) ----
// NaN wins (the first one, as in PyTorch); among equal values the first index wins. even_ties
// selects amax's gradient (split evenly among all maximal elements) over max's (to the index).
std::vector<TensorMeta> minmax_infer_impl(const TensorList& in, const Attrs& a, const char* op) {
  const Tensor& x = in[0];
  NW_CHECK(x.dim() == 0 || x.size(a.i(0)) > 0, IndexError, op, ": cannot reduce over dimension ",
           a.i(0), " of size 0 (input shape ", shape_str(x.shape()), ")");
  auto m = one_dim_infer(in, a, x.dtype());
  m.push_back(TensorMeta{m[0].shape, DType::Int64, x.device()});
  return m;
}
std::vector<TensorMeta> max_infer(const TensorList& in, const Attrs& a) {
  return minmax_infer_impl(in, a, "max");
}
std::vector<TensorMeta> min_infer(const TensorList& in, const Attrs& a) {
  return minmax_infer_impl(in, a, "min");
}

template <bool IsMax, typename T>
inline bool better(T v, T best) {
  // v != v is only true for NaN, and folds away for integers.
  return (IsMax ? (v > best) : (v < best)) || (v != v && best == best);
}

// Extremum of x[0, n) and its first index: a vectorized min/max pass, then a scan for the first
// element equal to it (or the first NaN) — two cheap passes instead of one branchy one.
template <bool IsMax, typename T>
std::pair<T, int64_t> row_extremum(const T* x, int64_t n) {
  if constexpr (std::is_same_v<T, bool>) {
    for (int64_t r = 0; r < n; ++r)
      if (x[r] == IsMax) return {x[r], r};
    return {x[0], 0};
  } else {
    T m = x[0];
    int nan = 0;
    if constexpr (IsMax) {
#pragma omp simd reduction(max : m) reduction(| : nan)
      for (int64_t r = 0; r < n; ++r) {
        m = x[r] > m ? x[r] : m;
        nan |= x[r] != x[r];
      }
    } else {
#pragma omp simd reduction(min : m) reduction(| : nan)
      for (int64_t r = 0; r < n; ++r) {
        m = x[r] < m ? x[r] : m;
        nan |= x[r] != x[r];
      }
    }
    // Find the first hit: blocks of 32 are tested with a vectorized count, then one block scanned.
    int64_t i = 0;
    if (nan) {
      while (x[i] == x[i]) ++i;
      return {x[i], i};
    }
    for (; i + 32 <= n; i += 32) {
      int hits = 0;
#pragma omp simd reduction(+ : hits)
      for (int k = 0; k < 32; ++k) hits += x[i + k] == m;
      if (hits) break;
    }
    while (x[i] != m) ++i;
    return {x[i], i};
  }
}

template <bool IsMax, typename T>
void minmax_kernel(const T* x, T* vals, int64_t* idx, const DimSplit& s) {
  const int64_t R = s.size, I = s.inner;
  if (I == 1 && s.outer < get_num_threads() && R > kGrainSize) {
    // Few long rows: each thread takes a piece of the row; pieces combine in order, so the first
    // occurrence still wins.
    const int64_t pieces = get_num_threads() * 4, len = (R + pieces - 1) / pieces;
    std::vector<std::pair<T, int64_t>> part(pieces);
    for (int64_t o = 0; o < s.outer; ++o) {
      const T* src = x + o * R;
      parallel_for(0, pieces, 1, [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          const int64_t lo = std::min(R, p * len), hi = std::min(R, lo + len);
          if (lo < hi) {
            part[p] = row_extremum<IsMax>(src + lo, hi - lo);
            part[p].second += lo;
          } else {
            part[p].second = -1;
          }
        }
      });
      std::pair<T, int64_t> best = part[0];
      for (int64_t p = 1; p < pieces; ++p)
        if (part[p].second >= 0 && better<IsMax>(part[p].first, best.first)) best = part[p];
      vals[o] = best.first;
      idx[o] = best.second;
    }
    return;
  }
  parallel_blocks(s, [&](int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    for (int64_t o = o0; o < o1; ++o) {
      const T* src = x + o * R * I;
      if (I == 1) {
        std::tie(vals[o], idx[o]) = row_extremum<IsMax>(src, R);
        continue;
      }
      T* dv = vals + o * I;
      int64_t* di = idx + o * I;
      for (int64_t i = i0; i < i1; ++i) {
        dv[i] = src[i];
        di[i] = 0;
      }
      for (int64_t r = 1; r < R; ++r) {
        const T* row = src + r * I;
        for (int64_t i = i0; i < i1; ++i) {
          bool b = better<IsMax>(row[i], dv[i]);
          dv[i] = b ? row[i] : dv[i];
          di[i] = b ? r : di[i];
        }
      }
    }
  });
}

template <bool IsMax>
void minmax_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  Tensor x = dense(in[0]);
  if (x.numel() == 0) return;
  const DimSplit s = split_at_dim(x.shape(), a.i(0));
  NW_DISPATCH_ALL(x.dtype(), IsMax ? "max" : "min", {
    minmax_kernel<IsMax>(x.data<scalar_t>(), out[0].data<scalar_t>(), out[1].data<int64_t>(), s);
  });
}

TensorList minmax_bw(const GradCtx& c) {
  const int64_t dim = c.attrs.i(0);
  const bool keepdim = c.attrs.b(1), even = c.attrs.b(2);
  const Shape& xs = c.input_meta[0].shape;
  auto keep = [&](const Tensor& t) { return keepdim || xs.empty() ? t : unsqueeze(t, dim); };
  Tensor g = keep(c.grad_outputs[0]);
  if (even) {
    const Tensor& x = c.inputs[0];
    Tensor hit = eq(x, keep(c.outputs[0]));
    Tensor count = sum(hit, {dim}, true);
    return {where(hit, div(g, count), wrapped(0.0, g.dtype()))};
  }
  return {put_along(g, keep(c.outputs[1]), dim, xs.empty() ? 1 : xs[dim])};
}

// Max/Min on any shape: 0-d inputs are reduced as one-element vectors, half types in float32
// (exact: max/min pick an existing value).
std::pair<Tensor, Tensor> minmax(OpKind kind, const Tensor& x0, int64_t dim, bool keepdim,
                                 bool even) {
  Tensor x = is_half(x0.dtype()) ? cast(x0, DType::Float32) : x0;
  int64_t d;
  if (x.dim() == 0) {
    d = wrap_dim(dim, 1);
    x = reshape(x, {1});
    keepdim = false;
  } else {
    d = wrap_dim(dim, x.dim());
  }
  TensorList r = dispatch(kind, {x}, {d, keepdim, even});
  if (r[0].dtype() != x0.dtype()) r[0] = cast(r[0], x0.dtype());
  return {r[0], r[1]};
}

// amax/amin over several dims: move them last, merge them into one, reduce that.
Tensor amaxmin(OpKind kind, const Tensor& x, const IntList& dims, bool keepdim, const char* op) {
  IntList nd = normalize_dims(dims, x.dim(), op);
  if (x.dim() == 0) return minmax(kind, x, 0, false, true).first;
  if (nd.size() == 1) return minmax(kind, x, nd[0], keepdim, true).first;
  IntList perm;
  Shape kept;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (!std::binary_search(nd.begin(), nd.end(), d)) {
      perm.push_back(d);
      kept.push_back(x.size(d));
    }
  }
  int64_t merged = 1;
  for (int64_t d : nd) {
    perm.push_back(d);
    merged *= x.size(d);
  }
  NW_CHECK(merged > 0, IndexError, op, ": cannot reduce over dims ", shape_str(dims),
           " with zero elements (input shape ", shape_str(x.shape()), ")");
  Shape flat = kept;
  flat.push_back(merged);
  Tensor v = minmax(kind, reshape(permute(x, perm), flat), -1, false, true).first;
  return keepdim ? reshape(v, reduced_shape(x.shape(), nd, true)) : v;
}

Tensor argmaxmin(OpKind kind, const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  NoGradGuard no_grad;  // indices carry no gradient; skip recording the values' history
  if (dim) return minmax(kind, x, *dim, keepdim, false).second;
  Tensor i = minmax(kind, reshape(x, {-1}), 0, false, false).second;
  return keepdim ? reshape(i, Shape(x.dim(), 1)) : i;
}

void check_floating(const Tensor& x, const char* op) {
  NW_CHECK(is_floating(x.dtype()), TypeError, op, ": expected a floating-point input, got ",
           dtype_name(x.dtype()), " (cast it first)");
}

int64_t reduced_count(const Tensor& x, const IntList& nd) {
  int64_t n = 1;
  for (int64_t d : nd) n *= x.size(d);
  return n;
}

}  // namespace

void register_reduce_ops() {
  register_reduce_sum_op();
  define_op(OpKind::Prod, kReduce, prod_infer, prod_cpu, prod_bw, kSaveInput(0));
  const uint32_t saved = kSaveInput(0) | kSaveOutput(0) | kSaveOutput(1);
  define_op(OpKind::Max, kReduce, max_infer, minmax_cpu<true>, minmax_bw, saved);
  define_op(OpKind::Min, kReduce, min_infer, minmax_cpu<false>, minmax_bw, saved);
}

Tensor prod(const Tensor& x0, std::optional<int64_t> dim, bool keepdim) {
  // Integer and bool products accumulate in int64, half types in float32 (as PyTorch does).
  DType d = x0.dtype();
  DType cd = is_floating(d) ? (is_half(d) ? DType::Float32 : d) : DType::Int64;
  Tensor x = as_dtype(x0, cd);
  Tensor r;
  if (!dim) {
    r = dispatch1(OpKind::Prod, {reshape(x, {-1})}, {int64_t{0}, false});
    if (keepdim) r = reshape(r, Shape(x.dim(), 1));
  } else if (x.dim() == 0) {
    wrap_dim(*dim, 1);
    r = dispatch1(OpKind::Prod, {reshape(x, {1})}, {int64_t{0}, false});
  } else {
    r = dispatch1(OpKind::Prod, {x}, {wrap_dim(*dim, x.dim()), keepdim});
  }
  return is_half(d) ? cast(r, d) : r;
}

std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return minmax(OpKind::Max, x, dim, keepdim, false);
}
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return minmax(OpKind::Min, x, dim, keepdim, false);
}
Tensor amax(const Tensor& x, const IntList& dims, bool keepdim) {
  return amaxmin(OpKind::Max, x, dims, keepdim, "amax");
}
Tensor amin(const Tensor& x, const IntList& dims, bool keepdim) {
  return amaxmin(OpKind::Min, x, dims, keepdim, "amin");
}
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return argmaxmin(OpKind::Max, x, dim, keepdim);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return argmaxmin(OpKind::Min, x, dim, keepdim);
}

// Two passes (mean, then squared deviations): the one-pass formula loses digits to cancellation.
Tensor var(const Tensor& x, const IntList& dims, int64_t correction, bool keepdim) {
  check_floating(x, "var");
  IntList nd = normalize_dims(dims, x.dim(), "var");
  const int64_t n = reduced_count(x, nd);
  Tensor dev = sub(x, mean(x, dims, true));
  Tensor ss = sum(mul(dev, dev), dims, keepdim);
  // n <= correction divides by zero: inf, or nan for a zero sum, as in PyTorch.
  return div(ss,
             wrapped(static_cast<double>(std::max<int64_t>(n - correction, 0)), DType::Float64));
}

Tensor stddev(const Tensor& x, const IntList& dims, int64_t correction, bool keepdim) {
  check_floating(x, "std");
  return sqrt(var(x, dims, correction, keepdim));
}

// With k the argmax of a line, logsumexp = x_k - log_softmax(x)_k, and x_k - m is exactly 0 in
// the stable log_softmax, so no overflow and no cancellation. It reuses the vectorized softmax
// kernel, and its gradient (softmax) comes out of the two picks without a rule of its own.
Tensor logsumexp(const Tensor& x0, const IntList& dims, bool keepdim) {
  Tensor x = is_floating(x0.dtype()) ? x0 : cast(x0, DType::Float32);
  IntList nd = normalize_dims(dims, x.dim(), "logsumexp");
  const Shape out_shape = reduced_shape(x.shape(), nd, keepdim);
  if (reduced_count(x, nd) == 0) {
    return full(out_shape, -std::numeric_limits<double>::infinity(), x.dtype(), x.device());
  }
  // One reduced dim `d` of `xr`: several dims are moved last and merged.
  Tensor xr;
  int64_t d;
  if (x.dim() == 0) {
    xr = reshape(x, {1});
    d = 0;
  } else if (nd.size() == 1) {
    xr = x;
    d = nd[0];
  } else {
    IntList perm;
    Shape merged_shape;
    for (int64_t k = 0; k < x.dim(); ++k) {
      if (!std::binary_search(nd.begin(), nd.end(), k)) {
        perm.push_back(k);
        merged_shape.push_back(x.size(k));
      }
    }
    for (int64_t k : nd) perm.push_back(k);
    merged_shape.push_back(reduced_count(x, nd));
    xr = reshape(permute(x, perm), merged_shape);
    d = static_cast<int64_t>(merged_shape.size()) - 1;
  }
  Tensor at_max;
  {
    NoGradGuard no_grad;
    at_max = minmax(OpKind::Max, xr, d, true, false).second;
  }
  Tensor m = take_along(xr, at_max, d);
  Tensor r = sub(m, take_along(log_softmax(xr, d), at_max, d));
  // A line whose maximum is infinite sums to that maximum (its log_softmax is nan).
  Tensor infinite = eq(abs(m), wrapped(std::numeric_limits<double>::infinity(), m.dtype()));
  return reshape(where(infinite, m, r), out_shape);
}

Tensor norm(const Tensor& x, double p, const IntList& dims, bool keepdim) {
  check_floating(x, "norm");
  const double inf = std::numeric_limits<double>::infinity();
  if (p == inf) return amax(abs(x), dims, keepdim);
  if (p == -inf) return amin(abs(x), dims, keepdim);
  if (p == 0) return sum(cast(ne(x, wrapped(0.0, x.dtype())), x.dtype()), dims, keepdim);
  if (p == 1) return sum(abs(x), dims, keepdim);
  Tensor s = p == 2 ? sum(mul(x, x), dims, keepdim) : sum(pow(abs(x), p), dims, keepdim);
  // d s^(1/p) / ds is infinite at s == 0 while ds/dx is 0 there; routing zeros through a constant
  // branch makes the gradient 0 instead of nan, as in PyTorch.
  Tensor zero = eq(s, wrapped(0.0, s.dtype()));
  Tensor s_safe = where(zero, wrapped(1.0, s.dtype()), s);
  Tensor root = p == 2 ? sqrt(s_safe) : pow(s_safe, 1.0 / p);
  return where(zero, wrapped(0.0, s.dtype()), root);
}

}  // namespace nodeweave
