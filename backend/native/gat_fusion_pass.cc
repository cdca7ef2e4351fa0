// The jit pass fuse_gat_edge_pipeline: graph-kernel fusion of GAT's attention (Seastar, FeatGraph).
//
//   %s = gsddmm(%el, %er) {G, add, u, v}        per edge and head: el[u] + er[v]
//   %l = leaky_relu(%s) {slope}
//   %a = edge_softmax(%l) {G, true}              over each destination's in-edges
//   %m = bernoulli_mask(%a) {p}                  attention dropout, when training (optional)
//   %w = mul(%a, %m)
//   %o = gspmm(%feat, %w) {G, mul, sum}          sum of w[e] * feat[u]
//
// becomes `%o, %stats, %seed = gat_aggregate(%el, %er, %feat) {G, slope, p}`, which never writes
// the edges x heads intermediates (it redraws the dropout mask from its seed, the same mask). When
// the program holds the backward of all four (grad() traced into it, GradRegion), the nodes of
// those four backward regions become one gat_aggregate_backward, which recomputes the attention
// from %stats instead of reading saved edge arrays.
//
// The pass fuses only what it can prove safe: the intermediates feed nothing but the chain and its
// backward, the backward regions are complete and hand gradients only to each other and out through
// the gradients of el, er and feat, no region node writes in place or records autograd (the
// fused backward has no second derivative), and the shapes are GAT's ((n, H, 1) scores, (n, H, D)
// features, float32/float64 on the CPU). Anything else is left as it is.
#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "backend/native/op_util.h"

namespace nodeweave::backend {
namespace {

using jit::GradRegion;
using jit::kNone;
using jit::OpNode;
using jit::Program;
using jit::Value;
using jit::ValueSource;
using jit::ValueType;

// Node indices of one chain; mask and mul are kNoNode without attention dropout.
constexpr size_t kNoNode = static_cast<size_t>(-1);
struct Chain {
  size_t sddmm, leaky, softmax, mask = kNoNode, mul = kNoNode, spmm;
  double p = 0;         // attention dropout
  size_t mul_slot = 0;  // which input of the mul is the attention
  bool dropout() const { return mul != kNoNode; }
  std::vector<size_t> nodes() const {
    std::vector<size_t> ks{sddmm, leaky, softmax, spmm};
    if (dropout()) ks.insert(ks.end(), {mask, mul});
    return ks;
  }
};

class Fuser {
 public:
  explicit Fuser(Program& p) : p_(p) { index(); }

  // Fuses every chain found; returns whether any was.
  bool run() {
    for (size_t k = 0; k < p_.nodes.size(); ++k) {
      if (p_.nodes[k].op != kinds().gspmm) continue;
      if (std::optional<Chain> c = match(k)) {
        if (fuse(*c)) return true;  // indices moved: the caller runs the pass again
      }
    }
    return false;
  }

 private:
  void index() {
    def_.assign(p_.values.size(), -1);
    readers_.assign(p_.values.size(), {});
    for (size_t k = 0; k < p_.nodes.size(); ++k) {
      for (int64_t v : p_.nodes[k].outputs) def_[static_cast<size_t>(v)] = static_cast<int64_t>(k);
      for (int64_t v : p_.nodes[k].inputs)
        if (v != kNone) readers_[static_cast<size_t>(v)].push_back(k);
    }
    external_.assign(p_.values.size(), false);
    for (int64_t v : p_.outputs) external_[static_cast<size_t>(v)] = true;
    for (const jit::Guard& g : p_.guards) external_[static_cast<size_t>(g.value)] = true;
  }

  const ValueType& type(int64_t v) const { return p_.values[static_cast<size_t>(v)].type; }
  const OpNode* producer(int64_t v) const {
    const int64_t k = def_[static_cast<size_t>(v)];
    return k < 0 ? nullptr : &p_.nodes[static_cast<size_t>(k)];
  }
  size_t producer_index(int64_t v) const {
    return static_cast<size_t>(def_[static_cast<size_t>(v)]);
  }

  static bool is_score(const ValueType& t, int64_t rows, int64_t heads) {
    return t.shape.size() == 3 && t.shape[0] == rows && t.shape[1] == heads && t.shape[2] == 1;
  }

  std::optional<Chain> match(size_t k4) const {
    const OpNode& n4 = p_.nodes[k4];
    const Attrs& a4 = n4.attrs;
    if (n4.inplace || n4.inputs.size() != 2 || n4.inputs[0] == kNone || n4.inputs[1] == kNone)
      return std::nullopt;
    if (static_cast<BinaryOp>(a4.i(1)) != BinaryOp::Mul ||
        static_cast<ReduceOp>(a4.i(2)) != ReduceOp::Sum)
      return std::nullopt;
    const graph::RelationGraph* g = graph_of(a4).get();
    Chain c;
    c.spmm = k4;
    // Attention dropout between the softmax and the aggregation: mul(a, bernoulli_mask(a)).
    int64_t attention = n4.inputs[1];
    if (const OpNode* mul = producer(attention); mul && mul->op == OpKind::Mul && !mul->inplace) {
      for (size_t slot = 0; slot < 2; ++slot) {
        const OpNode* mask = producer(mul->inputs[1 - slot]);
        if (mask && mask->op == OpKind::BernoulliMask && mask->inputs[0] == mul->inputs[slot]) {
          c.mul = producer_index(attention);
          c.mask = producer_index(mul->inputs[1 - slot]);
          c.mul_slot = slot;
          c.p = mask->attrs.f(0);
          attention = mul->inputs[slot];
          break;
        }
      }
      if (!c.dropout()) return std::nullopt;
    }
    const OpNode* n3 = producer(attention);
    if (!n3 || n3->op != kinds().edge_softmax || graph_of(n3->attrs).get() != g ||
        !n3->attrs.b(1) || n3->inplace)
      return std::nullopt;
    const OpNode* n2 = producer(n3->inputs[0]);
    if (!n2 || n2->op != OpKind::LeakyRelu || n2->inplace) return std::nullopt;
    const OpNode* n1 = producer(n2->inputs[0]);
    if (!n1 || n1->op != kinds().gsddmm || graph_of(n1->attrs).get() != g || n1->inplace ||
        n1->inputs.size() != 2 || n1->inputs[0] == kNone || n1->inputs[1] == kNone)
      return std::nullopt;
    const Attrs& a1 = n1->attrs;
    if (static_cast<BinaryOp>(a1.i(1)) != BinaryOp::Add ||
        static_cast<Target>(a1.i(2)) != Target::U || static_cast<Target>(a1.i(3)) != Target::V)
      return std::nullopt;
    // GAT's shapes: (n, H, 1) scores and (n, H, D) features, one float dtype, on the CPU.
    const ValueType& feat = type(n4.inputs[0]);
    if (feat.shape.size() != 3 || !feat.device.is_cpu() ||
        (feat.dtype != DType::Float32 && feat.dtype != DType::Float64))
      return std::nullopt;
    const int64_t heads = feat.shape[1];
    const ValueType& el = type(n1->inputs[0]);
    const ValueType& er = type(n1->inputs[1]);
    if (!is_score(el, g->num_src(), heads) || !is_score(er, g->num_dst(), heads) ||
        !is_score(type(attention), g->num_edges(), heads) || el.dtype != feat.dtype ||
        er.dtype != feat.dtype || feat.shape[0] != g->num_src())
      return std::nullopt;
    const bool grad = n4.grad_enabled;
    if (n1->grad_enabled != grad || n2->grad_enabled != grad || n3->grad_enabled != grad)
      return std::nullopt;
    if (c.dropout() && p_.nodes[c.mul].grad_enabled != grad) return std::nullopt;
    c.sddmm = producer_index(n2->inputs[0]);
    c.leaky = producer_index(n3->inputs[0]);
    c.softmax = producer_index(attention);
    return c;
  }

  // The backward region of each chain node, in chain order; nullopt when any is missing (or
  // appears twice): then only a forward-only fusion is possible, if no region exists at all.
  // The backward region of each differentiable chain node, in the order sddmm, leaky, softmax,
  // spmm, mul; nullopt when any is missing (or appears twice): then only a forward-only fusion is
  // possible, if no region exists at all. (bernoulli_mask has no backward.)
  std::optional<std::vector<int64_t>> regions_of(const Chain& c, bool& none) const {
    std::vector<size_t> ks{c.sddmm, c.leaky, c.softmax, c.spmm};
    if (c.dropout()) ks.push_back(c.mul);
    std::vector<int64_t> found(ks.size(), -1);
    size_t count = 0;
    for (size_t r = 0; r < p_.regions.size(); ++r) {
      for (size_t i = 0; i < ks.size(); ++i) {
        if (p_.regions[r].forward != p_.nodes[ks[i]].outputs[0]) continue;
        if (found[i] >= 0) return std::nullopt;
        found[i] = static_cast<int64_t>(r);
        ++count;
      }
    }
    none = count == 0;
    if (count != ks.size()) return std::nullopt;
    return found;
  }

  bool fuse(const Chain& c) {
    const std::vector<size_t> ks = c.nodes();
    std::vector<bool> in_chain(p_.nodes.size(), false);
    for (size_t k : ks) in_chain[k] = true;
    const OpNode& n1 = p_.nodes[c.sddmm];
    const OpNode& n4 = p_.nodes[c.spmm];
    const int64_t el = n1.inputs[0], er = n1.inputs[1], feat = n4.inputs[0];
    const int64_t s = n1.outputs[0], l = p_.nodes[c.leaky].outputs[0];
    const int64_t a = p_.nodes[c.softmax].outputs[0];
    const double slope = p_.nodes[c.leaky].attrs.f(0);
    // The fused node runs where the dropout mask was drawn (so random draws keep their order) or,
    // without dropout, where the aggregation ran; its inputs must exist by then.
    const size_t fwd_at = c.dropout() ? c.mask : c.spmm;
    const int64_t feat_def = def_[static_cast<size_t>(feat)];
    if (feat_def >= 0 && static_cast<size_t>(feat_def) >= fwd_at) return false;

    bool no_regions = false;
    const std::optional<std::vector<int64_t>> regs = regions_of(c, no_regions);
    if (!regs && !no_regions) return false;

    std::unordered_set<int64_t> region_set;
    if (regs) region_set.insert(regs->begin(), regs->end());
    std::vector<bool> in_region(p_.nodes.size(), false);
    for (size_t k = 0; k < p_.nodes.size(); ++k)
      in_region[k] = p_.nodes[k].region >= 0 && region_set.count(p_.nodes[k].region);

    // The intermediates feed the chain and its backward only; the arg outputs of the gspmm
    // (sum: none) nothing.
    auto only_chain_reads = [&](int64_t v) {
      if (external_[static_cast<size_t>(v)]) return false;
      for (size_t r : readers_[static_cast<size_t>(v)])
        if (!in_chain[r] && !in_region[r]) return false;
      return true;
    };
    if (!only_chain_reads(s) || !only_chain_reads(l) || !only_chain_reads(a)) return false;
    if (c.dropout() && (!only_chain_reads(p_.nodes[c.mask].outputs[0]) ||
                        !only_chain_reads(p_.nodes[c.mul].outputs[0])))
      return false;
    for (size_t i = 1; i < n4.outputs.size(); ++i)
      if (!readers_[static_cast<size_t>(n4.outputs[i])].empty() ||
          external_[static_cast<size_t>(n4.outputs[i])])
        return false;

    std::vector<int64_t> exits(3, kNone);  // gradients of el, er, feat
    int64_t dout = kNone;
    size_t first_region_node = p_.nodes.size();
    if (regs) {
      const GradRegion& r1 = p_.regions[static_cast<size_t>((*regs)[0])];
      const GradRegion& r2 = p_.regions[static_cast<size_t>((*regs)[1])];
      const GradRegion& r3 = p_.regions[static_cast<size_t>((*regs)[2])];
      const GradRegion& r4 = p_.regions[static_cast<size_t>((*regs)[3])];
      // The gradient the softmax's region receives: the aggregation's for its edge operand, or,
      // through the dropout's mul, the mul's for the attention operand (none for the mask).
      int64_t into_softmax = r4.grad_outputs.size() == 2 ? r4.grad_outputs[1] : kNone;
      if (c.dropout()) {
        const GradRegion& rm = p_.regions[static_cast<size_t>((*regs)[4])];
        if (rm.grad_inputs.size() != 1 || rm.grad_inputs[0] != into_softmax ||
            rm.grad_outputs.size() != 2 || rm.grad_outputs[1 - c.mul_slot] != kNone)
          return false;
        into_softmax = rm.grad_outputs[c.mul_slot];
      }
      // The gradients pass from one region to the next unchanged (no other reader of the
      // intermediates added to them).
      if (r4.grad_inputs.empty() || r4.grad_inputs[0] == kNone || r4.grad_outputs.size() != 2 ||
          r3.grad_inputs.size() != 1 || r3.grad_inputs[0] != into_softmax ||
          r3.grad_outputs.size() != 1 || r2.grad_inputs.size() != 1 ||
          r2.grad_inputs[0] != r3.grad_outputs[0] || r2.grad_outputs.size() != 1 ||
          r1.grad_inputs.size() != 1 || r1.grad_inputs[0] != r2.grad_outputs[0] ||
          r1.grad_outputs.size() != 2 || r3.grad_inputs[0] == kNone)
        return false;
      for (size_t i = 1; i < r4.grad_inputs.size(); ++i)
        if (r4.grad_inputs[i] != kNone) return false;  // a gradient into the int arg outputs
      dout = r4.grad_inputs[0];
      exits = {r1.grad_outputs[0], r1.grad_outputs[1], r4.grad_outputs[0]};
      std::vector<bool> made_in_region(p_.values.size(), false);
      for (size_t k = 0; k < p_.nodes.size(); ++k) {
        if (!in_region[k]) continue;
        const OpNode& n = p_.nodes[k];
        if (n.inplace || n.grad_enabled || (op_def(n.op).traits & kRandom)) return false;
        first_region_node = std::min(first_region_node, k);
        for (int64_t v : n.outputs) made_in_region[static_cast<size_t>(v)] = true;
      }
      if (made_in_region[static_cast<size_t>(dout)]) return false;
      const int64_t exit_of[3] = {el, er, feat};
      for (int i = 0; i < 3; ++i) {
        const int64_t e = exits[static_cast<size_t>(i)];
        if (e == kNone) continue;
        if (!made_in_region[static_cast<size_t>(e)] || !(type(e) == type(exit_of[i]))) return false;
      }
      // What the regions compute reaches the rest of the program through the exits only.
      std::unordered_set<int64_t> exit_set(exits.begin(), exits.end());
      for (size_t v = 0; v < p_.values.size(); ++v) {
        if (!made_in_region[v] || exit_set.count(static_cast<int64_t>(v))) continue;
        if (external_[v]) return false;
        for (size_t r : readers_[v])
          if (!in_region[r]) return false;
      }
      // The fused backward runs where the first region node ran: its gradient input must exist
      // by then, and the forward (at the gspmm's place) must precede it.
      const int64_t dout_def = def_[static_cast<size_t>(dout)];
      if (first_region_node <= c.spmm ||
          (dout_def >= 0 && static_cast<size_t>(dout_def) >= first_region_node))
        return false;
      for (size_t i : ks)
        if (in_region[i]) return false;
    }

    // Rewrite: the forward at fwd_at, the backward at the first region node's place.
    Attrs attrs;
    attrs.push_back(n4.attrs[0]);  // the graph, or the object input standing for it
    attrs.push_back(slope);
    attrs.push_back(c.p);
    OpNode fwd;
    fwd.op = kinds().gat_aggregate;
    fwd.inputs = {el, er, feat};
    fwd.attrs = attrs;
    fwd.grad_enabled = n4.grad_enabled;
    const int64_t out = n4.outputs[0];
    ValueType stats_t = type(out);
    stats_t.shape = {stats_t.shape[0], stats_t.shape[1], 2};
    const int64_t stats = p_.add_value(stats_t, ValueSource::Node, -1);
    const int64_t seed = p_.add_value(ValueType{DType::Int64, {}, Device{}}, ValueSource::Node, -1);
    fwd.outputs = {out, stats, seed};

    OpNode bwd;
    if (regs) {
      bwd.op = kinds().gat_aggregate_backward;
      bwd.inputs = {el, er, feat, out, stats, seed, dout};
      bwd.attrs = attrs;
      const int64_t grads_of[3] = {el, er, feat};
      for (int i = 0; i < 3; ++i) {
        int64_t& e = exits[static_cast<size_t>(i)];
        if (e == kNone) e = p_.add_value(type(grads_of[i]), ValueSource::Node, -1);
        bwd.outputs.push_back(e);
      }
    }

    std::vector<OpNode> nodes;
    nodes.reserve(p_.nodes.size());
    for (size_t k = 0; k < p_.nodes.size(); ++k) {
      if (k == fwd_at) nodes.push_back(fwd);
      if (regs && k == first_region_node) nodes.push_back(bwd);
      if (in_chain[k] || in_region[k]) continue;
      nodes.push_back(std::move(p_.nodes[k]));
    }
    p_.nodes = std::move(nodes);
    if (regs) {
      // The fused backward is the backward of gat_aggregate: one region in place of four.
      std::vector<int64_t> renumber(p_.regions.size(), -1);
      std::vector<GradRegion> kept;
      for (size_t r = 0; r < p_.regions.size(); ++r) {
        if (region_set.count(static_cast<int64_t>(r))) continue;
        renumber[r] = static_cast<int64_t>(kept.size());
        kept.push_back(std::move(p_.regions[r]));
      }
      GradRegion fused;
      fused.forward = out;
      fused.grad_inputs = {dout, kNone, kNone};
      fused.grad_outputs = exits;
      const auto fused_index = static_cast<int64_t>(kept.size());
      kept.push_back(std::move(fused));
      p_.regions = std::move(kept);
      for (OpNode& n : p_.nodes) {
        if (n.op == kinds().gat_aggregate_backward && n.outputs == exits)
          n.region = fused_index;
        else if (n.region >= 0)
          n.region = renumber[static_cast<size_t>(n.region)];
      }
    }
    p_.compact();
    p_.verify();
    return true;
  }

  Program& p_;
  std::vector<int64_t> def_;                  // per value: its node, or -1
  std::vector<std::vector<size_t>> readers_;  // per value: the nodes reading it
  std::vector<bool> external_;                // per value: a program output or guarded
};

}  // namespace

void fuse_gat_edge_pipeline(Program& p) {
  while (Fuser(p).run()) {
  }
  p.compact();
}

}  // namespace nodeweave::backend
