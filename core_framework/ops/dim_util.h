// Kernel helpers for ops that work along one dimension (max, prod, softmax, sort, cat, ...): the
// (outer, size, inner) split of a contiguous tensor, and a dense copy that bypasses the dispatcher
// so kernels never record autograd nodes or tracer events of their own.
#pragma once
#include <atomic>

#include "core_framework/engine/tensor.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave {

// A contiguous tensor seen as [outer, size, inner] around dimension `dim`.
struct DimSplit {
  int64_t outer = 1;
  int64_t size = 1;
  int64_t inner = 1;
};
DimSplit split_at_dim(const Shape& shape, int64_t dim);

// Writes `src` (broadcast to dst's shape; same dtype) into `dst`, whatever the strides of either.
void copy_same_dtype(const Tensor& dst, const Tensor& src);
// `t` itself when contiguous, else a contiguous copy.
Tensor dense(const Tensor& t);

// Position of the first p[i] with bad(p[i]), or n. Index checks run as this separate pass because
// no exception may leave an OpenMP region.
template <typename T, typename Bad>
int64_t first_bad(const T* p, int64_t n, const Bad& bad) {
  std::atomic<int64_t> first{n};
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (bad(p[i])) {
        int64_t cur = first.load();
        while (i < cur && !first.compare_exchange_weak(cur, i)) {
        }
        return;
      }
    }
  });
  return first.load();
}

}  // namespace nodeweave
