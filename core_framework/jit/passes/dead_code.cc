#include "core_framework/jit/passes/passes.h"

namespace nodeweave::jit {

void eliminate_dead_code(Program& p) {
  std::vector<bool> live(p.values.size(), false);
  for (int64_t v : p.outputs) live[static_cast<size_t>(v)] = true;
  for (const Guard& g : p.guards) live[static_cast<size_t>(g.value)] = true;
  std::vector<bool> keep(p.nodes.size(), false);
  // Backwards: a node is kept when it has effects or a kept node (or the result) reads it.
  for (size_t k = p.nodes.size(); k-- > 0;) {
    const OpNode& n = p.nodes[k];
    bool needed = n.inplace || (op_def(n.op).traits & kRandom);
    for (int64_t o : n.outputs) needed = needed || live[static_cast<size_t>(o)];
    if (!needed) continue;
    keep[k] = true;
    for (int64_t v : n.inputs)
      if (v != kNone) live[static_cast<size_t>(v)] = true;
  }
  std::vector<OpNode> nodes;
  for (size_t k = 0; k < p.nodes.size(); ++k)
    if (keep[k]) nodes.push_back(std::move(p.nodes[k]));
  p.nodes = std::move(nodes);
  p.compact();
}

}  // namespace nodeweave::jit
