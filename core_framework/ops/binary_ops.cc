// Binary elementwise ops with NumPy broadcasting and PyTorch type promotion, plus where().
#include <cmath>
#include <type_traits>

#include "core_framework/ops/convert.h"
#include "core_framework/ops/elementwise_loop.h"
#include "core_framework/ops/op_helpers.h"

namespace nodeweave {

namespace {

int category(DType d) { return d == DType::Bool ? 0 : (is_floating(d) ? 2 : 1); }

enum class BinKind { Arith, TrueDiv, Compare, Logical };

BinKind bin_kind(OpKind k) {
  switch (k) {
    case OpKind::Div:
      return BinKind::TrueDiv;
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
      return BinKind::Compare;
    case OpKind::LogicalAnd:
    case OpKind::LogicalOr:
    case OpKind::LogicalXor:
      return BinKind::Logical;
    default:
      return BinKind::Arith;
  }
}

// dtype the operands are converted to before the kernel runs.
DType compute_dtype(OpKind k, const Tensor& a, const Tensor& b) {
  DType d = result_type(a, b);
  if (bin_kind(k) == BinKind::TrueDiv && !is_floating(d)) d = DType::Float32;
  if ((k == OpKind::Sub || k == OpKind::Add || k == OpKind::Mul || k == OpKind::Pow) &&
      d == DType::Bool) {
    NW_CHECK(k != OpKind::Sub, TypeError,
             "sub: subtraction of bool tensors is not supported; use logical_xor");
  }
  return d;
}

template <OpKind K>
std::vector<TensorMeta> binary_infer(const TensorList& in, const Attrs&) {
  Shape s = broadcast_shapes(in[0].shape(), in[1].shape(), op_def(K).name);
  DType d = compute_dtype(K, in[0], in[1]);
  BinKind bk = bin_kind(K);
  DType out = (bk == BinKind::Compare || bk == BinKind::Logical) ? DType::Bool : d;
  Device dev = in[0].dim() == 0 && in[0].device().is_cpu() ? in[1].device() : in[0].device();
  return {TensorMeta{s, out, dev}};
}

template <typename T>
T pow_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::pow(a, b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || !b;
  } else {
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
    T r = 1;
    while (b) {
      if (b & 1) r *= a;
      a *= a;
      b >>= 1;
    }
    return r;
  }
}

template <OpKind K, typename T>
struct BinFn;
#define NW_BIN(K, expr)                              \
  template <typename T>                              \
  struct BinFn<OpKind::K, T> {                       \
    auto operator()(T a, T b) const { return expr; } \
  };
NW_BIN(Add, static_cast<T>(a + b))
NW_BIN(Sub, static_cast<T>(a - b))
NW_BIN(Mul, static_cast<T>(a* b))
NW_BIN(Div, static_cast<T>(a / b))
NW_BIN(Pow, pow_value<T>(a, b))
NW_BIN(Maximum, (a != a) ? a : ((b != b) ? b : (a > b ? a : b)))
NW_BIN(Minimum, (a != a) ? a : ((b != b) ? b : (a < b ? a : b)))
NW_BIN(Eq, a == b)
NW_BIN(Ne, a != b)
NW_BIN(Lt, a < b)
NW_BIN(Le, a <= b)
NW_BIN(Gt, a > b)
NW_BIN(Ge, a >= b)
NW_BIN(LogicalAnd, (a != 0) && (b != 0))
NW_BIN(LogicalOr, (a != 0) || (b != 0))
NW_BIN(LogicalXor, (a != 0) != (b != 0))
#undef NW_BIN


template <OpKind K>
void binary_cpu(const TensorList& in, const Attrs&, TensorList& out) {
  DType d = compute_dtype(K, in[0], in[1]);
  // Half types are stored, not computed: widen to float32 and narrow the result.
  DType cd = is_half(d) ? DType::Float32 : d;
  Tensor a = as_dtype(in[0], cd), b = as_dtype(in[1], cd);
  Tensor target = out[0];
  bool narrow = is_half(out[0].dtype());
  if (narrow) target = empty(out[0].shape(), DType::Float32, out[0].device());
  NW_DISPATCH_ALL(cd, op_def(K).name, {
    using R = decltype(BinFn<K, scalar_t>()(scalar_t(), scalar_t()));
    if constexpr (std::is_same_v<R, bool>) {
      elementwise_kernel<bool, scalar_t, scalar_t>(target, {a, b}, BinFn<K, scalar_t>());
    } else if constexpr (K == OpKind::Div && !std::is_floating_point_v<scalar_t>) {
      // never taken at run time: compute_dtype promotes true division of integers to float32
    } else {
      elementwise_kernel<scalar_t, scalar_t, scalar_t>(target, {a, b}, BinFn<K, scalar_t>());
    }
  });
  if (narrow) copy_(out[0], target);
}

// where(cond, a, b)
std::vector<TensorMeta> where_infer(const TensorList& in, const Attrs&) {
  NW_CHECK(in[0].dtype() == DType::Bool, TypeError, "where: condition must be a bool tensor, got ",
           dtype_name(in[0].dtype()));
  Shape s = broadcast_shapes(broadcast_shapes(in[0].shape(), in[1].shape(), "where"), in[2].shape(),
                             "where");
  return {TensorMeta{s, result_type(in[1], in[2]), in[1].device()}};
}
void where_cpu(const TensorList& in, const Attrs&, TensorList& out) {
  DType d = out[0].dtype();
  Tensor a = as_dtype(in[1], d), b = as_dtype(in[2], d);
  NW_DISPATCH_ANY(d, "where", {
    elementwise_kernel<scalar_t, bool, scalar_t, scalar_t>(
        out[0], {in[0], a, b}, [](bool c, scalar_t x, scalar_t y) { return c ? x : y; });
  });
}

// ---- gradient rules ----
#define G c.grad_outputs[0]
#define A c.inputs[0]
#define B c.inputs[1]
TensorList add_bw(const GradCtx& c) { return {G, G}; }
TensorList sub_bw(const GradCtx& c) { return {G, c.needs_input_grad[1] ? neg(G) : Tensor()}; }
TensorList mul_bw(const GradCtx& c) {
  return {c.needs_input_grad[0] ? mul(G, B) : Tensor(),
          c.needs_input_grad[1] ? mul(G, A) : Tensor()};
}
TensorList div_bw(const GradCtx& c) {
  Tensor ga = c.needs_input_grad[0] ? div(G, B) : Tensor();
  // d(a/b)/db = -(a/b)/b, divided twice: b*b underflows to 0 (and 0/0 is NaN) for |b| < 1e-19 in
  // float32, where each division alone stays finite.
  Tensor gb = c.needs_input_grad[1] ? neg(div(mul(G, div(A, B)), B)) : Tensor();
  return {ga, gb};
}
TensorList pow_bw(const GradCtx& c) {
  Tensor ga, gb;
  if (c.needs_input_grad[0]) {
    // b * a^(b-1); where b == 0 the term is 0 even at a == 0.
    Tensor bf = as_dtype(B, G.dtype());
    ga = mul(G, mul(bf, pow(A, sub(bf, scalar_tensor(1.0, bf.dtype(), Device{}, true)))));
  }
  if (c.needs_input_grad[1]) {
    Tensor y = pow(A, B);
    Tensor safe_log =
        log(where(gt(A, scalar_tensor(0, A.dtype(), Device{}, true)), A, ones_like(A)));
    gb = mul(G, mul(y, safe_log));
  }
  return {ga, gb};
}
// Ties split the gradient evenly, as PyTorch does.
TensorList minmax_bw(const GradCtx& c, bool is_max) {
  Tensor win = is_max ? gt(A, B) : lt(A, B);
  Tensor tie = eq(A, B);
  Tensor wa = add(cast(win, G.dtype()), mul(cast(tie, G.dtype()), 0.5));
  Tensor ga = c.needs_input_grad[0] ? mul(G, wa) : Tensor();
  Tensor gb = c.needs_input_grad[1] ? mul(G, add(neg(wa), 1.0)) : Tensor();
  return {ga, gb};
}
TensorList maximum_bw(const GradCtx& c) { return minmax_bw(c, true); }
TensorList minimum_bw(const GradCtx& c) { return minmax_bw(c, false); }
TensorList where_bw(const GradCtx& c) {
  const Tensor& cond = c.inputs[0];
  Tensor z = zeros({}, G.dtype(), G.device());
  return {Tensor(), c.needs_input_grad[1] ? where(cond, G, z) : Tensor(),
          c.needs_input_grad[2] ? where(cond, z, G) : Tensor()};
}
#undef G
#undef A
#undef B

Tensor binary(OpKind k, const Tensor& a, const Tensor& b) { return dispatch1(k, {a, b}); }

}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  bool wa = a.impl()->wrapped_number, wb = b.impl()->wrapped_number;
  if (wa != wb) {
    const Tensor& w = wa ? a : b;
    const Tensor& t = wa ? b : a;
    if (category(w.dtype()) > category(t.dtype())) {
      return category(w.dtype()) == 2 ? DType::Float32 : DType::Int64;
    }
    return t.dtype();
  }
  return promote_types(a.dtype(), b.dtype());
}

void register_binary_ops() {
  const uint32_t ew = kElementwise | kInPlaceCapable;
  const uint32_t ab = kSaveInput(0) | kSaveInput(1);
#define NW_REG(K, bw, saved) \
  define_op(OpKind::K, ew, binary_infer<OpKind::K>, binary_cpu<OpKind::K>, bw, saved)
  NW_REG(Add, add_bw, 0);
  NW_REG(Sub, sub_bw, 0);
  NW_REG(Mul, mul_bw, ab);
  NW_REG(Div, div_bw, ab);
  NW_REG(Pow, pow_bw, ab);
  NW_REG(Maximum, maximum_bw, ab);
  NW_REG(Minimum, minimum_bw, ab);
  NW_REG(Eq, nullptr, 0);
  NW_REG(Ne, nullptr, 0);
  NW_REG(Lt, nullptr, 0);
  NW_REG(Le, nullptr, 0);
  NW_REG(Gt, nullptr, 0);
  NW_REG(Ge, nullptr, 0);
  NW_REG(LogicalAnd, nullptr, 0);
  NW_REG(LogicalOr, nullptr, 0);
  NW_REG(LogicalXor, nullptr, 0);
#undef NW_REG
  define_op(OpKind::Where, kElementwise, where_infer, where_cpu, where_bw, kSaveInput(0), 0b110);
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(OpKind::Add, a, b); }
Tensor add_tensors(const Tensor& a, const Tensor& b) { return binary(OpKind::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(OpKind::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(OpKind::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(OpKind::Div, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return binary(OpKind::Pow, a, b); }
Tensor pow(const Tensor& a, double e) {
  return binary(OpKind::Pow, a, scalar_tensor(e, DType::Float64, Device{}, true));
}
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(OpKind::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(OpKind::Minimum, a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return binary(OpKind::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return binary(OpKind::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return binary(OpKind::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return binary(OpKind::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return binary(OpKind::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return binary(OpKind::Ge, a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return binary(OpKind::LogicalAnd, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return binary(OpKind::LogicalOr, a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return binary(OpKind::LogicalXor, a, b); }
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return dispatch1(OpKind::Where, {cond, a, b});
}
Tensor add(const Tensor& a, double b) {
  return binary(OpKind::Add, a, scalar_tensor(b, DType::Float64, Device{}, true));
}
Tensor mul(const Tensor& a, double b) {
  return binary(OpKind::Mul, a, scalar_tensor(b, DType::Float64, Device{}, true));
}

}  // namespace nodeweave
