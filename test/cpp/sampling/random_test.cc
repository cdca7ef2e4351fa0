// The counter-based sampler RNG: draws depend only on the key, uniform_int stays in range and is
// close to uniform (chi-square with a fixed seed), an alias draw's coin is uniform and independent
// of its position, derived keys differ per coordinate.
#include "sampling/random.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace nodeweave::sampling {
namespace {

TEST(CounterRng, SameKeySameStream) {
  CounterRng a(derive_key(1, 2)), b(derive_key(1, 2)), c(derive_key(1, 3));
  bool differs = false;
  for (int i = 0; i < 16; ++i) {
    const uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differs |= x != c.next_u64();
  }
  EXPECT_TRUE(differs);
}

TEST(CounterRng, UniformIntIsInRangeAndUniform) {
  CounterRng rng(12345);
  const int n = 7, draws = 70000;
  std::vector<int> count(n, 0);
  for (int i = 0; i < draws; ++i) {
    const uint64_t v = rng.uniform_int(n);
    ASSERT_LT(v, static_cast<uint64_t>(n));
    ++count[v];
  }
  double chi2 = 0;
  const double expect = static_cast<double>(draws) / n;
  for (int c : count) chi2 += (c - expect) * (c - expect) / expect;
  EXPECT_LT(chi2, 22.46);  // chi-square 6 dof at p = 0.001
}

TEST(CounterRng, UniformBounds) {
  CounterRng rng(9);
  for (int i = 0; i < 10000; ++i) {
    const double u = rng.uniform(), p = rng.uniform_pos();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    ASSERT_GT(p, 0.0);
    ASSERT_LE(p, 1.0);
  }
}

// One draw gives both halves of an alias pick: the position is uniform_int's for the same draw,
// and the coin is uniform and independent of it (chi-square over position x coin quartile).
TEST(CounterRng, AliasDrawPositionAndCoinAreUniformAndIndependent) {
  CounterRng a(77), b(77);
  const int n = 5, quarters = 4, draws = 200000;
  std::vector<int> count(n * quarters, 0);
  for (int i = 0; i < draws; ++i) {
    double coin = -1;
    const uint64_t pos = a.alias_draw(n, &coin);
    ASSERT_EQ(pos, b.uniform_int(n));
    ASSERT_GE(coin, 0.0);
    ASSERT_LT(coin, 1.0);
    ++count[static_cast<size_t>(pos) * quarters + static_cast<int>(coin * quarters)];
  }
  double chi2 = 0;
  const double expect = static_cast<double>(draws) / (n * quarters);
  for (int c : count) chi2 += (c - expect) * (c - expect) / expect;
  EXPECT_LT(chi2, 43.82);  // chi-square 19 dof at p = 0.001
}

TEST(DeriveKey, DistinctForNearbyCoordinates) {
  std::set<uint64_t> keys;
  for (uint64_t batch = 0; batch < 64; ++batch)
    for (uint64_t node = 0; node < 64; ++node) keys.insert(derive_key(derive_key(5, batch), node));
  EXPECT_EQ(keys.size(), 64u * 64u);
}

}  // namespace
}  // namespace nodeweave::sampling
