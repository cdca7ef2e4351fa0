// relabel_by_part: every part owns one contiguous id range per node type and per relation, ids
// keep their relative order inside a part, the maps are inverse permutations, an edge lies in its
// destination's part, and bad assignments raise ValueError.
#include "distributed/range_relabel.h"

#include <gtest/gtest.h>

#include <random>

#include "core_framework/runtime/error.h"

namespace nodeweave::distributed {
namespace {

using graph::IdArray;
using graph::RelationGraph;

graph::RelationGraphPtr rel(int64_t ns, int64_t nd, const std::vector<int64_t>& s,
                            const std::vector<int64_t>& d, DType idtype) {
  const int64_t e = static_cast<int64_t>(s.size());
  return RelationGraph::from_coo(ns, nd, IdArray::from_host(s.data(), DType::Int64, e, idtype),
                                 IdArray::from_host(d.data(), DType::Int64, e, idtype));
}

// Two node types (4 users, 3 items) and two relations, users -> items and items -> users.
TypedGraph two_types(DType idtype) {
  TypedGraph g;
  g.num_nodes = {4, 3};
  g.relations.push_back({rel(4, 3, {0, 1, 2, 3, 3}, {0, 1, 2, 0, 2}, idtype), 0, 1});
  g.relations.push_back({rel(3, 4, {0, 1, 2, 2}, {3, 2, 1, 0}, idtype), 1, 0});
  return g;
}

TEST(RangeRelabel, ContiguousRangesPerTypeAndPart) {
  for (DType idtype : {DType::Int32, DType::Int64}) {
    const TypedGraph g = two_types(idtype);
    // Homogeneous ids: users 0..3, items 4..6.
    const std::vector<int64_t> part = {1, 0, 1, 0, 0, 1, 1};
    const RangeRelabel r = relabel_by_part(g, part, 2);
    EXPECT_EQ(r.node_offsets[0], (std::vector<int64_t>{0, 2, 4}));  // users 1, 3 | 0, 2
    EXPECT_EQ(r.node_offsets[1], (std::vector<int64_t>{0, 1, 3}));  // item 0 | 1, 2
    EXPECT_EQ(r.orig_node[0], (std::vector<int64_t>{1, 3, 0, 2}));
    EXPECT_EQ(r.orig_node[1], (std::vector<int64_t>{0, 1, 2}));
    for (size_t t = 0; t < 2; ++t)
      for (size_t i = 0; i < r.orig_node[t].size(); ++i)
        EXPECT_EQ(r.new_node[t][static_cast<size_t>(r.orig_node[t][i])], static_cast<int64_t>(i));
    // users -> items: destinations 0, 1, 2, 0, 2 lie in parts 0, 1, 1, 0, 1.
    EXPECT_EQ(r.edge_offsets[0], (std::vector<int64_t>{0, 2, 5}));
    EXPECT_EQ(r.orig_edge[0], (std::vector<int64_t>{0, 3, 1, 2, 4}));
    // items -> users: destinations 3, 2, 1, 0 lie in parts 0, 1, 0, 1.
    EXPECT_EQ(r.edge_offsets[1], (std::vector<int64_t>{0, 2, 4}));
    EXPECT_EQ(r.orig_edge[1], (std::vector<int64_t>{0, 2, 1, 3}));
    for (size_t rr = 0; rr < 2; ++rr)
      for (size_t i = 0; i < r.orig_edge[rr].size(); ++i)
        EXPECT_EQ(r.new_edge[rr][static_cast<size_t>(r.orig_edge[rr][i])], static_cast<int64_t>(i));
  }
}

TEST(RangeRelabel, RandomAssignmentKeepsOrderInsideParts) {
  std::mt19937_64 rng(3);
  const int64_t n = 500, m = 3000, k = 7;
  std::vector<int64_t> s(m), d(m), part(n);
  for (auto& x : s) x = static_cast<int64_t>(rng() % n);
  for (auto& x : d) x = static_cast<int64_t>(rng() % n);
  for (auto& x : part) x = static_cast<int64_t>(rng() % k);
  TypedGraph g;
  g.num_nodes = {n};
  g.relations.push_back({rel(n, n, s, d, DType::Int64), 0, 0});
  const RangeRelabel r = relabel_by_part(g, part, k);
  for (int64_t p = 0; p < k; ++p) {
    for (int64_t i = r.node_offsets[0][p]; i < r.node_offsets[0][p + 1]; ++i) {
      EXPECT_EQ(part[r.orig_node[0][i]], p);
      if (i > r.node_offsets[0][p]) EXPECT_LT(r.orig_node[0][i - 1], r.orig_node[0][i]);
    }
    for (int64_t j = r.edge_offsets[0][p]; j < r.edge_offsets[0][p + 1]; ++j) {
      EXPECT_EQ(part[d[r.orig_edge[0][j]]], p);
      if (j > r.edge_offsets[0][p]) EXPECT_LT(r.orig_edge[0][j - 1], r.orig_edge[0][j]);
    }
  }
  EXPECT_EQ(r.node_offsets[0][k], n);
  EXPECT_EQ(r.edge_offsets[0][k], m);
}

TEST(RangeRelabel, BadAssignmentRaisesValueError) {
  const TypedGraph g = two_types(DType::Int64);
  EXPECT_THROW(relabel_by_part(g, {0, 0, 0}, 2), ValueError);                // too short
  EXPECT_THROW(relabel_by_part(g, {0, 0, 0, 0, 0, 0, 2}, 2), ValueError);    // part 2 of 2
  EXPECT_THROW(relabel_by_part(g, {0, 0, 0, 0, 0, 0, -1}, 2), ValueError);   // negative
  EXPECT_THROW(relabel_by_part(g, {0, 0, 0, 0, 0, 0, 0}, 0), ValueError);    // no parts
  TypedGraph wrong = g;
  wrong.relations[0].dst_type = 2;  // no such node type
  EXPECT_THROW(relabel_by_part(wrong, {0, 0, 0, 0, 0, 0, 0}, 1), ValueError);
  TypedGraph sizes = g;
  sizes.num_nodes = {3, 4};  // relation 0 is 4 x 3
  EXPECT_THROW(relabel_by_part(sizes, {0, 0, 0, 0, 0, 0, 0}, 1), ValueError);
}

}  // namespace
}  // namespace nodeweave::distributed
