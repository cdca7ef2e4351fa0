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

}  // namespace
}  // namespace nodeweave::sparse
