// Block compaction: destinations come first among each type's sources, every edge maps back to
// its global endpoints, sources follow in first-appearance order, and bad input raises.
#include "graph/to_block.h"

#include <gtest/gtest.h>

#include "core_framework/runtime/error.h"

namespace nodeweave::graph {
namespace {

TEST(CompactBlock, DestinationsFirstAndEdgesMapBack) {
  // Two node types; relation 0: type 0 -> type 1, relation 1: type 1 -> type 1.
  const std::vector<std::vector<int64_t>> dst = {{}, {40, 7}};
  const std::vector<int64_t> s0 = {5, 9, 5}, d0 = {7, 7, 40};
  const std::vector<int64_t> s1 = {7, 13, 40}, d1 = {40, 40, 7};
  std::vector<BlockEdgesIn> rels(2);
  rels[0] = {0, 1, s0.data(), d0.data(), 3};
  rels[1] = {1, 1, s1.data(), d1.data(), 3};
  BlockCompaction c = compact_block(dst, rels, false);
  EXPECT_EQ(c.src_nodes[0], (std::vector<int64_t>{5, 9}));
  EXPECT_EQ(c.src_nodes[1], (std::vector<int64_t>{40, 7, 13}));
  const std::vector<const std::vector<int64_t>*> srcs = {&s0, &s1}, dsts = {&d0, &d1};
  for (int r = 0; r < 2; ++r) {
    for (int e = 0; e < 3; ++e) {
      const int st = rels[r].src_type, dt = rels[r].dst_type;
      EXPECT_EQ(c.src_nodes[st][c.src_local[r][e]], (*srcs[r])[e]);
      EXPECT_EQ(dst[dt][c.dst_local[r][e]], (*dsts[r])[e]);
    }
  }
  BlockCompaction no_dst = compact_block(dst, rels, false, /*include_dst_in_src=*/false);
  EXPECT_EQ(no_dst.src_nodes[1], (std::vector<int64_t>{7, 13, 40}));
}

TEST(CompactBlock, BadInput) {
  const std::vector<int64_t> s = {1}, d = {3};
  std::vector<BlockEdgesIn> rels = {{0, 0, s.data(), d.data(), 1}};
  EXPECT_THROW(compact_block({{2}}, rels, false), ValueError);     // 3 is not a destination
  EXPECT_THROW(compact_block({{3, 3}}, rels, false), ValueError);  // repeated destination
  EXPECT_THROW(compact_block({{3, 3}}, rels, true), ValueError);
}

TEST(BlockRelation, InEdgeCscWithoutSort) {
  auto g = block_relation(4, 2, {0, 3, 2, 1}, {0, 0, 1, 1}, DType::Int32);
  EXPECT_EQ(g->num_src(), 4);
  EXPECT_EQ(g->num_dst(), 2);
  const auto& csc = g->in_csc();
  EXPECT_EQ(csc.indptr.data<int32_t>()[1], 2);
  EXPECT_EQ(csc.indices.data<int32_t>()[1], 3);
  EXPECT_EQ(g->coo().src.data<int32_t>()[2], 2);
  EXPECT_EQ(g->coo().dst.data<int32_t>()[2], 1);
  EXPECT_THROW(block_relation(4, 2, {0, 1}, {1, 0}, DType::Int64), ValueError);
}

}  // namespace
}  // namespace nodeweave::graph
