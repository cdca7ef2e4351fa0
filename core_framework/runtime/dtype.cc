#include "core_framework/runtime/dtype.h"

#include "core_framework/runtime/error.h"

namespace nodeweave {

namespace {
struct DTypeInfo {
  const char* name;
  size_t size;
};
constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"bool", 1},    {"uint8", 1},    {"int8", 1},    {"int32", 4},   {"int64", 8},
    {"float16", 2}, {"bfloat16", 2}, {"float32", 4}, {"float64", 8},
};
}  // namespace

size_t dtype_size(DType t) { return kInfo[static_cast<int>(t)].size; }
const char* dtype_name(DType t) { return kInfo[static_cast<int>(t)].name; }

bool dtype_from_name(const std::string& name, DType* out) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == kInfo[i].name) {
      *out = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_floating(a) || is_floating(b)) {
    if (!is_floating(a)) return b;
    if (!is_floating(b)) return a;
    // float16 and bfloat16 have no common 16-bit type.
    if ((a == DType::Float16 && b == DType::BFloat16) ||
        (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float32;
    return a > b ? a : b;
  }
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  // uint8 with int8 needs a signed type that holds 0..255: int16 in PyTorch, int32 here.
  if ((a == DType::UInt8 && b == DType::Int8) || (a == DType::Int8 && b == DType::UInt8))
    return DType::Int32;
  return a > b ? a : b;
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  }
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (absx < 0x38800000u) {  // result is subnormal or zero
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    uint32_t e = absx >> 23;
    uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e;  // 14 - (e - 127) + 13 - 1... in [14, 24]
    uint32_t half_m = m >> (shift);
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_m & 1u))) ++half_m;
    return static_cast<uint16_t>(sign | half_m);
  }
  uint32_t e = (absx >> 23) - 127 + 15;
  uint32_t m = absx & 0x7fffffu;
  uint32_t h = (e << 10) | (m >> 13);
  uint32_t rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // carries into the exponent correctly
  return static_cast<uint16_t>(sign | h);
}

void throw_unsupported_dtype(const char* op, DType got, const char* expected) {
  throw TypeError(
      str_cat(op, ": unsupported dtype ", dtype_name(got), " (expected ", expected, ")"));
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

}  // namespace nodeweave
