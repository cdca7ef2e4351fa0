// gather_mm and segment_mm (typed linear layers) as engine ops. Both are bilinear, so every
// gradient is again a gather_mm / segment_mm or its weight-gradient op, and those weight-gradient
// ops carry gradient rules too (second derivatives of a typed layer stay available).
#include <cstring>

#include "backend/native/op_util.h"
#include "sparse/gather_mm.h"

namespace nodeweave::backend {
namespace {

Tensor transpose_weights(const Tensor& b) { return contiguous(transpose(b, 1, 2)); }

// Rows of `rows_out` summed into an (n, k) tensor at `idx` (or returned as is when idx is absent).
Tensor scatter_rows(const Tensor& rows_out, const Tensor& idx, int64_t n) {
  if (!idx.defined()) return rows_out;
  Tensor z = zeros({n, rows_out.size(1)}, rows_out.dtype(), rows_out.device());
  return index_add(z, 0, idx, rows_out);
}

// ---- gather_mm(a, b, idx_a, idx_b) -> (N, n) ----
std::vector<TensorMeta> gather_infer(const TensorList& in, const Attrs&) {
  return {TensorMeta{{in[3].numel(), in[1].size(2)}, in[0].dtype(), in[0].device()}};
}
void gather_kernel(const TensorList& in, const Attrs&, TensorList& out) {
  sparse::gather_mm(in[0].view_of(), in[1].view_of(), view_or_absent(in[2]), in[3].view_of(),
                    out[0].view_of());
}
TensorList gather_bw(const GradCtx& ctx) {
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1], &ia = ctx.inputs[2], &ib = ctx.inputs[3];
  Tensor g = contiguous(ctx.grad_outputs[0]);
  TensorList grads(4);
  if (ctx.needs_input_grad[0]) {
    grads[0] = scatter_rows(gather_mm(g, transpose_weights(b), Tensor(), ib), ia, a.size(0));
  }
  if (ctx.needs_input_grad[1]) {
    Attrs at;
    at.push_back(b.size(0));
    grads[1] = dispatch(kinds().gather_mm_grad_b, {a, g, ia, ib}, at)[0];
  }
  return grads;
}

// ---- gather_mm_grad_b(a, grad_out, idx_a, idx_b; R) -> (R, k, n) ----
std::vector<TensorMeta> gather_grad_b_infer(const TensorList& in, const Attrs& at) {
  return {TensorMeta{{at.i(0), in[0].size(1), in[1].size(1)}, in[0].dtype(), in[0].device()}};
}
void gather_grad_b_kernel(const TensorList& in, const Attrs&, TensorList& out) {
  // The kernel accumulates into grad_b; the dispatcher hands over uninitialised memory.
  const size_t nbytes = out[0].numel() * out[0].itemsize();
  if (out[0].device().is_cpu()) {
    std::memset(out[0].data_ptr(), 0, nbytes);
  } else {
    std::vector<char> zero(nbytes, 0);
    copy_bytes(out[0].data_ptr(), out[0].device(), zero.data(), Device{}, nbytes);
  }
  sparse::gather_mm_grad_b(in[0].view_of(), in[1].view_of(), view_or_absent(in[2]), in[3].view_of(),
                           out[0].view_of());
}
// grad_b = sum_i a[ia_i]^T g_i, so with H = d loss / d grad_b:
//   d/d a[ia_i] += g_i H[ib_i]^T, d/d g_i = a[ia_i] H[ib_i].
TensorList gather_grad_b_bw(const GradCtx& ctx) {
  const Tensor &a = ctx.inputs[0], &g = ctx.inputs[1], &ia = ctx.inputs[2], &ib = ctx.inputs[3];
  Tensor h = contiguous(ctx.grad_outputs[0]);
  TensorList grads(4);
  if (ctx.needs_input_grad[0]) {
    grads[0] = scatter_rows(gather_mm(g, transpose_weights(h), Tensor(), ib), ia, a.size(0));
  }
  if (ctx.needs_input_grad[1]) grads[1] = gather_mm(a, h, ia, ib);
  return grads;
}

// ---- segment_mm(a, b; seglen) -> (N, n) ----
ArrayView seglen_view(const Attrs& at) { return host_int64_view(at.ints(0)); }
std::vector<TensorMeta> segment_infer(const TensorList& in, const Attrs&) {
  return {TensorMeta{{in[0].size(0), in[1].size(2)}, in[0].dtype(), in[0].device()}};
}
void segment_kernel(const TensorList& in, const Attrs& at, TensorList& out) {
  sparse::segment_mm(in[0].view_of(), in[1].view_of(), seglen_view(at), out[0].view_of());
}
TensorList segment_bw(const GradCtx& ctx) {
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  Tensor g = contiguous(ctx.grad_outputs[0]);
  const IntList& seglen = ctx.attrs.ints(0);
  TensorList grads(2);
  if (ctx.needs_input_grad[0]) grads[0] = segment_mm(g, transpose_weights(b), seglen);
  if (ctx.needs_input_grad[1]) {
    grads[1] = dispatch(kinds().segment_mm_grad_b, {a, g}, ctx.attrs)[0];
  }
  return grads;
}

// ---- segment_mm_grad_b(a, grad_out; seglen) -> (R, k, n) ----
std::vector<TensorMeta> segment_grad_b_infer(const TensorList& in, const Attrs& at) {
  return {TensorMeta{{static_cast<int64_t>(at.ints(0).size()), in[0].size(1), in[1].size(1)},
                     in[0].dtype(),
                     in[0].device()}};
}
void segment_grad_b_kernel(const TensorList& in, const Attrs& at, TensorList& out) {
  sparse::segment_mm_grad_b(in[0].view_of(), in[1].view_of(), seglen_view(at), out[0].view_of());
}
TensorList segment_grad_b_bw(const GradCtx& ctx) {
  const Tensor &a = ctx.inputs[0], &g = ctx.inputs[1];
  Tensor h = contiguous(ctx.grad_outputs[0]);
  const IntList& seglen = ctx.attrs.ints(0);
  TensorList grads(2);
  if (ctx.needs_input_grad[0]) grads[0] = segment_mm(g, transpose_weights(h), seglen);
  if (ctx.needs_input_grad[1]) grads[1] = segment_mm(a, h, seglen);
  return grads;
}

void check_mm_operands(const char* fn, const Tensor& a, const Tensor& b) {
  NW_CHECK(a.dim() == 2, ValueError, fn, ": a must be 2-D (rows, in_features), got shape ",
           shape_str(a.shape()));
  NW_CHECK(b.dim() == 3, ValueError, fn,
           ": b must be 3-D (num_types, in_features, out_features), got shape ",
           shape_str(b.shape()));
  NW_CHECK(a.size(1) == b.size(1), ValueError, fn, ": a has ", a.size(1),
           " features per row but b expects ", b.size(1));
  NW_CHECK(a.dtype() == b.dtype(), TypeError, fn, ": a and b must have the same dtype, got ",
           dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  NW_CHECK(is_floating(a.dtype()), TypeError, fn,
           ": a must be float32, float64, float16 or bfloat16, got ", dtype_name(a.dtype()));
}

OpDef make(const char* declaration, InferFn infer, KernelFn k, BackwardFn bw, uint32_t saved,
           uint32_t diff) {
  OpDef d;
  d.declaration = declaration;
  d.infer = infer;
  d.kernels = {k, k};
  d.backward = bw;
  d.saved = saved;
  d.differentiable_inputs = diff;
  return d;
}

}  // namespace

constexpr uint32_t kAll4 = 0b1111;
OpDef gather_mm_def() {
  return make("gather_mm(Tensor a, Tensor b, Tensor? idx_a, Tensor idx_b) -> Tensor", gather_infer,
              gather_kernel, gather_bw, kAll4, 0b0011);
}
OpDef gather_mm_grad_b_def() {
  return make(
      "gather_mm_grad_b(Tensor a, Tensor grad, Tensor? idx_a, Tensor idx_b, int num_types) -> "
      "Tensor",
      gather_grad_b_infer, gather_grad_b_kernel, gather_grad_b_bw, kAll4, 0b0011);
}
OpDef segment_mm_def() {
  return make("segment_mm(Tensor a, Tensor b, int[] seglen) -> Tensor", segment_infer,
              segment_kernel, segment_bw, 0b11, 0b11);
}
OpDef segment_mm_grad_b_def() {
  return make("segment_mm_grad_b(Tensor a, Tensor grad, int[] seglen) -> Tensor",
              segment_grad_b_infer, segment_grad_b_kernel, segment_grad_b_bw, 0b11, 0b11);
}

Tensor gather_mm(const Tensor& a, const Tensor& b, const Tensor& idx_a, const Tensor& idx_b) {
  check_mm_operands("gather_mm", a, b);
  NW_CHECK(idx_b.defined() && idx_b.dim() == 1, ValueError,
           "gather_mm: idx_b must be a 1-D tensor of type ids");
  NW_CHECK(!idx_a.defined() || idx_a.numel() == idx_b.numel(), ValueError,
           "gather_mm: idx_a and idx_b must have the same length, got ", idx_a.numel(), " and ",
           idx_b.numel());
  NW_CHECK(idx_a.defined() || a.size(0) == idx_b.numel(), ValueError, "gather_mm: a has ",
           a.size(0), " rows but idx_b has ", idx_b.numel(),
           " entries (pass idx_a to gather rows)");
  return dispatch(kinds().gather_mm,
                  {contiguous(a), contiguous(b), idx_a.defined() ? contiguous(idx_a) : idx_a,
                   contiguous(idx_b)})[0];
}

Tensor segment_mm(const Tensor& a, const Tensor& b, const std::vector<int64_t>& seglen) {
  check_mm_operands("segment_mm", a, b);
  NW_CHECK(static_cast<int64_t>(seglen.size()) == b.size(0), ValueError, "segment_mm: seglen has ",
           seglen.size(), " entries but b has ", b.size(0), " weight matrices");
  int64_t total = 0;
  for (size_t i = 0; i < seglen.size(); ++i) {
    NW_CHECK(seglen[i] >= 0, ValueError, "segment_mm: seglen[", i, "] = ", seglen[i],
             " is negative");
    total += seglen[i];
  }
  NW_CHECK(total == a.size(0), ValueError, "segment_mm: seglen sums to ", total, " but a has ",
           a.size(0), " rows");
  Attrs at;
  at.push_back(IntList(seglen));
  return dispatch(kinds().segment_mm, {contiguous(a), contiguous(b)}, at)[0];
}

}  // namespace nodeweave::backend
