// gather_mm / segment_mm and their weight gradients against naive triple loops in double, on both
// the per-row path (few rows per relation) and the grouped-GEMM path, with unsorted indices.
#include "sparse/gather_mm.h"

#include <gtest/gtest.h>

#include "sparse_test_util.h"

namespace nodeweave::sparse {
namespace {

using namespace test_util;

template <typename T, typename I>
void check_gather_mm(int64_t na, int64_t n_rows, int64_t num_rel, int64_t k, int64_t n,
                     bool with_idx_a, uint32_t seed) {
  SCOPED_TRACE(::testing::Message()
               << "T=" << dtype_name(DTypeOf<T>::value) << " I=" << dtype_name(DTypeOf<I>::value)
               << " N=" << n_rows << " R=" << num_rel << " k=" << k << " n=" << n
               << " idx_a=" << with_idx_a);
  std::mt19937 rng(seed);
  if (!with_idx_a) na = n_rows;
  auto a = random_values<T>(rng, na * k);
  auto b = random_values<T>(rng, num_rel * k * n);
  auto go = random_values<T>(rng, n_rows * n);
  std::vector<I> ia(n_rows), ib(n_rows);
  std::uniform_int_distribution<int64_t> pa(0, std::max<int64_t>(na - 1, 0)),
      pb(0, std::max<int64_t>(num_rel - 1, 0));
  for (int64_t i = 0; i < n_rows; ++i) {
    ia[i] = static_cast<I>(pa(rng));
    ib[i] = static_cast<I>(pb(rng));
  }
  std::vector<T> out(n_rows * n, T(7)), gb(num_rel * k * n, T(0));
  const ArrayView idx_a = with_idx_a ? view(ia, {n_rows}) : ArrayView{};
  gather_mm(view(a, {na, k}), view(b, {num_rel, k, n}), idx_a, view(ib, {n_rows}),
            view(out, {n_rows, n}));
  gather_mm_grad_b(view(a, {na, k}), view(go, {n_rows, n}), idx_a, view(ib, {n_rows}),
                   view(gb, {num_rel, k, n}));
  std::vector<double> gb_want(num_rel * k * n, 0.0);
  for (int64_t i = 0; i < n_rows; ++i) {
    const int64_t ar = with_idx_a ? int64_t(ia[i]) : i, r = ib[i];
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += double(a[ar * k + kk]) * b[(r * k + kk) * n + j];
      EXPECT_NEAR(out[i * n + j], s, 10 * tolerance<T>() * k) << "i=" << i << " j=" << j;
    }
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j)
        gb_want[(r * k + kk) * n + j] += double(a[ar * k + kk]) * go[i * n + j];
  }
  for (size_t i = 0; i < gb.size(); ++i)
    EXPECT_NEAR(gb[i], gb_want[i], 10 * tolerance<T>() * n_rows) << "grad_b[" << i << "]";
}

TEST(GatherMm, PerRowPath) {
  check_gather_mm<float, int32_t>(6, 10, 4, 5, 3, true, 1);
  check_gather_mm<double, int64_t>(6, 10, 4, 5, 3, false, 2);
  check_gather_mm<float, int64_t>(3, 7, 7, 1, 9, true, 3);
}

TEST(GatherMm, GroupedGemmPath) {
  check_gather_mm<float, int32_t>(50, 400, 3, 16, 8, true, 4);
  check_gather_mm<double, int64_t>(50, 400, 3, 16, 8, false, 5);
  check_gather_mm<double, int32_t>(20, 300, 2, 7, 33, true, 6);
  check_gather_mm<float, int64_t>(20, 300, 5, 9, 4, false, 7);
}

TEST(GatherMm, Degenerate) {
  check_gather_mm<float, int64_t>(4, 0, 3, 4, 4, true, 8);     // no rows
  check_gather_mm<float, int64_t>(4, 40, 1, 0, 4, true, 9);    // k = 0: zeros
  check_gather_mm<double, int32_t>(4, 40, 2, 3, 0, true, 10);  // n = 0
}

template <typename T>
void check_segment_mm(const std::vector<int64_t>& seglen, int64_t k, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t num_rel = static_cast<int64_t>(seglen.size());
  int64_t rows = 0;
  for (int64_t l : seglen) rows += l;
  auto a = random_values<T>(rng, rows * k);
  auto b = random_values<T>(rng, num_rel * k * n);
  auto go = random_values<T>(rng, rows * n);
  std::vector<T> out(rows * n, T(7)), gb(num_rel * k * n, T(7));
  segment_mm(view(a, {rows, k}), view(b, {num_rel, k, n}), view(seglen, {num_rel}),
             view(out, {rows, n}));
  segment_mm_grad_b(view(a, {rows, k}), view(go, {rows, n}), view(seglen, {num_rel}),
                    view(gb, {num_rel, k, n}));
  int64_t s = 0;
  for (int64_t r = 0; r < num_rel; ++r) {
    for (int64_t i = s; i < s + seglen[r]; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t kk = 0; kk < k; ++kk) want += double(a[i * k + kk]) * b[(r * k + kk) * n + j];
        EXPECT_NEAR(out[i * n + j], want, 10 * tolerance<T>() * k);
      }
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t i = s; i < s + seglen[r]; ++i) want += double(a[i * k + kk]) * go[i * n + j];
        EXPECT_NEAR(gb[(r * k + kk) * n + j], want, 10 * tolerance<T>() * (seglen[r] + 1));
      }
    s += seglen[r];
  }
}

TEST(SegmentMm, MatchesNaive) {
  check_segment_mm<float>({3, 0, 5, 1, 0}, 4, 6, 1);
  check_segment_mm<double>({10, 20, 0}, 8, 3, 2);
  check_segment_mm<float>({0, 0}, 3, 2, 3);
  check_segment_mm<double>({4, 2}, 0, 3, 4);
  check_segment_mm<float>({}, 3, 3, 5);
}

// Half inputs: the result is the float32 computation on the same (rounded) values, rounded once;
// both the per-row and the grouped-GEMM paths, forward and the weight gradient.
TEST(GatherMm, BFloat16IsFloat32RoundedOnce) {
  for (const int64_t n_rows : {12, 400}) {  // per-row path (few rows per relation), grouped GEMMs
    const int64_t na = 9, num_rel = 3, k = 5, n = 4;
    std::mt19937 rng(11);
    std::vector<float> a = random_values<float>(rng, na * k),
                       b = random_values<float>(rng, num_rel * k * n),
                       go = random_values<float>(rng, n_rows * n);
    std::vector<BFloat16> ah(a.size()), bh(b.size()), goh(go.size());
    // The float32 operands hold exactly the half values, so both runs see the same inputs.
    const auto to_half = [](std::vector<float>& f, std::vector<BFloat16>& h) {
      for (size_t i = 0; i < f.size(); ++i) {
        h[i].bits = float_to_bfloat16(f[i]);
        f[i] = bfloat16_to_float(h[i].bits);
      }
    };
    to_half(a, ah);
    to_half(b, bh);
    to_half(go, goh);
    std::vector<int64_t> ia(n_rows), ib(n_rows);
    for (int64_t i = 0; i < n_rows; ++i) {
      ia[i] = static_cast<int64_t>(rng() % na);
      ib[i] = static_cast<int64_t>(rng() % num_rel);
    }
    std::vector<float> out(n_rows * n), gb(num_rel * k * n, 0.f);
    std::vector<BFloat16> outh(n_rows * n), gbh(num_rel * k * n, BFloat16{0});
    gather_mm(view(a, {na, k}), view(b, {num_rel, k, n}), view(ia, {n_rows}), view(ib, {n_rows}),
              view(out, {n_rows, n}));
    gather_mm(view(ah, {na, k}), view(bh, {num_rel, k, n}), view(ia, {n_rows}), view(ib, {n_rows}),
              view(outh, {n_rows, n}));
    gather_mm_grad_b(view(a, {na, k}), view(go, {n_rows, n}), view(ia, {n_rows}),
                     view(ib, {n_rows}), view(gb, {num_rel, k, n}));
    gather_mm_grad_b(view(ah, {na, k}), view(goh, {n_rows, n}), view(ia, {n_rows}),
                     view(ib, {n_rows}), view(gbh, {num_rel, k, n}));
    for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(outh[i].bits, float_to_bfloat16(out[i])) << i;
    for (size_t i = 0; i < gb.size(); ++i) EXPECT_EQ(gbh[i].bits, float_to_bfloat16(gb[i])) << i;
  }
}

TEST(SegmentMm, BFloat16IsFloat32RoundedOnce) {
  const int64_t rows = 20, num_rel = 3, k = 4, n = 3;
  std::mt19937 rng(12);
  std::vector<float> a = random_values<float>(rng, rows * k),
                     b = random_values<float>(rng, num_rel * k * n);
  std::vector<BFloat16> ah(a.size()), bh(b.size());
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = bfloat16_to_float(ah[i].bits = float_to_bfloat16(a[i]));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = bfloat16_to_float(bh[i].bits = float_to_bfloat16(b[i]));
  const std::vector<int64_t> seglen = {7, 0, 13};
  std::vector<float> out(rows * n);
  std::vector<BFloat16> outh(rows * n);
  segment_mm(view(a, {rows, k}), view(b, {num_rel, k, n}), host_int64_view(seglen),
             view(out, {rows, n}));
  segment_mm(view(ah, {rows, k}), view(bh, {num_rel, k, n}), host_int64_view(seglen),
             view(outh, {rows, n}));
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(outh[i].bits, float_to_bfloat16(out[i])) << i;
}

}  // namespace
}  // namespace nodeweave::sparse
