// Helpers shared by the jit tests.
#pragma once
#include <algorithm>
#include <vector>

#include "core_framework/engine/functional.h"

namespace nodeweave::jit::testing {

// A float32 tensor holding `v` in the given shape.
inline Tensor from(const std::vector<float>& v, const Shape& shape) {
  Tensor t = empty(shape, DType::Float32);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

}  // namespace nodeweave::jit::testing
