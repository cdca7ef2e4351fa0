// FeatureCache: gathers are byte-identical to direct row copies before and after the cache is
// built; the cache holds the `capacity` most counted rows (ties: lower id; never an uncounted row);
// hits count exactly the gathered ids it holds; counting stops once built; bad sizes raise
// ValueError.
#include "sampling/feature_cache.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "core_framework/runtime/error.h"

namespace nodeweave::sampling {
namespace {

constexpr int64_t kRows = 10;
constexpr int64_t kRowBytes = 3 * sizeof(float);

std::vector<float> table() {
  std::vector<float> t(kRows * 3);
  std::iota(t.begin(), t.end(), 0.5f);
  return t;
}

std::vector<float> gather(FeatureCache& c, const std::vector<float>& data,
                          const std::vector<int64_t>& ids) {
  std::vector<float> out(ids.size() * 3, -1.f);
  c.gather(ids.data(), static_cast<int64_t>(ids.size()),
           reinterpret_cast<const uint8_t*>(data.data()), kRowBytes,
           reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

std::vector<float> direct(const std::vector<float>& data, const std::vector<int64_t>& ids) {
  std::vector<float> out;
  for (int64_t v : ids) out.insert(out.end(), data.begin() + v * 3, data.begin() + v * 3 + 3);
  return out;
}

TEST(FeatureCache, HoldsTheMostGatheredRowsAndNeverChangesAGather) {
  const std::vector<float> data = table();
  FeatureCache c(kRows, 3);
  // Counts: 7 x4, 2 x3, 5 x2, 1 x2, 9 x1; 0,3,4,6,8 never. Top 3 = {7, 2, 1} (1 beats 5 on the
  // tie).
  const std::vector<int64_t> epoch1 = {7, 2, 5, 7, 1, 2, 7, 9, 5, 1, 7, 2};
  EXPECT_EQ(gather(c, data, epoch1), direct(data, epoch1));
  EXPECT_EQ(c.size(), 0);
  EXPECT_EQ(c.hits(), 0);
  c.build(reinterpret_cast<const uint8_t*>(data.data()), kRowBytes);
  EXPECT_EQ(c.size(), 0);  // no whole epoch counted yet (a peek at a few batches must not build)
  c.epoch_counted();
  c.build(reinterpret_cast<const uint8_t*>(data.data()), kRowBytes);
  EXPECT_EQ(c.size(), 3);
  const std::vector<int64_t> epoch2 = {0, 1, 2, 3, 5, 7, 7, 9};
  EXPECT_EQ(gather(c, data, epoch2), direct(data, epoch2));
  EXPECT_EQ(c.hits(), 4);  // 1, 2, 7, 7
  EXPECT_EQ(c.lookups(), static_cast<int64_t>(epoch1.size() + epoch2.size()));
  // Built once: 5 gathered many more times, and a second build, still leave 5 out.
  for (int r = 0; r < 20; ++r) gather(c, data, {5});
  c.build(reinterpret_cast<const uint8_t*>(data.data()), kRowBytes);
  const int64_t before = c.hits();
  EXPECT_EQ(gather(c, data, {5}), direct(data, {5}));
  EXPECT_EQ(c.hits(), before);
  EXPECT_EQ(before, 4);
}

TEST(FeatureCache, HoldsOnlyCountedRowsAndNothingBeforeCounts) {
  const std::vector<float> data = table();
  FeatureCache c(kRows, 8);
  c.epoch_counted();
  c.build(reinterpret_cast<const uint8_t*>(data.data()), kRowBytes);  // nothing counted: empty
  EXPECT_EQ(c.size(), 0);
  EXPECT_EQ(gather(c, data, {4, 6}), direct(data, {4, 6}));
  c.build(reinterpret_cast<const uint8_t*>(data.data()), kRowBytes);
  EXPECT_EQ(c.size(), 2);  // capacity 8, but only 2 rows were ever gathered
  EXPECT_EQ(gather(c, data, {6, 4, 0}), direct(data, {6, 4, 0}));
  EXPECT_EQ(c.hits(), 2);
}

TEST(FeatureCache, BadSizesRaiseValueError) {
  EXPECT_THROW(FeatureCache(kRows, -1), ValueError);
  FeatureCache c(kRows, 2);
  const std::vector<float> data = table();
  gather(c, data, {1, 2});
  c.epoch_counted();
  c.build(reinterpret_cast<const uint8_t*>(data.data()), kRowBytes);
  std::vector<uint8_t> out(64);
  const int64_t id = 1;
  EXPECT_THROW(c.gather(&id, 1, reinterpret_cast<const uint8_t*>(data.data()), 2 * sizeof(float),
                        out.data()),
               ValueError);
  EXPECT_EQ(FeatureCache(kRows, 100).capacity(), kRows);  // capped at the table's rows
}

}  // namespace
}  // namespace nodeweave::sampling
