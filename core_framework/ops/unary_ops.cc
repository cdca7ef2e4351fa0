// Unary elementwise ops. Math functions compute in float32/float64 (integer inputs are promoted to
// float32 and half types computed in float32, as PyTorch does); sign-like ops keep integer types.
#include <cmath>

#include "core_framework/ops/convert.h"
#include "core_framework/ops/elementwise_loop.h"
#include "core_framework/ops/op_helpers.h"

namespace nodeweave {

namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kInvSqrt2Pi = 0.3989422804014327;
constexpr double kTwoOverSqrtPi = 1.1283791670955126;


std::vector<TensorMeta> infer_float_unary(const TensorList& in, const Attrs&) {
  DType d = is_floating(in[0].dtype()) ? in[0].dtype() : DType::Float32;
  return {TensorMeta{in[0].shape(), d, in[0].device()}};
}

// Runs a float functor on x into out, handling integer and half inputs by computing in float32.
template <typename F>
void float_unary(const Tensor& x, const Tensor& out, const char* name, const F& f) {
  if (is_half(out.dtype())) {  // compute in float32, round once into the half output
    Tensor tmp = empty(out.shape(), DType::Float32, out.device());
    elementwise_kernel<float, float>(tmp, {as_dtype(x, DType::Float32)},
                                     [&](float v) { return static_cast<float>(f(v)); });
    Tensor o = out;
    copy_(o, tmp);
    return;
  }
  Tensor xf = as_dtype(x, out.dtype());  // integer inputs are promoted (no copy when they match)
  NW_DISPATCH_FLOAT(out.dtype(), name, {
    elementwise_kernel<scalar_t, scalar_t>(out, {xf},
                                           [&](scalar_t v) { return static_cast<scalar_t>(f(v)); });
  });
}

// Same-type ops that also accept integers (neg, abs, sign, relu, clamp).
template <typename F>
void numeric_unary(const Tensor& x, const Tensor& out, const char* name, const F& f) {
  if (is_half(x.dtype())) {
    float_unary(x, out, name, f);
    return;
  }
  NW_DISPATCH_NUMERIC(x.dtype(), name, {
    elementwise_kernel<scalar_t, scalar_t>(out, {x},
                                           [&](scalar_t v) { return static_cast<scalar_t>(f(v)); });
  });
}

#define NW_FLOAT_UNARY_KERNEL(Name, expr)                                  \
  void Name##_cpu(const TensorList& in, const Attrs& a, TensorList& out) { \
    float_unary(in[0], out[0], #Name, [&](auto v) { return expr; });       \
  }

NW_FLOAT_UNARY_KERNEL(exp, std::exp(v))
NW_FLOAT_UNARY_KERNEL(expm1, std::expm1(v))
NW_FLOAT_UNARY_KERNEL(log, std::log(v))
NW_FLOAT_UNARY_KERNEL(log1p, std::log1p(v))
NW_FLOAT_UNARY_KERNEL(sqrt, std::sqrt(v))
NW_FLOAT_UNARY_KERNEL(rsqrt, 1 / std::sqrt(v))
NW_FLOAT_UNARY_KERNEL(reciprocal, 1 / v)
NW_FLOAT_UNARY_KERNEL(sin, std::sin(v))
NW_FLOAT_UNARY_KERNEL(cos, std::cos(v))
NW_FLOAT_UNARY_KERNEL(tanh, std::tanh(v))
NW_FLOAT_UNARY_KERNEL(sigmoid, 1 / (1 + std::exp(-v)))
NW_FLOAT_UNARY_KERNEL(erf, std::erf(v))
NW_FLOAT_UNARY_KERNEL(elu, v > 0 ? v : static_cast<decltype(v)>(a.f(0)) * std::expm1(v))
#undef NW_FLOAT_UNARY_KERNEL

void gelu_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  if (a.b(0)) {
    float_unary(in[0], out[0], "gelu", [](auto v) {
      using T = decltype(v);
      T inner = static_cast<T>(0.7978845608028654) * (v + static_cast<T>(0.044715) * v * v * v);
      return static_cast<T>(0.5) * v * (1 + std::tanh(inner));
    });
  } else {
    float_unary(in[0], out[0], "gelu", [](auto v) {
      using T = decltype(v);
      return static_cast<T>(0.5) * v * (1 + std::erf(v / static_cast<T>(kSqrt2)));
    });
  }
}

void softplus_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  double beta = a.f(0), threshold = a.f(1);
  float_unary(in[0], out[0], "softplus", [=](auto v) {
    using T = decltype(v);
    T bx = static_cast<T>(beta) * v;
    return bx > static_cast<T>(threshold) ? v : std::log1p(std::exp(bx)) / static_cast<T>(beta);
  });
}

void leaky_relu_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  double s = a.f(0);
  float_unary(in[0], out[0], "leaky_relu",
              [=](auto v) { return v > 0 ? v : static_cast<decltype(v)>(s) * v; });
}

void neg_cpu(const TensorList& in, const Attrs&, TensorList& out) {
  numeric_unary(in[0], out[0], "neg", [](auto v) { return -v; });
}
void abs_cpu(const TensorList& in, const Attrs&, TensorList& out) {
  numeric_unary(in[0], out[0], "abs", [](auto v) { return v < 0 ? -v : v; });
}
void sign_cpu(const TensorList& in, const Attrs&, TensorList& out) {
  numeric_unary(in[0], out[0], "sign", [](auto v) { return (v > 0) - (v < 0); });
}
void relu_cpu(const TensorList& in, const Attrs&, TensorList& out) {
  numeric_unary(in[0], out[0], "relu", [](auto v) { return v > 0 ? v : decltype(v)(0); });
}
// Clamp(x; min, max, has_min, has_max). NaN passes through, as in PyTorch.
void clamp_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  double lo = a.f(0), hi = a.f(1);
  bool has_lo = a.b(2), has_hi = a.b(3);
  numeric_unary(in[0], out[0], "clamp", [=](auto v) {
    using T = decltype(v);
    if (has_lo && v < static_cast<T>(lo)) v = static_cast<T>(lo);
    if (has_hi && v > static_cast<T>(hi)) v = static_cast<T>(hi);
    return v;
  });
}
void logical_not_cpu(const TensorList& in, const Attrs&, TensorList& out) {
  NW_DISPATCH_ANY(in[0].dtype(), "logical_not", {
    elementwise_kernel<bool, scalar_t>(out[0], {in[0]},
                                       [](scalar_t v) { return !(load_value(v) != 0); });
  });
}
std::vector<TensorMeta> infer_bool(const TensorList& in, const Attrs&) {
  return {TensorMeta{in[0].shape(), DType::Bool, in[0].device()}};
}

// ---- gradient rules (engine ops, so they are themselves differentiable) ----
Tensor mask_as(const Tensor& m, const Tensor& like) { return cast(m, like.dtype()); }
#define G c.grad_outputs[0]
#define X c.inputs[0]
#define Y c.outputs[0]
TensorList neg_bw(const GradCtx& c) { return {neg(G)}; }
TensorList abs_bw(const GradCtx& c) { return {mul(G, sign(X))}; }
TensorList exp_bw(const GradCtx& c) { return {mul(G, Y)}; }
TensorList expm1_bw(const GradCtx& c) { return {mul(G, add(Y, 1.0))}; }
TensorList log_bw(const GradCtx& c) { return {div(G, X)}; }
TensorList log1p_bw(const GradCtx& c) { return {div(G, add(X, 1.0))}; }
TensorList sqrt_bw(const GradCtx& c) { return {div(G, mul(Y, 2.0))}; }
TensorList rsqrt_bw(const GradCtx& c) { return {mul(mul(G, pow(Y, 3.0)), -0.5)}; }
TensorList reciprocal_bw(const GradCtx& c) { return {neg(mul(G, square(Y)))}; }
TensorList sin_bw(const GradCtx& c) { return {mul(G, cos(X))}; }
TensorList cos_bw(const GradCtx& c) { return {neg(mul(G, sin(X)))}; }
TensorList tanh_bw(const GradCtx& c) { return {mul(G, add(neg(square(Y)), 1.0))}; }
TensorList sigmoid_bw(const GradCtx& c) { return {mul(G, mul(Y, add(neg(Y), 1.0)))}; }
TensorList erf_bw(const GradCtx& c) { return {mul(G, mul(exp(neg(square(X))), kTwoOverSqrtPi))}; }
TensorList relu_bw(const GradCtx& c) {
  return {mul(G, mask_as(gt(Y, scalar_tensor(0, Y.dtype(), Device{}, true)), G))};
}
TensorList leaky_relu_bw(const GradCtx& c) {
  Tensor pos = gt(X, scalar_tensor(0, X.dtype(), Device{}, true));
  Tensor slope = where(pos, scalar_tensor(1.0, G.dtype(), Device{}, true),
                       scalar_tensor(c.attrs.f(0), G.dtype(), Device{}, true));
  return {mul(G, slope)};
}
TensorList elu_bw(const GradCtx& c) {
  Tensor pos = gt(X, scalar_tensor(0, X.dtype(), Device{}, true));
  return {where(pos, G, mul(G, add(Y, c.attrs.f(0))))};
}
TensorList gelu_bw(const GradCtx& c) {
  if (c.attrs.b(0)) {
    // d/dx of 0.5 x (1 + tanh(k (x + 0.044715 x^3)))
    const double k = 0.7978845608028654;
    Tensor x2 = square(X);
    Tensor inner = mul(mul(X, add(mul(x2, 0.044715), 1.0)), k);
    Tensor th = tanh(inner);
    Tensor dinner = mul(add(mul(x2, 3 * 0.044715), 1.0), k);
    Tensor left = mul(add(th, 1.0), 0.5);
    Tensor right = mul(mul(mul(X, 0.5), add(neg(square(th)), 1.0)), dinner);
    return {mul(G, add(left, right))};
  }
  Tensor cdf = mul(add(erf(mul(X, 1.0 / kSqrt2)), 1.0), 0.5);
  Tensor pdf = mul(exp(mul(square(X), -0.5)), kInvSqrt2Pi);
  return {mul(G, add(cdf, mul(X, pdf)))};
}
TensorList softplus_bw(const GradCtx& c) {
  double beta = c.attrs.f(0), threshold = c.attrs.f(1);
  Tensor bx = mul(X, beta);
  Tensor lin = gt(bx, scalar_tensor(threshold, X.dtype(), Device{}, true));
  return {where(lin, G, mul(G, sigmoid(bx)))};
}
TensorList clamp_bw(const GradCtx& c) {
  Tensor keep = ones_like(X);
  Tensor m = cast(keep, DType::Bool);
  if (c.attrs.b(2))
    m = logical_and(m, ge(X, scalar_tensor(c.attrs.f(0), X.dtype(), Device{}, true)));
  if (c.attrs.b(3))
    m = logical_and(m, le(X, scalar_tensor(c.attrs.f(1), X.dtype(), Device{}, true)));
  return {mul(G, mask_as(m, G))};
}
#undef G
#undef X
#undef Y

}  // namespace

void register_unary_ops() {
  const uint32_t ew = kElementwise | kInPlaceCapable;
  const uint32_t in0 = kSaveInput(0), out0 = kSaveOutput(0);
  define_op(OpKind::Neg, ew, infer_like_input, neg_cpu, neg_bw, 0);
  define_op(OpKind::Abs, ew, infer_like_input, abs_cpu, abs_bw, in0);
  define_op(OpKind::Sign, ew, infer_like_input, sign_cpu, nullptr, 0);
  define_op(OpKind::Exp, ew, infer_float_unary, exp_cpu, exp_bw, out0);
  define_op(OpKind::Expm1, ew, infer_float_unary, expm1_cpu, expm1_bw, out0);
  define_op(OpKind::Log, ew, infer_float_unary, log_cpu, log_bw, in0);
  define_op(OpKind::Log1p, ew, infer_float_unary, log1p_cpu, log1p_bw, in0);
  define_op(OpKind::Sqrt, ew, infer_float_unary, sqrt_cpu, sqrt_bw, out0);
  define_op(OpKind::Rsqrt, ew, infer_float_unary, rsqrt_cpu, rsqrt_bw, out0);
  define_op(OpKind::Reciprocal, ew, infer_float_unary, reciprocal_cpu, reciprocal_bw, out0);
  define_op(OpKind::Sin, ew, infer_float_unary, sin_cpu, sin_bw, in0);
  define_op(OpKind::Cos, ew, infer_float_unary, cos_cpu, cos_bw, in0);
  define_op(OpKind::Tanh, ew, infer_float_unary, tanh_cpu, tanh_bw, out0);
  define_op(OpKind::Sigmoid, ew, infer_float_unary, sigmoid_cpu, sigmoid_bw, out0);
  define_op(OpKind::Erf, ew, infer_float_unary, erf_cpu, erf_bw, in0);
  define_op(OpKind::Relu, ew, infer_like_input, relu_cpu, relu_bw, out0);
  define_op(OpKind::LeakyRelu, ew, infer_float_unary, leaky_relu_cpu, leaky_relu_bw, in0);
  define_op(OpKind::Elu, ew, infer_float_unary, elu_cpu, elu_bw, in0 | out0);
  define_op(OpKind::Gelu, ew, infer_float_unary, gelu_cpu, gelu_bw, in0);
  define_op(OpKind::Softplus, ew, infer_float_unary, softplus_cpu, softplus_bw, in0);
  define_op(OpKind::Clamp, ew, infer_like_input, clamp_cpu, clamp_bw, in0);
  define_op(OpKind::LogicalNot, kElementwise, infer_bool, logical_not_cpu, nullptr, 0);
}

Tensor neg(const Tensor& x) { return dispatch1(OpKind::Neg, {x}); }
Tensor abs(const Tensor& x) { return dispatch1(OpKind::Abs, {x}); }
Tensor sign(const Tensor& x) { return dispatch1(OpKind::Sign, {x}); }
Tensor exp(const Tensor& x) { return dispatch1(OpKind::Exp, {x}); }
Tensor expm1(const Tensor& x) { return dispatch1(OpKind::Expm1, {x}); }
Tensor log(const Tensor& x) { return dispatch1(OpKind::Log, {x}); }
Tensor log1p(const Tensor& x) { return dispatch1(OpKind::Log1p, {x}); }
Tensor sqrt(const Tensor& x) { return dispatch1(OpKind::Sqrt, {x}); }
Tensor rsqrt(const Tensor& x) { return dispatch1(OpKind::Rsqrt, {x}); }
Tensor reciprocal(const Tensor& x) { return dispatch1(OpKind::Reciprocal, {x}); }
Tensor sin(const Tensor& x) { return dispatch1(OpKind::Sin, {x}); }
Tensor cos(const Tensor& x) { return dispatch1(OpKind::Cos, {x}); }
Tensor tanh(const Tensor& x) { return dispatch1(OpKind::Tanh, {x}); }
Tensor sigmoid(const Tensor& x) { return dispatch1(OpKind::Sigmoid, {x}); }
Tensor erf(const Tensor& x) { return dispatch1(OpKind::Erf, {x}); }
Tensor relu(const Tensor& x) { return dispatch1(OpKind::Relu, {x}); }
Tensor leaky_relu(const Tensor& x, double s) { return dispatch1(OpKind::LeakyRelu, {x}, {s}); }
Tensor elu(const Tensor& x, double alpha) { return dispatch1(OpKind::Elu, {x}, {alpha}); }
Tensor gelu(const Tensor& x, bool tanh_approx) {
  return dispatch1(OpKind::Gelu, {x}, {tanh_approx});
}
Tensor softplus(const Tensor& x, double beta, double threshold) {
  return dispatch1(OpKind::Softplus, {x}, {beta, threshold});
}
Tensor logsigmoid(const Tensor& x) { return neg(softplus(neg(x))); }
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  return dispatch1(OpKind::Clamp, {x},
                   {lo.value_or(0.0), hi.value_or(0.0), lo.has_value(), hi.has_value()});
}
Tensor logical_not(const Tensor& x) { return dispatch1(OpKind::LogicalNot, {x}); }
Tensor square(const Tensor& x) { return mul(x, x); }

}  // namespace nodeweave
