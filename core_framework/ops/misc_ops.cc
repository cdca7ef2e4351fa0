// OneHot (int64 class indicators) and BernoulliMask (the random, pre-scaled keep mask behind
// dropout), plus the dropout composite.
#include <cmath>

#include "core_framework/engine/op_registry.h"
#include "core_framework/ops/convert.h"
#include "core_framework/ops/dim_util.h"
#include "core_framework/ops/op_helpers.h"
#include "core_framework/runtime/generator.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave {

namespace {

// ---- OneHot(labels; num_classes) -> int64 [..., num_classes] ----
std::vector<TensorMeta> one_hot_infer(const TensorList& in, const Attrs& a) {
  Shape s = in[0].shape();
  s.push_back(a.i(0));
  return {TensorMeta{s, DType::Int64, in[0].device()}};
}

template <typename L>
void one_hot_kernel(const L* labels, int64_t n, int64_t C, int64_t* out) {
  const int64_t bad = first_bad(labels, n, [C](L v) {
    const int64_t w = static_cast<int64_t>(v);
    return w < 0 || w >= C;
  });
  NW_CHECK(bad == n, IndexError, "one_hot: label ", static_cast<int64_t>(labels[bad]),
           " (at flat position ", bad, ") is out of range [0, ", C, ")");
  parallel_for(0, n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1)),
               [&](int64_t b, int64_t e) {
                 std::fill(out + b * C, out + e * C, int64_t{0});
                 for (int64_t i = b; i < e; ++i) out[i * C + static_cast<int64_t>(labels[i])] = 1;
               });
}

void one_hot_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  Tensor labels = dense(in[0]);
  const int64_t n = labels.numel(), C = a.i(0);
  int64_t* o = out[0].data<int64_t>();
  switch (labels.dtype()) {
    case DType::UInt8:
      one_hot_kernel(labels.data<uint8_t>(), n, C, o);
      break;
    case DType::Int8:
      one_hot_kernel(labels.data<int8_t>(), n, C, o);
      break;
    case DType::Int32:
      one_hot_kernel(labels.data<int32_t>(), n, C, o);
      break;
    case DType::Int64:
      one_hot_kernel(labels.data<int64_t>(), n, C, o);
      break;
    default:
      throw_unsupported_dtype("one_hot", labels.dtype(), "an integer type");
  }
}

// ---- BernoulliMask(x; p): 1/(1-p) with probability 1-p, else 0; x's shape and dtype ----
// The seed is drawn when the kernel runs, so a replayed static graph draws a fresh mask each time.
// Element i is kept when keep_at(seed, i) (runtime/generator.h).
template <typename T>
void fill_bernoulli_mask(T* __restrict d, int64_t b, int64_t e, uint64_t seed, uint64_t threshold,
                         T keep, T drop) {
  for (int64_t i = b; i < e; ++i)
    d[i] = keep_at(seed, static_cast<uint64_t>(i), threshold) ? keep : drop;
}

void bernoulli_mask_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  const double p = a.f(0);
  const double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  const uint64_t threshold = keep_threshold(p);
  const uint64_t seed = default_generator().next_seed();
  const Tensor& o = out[0];
  const int64_t n = o.numel();
  NW_DISPATCH_ANY(o.dtype(), "dropout", {
    scalar_t* d = o.data<scalar_t>();
    const scalar_t keep = convert_value<scalar_t>(scale), drop = convert_value<scalar_t>(0.0);
    parallel_for(0, n, kGrainSize / 8, [&](int64_t b, int64_t e) {
      fill_bernoulli_mask(d, b, e, seed, threshold, keep, drop);
    });
  });
}

}  // namespace

void register_misc_ops() {
  define_op(OpKind::OneHot, 0, one_hot_infer, one_hot_cpu, nullptr, 0, 0);
  define_op(OpKind::BernoulliMask, kRandom, infer_like_input, bernoulli_mask_cpu, nullptr, 0, 0);
}

Tensor one_hot(const Tensor& labels, int64_t num_classes) {
  NW_CHECK(is_integral(labels.dtype()), TypeError,
           "one_hot: labels must be an integer tensor, got ", dtype_name(labels.dtype()));
  NW_CHECK(num_classes >= -1, ValueError,
           "one_hot: num_classes must be -1 (infer) or non-negative, got ", num_classes);
  if (num_classes == -1) {
    NW_CHECK(labels.numel() > 0, ValueError,
             "one_hot: can't infer num_classes from an empty tensor; pass num_classes");
    num_classes = std::max<int64_t>(static_cast<int64_t>(amax(labels).item()) + 1, 0);
  }
  return dispatch1(OpKind::OneHot, {labels}, {num_classes});
}

Tensor dropout(const Tensor& x, double p, bool training) {
  NW_CHECK(p >= 0 && p <= 1, ValueError, "dropout: p must be in [0, 1], got ", p);
  NW_CHECK(is_floating(x.dtype()), TypeError, "dropout: expected a floating-point input, got ",
           dtype_name(x.dtype()));
  if (!training || p == 0) return x;
  return mul(x, dispatch1(OpKind::BernoulliMask, {x}, {p}));
}

}  // namespace nodeweave
