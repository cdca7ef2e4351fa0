// View ops (outputs alias their input: View, Permute, Expand, Slice), SliceScatter (the gradient of
// Slice), and the composites reshape/flatten/transpose/narrow/select/squeeze/unsqueeze.
#include <optional>

#include "core_framework/ops/convert.h"
#include "core_framework/ops/elementwise_loop.h"
#include "core_framework/ops/op_helpers.h"

namespace nodeweave {

namespace {

// Resolves one -1 and checks the element count.
Shape infer_size(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      NW_CHECK(infer_at < 0, ValueError, op, ": only one dimension can be -1, got ",
               shape_str(shape));
      infer_at = static_cast<int64_t>(i);
    } else {
      NW_CHECK(out[i] >= 0, ValueError, op, ": invalid shape ", shape_str(shape));
      known *= out[i];
    }
  }
  if (infer_at >= 0) {
    NW_CHECK(known != 0 && numel % known == 0, ValueError, op, ": shape ", shape_str(shape),
             " is invalid for input of size ", numel);
    out[infer_at] = numel / known;
  } else {
    NW_CHECK(known == numel, ValueError, op, ": shape ", shape_str(shape),
             " is invalid for input of size ", numel);
  }
  return out;
}

// Strides that view `old` memory as `shape` without copying, if any exist (PyTorch's rule).
std::optional<Shape> view_strides(const Shape& old_shape, const Shape& old_strides,
                                  const Shape& shape) {
  Shape ns(shape.size());
  if (old_shape.empty()) return Shape(shape.size(), 1);
  if (shape_numel(old_shape) == 0) return contiguous_strides(shape);
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t td = static_cast<int64_t>(old_shape.size()) - 1; td >= 0; --td) {
    tensor_numel *= old_shape[td];
    if (td == 0 || (old_shape[td - 1] != 1 && old_strides[td - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        ns[view_d] = view_numel * chunk_base;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (td > 0) {
        chunk_base = old_strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return ns;
}

// ---- View(x; shape) ----
void view_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const Tensor& x = in[0];
  Shape shape = infer_size(a.ints(0), x.numel(), "view");
  auto st = view_strides(x.shape(), x.strides(), shape);
  NW_CHECK(st.has_value(), std::runtime_error, "view: shape ", shape_str(shape),
           " is not compatible with the input's size and strides (", shape_str(x.shape()), ", ",
           shape_str(x.strides()), "); use reshape() instead");
  out = {make_view(x, shape, *st, x.offset())};
}
TensorList view_bw(const GradCtx& c) { return {reshape(c.grad_outputs[0], c.input_meta[0].shape)}; }

// ---- Permute(x; dims) ----
void permute_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const Tensor& x = in[0];
  const IntList& dims = a.ints(0);
  NW_CHECK(static_cast<int64_t>(dims.size()) == x.dim(), ValueError, "permute: expected ", x.dim(),
           " dims for a tensor of shape ", shape_str(x.shape()), ", got ", shape_str(dims));
  Shape sh(dims.size()), st(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], x.dim(), "permute");
    NW_CHECK(!seen[d], ValueError, "permute: repeated dim in ", shape_str(dims));
    seen[d] = true;
    sh[i] = x.size(d);
    st[i] = x.stride(d);
  }
  out = {make_view(x, sh, st, x.offset())};
}
TensorList permute_bw(const GradCtx& c) {
  const IntList& dims = c.attrs.ints(0);
  int64_t n = static_cast<int64_t>(dims.size());
  IntList inv(n);
  for (int64_t i = 0; i < n; ++i) inv[wrap_dim(dims[i], n)] = i;
  return {permute(c.grad_outputs[0], inv)};
}

// ---- Expand(x; shape) ----
void expand_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const Tensor& x = in[0];
  const Shape& target = a.ints(0);
  int64_t n = static_cast<int64_t>(target.size());
  NW_CHECK(n >= x.dim(), ValueError, "expand: target shape ", shape_str(target),
           " has fewer dims than the tensor's shape ", shape_str(x.shape()));
  Shape sh(n), st(n);
  int64_t lead = n - x.dim();
  for (int64_t i = 0; i < n; ++i) {
    if (i < lead) {
      NW_CHECK(target[i] >= 0, ValueError, "expand: -1 not allowed in leading new dims of ",
               shape_str(target));
      sh[i] = target[i];
      st[i] = 0;
      continue;
    }
    int64_t src = x.size(i - lead);
    int64_t want = target[i] == -1 ? src : target[i];
    NW_CHECK(src == want || src == 1, ValueError, "expand: the expanded size (", want,
             ") must match the existing size (", src, ") at dimension ", i, "; shape ",
             shape_str(x.shape()), " -> ", shape_str(target));
    sh[i] = want;
    st[i] = src == want ? x.stride(i - lead) : 0;
  }
  out = {make_view(x, sh, st, x.offset())};
}
TensorList expand_bw(const GradCtx& c) {
  return {sum_to(c.grad_outputs[0], c.input_meta[0].shape)};
}

// ---- Slice(x; dim, start, end, step) — arguments already normalized ----
void slice_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const Tensor& x = in[0];
  int64_t d = a.i(0), start = a.i(1), end = a.i(2), step = a.i(3);
  Shape sh = x.shape(), st = x.strides();
  sh[d] = end > start ? (end - start + step - 1) / step : 0;
  st[d] = x.stride(d) * step;
  out = {make_view(x, sh, st, x.offset() + start * x.stride(d))};
}
TensorList slice_bw(const GradCtx& c) {
  const Attrs& a = c.attrs;
  return {dispatch1(OpKind::SliceScatter, {c.grad_outputs[0]},
                    {IntList(c.input_meta[0].shape), a.i(0), a.i(1), a.i(2), a.i(3)})};
}

// ---- SliceScatter(src; base_shape, dim, start, end, step): zeros with a slice set to src ----
std::vector<TensorMeta> slice_scatter_infer(const TensorList& in, const Attrs& a) {
  return {TensorMeta{a.ints(0), in[0].dtype(), in[0].device()}};
}
void slice_scatter_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  Tensor o = out[0];
  zero_(o);
  Tensor region = make_view(o, o.shape(), o.strides(), o.offset());
  TensorList v;
  slice_kernel({region}, {a.i(1), a.i(2), a.i(3), a.i(4)}, v);
  NW_DISPATCH_ANY(o.dtype(), "slice_scatter", {
    elementwise_kernel<scalar_t, scalar_t>(v[0], {in[0]}, [](scalar_t x) { return x; });
  });
}
TensorList slice_scatter_bw(const GradCtx& c) {
  const Attrs& a = c.attrs;
  return {slice(c.grad_outputs[0], a.i(1), a.i(2), a.i(3), a.i(4))};
}

}  // namespace

void register_view_ops() {
  define_op(OpKind::View, kView, nullptr, view_kernel, view_bw, 0);
  define_op(OpKind::Permute, kView, nullptr, permute_kernel, permute_bw, 0);
  define_op(OpKind::Expand, kView, nullptr, expand_kernel, expand_bw, 0);
  define_op(OpKind::Slice, kView, nullptr, slice_kernel, slice_bw, 0);
  define_op(OpKind::SliceScatter, 0, slice_scatter_infer, slice_scatter_cpu, slice_scatter_bw, 0);
  // Views only rearrange metadata: the same kernels serve CUDA tensors.
  for (OpKind k : {OpKind::View, OpKind::Permute, OpKind::Expand, OpKind::Slice})
    mutable_op_def(k).kernels[1] = mutable_op_def(k).kernels[0];
}

Tensor view(const Tensor& x, const Shape& shape) {
  return dispatch1(OpKind::View, {x}, {IntList(shape)});
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  Shape s = infer_size(shape, x.numel(), "reshape");
  if (s == x.shape()) return x.requires_grad() ? view(x, s) : x;
  if (view_strides(x.shape(), x.strides(), s)) return view(x, s);
  return view(clone(x), s);
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  if (x.dim() == 0) return reshape(x, {1});
  int64_t s = wrap_dim(start_dim, x.dim(), "start_dim"), e = wrap_dim(end_dim, x.dim(), "end_dim");
  NW_CHECK(s <= e, ValueError, "flatten: start_dim (", s, ") must not come after end_dim (", e,
           ")");
  Shape sh;
  for (int64_t d = 0; d < s; ++d) sh.push_back(x.size(d));
  int64_t m = 1;
  for (int64_t d = s; d <= e; ++d) m *= x.size(d);
  sh.push_back(m);
  for (int64_t d = e + 1; d < x.dim(); ++d) sh.push_back(x.size(d));
  return reshape(x, sh);
}

Tensor permute(const Tensor& x, const IntList& dims) {
  return dispatch1(OpKind::Permute, {x}, {dims});
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  int64_t n = x.dim();
  if (n == 0) return x;
  d0 = wrap_dim(d0, n, "dim0");
  d1 = wrap_dim(d1, n, "dim1");
  IntList p(n);
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  std::swap(p[d0], p[d1]);
  return permute(x, p);
}

Tensor t(const Tensor& x) {
  NW_CHECK(x.dim() <= 2, ValueError, "t: expects a tensor with <= 2 dims, got shape ",
           shape_str(x.shape()));
  return x.dim() < 2 ? x : transpose(x, 0, 1);
}

Tensor expand(const Tensor& x, const Shape& shape) {
  if (shape == x.shape()) return x;
  return dispatch1(OpKind::Expand, {x}, {IntList(shape)});
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  NW_CHECK(x.dim() > 0, IndexError, "slice: can't slice a 0-d tensor");
  int64_t d = wrap_dim(dim, x.dim());
  NW_CHECK(step > 0, ValueError, "slice: step must be positive, got ", step);
  int64_t n = x.size(d);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::min(std::max<int64_t>(start, 0), n);
  end = std::min(std::max<int64_t>(end, start), n);
  return dispatch1(OpKind::Slice, {x}, {d, start, end, step});
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  int64_t d = wrap_dim(dim, x.dim());
  int64_t n = x.size(d);
  if (start < 0) start += n;
  NW_CHECK(start >= 0 && length >= 0 && start + length <= n, IndexError, "narrow: range [", start,
           ", ", start + length, ") is out of bounds for dimension ", d, " of size ", n);
  return slice(x, d, start, start + length, 1);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  NW_CHECK(x.dim() > 0, IndexError, "select: can't index a 0-d tensor");
  int64_t d = wrap_dim(dim, x.dim());
  int64_t n = x.size(d);
  NW_CHECK(index >= -n && index < n, IndexError, "index ", index,
           " is out of bounds for dimension ", d, " with size ", n);
  if (index < 0) index += n;
  return squeeze(dispatch1(OpKind::Slice, {x}, {d, index, index + 1, int64_t{1}}), d);
}

Tensor squeeze(const Tensor& x, std::optional<int64_t> dim) {
  Shape sh;
  if (dim) {
    if (x.dim() == 0) return x;
    int64_t d = wrap_dim(*dim, x.dim());
    for (int64_t i = 0; i < x.dim(); ++i)
      if (i != d || x.size(i) != 1) sh.push_back(x.size(i));
  } else {
    for (int64_t s : x.shape())
      if (s != 1) sh.push_back(s);
  }
  return sh == x.shape() ? x : view(x, sh);
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  int64_t d = wrap_dim(dim, x.dim() + 1);
  Shape sh = x.shape();
  sh.insert(sh.begin() + d, 1);
  return view(x, sh);
}

}  // namespace nodeweave
