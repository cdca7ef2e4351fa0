// Joining and splitting: the primitive Cat (variadic, one dim) and the composites stack, split,
// split_sizes and chunk. Splits are views (narrow), so they copy nothing.
#include "core_framework/engine/op_registry.h"
#include "core_framework/ops/dim_util.h"
#include "core_framework/ops/op_helpers.h"

namespace nodeweave {

namespace {

// PyTorch still accepts 1-D empty tensors next to tensors of any rank; they contribute nothing.
bool skipped(const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; }

// Index of the first tensor that takes part, or -1 when all are skipped.
int64_t reference_index(const TensorList& xs) {
  for (size_t k = 0; k < xs.size(); ++k)
    if (!skipped(xs[k])) return static_cast<int64_t>(k);
  return -1;
}

// Checks ranks and sizes outside `dim` against the reference tensor; messages name both tensors.
void check_cat_shapes(const TensorList& xs, int64_t ref, int64_t dim, const char* op) {
  const Tensor& r = xs[ref];
  for (size_t k = 0; k < xs.size(); ++k) {
    const Tensor& t = xs[k];
    if (skipped(t)) continue;
    NW_CHECK(t.dim() == r.dim(), ValueError, op, ": tensor ", k, " has ", t.dim(), " dims (shape ",
             shape_str(t.shape()), ") but tensor ", ref, " has ", r.dim(), " (shape ",
             shape_str(r.shape()), ")");
    for (int64_t d = 0; d < r.dim(); ++d) {
      NW_CHECK(d == dim || t.size(d) == r.size(d), ValueError, op,
               ": sizes must match except in dimension ", dim, ", but tensor ", k, " has shape ",
               shape_str(t.shape()), " and tensor ", ref, " has shape ", shape_str(r.shape()),
               " (mismatch at dimension ", d, ")");
    }
  }
}

// ---- Cat(x0, x1, ...; dim): inputs already share one dtype ----
std::vector<TensorMeta> cat_infer(const TensorList& in, const Attrs& a) {
  NW_CHECK(!in.empty(), ValueError, "cat: expected a non-empty list of tensors");
  const int64_t ref = reference_index(in);
  for (size_t k = 0; k < in.size(); ++k) {
    NW_CHECK(in[k].dtype() == in[0].dtype(), TypeError, "cat: tensor ", k, " has dtype ",
             dtype_name(in[k].dtype()), ", expected ", dtype_name(in[0].dtype()));
  }
  if (ref < 0) return {TensorMeta{{0}, in[0].dtype(), in[0].device()}};
  const int64_t dim = a.i(0);
  check_cat_shapes(in, ref, dim, "cat");
  Shape s = in[ref].shape();
  s[dim] = 0;
  for (const Tensor& t : in)
    if (!skipped(t)) s[dim] += t.size(dim);
  return {TensorMeta{s, in[0].dtype(), in[0].device()}};
}

void cat_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  const Tensor& o = out[0];
  if (o.numel() == 0) return;
  const int64_t dim = a.i(0);
  int64_t at = 0;
  for (const Tensor& t : in) {
    if (skipped(t)) continue;
    // The slab of the output this input fills, as a view with the output's strides.
    Tensor slab = make_view(o, t.shape(), o.strides(), o.offset() + at * o.stride(dim));
    if (t.numel() > 0) copy_same_dtype(slab, t);
    at += t.size(dim);
  }
}

TensorList cat_bw(const GradCtx& c) {
  const Tensor& g = c.grad_outputs[0];
  const int64_t dim = c.attrs.i(0);
  TensorList grads(c.input_meta.size());
  int64_t at = 0;
  for (size_t k = 0; k < grads.size(); ++k) {
    const Shape& s = c.input_meta[k].shape;
    if (s.size() == 1 && s[0] == 0) {
      grads[k] = zeros(s, g.dtype(), g.device());
      continue;
    }
    if (c.needs_input_grad[k]) grads[k] = slice(g, dim, at, at + s[dim]);
    at += s[dim];
  }
  return grads;
}

TensorList split_at(const Tensor& x, const IntList& sizes, int64_t dim) {
  TensorList parts;
  parts.reserve(sizes.size());
  int64_t at = 0;
  for (int64_t n : sizes) {
    parts.push_back(narrow(x, dim, at, n));
    at += n;
  }
  return parts;
}

}  // namespace

void register_join_ops() { define_op(OpKind::Cat, 0, cat_infer, cat_cpu, cat_bw, 0); }

Tensor cat(const TensorList& xs, int64_t dim) {
  NW_CHECK(!xs.empty(), ValueError, "cat: expected a non-empty list of tensors");
  DType dt = xs[0].dtype();
  for (size_t k = 0; k < xs.size(); ++k) {
    NW_CHECK(xs[k].defined(), ValueError, "cat: tensor ", k, " is undefined");
    NW_CHECK(xs[k].dim() > 0, ValueError, "cat: zero-dimensional tensor (at position ", k,
             ") cannot be concatenated");
    dt = promote_types(dt, xs[k].dtype());
  }
  const int64_t ref = reference_index(xs);
  int64_t d = 0;
  if (ref >= 0) {
    d = wrap_dim(dim, xs[ref].dim(), "dim");
    check_cat_shapes(xs, ref, d, "cat");
  }
  TensorList same;
  same.reserve(xs.size());
  for (const Tensor& t : xs) same.push_back(as_dtype(t, dt));
  if (same.size() == 1) return clone(same[0]);
  return dispatch1(OpKind::Cat, same, {d});
}

Tensor stack(const TensorList& xs, int64_t dim) {
  NW_CHECK(!xs.empty(), ValueError, "stack: expected a non-empty list of tensors");
  for (size_t k = 1; k < xs.size(); ++k) {
    NW_CHECK(xs[k].shape() == xs[0].shape(), ValueError,
             "stack: expects each tensor to be equal size, but got ", shape_str(xs[0].shape()),
             " at entry 0 and ", shape_str(xs[k].shape()), " at entry ", k);
  }
  const int64_t d = wrap_dim(dim, xs[0].dim() + 1, "dim");
  TensorList u;
  u.reserve(xs.size());
  for (const Tensor& t : xs) u.push_back(unsqueeze(t, d));
  return cat(u, d);
}

TensorList split(const Tensor& x, int64_t split_size, int64_t dim) {
  NW_CHECK(x.dim() > 0, ValueError,
           "split: expected a tensor with at least one dimension, got a 0-d tensor");
  const int64_t d = wrap_dim(dim, x.dim(), "dim");
  const int64_t n = x.size(d);
  NW_CHECK(split_size > 0 || (split_size == 0 && n == 0), ValueError,
           "split: split_size must be positive (or 0 for an empty dimension), got ", split_size,
           " for dimension ", d, " of size ", n);
  IntList sizes;
  if (n == 0) sizes.push_back(0);
  for (int64_t at = 0; at < n; at += split_size) sizes.push_back(std::min(split_size, n - at));
  return split_at(x, sizes, d);
}

TensorList split_sizes(const Tensor& x, const IntList& sizes, int64_t dim) {
  NW_CHECK(x.dim() > 0, ValueError,
           "split: expected a tensor with at least one dimension, got a 0-d tensor");
  const int64_t d = wrap_dim(dim, x.dim(), "dim");
  int64_t total = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    NW_CHECK(sizes[k] >= 0, ValueError, "split: split_sizes must be non-negative, got ",
             shape_str(sizes), " (entry ", k, ")");
    total += sizes[k];
  }
  NW_CHECK(total == x.size(d), ValueError, "split: split_sizes ", shape_str(sizes), " sum to ",
           total, " but dimension ", d, " has size ", x.size(d));
  return split_at(x, sizes, d);
}

TensorList chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  NW_CHECK(chunks > 0, ValueError, "chunk: chunks must be positive, got ", chunks);
  NW_CHECK(x.dim() > 0, ValueError,
           "chunk: expected a tensor with at least one dimension, got a 0-d tensor");
  const int64_t d = wrap_dim(dim, x.dim(), "dim");
  const int64_t n = x.size(d);
  // An empty dim gives `chunks` empty pieces, as in PyTorch.
  if (n == 0) return TensorList(chunks, narrow(x, d, 0, 0));
  return split(x, (n + chunks - 1) / chunks, d);
}

}  // namespace nodeweave
