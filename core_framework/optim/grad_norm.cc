// The total gradient norm used by clip_grad_norm_: one pass over every tensor, no intermediate
// per-tensor norm tensors.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core_framework/engine/functional.h"
#include "core_framework/optim/fused_steps.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::optim {

namespace {

// Sum of |x|^p (or max |x| when p is inf) over n elements, in double. Blocks have a fixed size so
// the summation order, and the rounding, is the same for any number of threads.
template <typename T>
double norm_part(const T* x, int64_t n, double p) {
  const bool is_inf = std::isinf(p);
  const int64_t nblocks = (n + kGrainSize - 1) / kGrainSize;
  std::vector<double> partial(static_cast<size_t>(nblocks), 0.0);
  parallel_for(0, nblocks, 1, [&](int64_t bb, int64_t be) {
    for (int64_t blk = bb; blk < be; ++blk) {
      const int64_t b = blk * kGrainSize, e = std::min(n, b + kGrainSize);
      double acc = 0;
      if (is_inf) {
        for (int64_t i = b; i < e; ++i) {
          double a = std::fabs(static_cast<double>(x[i]));
          // NaN must win, as in torch's max-abs norm: `a > acc` alone would drop it.
          if (a > acc || std::isnan(a)) acc = a;
        }
      } else if (p == 2) {
        for (int64_t i = b; i < e; ++i)
          acc += static_cast<double>(x[i]) * static_cast<double>(x[i]);
      } else if (p == 1) {
        for (int64_t i = b; i < e; ++i) acc += std::fabs(static_cast<double>(x[i]));
      } else {
        for (int64_t i = b; i < e; ++i) acc += std::pow(std::fabs(static_cast<double>(x[i])), p);
      }
      partial[static_cast<size_t>(blk)] = acc;
    }
  });
  double total = 0;
  for (double v : partial) {
    if (is_inf) {
      if (v > total || std::isnan(v)) total = v;
    } else {
      total += v;
    }
  }
  return total;
}

}  // namespace

double total_norm(const TensorList& tensors, double norm_type) {
  NW_CHECK(norm_type > 0, ValueError, "total_norm: norm_type must be positive or inf, got ",
           norm_type);
  const bool is_inf = std::isinf(norm_type);
  double acc = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    NW_CHECK(t.defined(), ValueError, "total_norm: tensors[", i, "] is undefined (None)");
    if (!t.device().is_cpu()) {
      throw NotImplementedError(str_cat("total_norm: tensors[", i, "] is on ", t.device().str(),
                                        "; only CPU tensors are supported"));
    }
    Tensor c = t.is_contiguous() ? t : contiguous(t.detach());
    double part = 0;
    NW_DISPATCH_FLOAT(c.dtype(), "total_norm",
                      { part = norm_part<scalar_t>(c.data<scalar_t>(), c.numel(), norm_type); });
    if (is_inf) {
      if (part > acc || std::isnan(part)) acc = part;
    } else {
      acc += part;
    }
  }
  if (is_inf) return acc;
  return norm_type == 2 ? std::sqrt(acc) : std::pow(acc, 1.0 / norm_type);
}

}  // namespace nodeweave::optim
