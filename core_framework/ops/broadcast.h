// NumPy broadcasting of shapes, with errors that name both shapes.
#pragma once
#include "core_framework/engine/tensor.h"

namespace nodeweave {

// The broadcast shape of a and b; throws ValueError naming `op` and both shapes when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Strides (in elements) that read `t` as if it had `shape` (0 on broadcast dims).
Shape broadcast_strides(const Tensor& t, const Shape& shape);

}  // namespace nodeweave
