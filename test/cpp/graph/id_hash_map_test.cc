// IdHashMap against std::unordered_map on random id streams, through growth and reuse.
#include "graph/id_hash_map.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace nodeweave::graph {
namespace {

TEST(IdHashMap, MatchesUnorderedMapThroughGrowthAndReset) {
  std::mt19937_64 rng(3);
  IdHashMap map(4);
  for (int round = 0; round < 4; ++round) {
    std::unordered_map<int64_t, int64_t> ref;
    std::vector<int64_t> order;
    map.reset(round == 2 ? 1000 : 4);  // a reset that keeps the table and one that resizes it
    const int64_t range = round % 2 ? 50 : int64_t{1} << 40;
    for (int i = 0; i < 5000; ++i) {
      const int64_t id = static_cast<int64_t>(rng() % static_cast<uint64_t>(range));
      auto it = ref.find(id);
      const int64_t want = it == ref.end() ? static_cast<int64_t>(ref.size()) : it->second;
      if (it == ref.end()) {
        ref.emplace(id, want);
        order.push_back(id);
      }
      ASSERT_EQ(map.insert(id), want);
    }
    ASSERT_EQ(map.size(), static_cast<int64_t>(ref.size()));
    EXPECT_EQ(map.ids(), order);
    for (const auto& [id, local] : ref) EXPECT_EQ(map.find(id), local);
    EXPECT_EQ(map.find(range + 7), -1);
  }
}

TEST(IdHashMap, ResetForgetsEveryId) {
  IdHashMap map(8);
  for (int64_t id = 0; id < 3; ++id) map.insert(id * 1024);
  map.reset(8);
  EXPECT_EQ(map.size(), 0);
  for (int64_t id = 0; id < 3; ++id) EXPECT_EQ(map.find(id * 1024), -1);
  EXPECT_EQ(map.insert(1024), 0);
}

}  // namespace
}  // namespace nodeweave::graph
