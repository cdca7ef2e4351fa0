// split_rows(x, sizes): x cut along dim 0 into consecutive views, as one op with one gradient
// node. The engine's split is a narrow per piece, whose gradient is a zero tensor of x's full size
// per piece; over the hundreds of degree buckets of a user-defined reducer
// (python/nodeweave/graph/degree_buckets.py) that is hundreds of full-size writes in the backward
// pass. Here the backward is one cat of the pieces' gradients, as PyTorch's split has it.
#include "backend/native/op_util.h"

namespace nodeweave::backend {
namespace {

void split_rows_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const Tensor& x = in[0];
  const IntList& sizes = a.ints(0);
  Shape shape = x.shape();
  int64_t at = 0;
  out.clear();
  out.reserve(sizes.size());
  for (int64_t n : sizes) {
    shape[0] = n;
    out.push_back(make_view(x, shape, x.strides(), x.offset() + at * x.stride(0)));
    at += n;
  }
}

TensorList split_rows_backward(const GradCtx& c) {
  // Pieces that received no gradient arrive as zeros (GradCtx), so the cat has every row.
  if (c.grad_outputs.empty()) return {zeros(c.input_meta[0].shape, c.input_meta[0].dtype)};
  return {cat(c.grad_outputs, 0)};
}

}  // namespace

OpDef split_rows_def() {
  OpDef d;
  d.declaration = "split_rows(Tensor x, int[] sizes) -> Tensor[]";
  d.traits = kView;
  d.kernels = {split_rows_kernel, split_rows_kernel};
  d.backward = split_rows_backward;
  return d;
}

TensorList split_rows(const Tensor& x, const std::vector<int64_t>& sizes) {
  NW_CHECK(x.dim() >= 1, ValueError, "split_rows: expected a tensor with at least one dimension");
  int64_t total = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    NW_CHECK(sizes[k] >= 0, ValueError, "split_rows: sizes must be non-negative, got ", sizes[k],
             " at ", k);
    total += sizes[k];
  }
  NW_CHECK(total == x.size(0), ValueError, "split_rows: sizes sum to ", total, " but the tensor has ",
           x.size(0), " rows");
  Attrs a;
  a.push_back(IntList(sizes));
  return dispatch(kinds().split_rows, {x}, a);
}

}  // namespace nodeweave::backend
