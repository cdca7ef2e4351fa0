// CUDA kernels for the binary elementwise ops (NumPy broadcasting, PyTorch type promotion) and
// where(). Operands are converted to the compute dtype first, as on the CPU; half types compute in
// float32 and narrow on the way out.
#include <type_traits>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/cuda/elementwise.cuh"
#include "core_framework/cuda/kernels.h"
#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"

namespace nodeweave::cuda {

namespace {

__device__ __forceinline__ float dpow(float a, float b) { return ::powf(a, b); }
__device__ __forceinline__ double dpow(double a, double b) { return ::pow(a, b); }

template <typename T>
__device__ T pow_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return dpow(a, b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || !b;
  } else {
    if constexpr (std::is_signed_v<T>) {
      // Negative integer exponents: only 1 and -1 have non-zero integer results.
      if (b < 0) return a == 1 ? T(1) : (a == T(-1) ? ((b & 1) ? T(-1) : T(1)) : T(0));
    }
    T r = 1;
    while (b) {
      if (b & 1) r = static_cast<T>(r * a);
      a = static_cast<T>(a * a);
      b = static_cast<T>(b >> 1);
    }
    return r;
  }
}

constexpr bool returns_bool(OpKind k) {
  return k == OpKind::Eq || k == OpKind::Ne || k == OpKind::Lt || k == OpKind::Le ||
         k == OpKind::Gt || k == OpKind::Ge || k == OpKind::LogicalAnd || k == OpKind::LogicalOr ||
         k == OpKind::LogicalXor;
}

template <OpKind K>
struct BinaryOp {
  template <typename T>
  __device__ auto operator()(T a, T b) const {
    if constexpr (K == OpKind::Add)
      return static_cast<T>(a + b);
    else if constexpr (K == OpKind::Sub)
      return static_cast<T>(a - b);
    else if constexpr (K == OpKind::Mul)
      return static_cast<T>(a * b);
    else if constexpr (K == OpKind::Div)
      return static_cast<T>(a / b);
    else if constexpr (K == OpKind::Pow)
      return pow_value<T>(a, b);
    // NaN wins in maximum/minimum, as in PyTorch.
    else if constexpr (K == OpKind::Maximum)
      return (a != a) ? a : ((b != b) ? b : (a > b ? a : b));
    else if constexpr (K == OpKind::Minimum)
      return (a != a) ? a : ((b != b) ? b : (a < b ? a : b));
    else if constexpr (K == OpKind::Eq)
      return a == b;
    else if constexpr (K == OpKind::Ne)
      return a != b;
    else if constexpr (K == OpKind::Lt)
      return a < b;
    else if constexpr (K == OpKind::Le)
      return a <= b;
    else if constexpr (K == OpKind::Gt)
      return a > b;
    else if constexpr (K == OpKind::Ge)
      return a >= b;
    else if constexpr (K == OpKind::LogicalAnd)
      return (a != 0) && (b != 0);
    else if constexpr (K == OpKind::LogicalOr)
      return (a != 0) || (b != 0);
    else
      return (a != 0) != (b != 0);  // LogicalXor
  }
};

template <OpKind K>
void binary_cuda(const TensorList& in, const Attrs&, TensorList& out) {
  NoGradGuard no_grad;
  const Device dev = out[0].device();
  // The CPU kernel's compute dtype: the promoted type, and float32 for true division of integers.
  DType d = result_type(in[0], in[1]);
  if (K == OpKind::Div && !is_floating(d)) d = DType::Float32;
  const DType cd = is_half(d) ? DType::Float32 : d;
  Tensor a = on_device(in[0].dtype() == cd ? in[0] : cast(in[0], cd), dev);
  Tensor b = on_device(in[1].dtype() == cd ? in[1] : cast(in[1], cd), dev);
  const bool narrow = is_half(out[0].dtype());
  Tensor target = narrow ? empty(out[0].shape(), DType::Float32, dev) : out[0];
  NW_DISPATCH_ALL(cd, op_def(K).name, {
    if constexpr (returns_bool(K)) {
      launch_elementwise<bool, scalar_t, scalar_t>(target, {a, b}, BinaryOp<K>{});
    } else if constexpr (K == OpKind::Div && !std::is_floating_point_v<scalar_t>) {
      throw std::logic_error("integer division reached the CUDA kernel");
    } else {
      launch_elementwise<scalar_t, scalar_t, scalar_t>(target, {a, b}, BinaryOp<K>{});
    }
  });
  if (narrow) {
    Tensor o = out[0];
    copy_(o, target);
  }
}

struct WhereOp {
  template <typename T>
  __device__ T operator()(bool c, T x, T y) const {
    return c ? x : y;
  }
};

void where_cuda(const TensorList& in, const Attrs&, TensorList& out) {
  NoGradGuard no_grad;
  const Device dev = out[0].device();
  const DType d = out[0].dtype();
  Tensor cond = on_device(in[0], dev);
  Tensor a = on_device(in[1].dtype() == d ? in[1] : cast(in[1], d), dev);
  Tensor b = on_device(in[2].dtype() == d ? in[2] : cast(in[2], d), dev);
  NW_CUDA_DISPATCH_ANY(d, {
    launch_elementwise<scalar_t, bool, scalar_t, scalar_t>(out[0], {cond, a, b}, WhereOp{});
  });
}

}  // namespace

void register_binary_kernels() {
#define NW_REG(K) mutable_op_def(OpKind::K).kernels[1] = binary_cuda<OpKind::K>
  NW_REG(Add);
  NW_REG(Sub);
  NW_REG(Mul);
  NW_REG(Div);
  NW_REG(Pow);
  NW_REG(Maximum);
  NW_REG(Minimum);
  NW_REG(Eq);
  NW_REG(Ne);
  NW_REG(Lt);
  NW_REG(Le);
  NW_REG(Gt);
  NW_REG(Ge);
  NW_REG(LogicalAnd);
  NW_REG(LogicalOr);
  NW_REG(LogicalXor);
#undef NW_REG
  mutable_op_def(OpKind::Where).kernels[1] = where_cuda;
}

}  // namespace nodeweave::cuda
