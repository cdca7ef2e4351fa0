#include "core_framework/jit/alias_classes.h"

namespace nodeweave::jit {

std::vector<int64_t> alias_roots(const Program& p) {
  std::vector<int64_t> root(p.values.size());
  for (size_t v = 0; v < root.size(); ++v) root[v] = static_cast<int64_t>(v);
  for (const OpNode& n : p.nodes) {
    if (n.inplace) {  // output i is input i, written
      for (size_t i = 0; i < n.outputs.size(); ++i)
        root[static_cast<size_t>(n.outputs[i])] = root[static_cast<size_t>(n.inputs[i])];
      continue;
    }
    if (!(op_def(n.op).traits & kView) || n.inputs.empty() || n.inputs[0] < 0) continue;
    const int64_t r = root[static_cast<size_t>(n.inputs[0])];
    for (int64_t o : n.outputs) root[static_cast<size_t>(o)] = r;
  }
  return root;
}

std::vector<bool> written_memory(const Program& p) {
  const std::vector<int64_t> root = alias_roots(p);
  std::vector<bool> root_written(p.values.size(), false);
  for (const OpNode& n : p.nodes)
    if (n.inplace)
      for (size_t i = 0; i < n.outputs.size(); ++i)
        root_written[static_cast<size_t>(root[static_cast<size_t>(n.inputs[i])])] = true;
  std::vector<bool> written(p.values.size());
  for (size_t v = 0; v < written.size(); ++v)
    written[v] = root_written[static_cast<size_t>(root[v])];
  return written;
}

void copy_written_constants(Program& p) {
  const std::vector<int64_t> root = alias_roots(p);
  std::vector<int64_t> copy_of(p.values.size(), -1);
  std::vector<OpNode> copies;
  for (const OpNode& n : p.nodes) {
    if (!n.inplace) continue;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const int64_t r = root[static_cast<size_t>(n.inputs[i])];
      const Value val = p.values[static_cast<size_t>(r)];
      if (val.source != ValueSource::Constant || copy_of[static_cast<size_t>(r)] >= 0) continue;
      OpNode c;
      c.op = OpKind::Cast;
      c.inputs = {r};
      c.attrs = Attrs{val.type.dtype};
      c.outputs = {p.add_value(val.type, ValueSource::Node, -1)};
      copy_of[static_cast<size_t>(r)] = c.outputs[0];
      copies.push_back(std::move(c));
    }
  }
  if (copies.empty()) return;
  auto redirect = [&](int64_t& v) {
    if (v >= 0 && static_cast<size_t>(v) < copy_of.size() && copy_of[static_cast<size_t>(v)] >= 0)
      v = copy_of[static_cast<size_t>(v)];
  };
  for (OpNode& n : p.nodes)
    for (int64_t& v : n.inputs) redirect(v);
  for (int64_t& v : p.outputs) redirect(v);
  for (Guard& g : p.guards) redirect(g.value);
  p.nodes.insert(p.nodes.begin(), copies.begin(), copies.end());
}

}  // namespace nodeweave::jit
