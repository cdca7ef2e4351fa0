#include <gtest/gtest.h>

#include "core_framework/autograd/engine.h"
#include "core_framework/engine/functional.h"

#include <cmath>

namespace nodeweave {
namespace {

TEST(Autograd, ChainRuleThroughBroadcastMul) {
  Tensor x = full({2, 3}, 2.0, DType::Float64);
  x.set_requires_grad(true);
  Tensor w = full({3}, 3.0, DType::Float64);
  w.set_requires_grad(true);
  Tensor y = sum(mul(exp(x), w));
  backward({y}, {}, false, false);
  ASSERT_TRUE(x.grad().defined());
  Tensor gx = x.grad();
  EXPECT_EQ(gx.shape(), (Shape{2, 3}));
  EXPECT_NEAR(gx.data<double>()[4], 3.0 * std::exp(2.0), 1e-12);
  EXPECT_EQ(w.grad().shape(), (Shape{3}));
  EXPECT_NEAR(w.grad().data<double>()[1], 2 * std::exp(2.0), 1e-12);
}

TEST(Autograd, BackwardTwiceWithoutRetainGraphThrows) {
  Tensor x = full({3}, 1.5, DType::Float64);
  x.set_requires_grad(true);
  Tensor y = sum(exp(x));
  backward({y}, {}, false, false);
  EXPECT_THROW(backward({y}, {}, false, false), std::runtime_error);
}

TEST(Autograd, InPlaceChangeOfSavedTensorIsDetected) {
  Tensor x = full({3}, 1.5, DType::Float64);
  x.set_requires_grad(true);
  Tensor e = exp(x);
  Tensor y = sum(e);
  Tensor z = sum(mul(e, e));
  dispatch_inplace(OpKind::Mul, e, {full({3}, 2.0, DType::Float64)});
  EXPECT_THROW(backward({z}, {}, false, false), std::runtime_error);
  (void)y;
}

// d(a/b)/db = -a/b^2 must stay finite in float32 where b^2 underflows (|b| < 1e-19): torch gives 0
// for a = 0, b = 1e-30, and -a/b^2 for ordinary values.
TEST(Autograd, DivisorGradientSurvivesTinyDivisorsInFloat32) {
  Tensor a = zeros({2}, DType::Float32);
  a.data<float>()[1] = 2.0f;
  a.set_requires_grad(true);
  Tensor b = full({2}, 4.0, DType::Float32);
  b.data<float>()[0] = 1e-30f;
  b.set_requires_grad(true);
  backward({sum(div(a, b))}, {}, false, false);
  EXPECT_EQ(b.grad().data<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(b.grad().data<float>()[1], -2.0f / 16.0f);
  EXPECT_FLOAT_EQ(a.grad().data<float>()[1], 0.25f);
}

}  // namespace
}  // namespace nodeweave
