// Matrix products through OpenBLAS (float32/float64) and the composites matmul/addmm/linear.
// Transposed operands are passed to BLAS as transposes, never copied.
#include <cblas.h>

#include "core_framework/ops/op_helpers.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave {

namespace {

// How a 2-D operand with strides (s0, s1) can go to BLAS without a copy.
struct BlasOperand {
  Tensor t;
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};

BlasOperand blas_operand(const Tensor& m) {
  int64_t r = m.size(0), c = m.size(1);
  int64_t s0 = m.stride(0), s1 = m.stride(1);
  if ((s1 == 1 || c == 1) && s0 >= std::max<int64_t>(c, 1))
    return {m, CblasNoTrans, std::max<int64_t>(s0, 1)};
  if ((s0 == 1 || r == 1) && s1 >= std::max<int64_t>(r, 1))
    return {m, CblasTrans, std::max<int64_t>(s1, 1)};
  Tensor cm = contiguous(m);
  return {cm, CblasNoTrans, std::max<int64_t>(c, 1)};
}

template <typename T>
void naive_mm(const Tensor& a, const Tensor& b, const Tensor& out) {
  int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.data<T>();
  int64_t a0 = a.stride(0), a1 = a.stride(1), b0 = b.stride(0), b1 = b.stride(1);
  parallel_for(0, M, 16, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      for (int64_t j = 0; j < N; ++j) {
        T acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += pa[i * a0 + k * a1] * pb[k * b0 + j * b1];
        po[i * N + j] = acc;
      }
  });
}

void gemm(const Tensor& a, const Tensor& b, const Tensor& out) {
  int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  if (M == 0 || N == 0) return;
  if (K == 0) {
    Tensor o = out;
    zero_(o);
    return;
  }
  DType d = out.dtype();
  if (d != DType::Float32 && d != DType::Float64) {
    NW_DISPATCH_NUMERIC(d, "mm", { naive_mm<scalar_t>(a, b, out); });
    return;
  }
  BlasOperand A = blas_operand(a), B = blas_operand(b);
  if (d == DType::Float32) {
    cblas_sgemm(CblasRowMajor, A.trans, B.trans, M, N, K, 1.0f, A.t.data<float>(), A.ld,
                B.t.data<float>(), B.ld, 0.0f, out.data<float>(), N);
  } else {
    cblas_dgemm(CblasRowMajor, A.trans, B.trans, M, N, K, 1.0, A.t.data<double>(), A.ld,
                B.t.data<double>(), B.ld, 0.0, out.data<double>(), N);
  }
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  NW_CHECK(a.dtype() == b.dtype(), TypeError, op,
           ": expected both operands to have the same dtype, got ", dtype_name(a.dtype()), " and ",
           dtype_name(b.dtype()));
}

std::vector<TensorMeta> mm_infer(const TensorList& in, const Attrs&) {
  const Tensor &a = in[0], &b = in[1];
  NW_CHECK(a.dim() == 2 && b.dim() == 2, ValueError, "mm: expected 2-D tensors, got shapes ",
           shape_str(a.shape()), " and ", shape_str(b.shape()));
  NW_CHECK(a.size(1) == b.size(0), ValueError, "mm: shapes ", shape_str(a.shape()), " and ",
           shape_str(b.shape()), " cannot be multiplied (", a.size(1), " != ", b.size(0), ")");
  check_same_dtype("mm", a, b);
  return {TensorMeta{{a.size(0), b.size(1)}, a.dtype(), a.device()}};
}
void mm_cpu(const TensorList& in, const Attrs&, TensorList& out) { gemm(in[0], in[1], out[0]); }
TensorList mm_bw(const GradCtx& c) {
  const Tensor& g = c.grad_outputs[0];
  return {c.needs_input_grad[0] ? mm(g, t(c.inputs[1])) : Tensor(),
          c.needs_input_grad[1] ? mm(t(c.inputs[0]), g) : Tensor()};
}

std::vector<TensorMeta> bmm_infer(const TensorList& in, const Attrs&) {
  const Tensor &a = in[0], &b = in[1];
  NW_CHECK(a.dim() == 3 && b.dim() == 3, ValueError, "bmm: expected 3-D tensors, got shapes ",
           shape_str(a.shape()), " and ", shape_str(b.shape()));
  NW_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1), ValueError, "bmm: shapes ",
           shape_str(a.shape()), " and ", shape_str(b.shape()), " cannot be multiplied");
  check_same_dtype("bmm", a, b);
  return {TensorMeta{{a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device()}};
}
void bmm_cpu(const TensorList& in, const Attrs&, TensorList& out) {
  int64_t B = in[0].size(0);
  // BLAS threads inside each product; batches run one after another.
  for (int64_t i = 0; i < B; ++i)
    gemm(select(in[0], 0, i), select(in[1], 0, i), select(out[0], 0, i));
}
TensorList bmm_bw(const GradCtx& c) {
  const Tensor& g = c.grad_outputs[0];
  return {c.needs_input_grad[0] ? bmm(g, transpose(c.inputs[1], 1, 2)) : Tensor(),
          c.needs_input_grad[1] ? bmm(transpose(c.inputs[0], 1, 2), g) : Tensor()};
}

}  // namespace

void register_linalg_ops() {
  const uint32_t ab = kSaveInput(0) | kSaveInput(1);
  define_op(OpKind::Mm, 0, mm_infer, mm_cpu, mm_bw, ab);
  define_op(OpKind::Bmm, 0, bmm_infer, bmm_cpu, bmm_bw, ab);
}

Tensor mm(const Tensor& a, const Tensor& b) { return dispatch1(OpKind::Mm, {a, b}); }
Tensor bmm(const Tensor& a, const Tensor& b) { return dispatch1(OpKind::Bmm, {a, b}); }

Tensor matmul(const Tensor& a, const Tensor& b) {
  NW_CHECK(a.dim() >= 1 && b.dim() >= 1, ValueError,
           "matmul: both arguments need at least 1 dimension, got shapes ", shape_str(a.shape()),
           " and ", shape_str(b.shape()));
  if (a.dim() == 1 && b.dim() == 1) {
    NW_CHECK(a.size(0) == b.size(0), ValueError, "matmul: vectors of different lengths ", a.size(0),
             " and ", b.size(0));
    return sum(mul(a, b));
  }
  if (a.dim() == 2 && b.dim() == 2) return mm(a, b);
  if (a.dim() == 1) return squeeze(matmul(unsqueeze(a, 0), b), -2);
  if (b.dim() == 1) return squeeze(matmul(a, unsqueeze(b, 1)), -1);
  if (b.dim() == 2) {
    // (..., m, k) @ (k, n): fold the batch into rows, one GEMM.
    NW_CHECK(a.size(-1) == b.size(0), ValueError, "matmul: shapes ", shape_str(a.shape()), " and ",
             shape_str(b.shape()), " cannot be multiplied (", a.size(-1), " != ", b.size(0), ")");
    Shape out_shape = a.shape();
    out_shape.back() = b.size(1);
    return reshape(mm(reshape(a, {-1, a.size(-1)}), b), out_shape);
  }
  // Broadcast batch dims, then bmm.
  Shape ab(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch = broadcast_shapes(ab, bb, "matmul");
  int64_t nb = shape_numel(batch);
  Shape ea = batch, eb = batch;
  ea.push_back(a.size(-2));
  ea.push_back(a.size(-1));
  eb.push_back(b.size(-2));
  eb.push_back(b.size(-1));
  NW_CHECK(a.size(-1) == b.size(-2), ValueError, "matmul: shapes ", shape_str(a.shape()), " and ",
           shape_str(b.shape()), " cannot be multiplied (", a.size(-1), " != ", b.size(-2), ")");
  Tensor r = bmm(reshape(expand(a, ea), {nb, a.size(-2), a.size(-1)}),
                 reshape(expand(b, eb), {nb, b.size(-2), b.size(-1)}));
  Shape out = batch;
  out.push_back(a.size(-2));
  out.push_back(b.size(-1));
  return reshape(r, out);
}

Tensor addmm(const Tensor& c, const Tensor& a, const Tensor& b, double beta, double alpha) {
  Tensor p = mm(a, b);
  if (alpha != 1.0) p = mul(p, alpha);
  if (beta == 0.0) return p;
  return add(beta == 1.0 ? c : mul(c, beta), p);
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  NW_CHECK(weight.dim() == 2, ValueError, "linear: weight must be 2-D, got shape ",
           shape_str(weight.shape()));
  NW_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(1), ValueError, "linear: input of shape ",
           shape_str(x.shape()), " does not match weight of shape ", shape_str(weight.shape()),
           " (expected last dim ", weight.size(1), ")");
  Tensor y = matmul(x, t(weight));
  return bias.defined() ? add(y, bias) : y;
}

}  // namespace nodeweave
