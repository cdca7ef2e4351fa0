// The gsddmm engine op. Its gradient is a per-edge product (gsddmm again) reduced onto where the
// operand lives: the edges themselves, or the source/destination nodes through a gspmm sum. When
// the other operand sits on a node, the product and the sum fuse into one gspmm.
#include "backend/native/op_util.h"
#include "sparse/sddmm.h"
#include "sparse/spmm.h"

namespace nodeweave::backend {
namespace {

BinaryOp op_of(const Attrs& a) { return static_cast<BinaryOp>(a.i(1)); }
Target lhs_target(const Attrs& a) { return static_cast<Target>(a.i(2)); }
Target rhs_target(const Attrs& a) { return static_cast<Target>(a.i(3)); }

int64_t rows_of(const graph::RelationGraph& g, Target t) {
  return t == Target::U ? g.num_src() : t == Target::V ? g.num_dst() : g.num_edges();
}
const char* rows_name(Target t) {
  return t == Target::U ? "source nodes" : t == Target::V ? "destination nodes" : "edges";
}

std::vector<TensorMeta> infer(const TensorList& in, const Attrs& a) {
  const graph::RelationGraph& g = *graph_of(a);
  auto feat = [](const Tensor& t) {
    return t.defined() ? Shape(t.shape().begin() + 1, t.shape().end()) : Shape{};
  };
  BinaryOp op = op_of(a);
  // The out feature shape equals gspmm's for the same operand shapes (Dot keeps a trailing 1).
  Shape f = op == BinaryOp::Dot ? [&] {
    Shape l = feat(in[0]);
    l.back() = 1;
    Shape r = feat(in[1]);
    r.back() = 1;
    return sparse::spmm_out_feat(BinaryOp::Add, l, r);
  }()
                                : sparse::spmm_out_feat(op, feat(in[0]), feat(in[1]));
  Shape out{g.num_edges()};
  out.insert(out.end(), f.begin(), f.end());
  const Tensor& any = in[0].defined() ? in[0] : in[1];
  return {TensorMeta{out, any.dtype(), g.device()}};
}

void kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const graph::RelationGraph& g = *graph_of(a);
  sparse::SddmmArgs args;
  args.edges = coo_view(g);
  args.op = op_of(a);
  args.lhs = view_or_absent(in[0]);
  args.rhs = view_or_absent(in[1]);
  args.lhs_target = lhs_target(a);
  args.rhs_target = rhs_target(a);
  args.out = out[0].view_of();
  sparse::sddmm(args);
}

// Sums a per-edge tensor onto the rows of `target`.
Tensor reduce_edges(const graph::RelationGraphPtr& g, const Tensor& per_edge, Target target) {
  switch (target) {
    case Target::E:
      return per_edge;
    case Target::V:
      return gspmm(g, BinaryOp::CopyRhs, ReduceOp::Sum, Tensor(), per_edge);
    case Target::U:
      return gspmm(g->reverse_for_kernels(), BinaryOp::CopyRhs, ReduceOp::Sum, Tensor(), per_edge);
  }
  return Tensor();
}

// The graph whose gspmm sums over edges grouped by `target` (U: sources, V: destinations) and
// reads node operands on the other end (`other`); null when no such fusion applies.
graph::RelationGraphPtr fused_graph(const graph::RelationGraphPtr& g, Target target, Target other) {
  if (target == Target::V && other == Target::U) return g;
  if (target == Target::U && other == Target::V) return g->reverse_for_kernels();
  return nullptr;
}

// Gradient for the operand on side `t` given the other operand `o` on `ot`:
//   d out / d operand = factor(o), where op decides the factor (1, o, 1/o).
Tensor operand_grad(const graph::RelationGraphPtr& g, BinaryOp mult, const Tensor& grad,
                    const Tensor& o, Target t, Target ot) {
  if (mult == BinaryOp::CopyLhs) return reduce_edges(g, grad, t);  // factor 1
  if (graph::RelationGraphPtr fg = fused_graph(g, t, ot)) {
    // sum_e grad[e] * o[other(e)] (or / o: gspmm's Div would divide the wrong way round).
    return gspmm(fg, BinaryOp::Mul, ReduceOp::Sum, mult == BinaryOp::Div ? reciprocal(o) : o, grad);
  }
  // grad (*|/) o per edge, then reduce.
  Tensor per_edge = mult == BinaryOp::Mul ? gsddmm(g, BinaryOp::Mul, grad, o, Target::E, ot)
                                          : gsddmm(g, BinaryOp::Div, grad, o, Target::E, ot);
  return reduce_edges(g, per_edge, t);
}

TensorList backward(const GradCtx& ctx) {
  const graph::RelationGraphPtr& g = graph_of(ctx.attrs);
  const BinaryOp op = op_of(ctx.attrs);
  const Target lt = lhs_target(ctx.attrs), rt = rhs_target(ctx.attrs);
  const Tensor& lhs = ctx.inputs[0];
  const Tensor& rhs = ctx.inputs[1];
  const Tensor& grad = ctx.grad_outputs[0];
  TensorList grads(2);
  if (ctx.needs_input_grad[0] && op != BinaryOp::CopyRhs) {
    switch (op) {
      case BinaryOp::Mul:
      case BinaryOp::Dot:
        grads[0] = operand_grad(g, BinaryOp::Mul, grad, rhs, lt, rt);
        break;
      case BinaryOp::Div:
        grads[0] = operand_grad(g, BinaryOp::Div, grad, rhs, lt, rt);
        break;
      default:
        grads[0] = reduce_edges(g, grad, lt);
    }
  }
  if (ctx.needs_input_grad[1] && op != BinaryOp::CopyLhs) {
    switch (op) {
      case BinaryOp::Mul:
      case BinaryOp::Dot:
        grads[1] = operand_grad(g, BinaryOp::Mul, grad, lhs, rt, lt);
        break;
      case BinaryOp::Div: {
        // d(l/r)/dr = -(l/r)/r = -out/r: per edge, then reduced.
        Tensor per_edge = gsddmm(g, BinaryOp::Div, mul(grad, ctx.outputs[0]), rhs, Target::E, rt);
        grads[1] = neg(reduce_edges(g, per_edge, rt));
        break;
      }
      case BinaryOp::Sub:
        grads[1] = neg(reduce_edges(g, grad, rt));
        break;
      default:
        grads[1] = reduce_edges(g, grad, rt);
    }
  }
  return grads;
}

}  // namespace

OpDef gsddmm_def() {
  OpDef d;
  d.declaration =
      "gsddmm(Tensor? lhs, Tensor? rhs, object graph, int op, int lhs_target, int rhs_target) -> "
      "Tensor";
  d.infer = infer;
  d.kernels[0] = kernel;
  d.kernels[1] = kernel;
  d.backward = backward;
  d.saved = kSaveInput(0) | kSaveInput(1) | kSaveOutput(0);
  d.differentiable_inputs = 0b11;
  return d;
}

Tensor gsddmm(const graph::RelationGraphPtr& g, BinaryOp op, const Tensor& lhs, const Tensor& rhs,
              Target lt, Target rt) {
  const bool need_l = op != BinaryOp::CopyRhs, need_r = op != BinaryOp::CopyLhs;
  NW_CHECK(!need_l || lhs.defined(), ValueError, "gsddmm: op '", sparse::binary_op_name(op),
           "' needs lhs");
  NW_CHECK(!need_r || rhs.defined(), ValueError, "gsddmm: op '", sparse::binary_op_name(op),
           "' needs rhs");
  Tensor l = need_l ? lhs : Tensor();
  Tensor r = need_r ? rhs : Tensor();
  if (l.defined()) check_feature("gsddmm", "lhs", l, rows_of(*g, lt), rows_name(lt), *g);
  if (r.defined()) check_feature("gsddmm", "rhs", r, rows_of(*g, rt), rows_name(rt), *g);
  align_operands("gsddmm", l, r);
  Attrs a = graph_attrs(g);
  a.push_back(static_cast<int64_t>(op));
  a.push_back(static_cast<int64_t>(lt));
  a.push_back(static_cast<int64_t>(rt));
  return dispatch(kinds().gsddmm, {l, r}, a)[0];
}

}  // namespace nodeweave::backend
