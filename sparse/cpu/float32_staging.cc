// Float32Staged: widen a half array to float32, and round float32 values back.
#include "sparse/cpu/float32_staging.h"

#include <cstdint>

#include "core_framework/runtime/parallel.h"

namespace nodeweave::sparse::cpu {

Float32Staged::Float32Staged(const ArrayView& v, bool read) : view_(v) {
  // Decided by the dtype alone: an empty half array (no data) still becomes a float32 view, or the
  // kernel's half path would be taken again on it.
  if (!is_half(v.dtype)) return;
  const int64_t n = v.numel();
  buf_.resize(static_cast<size_t>(n));
  const uint16_t* src = v.ptr<uint16_t>();
  const bool bf16 = v.dtype == DType::BFloat16;
  if (read)
    parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        buf_[static_cast<size_t>(i)] = bf16 ? bfloat16_to_float(src[i]) : half_to_float(src[i]);
    });
  view_.data = buf_.data();
  view_.dtype = DType::Float32;
  view_.strides.assign(v.shape.size(), 1);
  for (int i = static_cast<int>(v.shape.size()) - 2; i >= 0; --i)
    view_.strides[static_cast<size_t>(i)] =
        view_.strides[static_cast<size_t>(i) + 1] * v.shape[static_cast<size_t>(i) + 1];
}

void Float32Staged::narrow_into(ArrayView out) const {
  if (!is_half(out.dtype)) return;
  const int64_t n = out.numel();
  uint16_t* dst = out.ptr<uint16_t>();
  const bool bf16 = out.dtype == DType::BFloat16;
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float f = buf_[static_cast<size_t>(i)];
      dst[i] = bf16 ? float_to_bfloat16(f) : float_to_half(f);
    }
  });
}

}  // namespace nodeweave::sparse::cpu
