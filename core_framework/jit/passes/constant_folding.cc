
#include "core_framework/autograd/grad_mode.h"
#include "core_framework/engine/functional.h"
#include "core_framework/jit/alias_classes.h"
#include "core_framework/jit/object_input.h"
#include "core_framework/jit/passes/passes.h"

namespace nodeweave::jit {

namespace {
// A folded result is stored in the program (and in a saved program file): larger ones are
// cheaper to recompute than to carry.
constexpr int64_t kMaxFoldedElements = int64_t{1} << 20;
}  // namespace

void fold_constants(Program& p) {
  const std::vector<bool> written = written_memory(p);
  std::vector<OpNode> nodes;
  for (OpNode& n : p.nodes) {
    // A node reading an object input (a graph's degrees) computes something new at each call.
    bool foldable = !n.inplace && !(op_def(n.op).traits & kRandom) && !reads_object_input(n.attrs);
    TensorList args;
    for (int64_t v : n.inputs) {
      if (!foldable) break;
      if (v == kNone) {
        args.emplace_back();
        continue;
      }
      const Value& val = p.values[static_cast<size_t>(v)];
      foldable = val.source == ValueSource::Constant &&
                 p.tensors[static_cast<size_t>(val.index)].defined();
      if (foldable) args.push_back(p.tensors[static_cast<size_t>(val.index)]);
    }
    for (int64_t o : n.outputs) {
      const Value& val = p.values[static_cast<size_t>(o)];
      foldable = foldable && !written[static_cast<size_t>(o)] &&
                 shape_numel(val.type.shape) <= kMaxFoldedElements;
    }
    if (!foldable) {
      nodes.push_back(std::move(n));
      continue;
    }
    TensorList outs;
    {
      NoGradGuard no_grad;
      outs = dispatch(n.op, args, n.attrs);
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      p.tensors.push_back(outs[i]);
      Value& val = p.values[static_cast<size_t>(n.outputs[i])];
      val.source = ValueSource::Constant;
      val.index = static_cast<int64_t>(p.tensors.size()) - 1;
    }
  }
  p.nodes = std::move(nodes);
  // A guard on what is now a constant holds whenever it held while tracing.
  std::vector<Guard> guards;
  for (Guard& g : p.guards) {
    const Value& val = p.values[static_cast<size_t>(g.value)];
    const bool constant = val.source == ValueSource::Constant && g.expected.defined() &&
                          p.tensors[static_cast<size_t>(val.index)].defined();
    if (!constant || !same_bytes(p.tensors[static_cast<size_t>(val.index)], g.expected))
      guards.push_back(std::move(g));
  }
  p.guards = std::move(guards);
  p.compact();
}

}  // namespace nodeweave::jit
