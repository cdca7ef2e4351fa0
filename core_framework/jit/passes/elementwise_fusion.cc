// fuse_elementwise: runs of consecutive elementwise nodes over one shape become one
// fused_elementwise node (fused_elementwise.h), so their intermediates never go to memory.
//
// A node joins the run when it is elementwise (kElementwise, a CPU kernel, no opaque attribute),
// not random, not in place, records no autograd (a fused node has no backward), produces one value
// of the run's shape on the CPU, and reads only values of that shape or single elements, at least
// one of them made or read by the run already (so unrelated neighbours are not glued together).
// Only consecutive nodes fuse: every value the run reads from outside exists before its first
// node, and no node between two of its nodes can observe the order. What the rest of the program,
// its outputs or its guards read from the run becomes the fused node's outputs; the rest lives in
// per-thread block buffers only.
#include <algorithm>
#include <memory>

#include "core_framework/jit/fused_elementwise.h"
#include "core_framework/jit/passes/passes.h"

namespace nodeweave::jit {

namespace {

// Fewer elements than this and a run is left alone: the ops already work in cache, and the
// fused node's per-block dispatch would cost more than the round trips it saves.
constexpr int64_t kMinElements = 1024;

bool fusable_op(const OpNode& n, const Program& p) {
  const OpDef& d = op_def(n.op);
  if (!(d.traits & kElementwise) || (d.traits & kRandom) || !d.kernels[0] || !d.infer) return false;
  if (n.op == fused_elementwise_kind() || n.inplace || n.grad_enabled || n.outputs.size() != 1)
    return false;
  for (size_t i = 0; i < n.attrs.size(); ++i)
    if (std::holds_alternative<OpaquePtr>(n.attrs[i])) return false;
  const ValueType& t = p.values[static_cast<size_t>(n.outputs[0])].type;
  if (!t.device.is_cpu() || shape_numel(t.shape) < kMinElements) return false;
  for (int64_t v : n.inputs) {
    if (v == kNone) return false;
    const ValueType& in = p.values[static_cast<size_t>(v)].type;
    if (!in.device.is_cpu() || (in.shape != t.shape && shape_numel(in.shape) != 1)) return false;
  }
  return true;
}

}  // namespace

void fuse_elementwise(Program& p) {
  fused_elementwise_kind();
  // Who reads each value from where: a run's value read after the run is one of its outputs.
  std::vector<int64_t> last_reader(p.values.size(), -1);
  for (size_t k = 0; k < p.nodes.size(); ++k)
    for (int64_t v : p.nodes[k].inputs)
      if (v != kNone) last_reader[static_cast<size_t>(v)] = static_cast<int64_t>(k);
  std::vector<bool> external(p.values.size(), false);
  for (int64_t v : p.outputs) external[static_cast<size_t>(v)] = true;
  for (const Guard& g : p.guards) external[static_cast<size_t>(g.value)] = true;

  std::vector<OpNode> nodes;
  size_t k = 0;
  while (k < p.nodes.size()) {
    if (!fusable_op(p.nodes[k], p)) {
      nodes.push_back(std::move(p.nodes[k++]));
      continue;
    }
    // Grow the run [k, end).
    const Shape shape = p.values[static_cast<size_t>(p.nodes[k].outputs[0])].type.shape;
    std::vector<int64_t> touched(p.nodes[k].inputs);
    touched.push_back(p.nodes[k].outputs[0]);
    size_t end = k + 1;
    while (end < p.nodes.size() && fusable_op(p.nodes[end], p) &&
           p.values[static_cast<size_t>(p.nodes[end].outputs[0])].type.shape == shape) {
      const OpNode& n = p.nodes[end];
      const bool connected = std::any_of(n.inputs.begin(), n.inputs.end(), [&](int64_t v) {
        return std::find(touched.begin(), touched.end(), v) != touched.end();
      });
      if (!connected) break;
      touched.insert(touched.end(), n.inputs.begin(), n.inputs.end());
      touched.push_back(n.outputs[0]);
      ++end;
    }
    if (end - k < 2) {
      nodes.push_back(std::move(p.nodes[k++]));
      continue;
    }
    auto body = std::make_shared<FusedBody>();
    body->shape = shape;
    OpNode fused;
    fused.op = fused_elementwise_kind();
    std::vector<int64_t> reg_value;  // register -> value id
    auto reg_of = [&](int64_t v) {
      auto it = std::find(reg_value.begin(), reg_value.end(), v);
      return static_cast<int>(it - reg_value.begin());
    };
    // Inputs first: every value the run reads that it does not make.
    for (size_t j = k; j < end; ++j)
      for (int64_t v : p.nodes[j].inputs) {
        bool made_here = false;
        for (size_t i = k; i < j && !made_here; ++i) made_here = p.nodes[i].outputs[0] == v;
        if (!made_here && reg_of(v) == static_cast<int>(reg_value.size())) {
          reg_value.push_back(v);
          fused.inputs.push_back(v);
        }
      }
    body->num_inputs = static_cast<int>(reg_value.size());
    for (size_t j = k; j < end; ++j) {
      const OpNode& n = p.nodes[j];
      FusedStep s{n.op, n.attrs, {}, p.values[static_cast<size_t>(n.outputs[0])].type.dtype};
      for (int64_t v : n.inputs) s.args.push_back(reg_of(v));
      body->steps.push_back(std::move(s));
      reg_value.push_back(n.outputs[0]);
      const int64_t v = n.outputs[0];
      if (external[static_cast<size_t>(v)] ||
          last_reader[static_cast<size_t>(v)] >= static_cast<int64_t>(end)) {
        body->outputs.push_back(reg_of(v));
        fused.outputs.push_back(v);
      }
    }
    if (fused.outputs.empty()) {  // nothing reads the run: dead code's to drop, not ours
      for (size_t j = k; j < end; ++j) nodes.push_back(std::move(p.nodes[j]));
      k = end;
      continue;
    }
    fused.attrs.push_back(OpaquePtr(std::move(body)));
    nodes.push_back(std::move(fused));
    k = end;
  }
  p.nodes = std::move(nodes);
  p.compact();
  p.verify();
}

}  // namespace nodeweave::jit
