// Sum over any set of dims, and the composites built on it (mean, sum_to). The kernel views the
// input as (outer, reduced, inner) so every case is a row sum (inner == 1) or a vectorized
// column accumulation (inner > 1) over contiguous memory.
#include <algorithm>

#include "core_framework/ops/convert.h"
#include "core_framework/ops/op_helpers.h"
#include "core_framework/ops/reduce_util.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave {

// Normalizes a dim list for a tensor of rank `ndim` (empty = all dims), sorted and unique-checked.
IntList normalize_dims(const IntList& dims, int64_t ndim, const char* op) {
  IntList out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  const std::string what = str_cat(op, ": dim");
  for (int64_t d : dims) out.push_back(wrap_dim(d, ndim, what.c_str()));
  std::sort(out.begin(), out.end());
  NW_CHECK(std::adjacent_find(out.begin(), out.end()) == out.end(), ValueError, op,
           ": dim appears more than once in ", shape_str(dims));
  if (ndim == 0) out.clear();
  return out;
}

Shape reduced_shape(const Shape& in, const IntList& dims, bool keepdim) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    bool red = std::binary_search(dims.begin(), dims.end(), d);
    if (!red)
      out.push_back(in[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

namespace {

// Attrs: dims (IntList), keepdim (bool), dtype (DType)
std::vector<TensorMeta> sum_infer(const TensorList& in, const Attrs& a) {
  IntList dims = normalize_dims(a.ints(0), in[0].dim(), "sum");
  return {TensorMeta{reduced_shape(in[0].shape(), dims, a.b(1)), a.dtype(2), in[0].device()}};
}

// Sum of x[0..n) with 16 independent accumulators: the compiler keeps them in vector registers
// without needing permission to reassociate, and the split also bounds rounding error growth.
template <typename T>
T sum_lanes(const T* x, int64_t n) {
  constexpr int kLanes = 16;
  T lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) lanes[k] += x[i + k];
  T acc = 0;
  for (; i < n; ++i) acc += x[i];
  for (int k = 0; k < kLanes; ++k) acc += lanes[k];
  return acc;
}

template <typename T>
void sum_ori(const T* x, T* out, int64_t O, int64_t R, int64_t I) {
  if (I == 1) {
    if (O == 1) {
      // One big sum: per-thread partials, combined in order for a deterministic result.
      int nt = get_num_threads();
      std::vector<T> partial(std::max(nt, 1) * 8, T(0));
      parallel_for(0, R, kGrainSize, [&](int64_t b, int64_t e) {
        partial[(omp_in_parallel() ? omp_get_thread_num() : 0) * 8] = sum_lanes(x + b, e - b);
      });
      T total = 0;
      for (int t = 0; t < nt; ++t) total += partial[t * 8];
      out[0] = total;
      return;
    }
    parallel_for(0, O, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t o = b; o < e; ++o) {
                     out[o] = sum_lanes(x + o * R, R);
                   }
                 });
    return;
  }
  // Accumulate rows of length I; parallel over outer blocks, or over inner columns when O is small.
  if (O >= get_num_threads() || I < 256) {
    parallel_for(0, O, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R * I, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t o = b; o < e; ++o) {
                     T* dst = out + o * I;
                     std::fill(dst, dst + I, T(0));
                     for (int64_t r = 0; r < R; ++r) {
                       const T* src = x + (o * R + r) * I;
                       for (int64_t i = 0; i < I; ++i) dst[i] += src[i];
                     }
                   }
                 });
  } else {
    for (int64_t o = 0; o < O; ++o) {
      parallel_for(0, I, 256, [&](int64_t b, int64_t e) {
        T* dst = out + o * I;
        std::fill(dst + b, dst + e, T(0));
        for (int64_t r = 0; r < R; ++r) {
          const T* src = x + (o * R + r) * I;
          for (int64_t i = b; i < e; ++i) dst[i] += src[i];
        }
      });
    }
  }
}

void sum_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  const Tensor& x0 = in[0];
  IntList dims = normalize_dims(a.ints(0), x0.dim(), "sum");
  DType acc_dtype = a.dtype(2);
  bool half_out = acc_dtype == DType::Float16 || acc_dtype == DType::BFloat16;
  DType cd = half_out ? DType::Float32 : acc_dtype;
  Tensor x = as_dtype(x0, cd);
  // Reduced dims contiguous in the dim list and x contiguous: view as (O, R, I) directly.
  bool block = x.is_contiguous() && (dims.empty() || dims.back() - dims.front() + 1 ==
                                                         static_cast<int64_t>(dims.size()));
  int64_t O = 1, R = 1, I = 1;
  if (block && !dims.empty()) {
    for (int64_t d = 0; d < dims.front(); ++d) O *= x.size(d);
    for (int64_t d : dims) R *= x.size(d);
    for (int64_t d = dims.back() + 1; d < x.dim(); ++d) I *= x.size(d);
  } else if (dims.empty()) {
    O = x.numel();
  } else {
    IntList perm;
    for (int64_t d = 0; d < x.dim(); ++d)
      if (!std::binary_search(dims.begin(), dims.end(), d)) perm.push_back(d);
    for (int64_t d : dims) perm.push_back(d);
    x = contiguous(permute(x, perm));
    for (int64_t d : dims) R *= x0.size(d);
    O = x.numel() / std::max<int64_t>(R, 1);
    if (R == 0) O = shape_numel(reduced_shape(x0.shape(), dims, false));
  }
  Tensor target = half_out ? empty(out[0].shape(), DType::Float32, out[0].device()) : out[0];
  NW_DISPATCH_NUMERIC(cd, "sum", {
    if (R == 0) {
      std::fill(target.data<scalar_t>(), target.data<scalar_t>() + target.numel(), scalar_t(0));
    } else {
      sum_ori<scalar_t>(x.data<scalar_t>(), target.data<scalar_t>(), O, R, I);
    }
  });
  if (half_out) copy_(out[0], target);
}

TensorList sum_bw(const GradCtx& c) {
  const TensorMeta& m = c.input_meta[0];
  IntList dims = normalize_dims(c.attrs.ints(0), static_cast<int64_t>(m.shape.size()), "sum");
  Tensor g = c.grad_outputs[0];
  if (!c.attrs.b(1)) {
    for (int64_t d : dims) g = unsqueeze(g, d);
  }
  return {expand(g, m.shape)};
}

}  // namespace

void register_reduce_sum_op() { define_op(OpKind::Sum, kReduce, sum_infer, sum_cpu, sum_bw, 0); }

Tensor sum(const Tensor& x, const IntList& dims, bool keepdim, std::optional<DType> dtype) {
  DType d = dtype ? *dtype : (is_floating(x.dtype()) ? x.dtype() : DType::Int64);
  return dispatch1(OpKind::Sum, {x}, {dims, keepdim, d});
}

Tensor mean(const Tensor& x, const IntList& dims, bool keepdim) {
  NW_CHECK(is_floating(x.dtype()), TypeError, "mean: expected a floating-point tensor, got ",
           dtype_name(x.dtype()), " (cast it first)");
  IntList nd = normalize_dims(dims, x.dim(), "mean");
  int64_t n = 1;
  for (int64_t d : nd) n *= x.size(d);
  return mul(sum(x, dims, keepdim), 1.0 / static_cast<double>(n));
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  int64_t lead = x.dim() - static_cast<int64_t>(shape.size());
  NW_CHECK(lead >= 0, ValueError, "sum_to: can't reduce shape ", shape_str(x.shape()), " to ",
           shape_str(shape));
  IntList dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (int64_t d = lead; d < x.dim(); ++d) {
    if (shape[d - lead] == 1 && x.size(d) != 1) dims.push_back(d);
  }
  Tensor r = dims.empty() ? x : sum(x, dims, true);
  return reshape(r, shape);
}

}  // namespace nodeweave
