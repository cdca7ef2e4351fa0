// float16 / bfloat16 operands of the BLAS-backed kernels. Those types are storage formats here
// (docs/engine.md): arithmetic happens in float32 and the result is rounded once. A kernel stages
// each half operand as a float32 copy, runs its float32 path on the copies, then rounds the float32
// result into the half output. Operands that are not half pass through uncopied.
#pragma once
#include <vector>

#include "core_framework/runtime/array_view.h"

namespace nodeweave::sparse::cpu {

// A float32 view of a CPU array: the array itself when it is not half (or absent), else a widened
// contiguous copy owned by this object (values copied unless `read` is false: an output the kernel
// overwrites).
class Float32Staged {
 public:
  explicit Float32Staged(const ArrayView& v, bool read = true);
  Float32Staged(const Float32Staged&) = delete;
  Float32Staged& operator=(const Float32Staged&) = delete;
  ArrayView view() const { return view_; }
  // Rounds the float32 values back into `out` (a half array of the same size); a no-op when the
  // original was not half, since the kernel then wrote `out` directly.
  void narrow_into(ArrayView out) const;

 private:
  std::vector<float> buf_;
  ArrayView view_;
};

}  // namespace nodeweave::sparse::cpu
