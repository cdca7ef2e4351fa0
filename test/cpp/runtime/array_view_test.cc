#include "core_framework/runtime/array_view.h"

#include <gtest/gtest.h>

namespace nodeweave {
namespace {

ArrayView view(std::vector<int64_t> shape, std::vector<int64_t> strides) {
  ArrayView v;
  v.shape = std::move(shape);
  v.strides = std::move(strides);
  return v;
}

TEST(ArrayView, ContiguityIgnoresSizeOneDims) {
  EXPECT_TRUE(view({2, 3}, {3, 1}).is_contiguous());
  EXPECT_TRUE(view({2, 1, 3}, {3, 99, 1}).is_contiguous());
  EXPECT_FALSE(view({2, 3}, {1, 2}).is_contiguous());
}

TEST(ArrayView, EmptyArraysAreContiguousWhateverTheirStrides) {
  // Zero-size slices may carry stride 0; kernels must accept them like Tensor::is_contiguous does.
  EXPECT_TRUE(view({0}, {0}).is_contiguous());
  EXPECT_TRUE(view({4, 0, 3}, {7, 0, 5}).is_contiguous());
}

}  // namespace
}  // namespace nodeweave
