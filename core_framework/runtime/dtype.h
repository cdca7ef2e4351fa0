// Element types of nodeweave tensors, their sizes and names, NumPy/PyTorch-style type promotion,
// and the storage-only half types (float16, bfloat16) with their conversions to and from float.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

namespace nodeweave {

// Order matters: promote_types() ranks types by this order inside each category.
enum class DType : uint8_t { Bool, UInt8, Int8, Int32, Int64, Float16, BFloat16, Float32, Float64 };
constexpr int kNumDTypes = 9;

size_t dtype_size(DType t);
const char* dtype_name(DType t);  // "float32", "int64", ...
bool dtype_from_name(const std::string& name, DType* out);
inline bool is_floating(DType t) { return t >= DType::Float16; }
// The storage-only half types, computed in float32.
inline bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
inline bool is_integral(DType t) { return t >= DType::UInt8 && t <= DType::Int64; }

// The type both operands are converted to before a binary op (PyTorch's rules, without int16:
// uint8 with int8 gives int32). Bool ranks below every integer type, integers below floats;
// float16 with bfloat16 gives float32.
DType promote_types(DType a, DType b);

// IEEE binary16 and bfloat16 as plain 16-bit storage. Arithmetic happens in float.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);  // round to nearest even
inline float bfloat16_to_float(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t float_to_bfloat16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // keep NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

// Compile-time mapping between C++ element types and DType.
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::UInt8;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::Int8;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::Int32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::Int64;
};
template <>
struct DTypeOf<Half> {
  static constexpr DType value = DType::Float16;
};
template <>
struct DTypeOf<BFloat16> {
  static constexpr DType value = DType::BFloat16;
};
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::Float32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::Float64;
};

}  // namespace nodeweave

// Type switches: run __VA_ARGS__ with `scalar_t` bound to the C++ type of DTYPE. Kept to a few
// explicit lists so each kernel instantiates only the types it supports.
#define NW_DTYPE_CASE(ENUM, TYPE, ...) \
  case ::nodeweave::DType::ENUM: {     \
    using scalar_t = TYPE;             \
    __VA_ARGS__;                       \
    break;                             \
  }

// Case lists the switches are built from, so each type's case is written once.
#define NW_FLOAT_CASES(...)                        \
  NW_DTYPE_CASE(Float32, float, __VA_ARGS__)       \
  NW_DTYPE_CASE(Float64, double, __VA_ARGS__)
#define NW_INTEGER_CASES(...)                      \
  NW_DTYPE_CASE(UInt8, uint8_t, __VA_ARGS__)       \
  NW_DTYPE_CASE(Int8, int8_t, __VA_ARGS__)         \
  NW_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)       \
  NW_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)
#define NW_NON_HALF_CASES(...)                     \
  NW_DTYPE_CASE(Bool, bool, __VA_ARGS__)           \
  NW_INTEGER_CASES(__VA_ARGS__)                    \
  NW_FLOAT_CASES(__VA_ARGS__)

#define NW_DISPATCH_FLOAT(DTYPE, OPNAME, ...)                                    \
  switch (DTYPE) {                                                               \
    NW_FLOAT_CASES(__VA_ARGS__)                                                  \
    default:                                                                     \
      ::nodeweave::throw_unsupported_dtype(OPNAME, DTYPE, "float32 or float64"); \
  }

#define NW_DISPATCH_NUMERIC(DTYPE, OPNAME, ...)                              \
  switch (DTYPE) {                                                           \
    NW_INTEGER_CASES(__VA_ARGS__)                                            \
    NW_FLOAT_CASES(__VA_ARGS__)                                              \
    default:                                                                 \
      ::nodeweave::throw_unsupported_dtype(OPNAME, DTYPE, "a numeric type"); \
  }

#define NW_DISPATCH_ALL(DTYPE, OPNAME, ...)                                   \
  switch (DTYPE) {                                                            \
    NW_NON_HALF_CASES(__VA_ARGS__)                                            \
    default:                                                                  \
      ::nodeweave::throw_unsupported_dtype(OPNAME, DTYPE, "a non-half type"); \
  }

#define NW_DISPATCH_INDEX(DTYPE, OPNAME, ...)                                        \
  switch (DTYPE) {                                                                   \
    NW_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)                                       \
    NW_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)                                       \
    default:                                                                         \
      ::nodeweave::throw_unsupported_dtype(OPNAME, DTYPE, "int32 or int64 indices"); \
  }

namespace nodeweave {
[[noreturn]] void throw_unsupported_dtype(const char* op, DType got, const char* expected);
}
