// CUDA kernels for the unary elementwise ops. Same type rules as the CPU kernels: math functions
// compute in float32/float64 (integer inputs promote to float32, half types compute in float32 and
// narrow on the way out); sign-like ops (neg, abs, sign, relu, clamp) keep integer types.
#include <type_traits>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/cuda/elementwise.cuh"
#include "core_framework/cuda/kernels.h"
#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"

namespace nodeweave::cuda {

namespace {

// float and double overloads of the CUDA math library, so functors can be written once.
#define NW_DEVICE_MATH(name, ffn, dfn)                                \
  __device__ __forceinline__ float name(float v) { return ::ffn(v); } \
  __device__ __forceinline__ double name(double v) { return ::dfn(v); }
NW_DEVICE_MATH(dexp, expf, exp)
NW_DEVICE_MATH(dexpm1, expm1f, expm1)
NW_DEVICE_MATH(dlog, logf, log)
NW_DEVICE_MATH(dlog1p, log1pf, log1p)
NW_DEVICE_MATH(dsqrt, sqrtf, sqrt)
NW_DEVICE_MATH(dsin, sinf, sin)
NW_DEVICE_MATH(dcos, cosf, cos)
NW_DEVICE_MATH(dtanh, tanhf, tanh)
NW_DEVICE_MATH(derf, erff, erf)
#undef NW_DEVICE_MATH

constexpr double kSqrt2 = 1.4142135623730951;

// Float functors: T is float or double.
#define NW_FLOAT_OP(Name, expr)          \
  struct Name {                          \
    template <typename T>                \
    __device__ T operator()(T v) const { \
      return expr;                       \
    }                                    \
  };
NW_FLOAT_OP(ExpOp, dexp(v))
NW_FLOAT_OP(Expm1Op, dexpm1(v))
NW_FLOAT_OP(LogOp, dlog(v))
NW_FLOAT_OP(Log1pOp, dlog1p(v))
NW_FLOAT_OP(SqrtOp, dsqrt(v))
NW_FLOAT_OP(RsqrtOp, T(1) / dsqrt(v))
NW_FLOAT_OP(ReciprocalOp, T(1) / v)
NW_FLOAT_OP(SinOp, dsin(v))
NW_FLOAT_OP(CosOp, dcos(v))
NW_FLOAT_OP(TanhOp, dtanh(v))
NW_FLOAT_OP(SigmoidOp, T(1) / (T(1) + dexp(-v)))
NW_FLOAT_OP(ErfOp, derf(v))
NW_FLOAT_OP(GeluErfOp, T(0.5) * v * (T(1) + derf(v / static_cast<T>(kSqrt2))))
NW_FLOAT_OP(GeluTanhOp, T(0.5) * v *
                            (T(1) + dtanh(static_cast<T>(0.7978845608028654) *
                                          (v + static_cast<T>(0.044715) * v * v * v))))
#undef NW_FLOAT_OP

struct EluOp {
  double alpha;
  template <typename T>
  __device__ T operator()(T v) const {
    return v > 0 ? v : static_cast<T>(alpha) * dexpm1(v);
  }
};
struct LeakyReluOp {
  double slope;
  template <typename T>
  __device__ T operator()(T v) const {
    return v > 0 ? v : static_cast<T>(slope) * v;
  }
};
struct SoftplusOp {
  double beta, threshold;
  template <typename T>
  __device__ T operator()(T v) const {
    T bx = static_cast<T>(beta) * v;
    return bx > static_cast<T>(threshold) ? v : dlog1p(dexp(bx)) / static_cast<T>(beta);
  }
};

// Numeric functors: T is any non-bool type; unsigned types skip comparisons that are always false.
struct NegOp {
  template <typename T>
  __device__ T operator()(T v) const {
    return static_cast<T>(-v);
  }
};
struct AbsOp {
  template <typename T>
  __device__ T operator()(T v) const {
    if constexpr (std::is_unsigned_v<T>)
      return v;
    else
      return v < 0 ? static_cast<T>(-v) : v;
  }
};
struct SignOp {
  template <typename T>
  __device__ T operator()(T v) const {
    if constexpr (std::is_unsigned_v<T>)
      return static_cast<T>(v > 0);
    else
      return static_cast<T>((v > 0) - (v < 0));
  }
};
struct ReluOp {
  template <typename T>
  __device__ T operator()(T v) const {
    return v > 0 ? v : T(0);
  }
};
// NaN passes through (both comparisons are false), as in PyTorch.
struct ClampOp {
  double lo, hi;
  bool has_lo, has_hi;
  template <typename T>
  __device__ T operator()(T v) const {
    if (has_lo && v < static_cast<T>(lo)) v = static_cast<T>(lo);
    if (has_hi && v > static_cast<T>(hi)) v = static_cast<T>(hi);
    return v;
  }
};
struct LogicalNotOp {
  template <typename T>
  __device__ bool operator()(T v) const {
    return !(load_acc(v) != 0);
  }
};

template <typename Op>
void run_float(const Tensor& x, const Tensor& out, const char* name, Op op) {
  NW_DISPATCH_FLOAT(out.dtype(), name, { launch_elementwise<scalar_t, scalar_t>(out, {x}, op); });
}

// Runs a float functor on x into out, handling integer and half inputs as the CPU kernel does.
template <typename Op>
void float_unary(const Tensor& x, const Tensor& out, const char* name, Op op) {
  NoGradGuard no_grad;
  if (is_half(out.dtype())) {
    Tensor xf = cast(x, DType::Float32);
    Tensor tmp = empty(out.shape(), DType::Float32, out.device());
    launch_elementwise<float, float>(tmp, {xf}, op);
    Tensor o = out;
    copy_(o, tmp);
    return;
  }
  run_float(x.dtype() == out.dtype() ? x : cast(x, out.dtype()), out, name, op);
}

template <typename Op>
void numeric_unary(const Tensor& x, const Tensor& out, const char* name, Op op) {
  if (is_half(x.dtype())) {
    float_unary(x, out, name, op);
    return;
  }
  NW_DISPATCH_NUMERIC(x.dtype(), name, { launch_elementwise<scalar_t, scalar_t>(out, {x}, op); });
}

#define NW_FLOAT_KERNEL(fn, name, op_expr)                         \
  void fn(const TensorList& in, const Attrs& a, TensorList& out) { \
    float_unary(in[0], out[0], name, op_expr);                     \
  }
NW_FLOAT_KERNEL(exp_cuda, "exp", ExpOp{})
NW_FLOAT_KERNEL(expm1_cuda, "expm1", Expm1Op{})
NW_FLOAT_KERNEL(log_cuda, "log", LogOp{})
NW_FLOAT_KERNEL(log1p_cuda, "log1p", Log1pOp{})
NW_FLOAT_KERNEL(sqrt_cuda, "sqrt", SqrtOp{})
NW_FLOAT_KERNEL(rsqrt_cuda, "rsqrt", RsqrtOp{})
NW_FLOAT_KERNEL(reciprocal_cuda, "reciprocal", ReciprocalOp{})
NW_FLOAT_KERNEL(sin_cuda, "sin", SinOp{})
NW_FLOAT_KERNEL(cos_cuda, "cos", CosOp{})
NW_FLOAT_KERNEL(tanh_cuda, "tanh", TanhOp{})
NW_FLOAT_KERNEL(sigmoid_cuda, "sigmoid", SigmoidOp{})
NW_FLOAT_KERNEL(erf_cuda, "erf", ErfOp{})
NW_FLOAT_KERNEL(elu_cuda, "elu", EluOp{a.f(0)})
NW_FLOAT_KERNEL(leaky_relu_cuda, "leaky_relu", LeakyReluOp{a.f(0)})
NW_FLOAT_KERNEL(softplus_cuda, "softplus", (SoftplusOp{a.f(0), a.f(1)}))
#undef NW_FLOAT_KERNEL

void gelu_cuda(const TensorList& in, const Attrs& a, TensorList& out) {
  if (a.b(0)) {
    float_unary(in[0], out[0], "gelu", GeluTanhOp{});
  } else {
    float_unary(in[0], out[0], "gelu", GeluErfOp{});
  }
}

void neg_cuda(const TensorList& in, const Attrs&, TensorList& out) {
  numeric_unary(in[0], out[0], "neg", NegOp{});
}
void abs_cuda(const TensorList& in, const Attrs&, TensorList& out) {
  numeric_unary(in[0], out[0], "abs", AbsOp{});
}
void sign_cuda(const TensorList& in, const Attrs&, TensorList& out) {
  numeric_unary(in[0], out[0], "sign", SignOp{});
}
void relu_cuda(const TensorList& in, const Attrs&, TensorList& out) {
  numeric_unary(in[0], out[0], "relu", ReluOp{});
}
// Clamp(x; min, max, has_min, has_max)
void clamp_cuda(const TensorList& in, const Attrs& a, TensorList& out) {
  numeric_unary(in[0], out[0], "clamp", ClampOp{a.f(0), a.f(1), a.b(2), a.b(3)});
}
void logical_not_cuda(const TensorList& in, const Attrs&, TensorList& out) {
  NW_CUDA_DISPATCH_ANY(in[0].dtype(),
                       { launch_elementwise<bool, scalar_t>(out[0], {in[0]}, LogicalNotOp{}); });
}

}  // namespace

void register_unary_kernels() {
  const std::pair<OpKind, KernelFn> kernels[] = {
      {OpKind::Neg, neg_cuda},
      {OpKind::Abs, abs_cuda},
      {OpKind::Sign, sign_cuda},
      {OpKind::Exp, exp_cuda},
      {OpKind::Expm1, expm1_cuda},
      {OpKind::Log, log_cuda},
      {OpKind::Log1p, log1p_cuda},
      {OpKind::Sqrt, sqrt_cuda},
      {OpKind::Rsqrt, rsqrt_cuda},
      {OpKind::Reciprocal, reciprocal_cuda},
      {OpKind::Sin, sin_cuda},
      {OpKind::Cos, cos_cuda},
      {OpKind::Tanh, tanh_cuda},
      {OpKind::Sigmoid, sigmoid_cuda},
      {OpKind::Erf, erf_cuda},
      {OpKind::Relu, relu_cuda},
      {OpKind::LeakyRelu, leaky_relu_cuda},
      {OpKind::Elu, elu_cuda},
      {OpKind::Gelu, gelu_cuda},
      {OpKind::Softplus, softplus_cuda},
      {OpKind::Clamp, clamp_cuda},
      {OpKind::LogicalNot, logical_not_cuda},
  };
  for (const auto& [kind, fn] : kernels) mutable_op_def(kind).kernels[1] = fn;
}

}  // namespace nodeweave::cuda
