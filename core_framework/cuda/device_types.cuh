// Element types as CUDA kernels see them: float16/bfloat16 become CUDA's __half/__nv_bfloat16,
// with conversions that match the CPU kernels' convert_value() (half types go through float).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "core_framework/runtime/dtype.h"

namespace nodeweave::cuda {

// The type arithmetic happens in: half types widen to float, everything else is itself.
template <typename T>
struct AccType {
  using type = T;
};
template <>
struct AccType<__half> {
  using type = float;
};
template <>
struct AccType<__nv_bfloat16> {
  using type = float;
};

template <typename T>
__host__ __device__ __forceinline__ typename AccType<T>::type load_acc(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return v;
  }
}

template <typename Dst, typename Src>
__host__ __device__ __forceinline__ Dst convert_to(Src s) {
  auto v = load_acc(s);
  if constexpr (std::is_same_v<Dst, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<Dst, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<Dst, bool>) {
    return v != 0;
  } else {
    return static_cast<Dst>(v);
  }
}

}  // namespace nodeweave::cuda

// Every engine dtype, with `scalar_t` bound to its device type (for copies, casts, fills, where).
// The other switches (NW_DISPATCH_ALL, _NUMERIC, _FLOAT) bind the same C++ types on host and
// device, so CUDA sources use the ones from dtype.h.
#define NW_CUDA_DISPATCH_ANY(DTYPE, ...)                \
  switch (DTYPE) {                                      \
    NW_NON_HALF_CASES(__VA_ARGS__)                      \
    NW_DTYPE_CASE(Float16, __half, __VA_ARGS__)         \
    NW_DTYPE_CASE(BFloat16, __nv_bfloat16, __VA_ARGS__) \
  }
