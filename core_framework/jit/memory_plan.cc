#include "core_framework/jit/memory_plan.h"

#include <algorithm>
#include <climits>

#include "core_framework/jit/alias_classes.h"
#include "core_framework/jit/fused_elementwise.h"

namespace nodeweave::jit {

namespace {
constexpr int64_t kNever = INT64_MAX;  // alive until the caller is done with it
}  // namespace

MemoryPlan plan_memory(const Program& p, bool in_place) {
  const std::vector<int64_t> root = alias_roots(p);
  const size_t nv = p.values.size();
  // Last node that reads any value of a memory class; kNever for classes the caller sees.
  std::vector<int64_t> last(nv, -1);
  std::vector<bool> read_by_autograd(nv, false);
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const OpNode& n = p.nodes[k];
    for (int64_t v : n.inputs) {
      if (v == kNone) continue;
      int64_t& l = last[static_cast<size_t>(root[static_cast<size_t>(v)])];
      if (l != kNever) l = static_cast<int64_t>(k);
      if (n.grad_enabled)
        read_by_autograd[static_cast<size_t>(root[static_cast<size_t>(v)])] = true;
    }
    // An alias made here keeps its class alive at least to here.
    for (int64_t v : n.outputs) {
      int64_t& l = last[static_cast<size_t>(root[static_cast<size_t>(v)])];
      if (l != kNever && l < static_cast<int64_t>(k)) l = static_cast<int64_t>(k);
    }
  }
  for (int64_t v : p.outputs) last[static_cast<size_t>(root[static_cast<size_t>(v)])] = kNever;

  MemoryPlan plan;
  plan.buffer_of.resize(p.nodes.size());
  std::vector<bool> busy;
  std::vector<std::vector<int64_t>> free_after(p.nodes.size());  // buffers freed after node k
  std::vector<int64_t> buffer_of_value(nv, -1);
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const OpNode& n = p.nodes[k];
    const OpDef& def = op_def(n.op);
    std::vector<int64_t>& out = plan.buffer_of[k];
    out.assign(n.outputs.size(), -1);
    const bool eligible =
        !n.inplace && !n.grad_enabled && def.infer && !(def.traits & (kView | kDynamicShape));
    // A one-result elementwise op computes each element from the same element of its inputs, so
    // its result may overwrite an input of its own shape and dtype that dies here (ggml's in-place
    // reuse). Not a fused chain: its later steps may read an input after an earlier step wrote
    // its block.
    const bool in_place_ok = in_place && eligible && n.outputs.size() == 1 &&
                             (def.traits & kElementwise) && !(def.traits & kRandom) &&
                             n.op != fused_elementwise_kind();
    for (size_t i = 0; eligible && i < n.outputs.size(); ++i) {
      const auto v = static_cast<size_t>(n.outputs[i]);
      if (root[v] != static_cast<int64_t>(v) || last[v] == kNever || read_by_autograd[v]) continue;
      const ValueType& t = p.values[v].type;
      const int64_t bytes = shape_numel(t.shape) * static_cast<int64_t>(dtype_size(t.dtype));
      if (bytes == 0) continue;
      if (in_place_ok) {
        int64_t reuse = -1;
        for (int64_t in : n.inputs) {
          if (in == kNone) continue;
          const auto u = static_cast<size_t>(in);
          const int64_t b = buffer_of_value[u];
          if (b < 0 || root[u] != static_cast<int64_t>(u) || last[u] != static_cast<int64_t>(k) ||
              !(p.values[u].type == t))
            continue;
          // Read twice by this node (mul(a, a)) is fine too: each element is read before written.
          reuse = b;
          break;
        }
        std::vector<int64_t>& frees = free_after[k];
        const auto freed = std::find(frees.begin(), frees.end(), reuse);
        if (reuse >= 0 && freed != frees.end()) {
          frees.erase(freed);  // it stays taken, by the result
          out[i] = reuse;
          buffer_of_value[v] = reuse;
          plan.planned_bytes += bytes;
          plan.in_place_bytes += bytes;
          free_after[static_cast<size_t>(std::max(last[v], static_cast<int64_t>(k)))].push_back(
              reuse);
          continue;
        }
      }
      // Best fit: the smallest free buffer on the device that holds it, else a new one.
      int64_t best = -1;
      for (size_t b = 0; b < busy.size(); ++b)
        if (!busy[b] && plan.buffer_device[b] == t.device && plan.buffer_bytes[b] >= bytes &&
            (best < 0 || plan.buffer_bytes[b] < plan.buffer_bytes[static_cast<size_t>(best)]))
          best = static_cast<int64_t>(b);
      if (best < 0) {
        best = static_cast<int64_t>(busy.size());
        busy.push_back(false);
        plan.buffer_bytes.push_back(bytes);
        plan.buffer_device.push_back(t.device);
        plan.arena_bytes += bytes;
      }
      busy[static_cast<size_t>(best)] = true;
      out[i] = best;
      buffer_of_value[v] = best;
      plan.planned_bytes += bytes;
      // Freed after its class's last reader (or right away when nothing reads it).
      const int64_t until = std::max(last[v], static_cast<int64_t>(k));
      free_after[static_cast<size_t>(until)].push_back(best);
    }
    for (int64_t b : free_after[k]) busy[static_cast<size_t>(b)] = false;
  }
  return plan;
}

}  // namespace nodeweave::jit
