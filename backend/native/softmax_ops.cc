// edge_softmax and segment_softmax as engine ops. First-order backward runs the fused kernel;
// under create_graph (grad mode on during backward) it is rebuilt from differentiable ops,
//   grad_x = out * grad - out * sum_group(out * grad),
// so second derivatives exist without a hand-written double-backward kernel.
#include "backend/native/op_util.h"
#include "core_framework/autograd/grad_mode.h"
#include "sparse/edge_softmax.h"
#include "sparse/segment.h"

namespace nodeweave::backend {
namespace {

// ---- edge_softmax(score; graph, by_dst) ----
sparse::CompressedView group_view(const Attrs& a) {
  const graph::RelationGraph& g = *graph_of(a);
  return a.b(1) ? in_view(g) : out_view(g);
}

void edge_softmax_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  sparse::edge_softmax_forward(group_view(a), in[0].view_of(), out[0].view_of());
}

void edge_softmax_backward_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  sparse::edge_softmax_backward(group_view(a), in[0].view_of(), in[1].view_of(), out[0].view_of());
}

std::vector<TensorMeta> like_input0(const TensorList& in, const Attrs&) {
  return {TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()}};
}

TensorList edge_softmax_bw(const GradCtx& ctx) {
  const Tensor& out = ctx.outputs[0];
  Tensor grad = contiguous(ctx.grad_outputs[0]);
  if (!GradMode::is_enabled()) {
    return {dispatch(kinds().edge_softmax_backward, {out, grad}, ctx.attrs)[0]};
  }
  const graph::RelationGraphPtr& g = graph_of(ctx.attrs);
  const bool by_dst = ctx.attrs.b(1);
  Tensor p = mul(out, grad);
  graph::RelationGraphPtr sum_graph = by_dst ? g : g->reverse_for_kernels();
  Tensor s = gspmm(sum_graph, BinaryOp::CopyRhs, ReduceOp::Sum, Tensor(), p);
  Tensor s_e = gsddmm(g, BinaryOp::CopyLhs, s, Tensor(), by_dst ? Target::V : Target::U, Target::E);
  return {sub(p, mul(out, s_e))};
}

// ---- segment_softmax(x, offsets) ----
void segment_softmax_kernel(const TensorList& in, const Attrs&, TensorList& out) {
  sparse::segment_softmax_forward(in[0].view_of(), in[1].view_of(), out[0].view_of());
}
void segment_softmax_backward_kernel(const TensorList& in, const Attrs&, TensorList& out) {
  sparse::segment_softmax_backward(in[0].view_of(), in[1].view_of(), in[2].view_of(),
                                   out[0].view_of());
}

TensorList segment_softmax_bw(const GradCtx& ctx) {
  const Tensor& out = ctx.outputs[0];
  const Tensor& offsets = ctx.inputs[1];
  Tensor grad = contiguous(ctx.grad_outputs[0]);
  if (!GradMode::is_enabled()) {
    return {dispatch(kinds().segment_softmax_backward, {out, grad, offsets})[0], Tensor()};
  }
  Tensor p = mul(out, grad);
  Tensor s = segment_reduce(ReduceOp::Sum, p, offsets);
  return {sub(p, mul(out, index_select(s, 0, segment_ids(offsets, out.size(0))))), Tensor()};
}

}  // namespace

OpDef edge_softmax_def() {
  OpDef d;
  d.declaration = "edge_softmax(Tensor score, object graph, bool by_dst) -> Tensor";
  d.infer = like_input0;
  d.kernels = {edge_softmax_kernel, edge_softmax_kernel};
  d.backward = edge_softmax_bw;
  d.saved = kSaveOutput(0);
  d.differentiable_inputs = 0b1;
  return d;
}

OpDef edge_softmax_backward_def() {
  OpDef d;
  d.declaration =
      "edge_softmax_backward(Tensor out, Tensor grad, object graph, bool by_dst) -> Tensor";
  d.infer = like_input0;
  d.kernels = {edge_softmax_backward_kernel, edge_softmax_backward_kernel};
  return d;
}

OpDef segment_softmax_def() {
  OpDef d;
  d.declaration = "segment_softmax(Tensor x, Tensor offsets) -> Tensor";
  d.infer = like_input0;
  d.kernels = {segment_softmax_kernel, segment_softmax_kernel};
  d.backward = segment_softmax_bw;
  d.saved = kSaveOutput(0) | kSaveInput(1);
  d.differentiable_inputs = 0b01;
  return d;
}

OpDef segment_softmax_backward_def() {
  OpDef d;
  d.declaration = "segment_softmax_backward(Tensor out, Tensor grad, Tensor offsets) -> Tensor";
  d.infer = like_input0;
  d.kernels = {segment_softmax_backward_kernel, segment_softmax_backward_kernel};
  return d;
}

Tensor edge_softmax(const graph::RelationGraphPtr& g, const Tensor& score, bool norm_by_dst) {
  check_feature("edge_softmax", "score", score, g->num_edges(), "edges", *g);
  Attrs a = graph_attrs(g);
  a.push_back(norm_by_dst);
  return dispatch(kinds().edge_softmax, {contiguous(score)}, a)[0];
}

Tensor segment_softmax(const Tensor& x, const Tensor& offsets) {
  check_segments("segment_softmax", x, offsets);
  return dispatch(kinds().segment_softmax, {contiguous(x), contiguous(offsets)})[0];
}

}  // namespace nodeweave::backend
