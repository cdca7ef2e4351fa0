// Dim-list helpers shared by the reduction ops.
#pragma once
#include "core_framework/engine/attrs.h"
#include "core_framework/engine/tensor.h"

namespace nodeweave {

// Wraps, sorts and checks a dim list; empty means every dim.
IntList normalize_dims(const IntList& dims, int64_t ndim, const char* op);
// Shape after reducing `dims` (kept as size 1 with keepdim).
Shape reduced_shape(const Shape& in, const IntList& dims, bool keepdim);
void register_reduce_sum_op();

}  // namespace nodeweave
