// KeyedPermutation is a permutation of [0, n) for every n (including n = 1 and sizes just past a
// power of four, where cycle-walking is longest), a function of the key, and mixes well enough that
// positions land on every value about equally often across keys.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sparse/kge/keyed_permutation.h"

namespace nodeweave::kge {
namespace {

TEST(KeyedPermutation, IsAPermutationForEverySize) {
  for (uint64_t n : {1ull, 2ull, 3ull, 4ull, 5ull, 17ull, 64ull, 65ull, 1000ull, 4097ull, 100003ull}) {
    for (uint64_t key : {0ull, 1ull, 0xdeadbeefull}) {
      const KeyedPermutation p(n, key);
      std::vector<int> seen(n, 0);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t v = p(i);
        ASSERT_LT(v, n);
        ++seen[v];
      }
      for (uint64_t v = 0; v < n; ++v) ASSERT_EQ(seen[v], 1) << "n " << n << " value " << v;
    }
  }
}

TEST(KeyedPermutation, DependsOnlyOnTheKey) {
  const KeyedPermutation a(1000, 7), b(1000, 7), c(1000, 8);
  int same = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(a(i), b(i));
    same += a(i) == c(i);
  }
  EXPECT_LT(same, 20);  // another key, another order (about 1 fixed agreement expected)
}

TEST(KeyedPermutation, PositionsAreSpreadOverValues) {
  // Over many keys, the values at positions 0 and 1 of a permutation of n should take each of the
  // n (n - 1) ordered pairs equally often: chi-square against a bound at p ~ 0.001 (fixed keys).
  // n = 10 and 65 walk far (domains 16 and 256), 5 sits just past a power of four.
  for (uint64_t n : {5ull, 10ull, 65ull}) {
    const int cells = static_cast<int>(n * (n - 1));
    const int keys = 60 * cells;
    std::vector<int> count(static_cast<size_t>(cells), 0);
    for (int key = 0; key < keys; ++key) {
      const KeyedPermutation p(n, static_cast<uint64_t>(key) * 0x9e3779b97f4a7c15ull);
      ++count[static_cast<size_t>(p(0) * (n - 1) + (p(1) < p(0) ? p(1) : p(1) - 1))];
    }
    double chi2 = 0;
    for (int c : count) chi2 += (c - 60.0) * (c - 60.0) / 60.0;
    // Wilson-Hilferty: the 0.999 quantile of chi-square with k = cells - 1 degrees of freedom.
    const double k = cells - 1, z = 3.09;
    const double bound = k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
    EXPECT_LT(chi2, bound) << "n " << n;
  }
}

}  // namespace
}  // namespace nodeweave::kge
