#include "core_framework/runtime/dtype.h"

#include <gtest/gtest.h>

#include <cmath>

namespace nodeweave {
namespace {

TEST(DType, PromotionFollowsPyTorch) {
  EXPECT_EQ(promote_types(DType::Int32, DType::Float32), DType::Float32);
  EXPECT_EQ(promote_types(DType::Bool, DType::Int8), DType::Int8);
  EXPECT_EQ(promote_types(DType::UInt8, DType::Int8), DType::Int32);
  EXPECT_EQ(promote_types(DType::Float16, DType::BFloat16), DType::Float32);
  EXPECT_EQ(promote_types(DType::Int64, DType::Float16), DType::Float16);
  EXPECT_EQ(promote_types(DType::Float32, DType::Float64), DType::Float64);
}

TEST(DType, HalfRoundTripsEveryFiniteValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    uint16_t bits = static_cast<uint16_t>(h);
    float f = half_to_float(bits);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f))));
      continue;
    }
    EXPECT_EQ(float_to_half(f), bits) << "half bits " << h;
  }
}

TEST(DType, HalfRoundsToNearestEven) {
  EXPECT_EQ(half_to_float(float_to_half(1.0f + 1.0f / 4096)), 1.0f);  // below half an ulp
  EXPECT_EQ(half_to_float(float_to_half(65520.0f)), INFINITY);        // rounds up to inf
  EXPECT_EQ(half_to_float(float_to_half(1e-8f)), 0.0f);
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(1.0f)), 1.0f);
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(3.140625f)), 3.140625f);
}

}  // namespace
}  // namespace nodeweave
