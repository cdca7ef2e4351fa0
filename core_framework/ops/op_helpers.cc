#include "core_framework/ops/op_helpers.h"

namespace nodeweave {

std::vector<TensorMeta> infer_like_input(const TensorList& in, const Attrs&) {
  return {TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()}};
}

OpDef& define_op(OpKind kind, uint32_t traits, InferFn infer, KernelFn cpu, BackwardFn backward,
                 uint32_t saved, uint32_t differentiable_inputs) {
  OpDef& d = mutable_op_def(kind);
  d.traits = traits;
  d.infer = infer;
  d.kernels[0] = cpu;
  d.backward = backward;
  d.saved = saved;
  d.differentiable_inputs = differentiable_inputs;
  return d;
}

}  // namespace nodeweave
