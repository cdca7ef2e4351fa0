// take_along / put_along: the gather and scatter-add forms the gradients of sort, topk, max/min
// and nll_loss are written with. Composites over Gather and ScatterAdd, so those two ops' kernels
// and gradient rules serve every caller.
#include "core_framework/engine/functional.h"
#include "core_framework/ops/along_dim.h"

namespace nodeweave {

Tensor take_along(const Tensor& x, const Tensor& index, int64_t dim) {
  return gather(x, dim, index);
}

Tensor put_along(const Tensor& src, const Tensor& index, int64_t dim, int64_t size) {
  Shape shape = src.shape();
  if (!shape.empty()) shape[wrap_dim(dim, src.dim())] = size;
  return scatter_add(zeros(shape, src.dtype(), src.device()), dim, index, src);
}

}  // namespace nodeweave
