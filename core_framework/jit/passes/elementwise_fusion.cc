// fuse_elementwise: runs of elementwise nodes over one shape become one fused_elementwise node
// (fused_elementwise.h), so their intermediates never go to memory.
//
// A node joins the run when it is elementwise (kElementwise, a CPU kernel, no opaque attribute),
// not random, not in place, records no autograd (a fused node has no backward), produces one value
// of the run's shape on the CPU, and reads only values of that shape or single elements, at least
// one of them made or read by the run already (so unrelated neighbours are not glued together).
//
// Nodes between two of the run's nodes that read nothing the run makes (views, small statistics,
// a random mask the run reads) move ahead of the fused node; only nodes that write nothing move,
// so no read can see another order. A node that reads the run's values
// ends it. What the rest of the program, its outputs or its guards read from the run becomes the
// fused node's outputs; the rest lives in per-thread block buffers only.
#include <algorithm>
#include <memory>

#include "core_framework/jit/fused_elementwise.h"
#include "core_framework/jit/passes/passes.h"

namespace nodeweave::jit {

namespace {

bool fusable_op(const OpNode& n, const Program& p, int64_t min_elements) {
  const OpDef& d = op_def(n.op);
  if (!(d.traits & kElementwise) || (d.traits & kRandom) || !d.kernels[0] || !d.infer) return false;
  if (n.op == fused_elementwise_kind() || n.inplace || n.grad_enabled || n.outputs.size() != 1)
    return false;
  for (size_t i = 0; i < n.attrs.size(); ++i)
    if (std::holds_alternative<OpaquePtr>(n.attrs[i])) return false;
  const ValueType& t = p.values[static_cast<size_t>(n.outputs[0])].type;
  if (!t.device.is_cpu() || shape_numel(t.shape) < min_elements) return false;
  for (int64_t v : n.inputs) {
    if (v == kNone) return false;
    const ValueType& in = p.values[static_cast<size_t>(v)].type;
    if (!in.device.is_cpu() || (in.shape != t.shape && shape_numel(in.shape) != 1)) return false;
  }
  return true;
}

// May move ahead of a run's later nodes: it writes nothing (so no other read sees a new order).
bool movable(const OpNode& n) { return !n.inplace && !(op_def(n.op).traits & kMutatesInputs); }

// How many nodes in a row a run looks past for its next node.
constexpr size_t kLookahead = 16;

}  // namespace

void fuse_elementwise(Program& p, int64_t min_elements) {
  fused_elementwise_kind();
  // Who reads each value from where: a run's value read after the run is one of its outputs.
  std::vector<int64_t> last_reader(p.values.size(), -1);
  for (size_t k = 0; k < p.nodes.size(); ++k)
    for (int64_t v : p.nodes[k].inputs)
      if (v != kNone) last_reader[static_cast<size_t>(v)] = static_cast<int64_t>(k);
  std::vector<bool> external(p.values.size(), false);
  for (int64_t v : p.outputs) external[static_cast<size_t>(v)] = true;
  std::vector<bool> guarded(p.values.size(), false);
  for (const Guard& g : p.guards)
    external[static_cast<size_t>(g.value)] = guarded[static_cast<size_t>(g.value)] = true;

  std::vector<OpNode> nodes;
  size_t k = 0;
  while (k < p.nodes.size()) {
    if (!fusable_op(p.nodes[k], p, min_elements)) {
      nodes.push_back(std::move(p.nodes[k++]));
      continue;
    }
    // Grow the run: members in program order; the nodes passed over before its last member
    // move ahead of the fused node.
    const Shape shape = p.values[static_cast<size_t>(p.nodes[k].outputs[0])].type.shape;
    std::vector<size_t> members{k}, passed;
    std::vector<int64_t> touched(p.nodes[k].inputs);
    std::vector<bool> made(p.values.size(), false);  // by the run
    made[static_cast<size_t>(p.nodes[k].outputs[0])] = true;
    touched.push_back(p.nodes[k].outputs[0]);
    // (A guarded first node ends the run at once: see below.)
    const bool first_guarded = guarded[static_cast<size_t>(p.nodes[k].outputs[0])];
    for (size_t j = k + 1, skipped = 0;
         !first_guarded && j < p.nodes.size() && skipped < kLookahead; ++j) {
      const OpNode& n = p.nodes[j];
      const bool reads_run = std::any_of(n.inputs.begin(), n.inputs.end(), [&](int64_t v) {
        return v != kNone && made[static_cast<size_t>(v)];
      });
      const bool connected = std::any_of(n.inputs.begin(), n.inputs.end(), [&](int64_t v) {
        return std::find(touched.begin(), touched.end(), v) != touched.end();
      });
      if (connected && fusable_op(n, p, min_elements) &&
          p.values[static_cast<size_t>(n.outputs[0])].type.shape == shape) {
        members.push_back(j);
        touched.insert(touched.end(), n.inputs.begin(), n.inputs.end());
        touched.push_back(n.outputs[0]);
        made[static_cast<size_t>(n.outputs[0])] = true;
        skipped = 0;
        // A guard on it is checked after the fused node: nothing may move ahead of that check,
        // or a failing guard would find a random draw or an error of a later node done already.
        if (guarded[static_cast<size_t>(n.outputs[0])]) break;
        continue;
      }
      if (reads_run || !movable(n)) break;
      passed.push_back(j);
      ++skipped;
    }
    const size_t last = members.back();
    while (!passed.empty() && passed.back() > last) passed.pop_back();  // they stay where they are
    if (members.size() < 2) {
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
    for (size_t m = 0; m < members.size(); ++m)
      for (int64_t v : p.nodes[members[m]].inputs) {
        bool made_here = false;
        for (size_t i = 0; i < m && !made_here; ++i)
          made_here = p.nodes[members[i]].outputs[0] == v;
        if (!made_here && reg_of(v) == static_cast<int>(reg_value.size())) {
          reg_value.push_back(v);
          fused.inputs.push_back(v);
        }
      }
    body->num_inputs = static_cast<int>(reg_value.size());
    for (size_t j : members) {
      const OpNode& n = p.nodes[j];
      FusedStep s{n.op, n.attrs, {}, p.values[static_cast<size_t>(n.outputs[0])].type.dtype};
      for (int64_t v : n.inputs) s.args.push_back(reg_of(v));
      body->steps.push_back(std::move(s));
      reg_value.push_back(n.outputs[0]);
      const int64_t v = n.outputs[0];
      if (external[static_cast<size_t>(v)] ||
          last_reader[static_cast<size_t>(v)] > static_cast<int64_t>(last)) {
        body->outputs.push_back(reg_of(v));
        fused.outputs.push_back(v);
      }
    }
    if (fused.outputs.empty()) {  // nothing reads the run: dead code's to drop, not ours
      nodes.push_back(std::move(p.nodes[k++]));
      continue;
    }
    for (size_t j : passed) nodes.push_back(std::move(p.nodes[j]));
    fused.attrs.push_back(OpaquePtr(std::move(body)));
    nodes.push_back(std::move(fused));
    k = last + 1;
  }
  p.nodes = std::move(nodes);
  p.compact();
  p.verify();
}

}  // namespace nodeweave::jit
