// Element conversion between any two engine types; half types go through float.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core_framework/runtime/dtype.h"

namespace nodeweave {

template <typename T>
struct CanonicalT {
  using type = T;
};
template <>
struct CanonicalT<Half> {
  using type = float;
};
template <>
struct CanonicalT<BFloat16> {
  using type = float;
};

template <typename T>
inline typename CanonicalT<T>::type load_value(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return half_to_float(v.bits);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return bfloat16_to_float(v.bits);
  } else {
    return v;
  }
}

template <typename Dst, typename Src>
inline Dst convert_value(Src s) {
  auto v = load_value(s);
  if constexpr (std::is_same_v<Dst, Half>) {
    return Half{float_to_half(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<Dst, BFloat16>) {
    return BFloat16{float_to_bfloat16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<Dst, bool>) {
    return v != 0;
  } else {
    return static_cast<Dst>(v);
  }
}

}  // namespace nodeweave

// Like NW_DISPATCH_ALL but including the half types (for copies and casts).
#define NW_DISPATCH_ANY(DTYPE, OPNAME, ...)                     \
  switch (DTYPE) {                                              \
    NW_NON_HALF_CASES(__VA_ARGS__)                              \
    NW_DTYPE_CASE(Float16, ::nodeweave::Half, __VA_ARGS__)      \
    NW_DTYPE_CASE(BFloat16, ::nodeweave::BFloat16, __VA_ARGS__) \
  }
