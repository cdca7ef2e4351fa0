// Softmax and LogSoftmax over one dimension, numerically stable (the maximum is subtracted first).
// The last-dim case runs row by row with a vectorizable exp; other dims run over contiguous inner
// vectors, so no case transposes. Gradient rules are engine ops, hence twice differentiable.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core_framework/engine/op_registry.h"
#include "core_framework/ops/dim_util.h"
#include "core_framework/ops/op_helpers.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave {

namespace {

// exp(x) for x <= 0 (the only arguments softmax needs), written without libm calls so loops over
// it vectorize: x = n ln2 + r with |r| <= ln2/2, exp(r) by a Taylor polynomial (degree 13 for
// double, 7 for float: truncation error below half an ulp), 2^n assembled in the exponent bits.
// NaN propagates; results below the smallest normal flush to 0, which a sum of exps never misses.
template <typename T>
inline T exp_nonpos(T x) {
  using Bits = std::conditional_t<std::is_same_v<T, double>, int64_t, int32_t>;
  constexpr int kMant = std::is_same_v<T, double> ? 52 : 23;
  constexpr Bits kBias = std::is_same_v<T, double> ? 1023 : 127;
  constexpr T kLog2e = static_cast<T>(1.4426950408889634);
  // ln2 = kLn2Hi + kLn2Lo with few bits in kLn2Hi, so n * kLn2Hi is exact.
  constexpr T kLn2Hi =
      std::is_same_v<T, double> ? static_cast<T>(0.6931471803691238) : static_cast<T>(0.693359375);
  constexpr T kLn2Lo = std::is_same_v<T, double> ? static_cast<T>(1.9082149292705877e-10)
                                                 : static_cast<T>(-2.12194440e-4);
  constexpr T kMin = std::is_same_v<T, double> ? static_cast<T>(-708.0) : static_cast<T>(-87.0);
  // Adding 1.5 * 2^mant rounds to an integer held in the low mantissa bits.
  constexpr T kShift = static_cast<T>(1.5) * static_cast<T>(Bits{1} << kMant);
  const bool tiny = x < kMin;
  const T xc = tiny ? kMin : x;
  const T t = xc * kLog2e + kShift;
  const T n = t - kShift;
  const T r = (xc - n * kLn2Hi) - n * kLn2Lo;
  T p;
  if constexpr (std::is_same_v<T, double>) {
    p = 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
  } else {
    p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
  }
  Bits tb, sb;
  std::memcpy(&tb, &t, sizeof(T));
  std::memcpy(&sb, &kShift, sizeof(T));
  const Bits scale_bits = (tb - sb + kBias) << kMant;
  T scale;
  std::memcpy(&scale, &scale_bits, sizeof(T));
  return tiny ? T(0) : p * scale;
}

// One row (inner == 1): max, then sum of exp(x - max), then the output.
template <typename T, bool Log>
void softmax_row(const T* x, T* y, int64_t R) {
  T m = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : m)
  for (int64_t r = 0; r < R; ++r) m = x[r] > m ? x[r] : m;
  T s = 0;
  if constexpr (Log) {
#pragma omp simd reduction(+ : s)
    for (int64_t r = 0; r < R; ++r) s += exp_nonpos(x[r] - m);
    // (x - m) - log s, not x - (m + log s): the sum would round log s away when |m| is large.
    const T ls = std::log(s);
#pragma omp simd
    for (int64_t r = 0; r < R; ++r) y[r] = (x[r] - m) - ls;
  } else {
#pragma omp simd reduction(+ : s)
    for (int64_t r = 0; r < R; ++r) {
      const T e = exp_nonpos(x[r] - m);
      y[r] = e;
      s += e;
    }
    const T inv = 1 / s;
#pragma omp simd
    for (int64_t r = 0; r < R; ++r) y[r] *= inv;
  }
}

// A [R, inner] block reduced over R, for columns [i0, i1): the running max and sum live in
// vectors of the block's width, so every pass reads memory contiguously.
template <typename T, bool Log>
void softmax_block(const T* x, T* y, int64_t R, int64_t I, int64_t i0, int64_t i1, T* m, T* s) {
  const int64_t w = i1 - i0;
  for (int64_t i = 0; i < w; ++i) {
    m[i] = -std::numeric_limits<T>::infinity();
    s[i] = 0;
  }
  for (int64_t r = 0; r < R; ++r) {
    const T* row = x + r * I + i0;
    for (int64_t i = 0; i < w; ++i) m[i] = row[i] > m[i] ? row[i] : m[i];
  }
  for (int64_t r = 0; r < R; ++r) {
    const T* row = x + r * I + i0;
    T* out = y + r * I + i0;
    for (int64_t i = 0; i < w; ++i) {
      const T e = exp_nonpos(row[i] - m[i]);
      if constexpr (!Log) out[i] = e;
      s[i] += e;
    }
  }
  if constexpr (Log) {
    for (int64_t i = 0; i < w; ++i) s[i] = std::log(s[i]);
    for (int64_t r = 0; r < R; ++r) {
      const T* row = x + r * I + i0;
      T* out = y + r * I + i0;
      for (int64_t i = 0; i < w; ++i) out[i] = (row[i] - m[i]) - s[i];
    }
  } else {
    for (int64_t i = 0; i < w; ++i) s[i] = 1 / s[i];
    for (int64_t r = 0; r < R; ++r) {
      T* out = y + r * I + i0;
      for (int64_t i = 0; i < w; ++i) out[i] *= s[i];
    }
  }
}

template <typename T, bool Log>
void softmax_kernel(const T* x, T* y, const DimSplit& d) {
  const int64_t R = d.size, I = d.inner;
  if (R == 0 || d.outer == 0 || I == 0) return;
  if (I == 1) {
    parallel_for(0, d.outer, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) softmax_row<T, Log>(x + o * R, y + o * R, R);
    });
    return;
  }
  // Tasks are (outer, column block) pairs; a block is narrow enough for its max/sum to stay in L1.
  constexpr int64_t kBlock = 256;
  const int64_t nblk = (I + kBlock - 1) / kBlock;
  parallel_for(0, d.outer * nblk, std::max<int64_t>(1, kGrainSize / (R * std::min(I, kBlock))),
               [&](int64_t b, int64_t e) {
                 T m[kBlock], s[kBlock];
                 for (int64_t task = b; task < e; ++task) {
                   const int64_t o = task / nblk, i0 = (task % nblk) * kBlock;
                   const int64_t i1 = std::min(I, i0 + kBlock);
                   softmax_block<T, Log>(x + o * R * I, y + o * R * I, R, I, i0, i1, m, s);
                 }
               });
}

std::vector<TensorMeta> softmax_infer(const TensorList& in, const Attrs&) {
  const Tensor& x = in[0];
  NW_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Float64, TypeError,
           "softmax: expected a float32 or float64 input, got ", dtype_name(x.dtype()));
  return {TensorMeta{x.shape(), x.dtype(), x.device()}};
}

template <bool Log>
void softmax_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  Tensor x = dense(in[0]);
  const DimSplit d = split_at_dim(x.shape(), a.i(0));
  NW_DISPATCH_FLOAT(x.dtype(), Log ? "log_softmax" : "softmax", {
    softmax_kernel<scalar_t, Log>(x.data<scalar_t>(), out[0].data<scalar_t>(), d);
  });
}

// y = softmax(x): dx = y * (g - sum(g * y)).
TensorList softmax_bw(const GradCtx& c) {
  const Tensor& y = c.outputs[0];
  const Tensor& g = c.grad_outputs[0];
  const int64_t dim = c.attrs.i(0);
  Tensor gy = mul(g, y);
  return {sub(gy, mul(y, sum(gy, {dim}, true)))};
}

// y = log_softmax(x): dx = g - exp(y) * sum(g). exp(y) is computed as softmax(y) — equal, since
// each line of exp(y) already sums to 1 — to use the vectorized kernel. Their derivatives differ
// only along changes of a line's sum of exp(y), which no change of x produces, so second-order
// gradients stay exact.
TensorList log_softmax_bw(const GradCtx& c) {
  const Tensor& y = c.outputs[0];
  const Tensor& g = c.grad_outputs[0];
  const int64_t dim = c.attrs.i(0);
  return {sub(g, mul(softmax(y, dim), sum(g, {dim}, true)))};
}

// Integer inputs are rejected (as in PyTorch); half types are computed in float32.
Tensor softmax_like(OpKind kind, const Tensor& x, int64_t dim, const char* op) {
  NW_CHECK(is_floating(x.dtype()), TypeError, op, ": expected a floating-point input, got ",
           dtype_name(x.dtype()), " (cast it first)");
  const bool half = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16;
  Tensor xf = half ? cast(x, DType::Float32) : x;
  Tensor y;
  if (x.dim() == 0) {
    wrap_dim(dim, 1, "dim");
    y = reshape(dispatch1(kind, {reshape(xf, {1})}, {int64_t{0}}), {});
  } else {
    y = dispatch1(kind, {xf}, {wrap_dim(dim, x.dim(), "dim")});
  }
  return half ? cast(y, x.dtype()) : y;
}

}  // namespace

void register_softmax_ops() {
  define_op(OpKind::Softmax, 0, softmax_infer, softmax_cpu<false>, softmax_bw, kSaveOutput(0));
  define_op(OpKind::LogSoftmax, 0, softmax_infer, softmax_cpu<true>, log_softmax_bw,
            kSaveOutput(0));
}

Tensor softmax(const Tensor& x, int64_t dim) {
  return softmax_like(OpKind::Softmax, x, dim, "softmax");
}
Tensor log_softmax(const Tensor& x, int64_t dim) {
  return softmax_like(OpKind::LogSoftmax, x, dim, "log_softmax");
}

}  // namespace nodeweave
