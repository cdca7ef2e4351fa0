// segment_reduce as an engine op: sum/mean gradients expand each segment's gradient back to its
// rows (index_select by segment id); max/min route it to the winning row through the arg output.
#include "backend/native/op_util.h"
#include "sparse/segment.h"

namespace nodeweave::backend {
namespace {

ReduceOp reduce_of(const Attrs& a) { return static_cast<ReduceOp>(a.i(0)); }
bool has_args(ReduceOp r) { return r == ReduceOp::Max || r == ReduceOp::Min; }

std::vector<TensorMeta> infer(const TensorList& in, const Attrs& a) {
  const Tensor& x = in[0];
  Shape s = x.shape();
  s[0] = in[1].numel() - 1;
  int64_t flat = 1;
  for (size_t d = 1; d < s.size(); ++d) flat *= s[d];
  Shape arg = has_args(reduce_of(a)) ? Shape{s[0], flat} : Shape{0};
  return {TensorMeta{s, x.dtype(), x.device()}, TensorMeta{arg, DType::Int64, x.device()}};
}

void kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  ArrayView arg = out[1].dim() == 2 ? out[1].view_of() : ArrayView{};
  sparse::segment_reduce(reduce_of(a), in[0].view_of(), in[1].view_of(), out[0].view_of(), arg);
}

TensorList backward(const GradCtx& ctx) {
  const ReduceOp r = reduce_of(ctx.attrs);
  const Tensor& offsets = ctx.inputs[1];
  const Shape& x_shape = ctx.input_meta[0].shape;
  Tensor grad = ctx.grad_outputs[0];
  const int64_t n_seg = offsets.numel() - 1;
  if (has_args(r)) {
    const Tensor& arg = ctx.outputs[1];
    Tensor gflat = reshape(grad, {n_seg, arg.size(1)});
    gflat = where(ge(arg, scalar_tensor(0, DType::Int64)), gflat, zeros_like(gflat));
    Tensor z = zeros({x_shape[0], arg.size(1)}, grad.dtype(), grad.device());
    return {reshape(scatter_add(z, 0, clamp(arg, 0.0, std::nullopt), gflat), x_shape), Tensor()};
  }
  if (r == ReduceOp::Mean) {
    Tensor counts = sub(slice(offsets, 0, 1, n_seg + 1), slice(offsets, 0, 0, n_seg));
    Shape s(grad.dim(), 1);
    s[0] = n_seg;
    grad = div(grad, reshape(clamp(cast(counts, grad.dtype()), 1.0, std::nullopt), s));
  }
  return {index_select(grad, 0, segment_ids(offsets, x_shape[0])), Tensor()};
}

}  // namespace

OpDef segment_reduce_def() {
  OpDef d;
  d.declaration =
      "segment_reduce(Tensor x, Tensor offsets, int reduce) -> (Tensor out, Tensor arg)";
  d.infer = infer;
  d.kernels = {kernel, kernel};
  d.backward = backward;
  d.saved = kSaveInput(1) | kSaveOutput(1);
  d.differentiable_inputs = 0b01;
  return d;
}

Tensor segment_reduce(ReduceOp reduce, const Tensor& x, const Tensor& offsets) {
  check_segments("segment_reduce", x, offsets);
  Attrs a;
  a.push_back(static_cast<int64_t>(reduce));
  return dispatch(kinds().segment_reduce, {contiguous(x), contiguous(offsets)}, a)[0];
}

}  // namespace nodeweave::backend
