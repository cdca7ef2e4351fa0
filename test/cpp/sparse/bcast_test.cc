// BcastInfo: output shapes, lengths and offset tables for NumPy-style feature broadcasting.
#include "sparse/bcast.h"

#include <gtest/gtest.h>

#include "core_framework/runtime/error.h"

namespace nodeweave::sparse {
namespace {

using Shape = std::vector<int64_t>;

TEST(Bcast, EqualShapesNeedNoTable) {
  const BcastInfo b = BcastInfo::compute(BinaryOp::Add, {2, 3}, {2, 3}, "t");
  EXPECT_FALSE(b.use_bcast);
  EXPECT_EQ(b.out_shape, (Shape{2, 3}));
  EXPECT_EQ(b.out_len, 6);
  EXPECT_EQ(b.lhs_len, 6);
  EXPECT_EQ(b.rhs_len, 6);
  EXPECT_EQ(b.reduce_size, 1);
  // A leading 1 adds a dim but no broadcasting.
  const BcastInfo c = BcastInfo::compute(BinaryOp::Mul, {3}, {1, 3}, "t");
  EXPECT_FALSE(c.use_bcast);
  EXPECT_EQ(c.out_shape, (Shape{1, 3}));
}

TEST(Bcast, DifferentRanksRightAlign) {
  const BcastInfo b = BcastInfo::compute(BinaryOp::Add, {2, 1, 3}, {4, 1}, "t");
  ASSERT_TRUE(b.use_bcast);
  EXPECT_EQ(b.out_shape, (Shape{2, 4, 3}));
  EXPECT_EQ(b.out_len, 24);
  ASSERT_EQ(b.lhs_offset.size(), 24u);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 3; ++k) {
        const int64_t o = (i * 4 + j) * 3 + k;
        EXPECT_EQ(b.lhs_offset[o], i * 3 + k);
        EXPECT_EQ(b.rhs_offset[o], j);
      }
}

TEST(Bcast, DotReducesLastDim) {
  const BcastInfo b = BcastInfo::compute(BinaryOp::Dot, {2, 1, 5}, {1, 3, 5}, "t");
  ASSERT_TRUE(b.use_bcast);
  EXPECT_EQ(b.out_shape, (Shape{2, 3, 1}));
  EXPECT_EQ(b.out_len, 6);
  EXPECT_EQ(b.reduce_size, 5);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_EQ(b.lhs_offset[i * 3 + j], i * 5);
      EXPECT_EQ(b.rhs_offset[i * 3 + j], j * 5);
    }
  const BcastInfo plain = BcastInfo::compute(BinaryOp::Dot, {4, 8}, {4, 8}, "t");
  EXPECT_FALSE(plain.use_bcast);
  EXPECT_EQ(plain.out_shape, (Shape{4, 1}));
  EXPECT_EQ(plain.reduce_size, 8);
  EXPECT_THROW(BcastInfo::compute(BinaryOp::Dot, {4, 8}, {4, 7}, "t"), ValueError);
  EXPECT_THROW(BcastInfo::compute(BinaryOp::Dot, {}, {}, "t"), ValueError);
}

TEST(Bcast, CopyUsesOneSide) {
  const BcastInfo l = BcastInfo::compute(BinaryOp::CopyLhs, {2, 3}, {}, "t");
  EXPECT_FALSE(l.use_bcast);
  EXPECT_EQ(l.out_shape, (Shape{2, 3}));
  EXPECT_EQ(l.out_len, 6);
  const BcastInfo r = BcastInfo::compute(BinaryOp::CopyRhs, {7, 7}, {4}, "t");
  EXPECT_EQ(r.out_shape, (Shape{4}));
  EXPECT_EQ(r.out_len, 4);
  EXPECT_EQ(r.rhs_len, 4);
}

TEST(Bcast, IncompatibleShapesThrowNamingTheOp) {
  try {
    BcastInfo::compute(BinaryOp::Add, {2, 3}, {4, 3}, "gspmm");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("gspmm"), std::string::npos) << e.what();
  }
}

TEST(Names, AllValuesHaveNames) {
  EXPECT_STREQ(binary_op_name(BinaryOp::CopyLhs), "copy_lhs");
  EXPECT_STREQ(binary_op_name(BinaryOp::Dot), "dot");
  EXPECT_STREQ(reduce_op_name(ReduceOp::Mean), "mean");
  EXPECT_STREQ(target_name(Target::E), "e");
}

}  // namespace
}  // namespace nodeweave::sparse
