// Sorting along one dim: the primitives Sort (always stable) and TopK, and argsort. NaN sorts as
// the largest value, as in PyTorch. Both gradients place the incoming gradient back at the source
// positions with put_along (scatter_add), in linear time.
#include <algorithm>
#include <vector>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/engine/op_registry.h"
#include "core_framework/ops/along_dim.h"
#include "core_framework/ops/dim_util.h"
#include "core_framework/ops/op_helpers.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave {

namespace {

template <typename T>
struct Keyed {
  T v;
  int64_t i;
};

// A strict total order on (value, position): ties keep their original order, which makes std::sort
// stable and the top-k selection deterministic. `v != v` only holds for NaN.
template <typename T, bool Descending>
struct Before {
  bool operator()(const Keyed<T>& a, const Keyed<T>& b) const {
    bool lt, gt;
    if constexpr (Descending) {
      lt = (a.v > b.v) || (a.v != a.v && b.v == b.v);
      gt = (b.v > a.v) || (b.v != b.v && a.v == a.v);
    } else {
      lt = (a.v < b.v) || (b.v != b.v && a.v == a.v);
      gt = (b.v < a.v) || (a.v != a.v && b.v == b.v);
    }
    return lt || (!gt && a.i < b.i);
  }
};

// Copies each line of x along the split dim into (value, position) pairs, lets select() put the
// first K of them in order, and writes those to (vals, idx). Lines run in parallel.
template <typename T, typename Select>
void per_line(const T* x, T* vals, int64_t* idx, const DimSplit& s, int64_t K,
              const Select& select) {
  const int64_t R = s.size, I = s.inner;
  parallel_for(0, s.outer * I, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<Keyed<T>> line(R);
                 for (int64_t l = b; l < e; ++l) {
                   const int64_t o = l / I, i = l % I;
                   const T* src = x + o * R * I + i;
                   for (int64_t r = 0; r < R; ++r) line[r] = {src[r * I], r};
                   select(line);
                   T* dv = vals + o * K * I + i;
                   int64_t* di = idx + o * K * I + i;
                   for (int64_t k = 0; k < K; ++k) {
                     dv[k * I] = line[k].v;
                     di[k * I] = line[k].i;
                   }
                 }
               });
}

std::vector<TensorMeta> with_indices(Shape s, const Tensor& x) {
  return {TensorMeta{s, x.dtype(), x.device()}, TensorMeta{s, DType::Int64, x.device()}};
}

// ---- Sort(x; dim, descending) -> (values, indices) ----
std::vector<TensorMeta> sort_infer(const TensorList& in, const Attrs&) {
  return with_indices(in[0].shape(), in[0]);
}

void sort_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  Tensor x = dense(in[0]);
  if (x.numel() == 0) return;
  const DimSplit s = split_at_dim(x.shape(), a.i(0));
  NW_DISPATCH_ALL(x.dtype(), "sort", {
    using T = scalar_t;
    auto run = [&](auto before) {
      per_line(x.data<T>(), out[0].data<T>(), out[1].data<int64_t>(), s, s.size,
               [&](std::vector<Keyed<T>>& line) { std::sort(line.begin(), line.end(), before); });
    };
    if (a.b(1))
      run(Before<T, true>());
    else
      run(Before<T, false>());
  });
}

// ---- TopK(x; k, dim, largest) -> (values, indices), always sorted ----
std::vector<TensorMeta> topk_infer(const TensorList& in, const Attrs& a) {
  Shape s = in[0].shape();
  s[a.i(1)] = a.i(0);
  return with_indices(s, in[0]);
}

void topk_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  Tensor x = dense(in[0]);
  const int64_t k = a.i(0);
  if (out[0].numel() == 0) return;
  const DimSplit s = split_at_dim(x.shape(), a.i(1));
  NW_DISPATCH_ALL(x.dtype(), "topk", {
    using T = scalar_t;
    auto run = [&](auto before) {
      per_line(x.data<T>(), out[0].data<T>(), out[1].data<int64_t>(), s, k,
               [&](std::vector<Keyed<T>>& line) {
                 // Selection then a sort of the k winners: O(R + k log k).
                 if (k < static_cast<int64_t>(line.size()))
                   std::nth_element(line.begin(), line.begin() + k, line.end(), before);
                 std::sort(line.begin(), line.begin() + k, before);
               });
    };
    if (a.b(2))
      run(Before<T, true>());
    else
      run(Before<T, false>());
  });
}

// Sort: attrs (dim, ...); TopK: attrs (k, dim, ...). The values' gradient goes back to the
// positions the indices name.
TensorList sort_bw(const GradCtx& c) {
  const int64_t dim = c.attrs.i(0);
  return {put_along(c.grad_outputs[0], c.outputs[1], dim, c.input_meta[0].shape[dim])};
}
TensorList topk_bw(const GradCtx& c) {
  const int64_t dim = c.attrs.i(1);
  return {put_along(c.grad_outputs[0], c.outputs[1], dim, c.input_meta[0].shape[dim])};
}


// Runs a sorting op on any shape: 0-d inputs as one-element vectors, half types in float32
// (exact: sorting only moves values).
std::pair<Tensor, Tensor> sorting(OpKind kind, const Tensor& x0, int64_t dim, Attrs attrs) {
  Tensor x = is_half(x0.dtype()) ? cast(x0, DType::Float32) : x0;
  const bool scalar = x.dim() == 0;
  if (scalar) x = reshape(x, {1});
  TensorList r = dispatch(kind, {x}, attrs);
  if (scalar && r[0].numel() == 1) {
    r[0] = reshape(r[0], {});
    r[1] = reshape(r[1], {});
  }
  if (r[0].dtype() != x0.dtype()) r[0] = cast(r[0], x0.dtype());
  return {r[0], r[1]};
}

}  // namespace

void register_sort_ops() {
  const uint32_t saved = kSaveOutput(1);
  define_op(OpKind::Sort, 0, sort_infer, sort_cpu, sort_bw, saved);
  define_op(OpKind::TopK, 0, topk_infer, topk_cpu, topk_bw, saved);
  // The gather / scatter-add pair these gradients use lives beside them.
}

std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "dim");
  return sorting(OpKind::Sort, x, d, {d, descending});
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  NoGradGuard no_grad;  // indices carry no gradient
  return sort(x, dim, descending).second;
}

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "dim");
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  NW_CHECK(k >= 0 && k <= n, ValueError, "topk: k (", k, ") must be in [0, ", n, "] for dimension ",
           d, " of size ", n, " (input shape ", shape_str(x.shape()), ")");
  (void)sorted;  // results always come sorted, which every caller accepts
  return sorting(OpKind::TopK, x, d, {k, d, largest});
}

}  // namespace nodeweave
