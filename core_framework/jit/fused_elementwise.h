// fused_elementwise: a chain of elementwise ops over one shape, run block by block (the pass
// fuse_elementwise makes it; passes/passes.h). Eager mode and an unfused program run each op over
// the whole tensor, so every intermediate makes a round trip through memory; here each block of
// kBlockElements passes through all the steps while it sits in cache, and only the results the
// rest of the program reads are written out.
//
// Each step calls the op's own CPU kernel (the op table's) on block-sized views, so a fused chain
// computes bit for bit what the unfused ops compute: the interpreter adds no arithmetic of its
// own, and an op's math stays declared once. bench/jit/elementwise_fusion.py compares it with the
// alternative, C++ generated for the chain and compiled at run time.
#pragma once
#include <string>
#include <vector>

#include "core_framework/engine/attrs.h"
#include "core_framework/engine/op_kind.h"
#include "core_framework/engine/tensor.h"

namespace nodeweave::jit {

constexpr int64_t kBlockElements = 16384;

// One step: registers 0..num_inputs-1 are the node's inputs, step k writes register
// num_inputs + k.
struct FusedStep {
  OpKind op;
  Attrs attrs;
  std::vector<int> args;  // registers
  DType dtype;            // of the result
};

struct FusedBody final : OpaqueAttr {
  int num_inputs = 0;
  std::vector<FusedStep> steps;
  std::vector<int> outputs;  // registers the node returns, in order
  Shape shape;               // of every non-scalar operand and of every result
  const char* kind() const override { return "elementwise"; }
  std::string describe() const override;
};

// The op (an extension of the engine's table, registered on first use): inputs are the chain's
// operands, each of `shape` or with one element; attrs {FusedBody}; outputs the body's outputs.
OpKind fused_elementwise_kind();

}  // namespace nodeweave::jit
