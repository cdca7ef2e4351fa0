#include <map>
#include <string>
#include <tuple>

#include "core_framework/jit/alias_classes.h"
#include "core_framework/jit/object_input.h"
#include "core_framework/jit/passes/passes.h"

namespace nodeweave::jit {

namespace {

bool same_attrs(const Attrs& a, const Attrs& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto* oa = std::get_if<OpaquePtr>(&a[i]);
    const auto* ob = std::get_if<OpaquePtr>(&b[i]);
    if (oa && ob) {
      if (!same_object(*oa, *ob)) return false;
    } else if (!(a[i] == b[i])) {
      return false;  // doubles compare by value: a NaN never matches
    }
  }
  return true;
}

// Constants with the same dtype, shape, device and bytes (two layers' ones(num_edges), two
// Python scalars 1.0) are one value, so the nodes reading them can merge too. Constants written
// in place keep their own memory; large ones are not compared.
void merge_equal_constants(const Program& p, const std::vector<bool>& written,
                           std::vector<int64_t>& replace) {
  constexpr int64_t kMaxCompared = int64_t{1} << 16;
  std::map<std::tuple<int, Shape, std::string, bool>, std::vector<int64_t>> by_type;
  for (size_t v = 0; v < p.values.size(); ++v) {
    const Value& val = p.values[v];
    if (val.source != ValueSource::Constant || written[v]) continue;
    const Tensor& t = p.tensors[static_cast<size_t>(val.index)];
    if (!t.defined() || !t.device().is_cpu() || t.numel() > kMaxCompared) continue;
    auto& same = by_type[{static_cast<int>(t.dtype()), t.shape(), t.device().str(),
                          t.impl()->wrapped_number}];
    for (int64_t u : same) {
      if (same_bytes(p.tensors[static_cast<size_t>(p.values[static_cast<size_t>(u)].index)], t)) {
        replace[v] = u;
        break;
      }
    }
    if (replace[v] == static_cast<int64_t>(v)) same.push_back(static_cast<int64_t>(v));
  }
}

}  // namespace

void eliminate_common_subexpressions(Program& p) {
  const std::vector<bool> written = written_memory(p);
  const std::vector<int64_t> root = alias_roots(p);
  auto touches_written = [&](const std::vector<int64_t>& ids) {
    for (int64_t v : ids)
      if (v != kNone && written[static_cast<size_t>(v)]) return true;
    return false;
  };
  // In-place writes so far, per memory (alias root): two reads of memory that an in-place node
  // writes see the same contents, and may merge, only between the same two writes.
  std::vector<int64_t> writes(p.values.size(), 0);
  std::vector<int64_t> replace(p.values.size());
  for (size_t v = 0; v < replace.size(); ++v) replace[v] = static_cast<int64_t>(v);
  merge_equal_constants(p, written, replace);
  // Kept nodes by op, grad mode, inputs and the write count of each input's memory.
  using Key = std::tuple<int, bool, std::vector<int64_t>, std::vector<int64_t>>;
  std::map<Key, std::vector<size_t>> seen;
  std::vector<OpNode> nodes;
  for (OpNode& n : p.nodes) {
    std::vector<int64_t> versions;
    for (int64_t& v : n.inputs) {
      if (v != kNone) v = replace[static_cast<size_t>(v)];
      versions.push_back(v == kNone ? 0
                                    : writes[static_cast<size_t>(root[static_cast<size_t>(v)])]);
    }
    if (n.inplace)
      for (size_t i = 0; i < n.outputs.size(); ++i)
        ++writes[static_cast<size_t>(root[static_cast<size_t>(n.inputs[i])])];
    // A result written in place later must stay its own value.
    const bool eligible =
        !n.inplace && !(op_def(n.op).traits & kRandom) && !touches_written(n.outputs);
    if (eligible) {
      auto& candidates = seen[Key{static_cast<int>(n.op), n.grad_enabled, n.inputs, versions}];
      const OpNode* match = nullptr;
      for (size_t k : candidates)
        if (same_attrs(nodes[k].attrs, n.attrs)) match = &nodes[k];
      if (match) {
        for (size_t i = 0; i < n.outputs.size(); ++i)
          replace[static_cast<size_t>(n.outputs[i])] = match->outputs[i];
        continue;
      }
      candidates.push_back(nodes.size());
    }
    nodes.push_back(std::move(n));
  }
  p.nodes = std::move(nodes);
  for (int64_t& v : p.outputs) v = replace[static_cast<size_t>(v)];
  for (Guard& g : p.guards) g.value = replace[static_cast<size_t>(g.value)];
  p.replace_in_regions(replace);
  p.compact();
}

}  // namespace nodeweave::jit
