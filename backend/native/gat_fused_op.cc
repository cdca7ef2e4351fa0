// gat_aggregate: GAT's edge pipeline, u_add_v -> leaky_relu -> edge_softmax -> (dropout) ->
// u_mul_e-sum, as one engine op over sparse/gat_fused.h. The jit pass fuse_gat_edge_pipeline puts
// it in programs in place of those ops; it keeps per destination and head only the softmax's max
// and 1/sum (`stats`), never an edges x heads array, and its backward recomputes the attention
// from them, and the dropout mask from its seed.
//
//   inputs  el (num_src, H[, 1]), er (num_dst, H[, 1]), feat (num_src, H, D)
//   attrs   {graph, negative_slope, attention dropout p}
//   outputs out (num_dst, H, D), stats (num_dst, H, 2), seed (int64[]: the mask's draw; 0 if p = 0)
//
// The mask is the one bernoulli_mask would draw on the (num_edges, H, 1) attention with the same
// seed (element e * H + h, runtime/generator.h keep_at), and the seed is drawn from the default
// generator as bernoulli_mask draws it, only when p > 0: a fused step leaves the generator where
// the eager step leaves it and drops the same attention entries.
#include "backend/native/op_util.h"
#include "core_framework/autograd/grad_mode.h"
#include "core_framework/runtime/generator.h"
#include "sparse/gat_fused.h"

namespace nodeweave::backend {
namespace {

std::vector<TensorMeta> infer(const TensorList& in, const Attrs& a) {
  const graph::RelationGraph& g = *graph_of(a);
  const Tensor& feat = in[2];
  NW_CHECK(feat.dim() == 3, ValueError, "gat_aggregate: feat must be (num_src, heads, D), got ",
           shape_str(feat.shape()));
  Shape out{g.num_dst(), feat.size(1), feat.size(2)};
  return {TensorMeta{out, feat.dtype(), g.device()},
          TensorMeta{Shape{g.num_dst(), feat.size(1), 2}, feat.dtype(), g.device()},
          TensorMeta{Shape{}, DType::Int64, Device{}}};
}

sparse::GatDropout dropout_of(const Attrs& a, uint64_t seed) { return {a.f(2), seed}; }

void kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const graph::RelationGraph& g = *graph_of(a);
  const uint64_t seed = a.f(2) > 0 ? default_generator().next_seed() : 0;
  *out[2].data<int64_t>() = static_cast<int64_t>(seed);
  sparse::gat_aggregate_forward(in_view(g), in[0].view_of(), in[1].view_of(), in[2].view_of(),
                                a.f(1), dropout_of(a, seed), out[0].view_of(), out[1].view_of());
}

// inputs el, er, feat, out, stats, seed, grad_out -> grad_el, grad_er, grad_feat
std::vector<TensorMeta> infer_backward(const TensorList& in, const Attrs&) {
  std::vector<TensorMeta> m;
  for (int i = 0; i < 3; ++i) m.push_back({in[i].shape(), in[i].dtype(), in[i].device()});
  return m;
}

void backward_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const graph::RelationGraph& g = *graph_of(a);
  const auto seed = static_cast<uint64_t>(*in[5].data<int64_t>());
  sparse::gat_aggregate_backward(in_view(g), out_view(g), in[0].view_of(), in[1].view_of(),
                                 in[2].view_of(), in[3].view_of(), in[4].view_of(),
                                 in[6].view_of(), a.f(1), dropout_of(a, seed), out[0].view_of(),
                                 out[1].view_of(), out[2].view_of());
}

TensorList gat_aggregate_bw(const GradCtx& ctx) {
  // The fused backward is one kernel, not differentiable ops: a program that needs second
  // derivatives keeps the unfused ops (the pass does not fuse under create_graph).
  NW_CHECK(!GradMode::is_enabled(), NotImplementedError,
           "gat_aggregate: no second derivative (the fused GAT edge pipeline's backward is one "
           "kernel); trace with disable_passes=('fuse_gat_edge_pipeline',) for create_graph=True");
  TensorList in{contiguous(ctx.inputs[0]), contiguous(ctx.inputs[1]), contiguous(ctx.inputs[2]),
                ctx.outputs[0],            ctx.outputs[1],            ctx.outputs[2],
                contiguous(ctx.grad_outputs[0])};
  return dispatch(kinds().gat_aggregate_backward, in, ctx.attrs);
}

}  // namespace

OpDef gat_aggregate_def() {
  OpDef d;
  d.declaration =
      "gat_aggregate(Tensor el, Tensor er, Tensor feat, object graph, float negative_slope, "
      "float attn_drop) -> (Tensor out, Tensor stats, Tensor seed)";
  d.traits = kRandom;  // draws the dropout seed: never folded, merged or dropped
  d.infer = infer;
  d.kernels = {kernel, kernel};  // the CUDA entry raises: no CUDA kernel yet
  d.backward = gat_aggregate_bw;
  d.saved = kSaveInput(0) | kSaveInput(1) | kSaveInput(2) | kSaveOutput(0) | kSaveOutput(1) |
            kSaveOutput(2);
  d.differentiable_inputs = 0b111;
  return d;
}

OpDef gat_aggregate_backward_def() {
  OpDef d;
  d.declaration =
      "gat_aggregate_backward(Tensor el, Tensor er, Tensor feat, Tensor out, Tensor stats, "
      "Tensor seed, Tensor grad, object graph, float negative_slope, float attn_drop) -> "
      "(Tensor grad_el, Tensor grad_er, Tensor grad_feat)";
  d.infer = infer_backward;
  d.kernels = {backward_kernel, backward_kernel};
  return d;
}

Tensor gat_aggregate(const graph::RelationGraphPtr& g, const Tensor& el, const Tensor& er,
                     const Tensor& feat, double negative_slope, double attn_drop) {
  NW_CHECK(attn_drop >= 0 && attn_drop <= 1, ValueError,
           "gat_aggregate: attn_drop must be in [0, 1], got ", attn_drop);
  Attrs a = graph_attrs(g);
  a.push_back(negative_slope);
  a.push_back(attn_drop);
  return dispatch(kinds().gat_aggregate, {contiguous(el), contiguous(er), contiguous(feat)}, a)[0];
}

}  // namespace nodeweave::backend
