// Shared pieces of op declarations: common output inference and small utilities.
#pragma once
#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"
#include "core_framework/ops/broadcast.h"

namespace nodeweave {

// Output like input 0 (shape and dtype).
std::vector<TensorMeta> infer_like_input(const TensorList& in, const Attrs& attrs);
// Registers an op entry in one statement.
OpDef& define_op(OpKind kind, uint32_t traits, InferFn infer, KernelFn cpu, BackwardFn backward,
                 uint32_t saved, uint32_t differentiable_inputs = ~0u);
// Converts `t` to dtype `d` if needed (no copy when it already matches).
inline Tensor as_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t : cast(t, d); }

}  // namespace nodeweave
