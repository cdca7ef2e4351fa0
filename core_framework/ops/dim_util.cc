// Dense copies by element width (a bool, an int8 and a uint8 copy alike), so one instantiation per
// width serves every dtype.
#include "core_framework/ops/dim_util.h"

#include "core_framework/ops/elementwise_loop.h"

namespace nodeweave {

DimSplit split_at_dim(const Shape& shape, int64_t dim) {
  DimSplit s;
  const int64_t n = static_cast<int64_t>(shape.size());
  for (int64_t d = 0; d < dim; ++d) s.outer *= shape[d];
  s.size = n == 0 ? 1 : shape[dim];
  for (int64_t d = dim + 1; d < n; ++d) s.inner *= shape[d];
  return s;
}

void copy_same_dtype(const Tensor& dst, const Tensor& src) {
  NW_CHECK(dst.dtype() == src.dtype(), std::logic_error, "copy_same_dtype: dtype mismatch");
  auto id = [](auto v) { return v; };
  switch (dst.itemsize()) {
    case 1:
      elementwise_kernel<uint8_t, uint8_t>(dst, {src}, id);
      break;
    case 2:
      elementwise_kernel<uint16_t, uint16_t>(dst, {src}, id);
      break;
    case 4:
      elementwise_kernel<uint32_t, uint32_t>(dst, {src}, id);
      break;
    case 8:
      elementwise_kernel<uint64_t, uint64_t>(dst, {src}, id);
      break;
    default:
      throw std::logic_error("copy_same_dtype: unexpected element size");
  }
}

Tensor dense(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = empty(t.shape(), t.dtype(), t.device());
  copy_same_dtype(out, t);
  return out;
}

}  // namespace nodeweave
