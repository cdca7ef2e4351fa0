// The op table: one declaration per primitive op holds everything every consumer needs — name,
// traits, output inference, kernels per device, gradient rule, and which tensors the gradient rule
// reads. Eager dispatch, autograd recording, the tracer and graph passes all read this one entry.
#pragma once
#include <array>
#include <vector>

#include "core_framework/engine/attrs.h"
#include "core_framework/engine/op_kind.h"
#include "core_framework/engine/op_signature.h"
#include "core_framework/engine/tensor.h"

namespace nodeweave {

enum OpTrait : uint32_t {
  kElementwise = 1u << 0,
  kReduce = 1u << 1,
  kView = 1u << 2,          // outputs alias input 0; the kernel creates them
  kDynamicShape = 1u << 3,  // output shape depends on values; the kernel allocates outputs
  kRandom = 1u << 4,        // reads the generator: never folded or deduplicated
  // Output 0 may be written into input 0 (add_, mul_, index_add_, masked_fill_, ...). Not only
  // elementwise ops carry it: fusion passes must test kElementwise.
  kInPlaceCapable = 1u << 5,
  // The op updates state: it writes its first k inputs in place (an optimizer step writing the
  // parameters and their moments) and returns them, k chosen by the kernel (infer is null). It
  // records no autograd, and a program keeps it wherever its results go unread.
  kMutatesInputs = 1u << 6,
};

struct TensorMeta {
  Shape shape;
  DType dtype;
  Device device;
};

// Everything a gradient rule sees. Inputs/outputs not listed in OpDef::saved are undefined.
struct GradCtx {
  const TensorList& inputs;
  const TensorList& outputs;
  const TensorList& grad_outputs;  // zeros are filled in for outputs that received no gradient
  const Attrs& attrs;
  const std::vector<TensorMeta>& input_meta;
  std::vector<bool> needs_input_grad;
};

using InferFn = std::vector<TensorMeta> (*)(const TensorList& inputs, const Attrs& attrs);
using KernelFn = void (*)(const TensorList& inputs, const Attrs& attrs, TensorList& outputs);
// Returns one gradient per input (undefined = none). Written with differentiable engine ops, so
// create_graph=True gives higher-order gradients for free; broadcast reduction and dtype casting
// back to each input happen once, in the autograd node, not in each rule.
using BackwardFn = TensorList (*)(const GradCtx& ctx);

// Bits 0-15 of OpDef::saved name inputs, bits 16-31 outputs; variadic ops past 16 inputs save none.
constexpr uint32_t kSaveInput(int i) { return i < 16 ? 1u << i : 0u; }
constexpr uint32_t kSaveOutput(int i) { return i < 16 ? 1u << (16 + i) : 0u; }

struct OpDef {
  OpKind kind = OpKind::kNumOps;
  // How the op is called (op_signature.h): an extension op declares it here; the table parses
  // it (built-in ops declare theirs in op_kind.h) and sets `signature` and `name` from it.
  const char* declaration = "";
  const char* name = "";
  const OpSignature* signature = nullptr;
  uint32_t traits = 0;
  InferFn infer = nullptr;            // null only for kView / kDynamicShape ops
  std::array<KernelFn, 2> kernels{};  // indexed by device: [0] CPU, [1] CUDA
  BackwardFn backward = nullptr;      // null: not differentiable
  uint32_t saved = 0;                 // kSaveInput / kSaveOutput bits
  // Which inputs may carry gradients (bit i); integer-valued inputs like indices never do.
  uint32_t differentiable_inputs = ~0u;
};

// Variadic ops (cat) may take more inputs than the mask has bits: those follow the last bit.
inline bool input_differentiable(const OpDef& def, size_t i) {
  return ((def.differentiable_inputs >> (i < 31 ? i : 31)) & 1u) != 0;
}

// The table. Filled once, by register_all_ops(), before the first dispatch.
const OpDef& op_def(OpKind kind);
OpDef& mutable_op_def(OpKind kind);
// Adds an op defined outside the engine and returns its kind: def.declaration gives its name
// (unique) and call; def.kind, name and signature are set by the table. Thread-safe; call once per
// op.
OpKind register_extension_op(const OpDef& def);
// Number of ops in the table, built-in and extension.
int num_registered_ops();

inline int device_slot(Device d) { return d.is_cpu() ? 0 : 1; }

}  // namespace nodeweave
