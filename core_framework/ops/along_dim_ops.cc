// TakeAlong and PutAlong kernels. Both view their operands as [outer, len, inner] blocks and
// range-check the index in a pass of its own before touching memory.
#include "core_framework/ops/along_dim.h"
#include "core_framework/ops/convert.h"
#include "core_framework/ops/dim_util.h"
#include "core_framework/ops/op_helpers.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave {

namespace {

// Throws IndexError naming the first index outside [0, size).
template <typename ix>
void check_range(const ix* p, int64_t n, int64_t size, const char* op) {
  const int64_t bad = first_bad(p, n, [size](ix v) {
    const int64_t w = static_cast<int64_t>(v);
    return w < 0 || w >= size;
  });
  NW_CHECK(bad == n, IndexError, op, ": index ", static_cast<int64_t>(p[bad]),
           " is out of bounds for a dimension of size ", size, " (at flat position ", bad, ")");
}

void check_index(const char* op, const Tensor& index, const Tensor& data, int64_t dim) {
  NW_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32, TypeError, op,
           ": index must be int32 or int64, got ", dtype_name(index.dtype()));
  NW_CHECK(index.dim() == data.dim(), ValueError, op, ": index of shape ", shape_str(index.shape()),
           " must have as many dims as the data of shape ", shape_str(data.shape()));
  for (int64_t d = 0; d < data.dim(); ++d) {
    NW_CHECK(d == dim || index.size(d) == data.size(d), ValueError, op, ": index of shape ",
             shape_str(index.shape()), " does not match data of shape ", shape_str(data.shape()),
             " outside dimension ", dim);
  }
}

// ---- TakeAlong(x, index; dim) ----
std::vector<TensorMeta> take_infer(const TensorList& in, const Attrs& a) {
  check_index("take_along", in[1], in[0], a.i(0));
  return {TensorMeta{in[1].shape(), in[0].dtype(), in[0].device()}};
}

template <typename T, typename ix>
void take_kernel(const T* x, const ix* idx, T* out, DimSplit xs, int64_t K) {
  const int64_t R = xs.size, I = xs.inner;
  parallel_for(0, xs.outer * K, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(I, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t row = b; row < e; ++row) {
                   const T* src = x + (row / K) * R * I;
                   const ix* ip = idx + row * I;
                   T* op = out + row * I;
                   for (int64_t i = 0; i < I; ++i) op[i] = src[static_cast<int64_t>(ip[i]) * I + i];
                 }
               });
}

void take_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  const int64_t dim = a.i(0);
  Tensor x = dense(in[0]), idx = dense(in[1]);
  if (out[0].numel() == 0) return;
  const DimSplit xs = split_at_dim(x.shape(), dim);
  const int64_t K = idx.dim() == 0 ? 1 : idx.size(dim);
  NW_DISPATCH_INDEX(idx.dtype(), "take_along", {
    using ix = scalar_t;
    check_range(idx.data<ix>(), idx.numel(), xs.size, "take_along");
    switch (x.itemsize()) {
      case 1:
        take_kernel(x.data<uint8_t>(), idx.data<ix>(), out[0].data<uint8_t>(), xs, K);
        break;
      case 2:
        take_kernel(x.data<uint16_t>(), idx.data<ix>(), out[0].data<uint16_t>(), xs, K);
        break;
      case 4:
        take_kernel(x.data<uint32_t>(), idx.data<ix>(), out[0].data<uint32_t>(), xs, K);
        break;
      default:
        take_kernel(x.data<uint64_t>(), idx.data<ix>(), out[0].data<uint64_t>(), xs, K);
        break;
    }
  });
}

TensorList take_bw(const GradCtx& c) {
  int64_t dim = c.attrs.i(0);
  const Shape& xs = c.input_meta[0].shape;
  return {put_along(c.grad_outputs[0], c.inputs[1], dim, xs.empty() ? 1 : xs[dim]), Tensor()};
}

// ---- PutAlong(src, index; dim, size) ----
std::vector<TensorMeta> put_infer(const TensorList& in, const Attrs& a) {
  const int64_t dim = a.i(0), size = a.i(1);
  NW_CHECK(in[1].shape() == in[0].shape(), ValueError, "put_along: index of shape ",
           shape_str(in[1].shape()), " must match src of shape ", shape_str(in[0].shape()));
  check_index("put_along", in[1], in[0], dim);
  NW_CHECK(size >= 0, ValueError, "put_along: size must be non-negative, got ", size);
  Shape s = in[0].shape();
  if (!s.empty()) s[dim] = size;
  return {TensorMeta{s, in[0].dtype(), in[0].device()}};
}

template <typename T, typename ix>
void put_kernel(const T* sp, const ix* ip, T* op, DimSplit os, int64_t K) {
  const int64_t O = os.outer, R = os.size, I = os.inner;
  // Indices may repeat within a line, so a line (fixed outer o, inner i) belongs to one thread.
  auto run = [&](int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    for (int64_t ob = o0; ob < o1; ++ob) {
      T* dst = op + ob * R * I;
      for (int64_t k = 0; k < K; ++k) {
        const T* s = sp + (ob * K + k) * I;
        const ix* id = ip + (ob * K + k) * I;
        for (int64_t i = i0; i < i1; ++i) {
          T& d = dst[static_cast<int64_t>(id[i]) * I + i];
          d = convert_value<T>(load_value(d) + load_value(s[i]));
        }
      }
    }
  };
  if (O >= get_num_threads() || I < 64) {
    parallel_for(0, O, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(K * I, 1)),
                 [&](int64_t b, int64_t e) { run(b, e, 0, I); });
  } else {
    for (int64_t ob = 0; ob < O; ++ob)
      parallel_for(0, I, std::max<int64_t>(64, kGrainSize / std::max<int64_t>(K, 1)),
                   [&](int64_t b, int64_t e) { run(ob, ob + 1, b, e); });
  }
}

void put_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  const int64_t dim = a.i(0);
  Tensor src = dense(in[0]), idx = dense(in[1]);
  const Tensor& o = out[0];
  const DimSplit os = split_at_dim(o.shape(), dim);
  const int64_t K = src.dim() == 0 ? 1 : src.size(dim);
  NW_DISPATCH_INDEX(idx.dtype(), "put_along",
                    { check_range(idx.data<scalar_t>(), idx.numel(), os.size, "put_along"); });
  NW_DISPATCH_ANY(o.dtype(), "put_along", {
    using T = scalar_t;
    std::fill(o.data<T>(), o.data<T>() + o.numel(), convert_value<T>(0.0));
    if (idx.dtype() == DType::Int64) {
      put_kernel(src.data<T>(), idx.data<int64_t>(), o.data<T>(), os, K);
    } else {
      put_kernel(src.data<T>(), idx.data<int32_t>(), o.data<T>(), os, K);
    }
  });
}

TensorList put_bw(const GradCtx& c) {
  return {take_along(c.grad_outputs[0], c.inputs[1], c.attrs.i(0)), Tensor()};
}

}  // namespace

void register_along_ops() {
  define_op(OpKind::TakeAlong, 0, take_infer, take_cpu, take_bw, kSaveInput(1), 0b01);
  define_op(OpKind::PutAlong, 0, put_infer, put_cpu, put_bw, kSaveInput(1), 0b01);
}

Tensor take_along(const Tensor& x, const Tensor& index, int64_t dim) {
  int64_t d = x.dim() == 0 ? 0 : wrap_dim(dim, x.dim());
  return dispatch1(OpKind::TakeAlong, {x, index}, {d});
}

Tensor put_along(const Tensor& src, const Tensor& index, int64_t dim, int64_t size) {
  int64_t d = src.dim() == 0 ? 0 : wrap_dim(dim, src.dim());
  return dispatch1(OpKind::PutAlong, {src, index}, {d, size});
}

}  // namespace nodeweave
