// take_along / put_along: gather from, and scatter-add into, one dimension with an index tensor of
// the same rank. Each is the other's gradient; together they give sort, topk, max/min and nll_loss
// linear-time (and twice differentiable) backward passes without one-hot masks.
#pragma once
#include "core_framework/engine/tensor.h"

namespace nodeweave {

// out[..., j, ...] = x[..., index[..., j, ...], ...] along `dim`; index has x's shape except at
// dim.
Tensor take_along(const Tensor& x, const Tensor& index, int64_t dim);
// Zeros of src's shape with dim resized to `size`, then out[..., index[..., j, ...], ...] +=
// src[..., j, ...].
Tensor put_along(const Tensor& src, const Tensor& index, int64_t dim, int64_t size);

}  // namespace nodeweave
