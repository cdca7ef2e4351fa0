// Compaction of relations sharing node types against a brute-force std::set renumbering: preserved
// nodes first in the given order (repeats ignored), then every other endpoint in increasing id, the
// edges relabelled in their order; both the dense numbering (many endpoints) and the hashed one
// (few endpoints on many nodes), both id types, 1 and 2 threads alike, typed errors naming the
// argument.
#include "graph/compact.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::graph {
namespace {

struct Rel {
  int st, dt;
  std::vector<int64_t> src, dst;
};

std::vector<int64_t> vec(const IdArray& a) {
  std::vector<int64_t> v(static_cast<size_t>(a.length));
  for (int64_t i = 0; i < a.length; ++i)
    v[i] = a.dtype == DType::Int32 ? a.data<int32_t>()[i] : a.data<int64_t>()[i];
  return v;
}

IdArray arr(const std::vector<int64_t>& v, DType dt) {
  return IdArray::from_host(v.data(), DType::Int64, static_cast<int64_t>(v.size()), dt);
}

std::vector<Rel> random_rels(const std::vector<int64_t>& n, int64_t edges_per_rel, uint64_t seed) {
  std::mt19937_64 rng(seed);
  // user->user, user->item, item->user: type 0 appears on both sides of several relations.
  std::vector<Rel> rels = {{0, 0, {}, {}}, {0, 1, {}, {}}, {1, 0, {}, {}}};
  for (Rel& r : rels) {
    for (int64_t i = 0; i < edges_per_rel; ++i) {
      // Endpoints from the upper half only, so that many nodes are unused.
      r.src.push_back(n[r.st] / 2 + static_cast<int64_t>(rng() % (n[r.st] - n[r.st] / 2)));
      r.dst.push_back(n[r.dt] / 2 + static_cast<int64_t>(rng() % (n[r.dt] - n[r.dt] / 2)));
    }
  }
  return rels;
}

void check(const std::vector<int64_t>& n, const std::vector<Rel>& rels,
           const std::vector<std::vector<int64_t>>& preserve, DType dt) {
  std::vector<TypedEdges> in;
  for (const Rel& r : rels) in.push_back({r.st, r.dt, CooArrays{arr(r.src, dt), arr(r.dst, dt)}});
  const CompactedEdges c = compact_edges(n, in, preserve, dt);
  // Brute force per type.
  std::vector<std::map<int64_t, int64_t>> new_id(n.size());
  for (size_t t = 0; t < n.size(); ++t) {
    std::vector<int64_t> want;
    std::set<int64_t> seen;
    if (!preserve.empty())
      for (int64_t id : preserve[t])
        if (seen.insert(id).second) want.push_back(id);
    std::set<int64_t> used;
    for (const Rel& r : rels) {
      if (r.st == static_cast<int>(t)) used.insert(r.src.begin(), r.src.end());
      if (r.dt == static_cast<int>(t)) used.insert(r.dst.begin(), r.dst.end());
    }
    for (int64_t id : used)
      if (!seen.count(id)) want.push_back(id);
    EXPECT_EQ(c.node_ids[t], want) << "type " << t;
    for (size_t i = 0; i < want.size(); ++i) new_id[t][want[i]] = static_cast<int64_t>(i);
  }
  for (size_t r = 0; r < rels.size(); ++r) {
    std::vector<int64_t> ws, wd;
    for (size_t e = 0; e < rels[r].src.size(); ++e) {
      ws.push_back(new_id[rels[r].st][rels[r].src[e]]);
      wd.push_back(new_id[rels[r].dt][rels[r].dst[e]]);
    }
    EXPECT_EQ(vec(c.edges[r].src), ws);
    EXPECT_EQ(vec(c.edges[r].dst), wd);
    EXPECT_EQ(c.edges[r].src.dtype, dt);
  }
}

TEST(CompactEdges, DenseAndHashedNumberingsMatchBruteForce) {
  for (DType dt : {DType::Int32, DType::Int64}) {
    // Dense: 3 x 2000 endpoints on 500 / 300 nodes. Hashed: 3 x 40 on 100000 / 50000 nodes.
    for (auto [n, m] : {std::make_pair(std::vector<int64_t>{500, 300}, int64_t{2000}),
                        std::make_pair(std::vector<int64_t>{100000, 50000}, int64_t{40})}) {
      const std::vector<Rel> rels = random_rels(n, m, 1);
      check(n, rels, {}, dt);
      // Preserved: unused low ids, a used id, a repeat; an empty list for the other type.
      check(n, rels, {{3, rels[0].src[0], 0, 3}, {}}, dt);
      check(n, rels, {{}, {n[1] - 1, 1}}, dt);
    }
  }
}

TEST(CompactEdges, TypesWithoutEdgesAndNoRelations) {
  const CompactedEdges c = compact_edges({4, 6}, {}, {{}, {5, 2}}, DType::Int64);
  EXPECT_EQ(c.node_ids[0], std::vector<int64_t>{});
  EXPECT_EQ(c.node_ids[1], (std::vector<int64_t>{5, 2}));
}

TEST(CompactRelations, GraphsKeepEdgeOrderAndThreadCountDoesNotMatter) {
  const std::vector<int64_t> n = {200000, 1000};
  const std::vector<Rel> rels = random_rels(n, 150000, 2);  // several counting blocks
  std::vector<TypedRelation> in;
  for (const Rel& r : rels) {
    in.push_back({r.st, r.dt,
                  RelationGraph::from_coo(n[r.st], n[r.dt], arr(r.src, DType::Int64),
                                          arr(r.dst, DType::Int64))});
  }
  const int before = get_num_threads();
  set_num_threads(1);
  const CompactedRelations one = compact_relations(n, in, {{7, 9}, {}}, DType::Int64);
  set_num_threads(2);
  const CompactedRelations two = compact_relations(n, in, {{7, 9}, {}}, DType::Int64);
  set_num_threads(before);
  EXPECT_EQ(one.node_ids, two.node_ids);
  for (size_t r = 0; r < rels.size(); ++r) {
    EXPECT_EQ(vec(one.graphs[r]->coo().src), vec(two.graphs[r]->coo().src));
    EXPECT_EQ(one.graphs[r]->num_src(), static_cast<int64_t>(one.node_ids[rels[r].st].size()));
    // Mapping back through node_ids gives the original edges, in order.
    const auto s = vec(one.graphs[r]->coo().src), d = vec(one.graphs[r]->coo().dst);
    for (size_t e = 0; e < s.size(); e += 997) {
      EXPECT_EQ(one.node_ids[rels[r].st][s[e]], rels[r].src[e]);
      EXPECT_EQ(one.node_ids[rels[r].dt][d[e]], rels[r].dst[e]);
    }
  }
  EXPECT_EQ(one.node_ids[0][0], 7);
  EXPECT_EQ(one.node_ids[0][1], 9);
}

template <typename E>
void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    FAIL() << "expected an exception mentioning " << needle;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(CompactEdges, BadInputsRaiseNamedErrors) {
  const DType dt = DType::Int64;
  auto edges = [&](std::vector<int64_t> s, std::vector<int64_t> d, DType t = DType::Int64) {
    return CooArrays{arr(s, t), arr(d, t)};
  };
  expect_error<ValueError>(
      [&] {
        compact_edges({3}, {{0, 1, edges({0}, {0})}}, {}, dt);
      },
      "relations[0] names node type 1");
  expect_error<IndexError>(
      [&] {
        compact_edges({3, 100}, {{0, 1, edges({0, 1}, {5, 100})}}, {}, dt);
      },
      "relations[0].dst[1] = 100 is out of range");
  expect_error<IndexError>(
      [&] {
        compact_edges({3}, {{0, 0, edges({0}, {1})}}, {{1, 3}}, dt);
      },
      "always_preserve[0][1] = 3");
  expect_error<ValueError>([&] { compact_edges({3}, {}, {{}, {}}, dt); }, "one list per node type");
  expect_error<TypeError>(
      [&] {
        compact_edges({3}, {{0, 0, edges({0}, {1}, DType::Int32)}}, {}, dt);
      },
      "int32");
  expect_error<ValueError>(
      [&] {
        compact_edges({3}, {{0, 0, edges({0, 1}, {1})}}, {}, dt);
      },
      "src has 2 ids but dst has 1");
  const auto g = RelationGraph::from_coo(3, 3, arr({0}, dt), arr({1}, dt));
  expect_error<ValueError>(
      [&] {
        compact_relations({3, 4}, {{0, 1, g}}, {}, dt);
      },
      "relations[0] has 3 source and 3 destination nodes");
}

}  // namespace
}  // namespace nodeweave::graph
