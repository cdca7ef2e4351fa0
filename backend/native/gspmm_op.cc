// The gspmm engine op: forward through sparse::spmm, gradients through gspmm on the reversed graph
// (node operand), gsddmm (edge operand) and, for max/min, the winning-edge arg outputs.
#include "backend/native/op_util.h"
#include "core_framework/autograd/grad_mode.h"
#include "sparse/spmm.h"

namespace nodeweave::backend {
namespace {

BinaryOp op_of(const Attrs& a) { return static_cast<BinaryOp>(a.i(1)); }
ReduceOp reduce_of(const Attrs& a) { return static_cast<ReduceOp>(a.i(2)); }
bool has_args(ReduceOp r) { return r == ReduceOp::Max || r == ReduceOp::Min; }

Shape feat(const Tensor& t) {
  if (!t.defined()) return {};
  return Shape(t.shape().begin() + 1, t.shape().end());
}

// Inputs: lhs (num_src, ...), rhs (num_edges, ...). Outputs: out, arg_lhs, arg_rhs (int64, flat
// feature; shape (0) when not produced).
std::vector<TensorMeta> infer(const TensorList& in, const Attrs& a) {
  const graph::RelationGraph& g = *graph_of(a);
  const Tensor& lhs = in[0];
  const Tensor& rhs = in[1];
  const Tensor& any = lhs.defined() ? lhs : rhs;
  const Shape out_feat = sparse::spmm_out_feat(op_of(a), feat(lhs), feat(rhs));
  Shape out{g.num_dst()};
  out.insert(out.end(), out_feat.begin(), out_feat.end());
  std::vector<TensorMeta> m{{out, any.dtype(), g.device()}};
  int64_t flat = 1;
  for (int64_t s : out_feat) flat *= s;
  const bool args = has_args(reduce_of(a));
  const bool l = args && op_of(a) != BinaryOp::CopyRhs;
  const bool r = args && op_of(a) != BinaryOp::CopyLhs;
  m.push_back({l ? Shape{g.num_dst(), flat} : Shape{0}, DType::Int64, g.device()});
  m.push_back({r ? Shape{g.num_dst(), flat} : Shape{0}, DType::Int64, g.device()});
  return m;
}

void kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const graph::RelationGraph& g = *graph_of(a);
  sparse::SpmmArgs args;
  args.in_edges = in_view(g);
  args.op = op_of(a);
  args.reduce = reduce_of(a);
  args.lhs = view_or_absent(in[0]);
  args.rhs = view_or_absent(in[1]);
  args.out = out[0].view_of();
  if (out[1].dim() == 2) args.arg_lhs = out[1].view_of();
  if (out[2].dim() == 2) args.arg_rhs = out[2].view_of();
  sparse::spmm(args);
}

// In-degree of every destination as (num_dst, 1, ..) in `like`'s dtype, at least 1: the mean's
// divisor (nodes without in-edges output 0 and take no gradient either way).
Tensor degree_divisor(const graph::RelationGraphPtr& g, const Tensor& like) {
  Tensor ones_e = ones({g->num_edges(), 1}, like.dtype(), g->device());
  Tensor deg = gspmm(g, BinaryOp::CopyRhs, ReduceOp::Sum, Tensor(), ones_e);
  Shape s(like.dim(), 1);
  s[0] = g->num_dst();
  return reshape(clamp(deg, 1.0, std::nullopt), s);
}

// Whether the edge operand broadcasts over the last feature dimension of the node operand (GAT's
// (E, heads, 1) attention against (N, heads, D) features). Then sum_d lhs[u, .., d] * grad[v, .., d]
// is a Dot gSDDMM, which writes (E, heads, 1) directly instead of an (E, heads, D) product that
// sum_to would reduce afterwards.
bool rhs_grad_is_dot(const Tensor& lhs, const Tensor& rhs, const Tensor& grad) {
  return rhs.dim() >= 2 && rhs.size(rhs.dim() - 1) == 1 && lhs.dim() == rhs.dim() &&
         lhs.size(lhs.dim() - 1) > 1 && grad.size(grad.dim() - 1) == lhs.size(lhs.dim() - 1);
}

// Sum/Mean gradients (mean: grad_out already divided by the degree).
TensorList backward_sum(const GradCtx& ctx, const Tensor& grad) {
  const graph::RelationGraphPtr& g = graph_of(ctx.attrs);
  const BinaryOp op = op_of(ctx.attrs);
  const Tensor& lhs = ctx.inputs[0];
  const Tensor& rhs = ctx.inputs[1];
  TensorList grads(2);
  if (ctx.needs_input_grad[0] && op != BinaryOp::CopyRhs) {
    graph::RelationGraphPtr rev = g->reverse_for_kernels();
    switch (op) {
      case BinaryOp::Mul:
        grads[0] = gspmm(rev, BinaryOp::Mul, ReduceOp::Sum, grad, rhs);
        break;
      case BinaryOp::Div:
        grads[0] = gspmm(rev, BinaryOp::Div, ReduceOp::Sum, grad, rhs);
        break;
      default:  // CopyLhs, Add, Sub: d out / d lhs = 1
        grads[0] = gspmm(rev, BinaryOp::CopyLhs, ReduceOp::Sum, grad, Tensor());
    }
  }
  if (ctx.needs_input_grad[1] && op != BinaryOp::CopyLhs) {
    switch (op) {
      case BinaryOp::Mul:
      case BinaryOp::Div: {
        const BinaryOp prod = rhs_grad_is_dot(lhs, rhs, grad) ? BinaryOp::Dot : BinaryOp::Mul;
        Tensor t = gsddmm(g, prod, lhs, grad, Target::U, Target::V);
        grads[1] = op == BinaryOp::Mul ? t : neg(div(t, mul(rhs, rhs)));
        break;
      }
      case BinaryOp::Sub:
        grads[1] = neg(gsddmm(g, BinaryOp::CopyLhs, grad, Tensor(), Target::V, Target::E));
        break;
      default:  // CopyRhs, Add
        grads[1] = gsddmm(g, BinaryOp::CopyLhs, grad, Tensor(), Target::V, Target::E);
    }
  }
  return grads;
}

// Row `arg[v, k]` of operand x (rows, *out_feat broadcast), per output element; 0 where arg < 0.
Tensor pick(const Tensor& x, const Tensor& arg, const Shape& out_shape) {
  Shape full = out_shape;
  full[0] = x.size(0);
  Tensor flat = reshape(expand(x, full), {x.size(0), arg.size(1)});
  return gather(flat, 0, clamp(arg, 0.0, std::nullopt));
}

// Max/Min: each output element's gradient goes to the one (source, edge) pair that won.
TensorList backward_arg(const GradCtx& ctx) {
  const graph::RelationGraphPtr& g = graph_of(ctx.attrs);
  const BinaryOp op = op_of(ctx.attrs);
  const Tensor& lhs = ctx.inputs[0];
  const Tensor& rhs = ctx.inputs[1];
  const Tensor& arg_l = ctx.outputs[1];
  const Tensor& arg_r = ctx.outputs[2];
  const Shape& out_shape = ctx.grad_outputs[0].shape();
  TensorList grads(2);
  if (g->num_edges() == 0) return grads;  // nothing won: every gradient is zero
  const Tensor& arg_any = arg_l.dim() == 2 ? arg_l : arg_r;
  Tensor gflat = reshape(ctx.grad_outputs[0], {g->num_dst(), arg_any.size(1)});
  Tensor valid = ge(arg_any, scalar_tensor(0, DType::Int64));
  gflat = where(valid, gflat, zeros_like(gflat));
  auto scatter_rows = [&](const Tensor& contrib, const Tensor& arg, int64_t rows) {
    Tensor z = zeros({rows, arg.size(1)}, contrib.dtype(), contrib.device());
    Tensor r = scatter_add(z, 0, clamp(arg, 0.0, std::nullopt), contrib);
    Shape s = out_shape;
    s[0] = rows;
    return reshape(r, s);
  };
  if (ctx.needs_input_grad[0] && op != BinaryOp::CopyRhs) {
    Tensor c = gflat;
    if (op == BinaryOp::Mul) c = mul(c, pick(rhs, arg_r, out_shape));
    if (op == BinaryOp::Div) c = div(c, pick(rhs, arg_r, out_shape));
    grads[0] = scatter_rows(c, arg_l, g->num_src());
  }
  if (ctx.needs_input_grad[1] && op != BinaryOp::CopyLhs) {
    Tensor c = gflat;
    if (op == BinaryOp::Sub) c = neg(c);
    if (op == BinaryOp::Mul) c = mul(c, pick(lhs, arg_l, out_shape));
    if (op == BinaryOp::Div) {
      Tensor r = pick(rhs, arg_r, out_shape);
      c = neg(div(mul(c, pick(lhs, arg_l, out_shape)), mul(r, r)));
    }
    grads[1] = scatter_rows(c, arg_r, g->num_edges());
  }
  return grads;
}

TensorList backward(const GradCtx& ctx) {
  const ReduceOp r = reduce_of(ctx.attrs);
  if (has_args(r)) return backward_arg(ctx);
  Tensor grad = ctx.grad_outputs[0];
  if (r == ReduceOp::Mean) grad = div(grad, degree_divisor(graph_of(ctx.attrs), grad));
  return backward_sum(ctx, grad);
}

}  // namespace

OpDef gspmm_def() {
  OpDef d;
  d.declaration =
      "gspmm(Tensor? lhs, Tensor? rhs, object graph, int op, int reduce) -> "
      "(Tensor out, Tensor arg_lhs, Tensor arg_rhs)";
  d.infer = infer;
  d.kernels[0] = kernel;
  d.kernels[1] = kernel;  // sparse::spmm picks the device
  d.backward = backward;
  d.saved = kSaveInput(0) | kSaveInput(1) | kSaveOutput(1) | kSaveOutput(2);
  d.differentiable_inputs = 0b11;
  return d;
}

Tensor gspmm(const graph::RelationGraphPtr& g, BinaryOp op, ReduceOp reduce, const Tensor& lhs,
             const Tensor& rhs) {
  NW_CHECK(op != BinaryOp::Dot, ValueError,
           "gspmm: the message op 'dot' is not supported; use gsddmm for dot products");
  const bool need_l = op != BinaryOp::CopyRhs, need_r = op != BinaryOp::CopyLhs;
  NW_CHECK(!need_l || lhs.defined(), ValueError, "gspmm: op '", sparse::binary_op_name(op),
           "' needs lhs (source node features)");
  NW_CHECK(!need_r || rhs.defined(), ValueError, "gspmm: op '", sparse::binary_op_name(op),
           "' needs rhs (edge features)");
  Tensor l = need_l ? lhs : Tensor();
  Tensor r = need_r ? rhs : Tensor();
  if (l.defined()) check_feature("gspmm", "lhs", l, g->num_src(), "source nodes", *g);
  if (r.defined()) check_feature("gspmm", "rhs", r, g->num_edges(), "edges", *g);
  align_operands("gspmm", l, r);
  Attrs a = graph_attrs(g);
  a.push_back(static_cast<int64_t>(op));
  a.push_back(static_cast<int64_t>(reduce));
  return dispatch(kinds().gspmm, {l, r}, a)[0];
}

}  // namespace nodeweave::backend
