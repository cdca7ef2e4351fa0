// Relation rows are shared between samplers on the same adjacency and weights, and only then: an
// in-place change of the weights, other weights or another adjacency give their own rows.
#include "sampling/relation_rows.h"

#include <gtest/gtest.h>

#include <vector>

#include "graph/relation_graph.h"

namespace nodeweave::sampling {
namespace {

using graph::IdArray;
using graph::RelationGraph;

TEST(RelationRows, SharedWhileAliveForTheSameArraysAndWeights) {
  const std::vector<int64_t> s = {0, 1, 2, 3, 1}, d = {1, 2, 3, 0, 0};
  auto g =
      RelationGraph::from_coo(4, 4, IdArray::from_host(s.data(), DType::Int64, 5, DType::Int64),
                              IdArray::from_host(d.data(), DType::Int64, 5, DType::Int64));
  std::vector<double> w = {1, 2, 3, 4, 5};
  const ArrayView none;
  auto plain = shared_relation_rows(g->in_csc(), 4, 4, none);
  EXPECT_EQ(shared_relation_rows(g->in_csc(), 4, 4, none), plain);
  EXPECT_EQ(plain->weighted, nullptr);
  ASSERT_NE(plain->packed, nullptr);
  EXPECT_FALSE(plain->packed->weighted());

  auto weighted = shared_relation_rows(g->in_csc(), 4, 4, host_float64_view(w));
  EXPECT_NE(weighted, plain);
  EXPECT_EQ(shared_relation_rows(g->in_csc(), 4, 4, host_float64_view(w)), weighted);
  ASSERT_NE(weighted->weighted, nullptr);
  EXPECT_TRUE(weighted->packed->weighted());
  EXPECT_TRUE(weighted->weighted->entry.empty()) << "the packed copy holds the alias entries";
  EXPECT_EQ(weighted->weighted->nonzero.size(), 4u);

  w[2] = 0;  // changed in place: same memory, new tables
  auto changed = shared_relation_rows(g->in_csc(), 4, 4, host_float64_view(w));
  EXPECT_NE(changed, weighted);

  auto other = shared_relation_rows(g->out_csr(), 4, 4, none);  // another adjacency
  EXPECT_NE(other, plain);
}

}  // namespace
}  // namespace nodeweave::sampling
