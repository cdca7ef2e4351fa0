// Segment reductions (sum/mean/max/min with arg) and the sum/mean backward against loops over the
// segments in double, with empty segments at the start, middle and end.
#include "sparse/segment.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sparse_test_util.h"

namespace nodeweave::sparse {
namespace {

using namespace test_util;

template <typename T, typename I>
void check_segment_reduce(ReduceOp reduce, const std::vector<int64_t>& offsets,
                          const std::vector<int64_t>& feat, uint32_t seed) {
  SCOPED_TRACE(::testing::Message()
               << "reduce=" << reduce_op_name(reduce) << " T=" << dtype_name(DTypeOf<T>::value)
               << " I=" << dtype_name(DTypeOf<I>::value));
  std::mt19937 rng(seed);
  const int64_t segs = static_cast<int64_t>(offsets.size()) - 1, n = offsets.back(), f = prod(feat);
  const std::vector<I> off(offsets.begin(), offsets.end());
  auto x = random_values<T>(rng, n * f);
  std::vector<T> out(segs * f, T(7));
  std::vector<int64_t> arg(segs * f, 99);
  const bool minmax = reduce == ReduceOp::Max || reduce == ReduceOp::Min;
  segment_reduce(reduce, view(x, with_rows(n, feat)), view(off, {segs + 1}),
                 view(out, with_rows(segs, feat)), minmax ? view(arg, {segs, f}) : ArrayView{});
  for (int64_t s = 0; s < segs; ++s)
    for (int64_t k = 0; k < f; ++k) {
      const int64_t b = offsets[s], e = offsets[s + 1];
      const double got = out[s * f + k];
      if (b == e) {
        EXPECT_EQ(got, 0.0);
        if (minmax) EXPECT_EQ(arg[s * f + k], -1);
        continue;
      }
      double want = minmax ? double(x[b * f + k]) : 0.0;
      for (int64_t j = b; j < e; ++j) {
        const double v = x[j * f + k];
        if (reduce == ReduceOp::Max)
          want = std::max(want, v);
        else if (reduce == ReduceOp::Min)
          want = std::min(want, v);
        else
          want += v;
      }
      if (reduce == ReduceOp::Mean) want /= double(e - b);
      EXPECT_NEAR(got, want, tolerance<T>()) << "s=" << s << " k=" << k;
      if (minmax) {
        const int64_t a = arg[s * f + k];
        ASSERT_GE(a, b);
        ASSERT_LT(a, e);
        EXPECT_EQ(double(x[a * f + k]), got);
      }
    }
}

const std::vector<int64_t> kOffsets = {0, 0, 2, 5, 5, 6, 10, 10};

TEST(SegmentReduce, AllReducesTypes) {
  uint32_t seed = 1;
  for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
    check_segment_reduce<float, int32_t>(r, kOffsets, {3}, seed++);
    check_segment_reduce<float, int64_t>(r, kOffsets, {2, 2}, seed++);
    check_segment_reduce<double, int32_t>(r, kOffsets, {1}, seed++);
    check_segment_reduce<double, int64_t>(r, kOffsets, {300}, seed++);
  }
}

TEST(SegmentReduce, Degenerate) {
  for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
    check_segment_reduce<float, int64_t>(r, {0}, {3}, 1);        // no segments
    check_segment_reduce<float, int64_t>(r, {0, 0, 0}, {3}, 2);  // only empty ones
    check_segment_reduce<double, int32_t>(r, kOffsets, {0}, 3);  // no features
  }
}

TEST(SegmentReduce, ManySegmentsInParallel) {
  std::mt19937 rng(41);
  std::vector<int64_t> off{0};
  std::uniform_int_distribution<int64_t> len(0, 6);
  for (int i = 0; i < 3000; ++i) off.push_back(off.back() + len(rng));
  for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Max})
    check_segment_reduce<float, int32_t>(r, off, {16}, 4);
}

template <typename T, typename I>
void check_backward(ReduceOp reduce) {
  std::mt19937 rng(42);
  const int64_t segs = 7, n = 10, f = 3;
  const std::vector<I> off(kOffsets.begin(), kOffsets.end());
  auto go = random_values<T>(rng, segs * f);
  std::vector<T> gx(n * f, T(7));
  segment_reduce_backward(reduce, view(go, {segs, f}), view(off, {segs + 1}), view(gx, {n, f}));
  for (int64_t s = 0; s < segs; ++s)
    for (int64_t j = kOffsets[s]; j < kOffsets[s + 1]; ++j)
      for (int64_t k = 0; k < f; ++k) {
        double want = go[s * f + k];
        if (reduce == ReduceOp::Mean) want /= double(kOffsets[s + 1] - kOffsets[s]);
        EXPECT_NEAR(gx[j * f + k], want, tolerance<T>());
      }
}

TEST(SegmentReduce, Backward) {
  check_backward<float, int32_t>(ReduceOp::Sum);
  check_backward<float, int64_t>(ReduceOp::Mean);
  check_backward<double, int32_t>(ReduceOp::Mean);
  check_backward<double, int64_t>(ReduceOp::Sum);
}

}  // namespace
}  // namespace nodeweave::sparse
