// METIS partitioning: the symmetric adjacency METIS reads (both directions, no self-loops, no
// repeats; also of several relations placed in one id space), the objective value METIS reports
// (edge cut or communication volume) recomputed from the parts, parts covering every node once with ids in [0, k), sizes within METIS' imbalance
// tolerance, an edge cut far below a random assignment's on a planted-partition graph, node-weight
// constraints balanced, the same parts at 1 and 2 threads, and typed errors for bad input.
#include "sampling/metis_partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::sampling {
namespace {

using graph::IdArray;
using graph::RelationGraph;
using graph::RelationGraphPtr;

RelationGraphPtr from_edges(int64_t n, const std::vector<int64_t>& s, const std::vector<int64_t>& d,
                            DType idtype = DType::Int64) {
  const int64_t e = static_cast<int64_t>(s.size());
  return RelationGraph::from_coo(n, n, IdArray::from_host(s.data(), DType::Int64, e, idtype),
                                 IdArray::from_host(d.data(), DType::Int64, e, idtype));
}

// `blocks` communities of `size` nodes; each undirected pair joined with probability p_in inside a
// community and p_out across, stored once (METIS must symmetrize it).
RelationGraphPtr planted_partition(int64_t blocks, int64_t size, double p_in, double p_out,
                                   uint64_t seed, DType idtype = DType::Int64) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const int64_t n = blocks * size;
  std::vector<int64_t> s, d;
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = a + 1; b < n; ++b)
      if (u(rng) < (a / size == b / size ? p_in : p_out)) {
        s.push_back(a);
        d.push_back(b);
      }
  return from_edges(n, s, d, idtype);
}

int64_t edge_cut(const RelationGraph& g, const std::vector<int64_t>& part) {
  const SymmetricAdjacency adj = symmetric_adjacency(g);
  int64_t cut = 0;
  for (int64_t v = 0; v + 1 < static_cast<int64_t>(adj.indptr.size()); ++v)
    for (int64_t j = adj.indptr[v]; j < adj.indptr[v + 1]; ++j)
      cut += part[v] != part[adj.indices[j]];
  return cut / 2;
}

TEST(SymmetricAdjacency, BothDirectionsWithoutSelfLoopsOrRepeats) {
  // 0->1 twice, 1->0, 2->2 (self-loop), 3->1, node 4 isolated.
  auto g = from_edges(5, {0, 0, 1, 2, 3}, {1, 1, 0, 2, 1});
  const SymmetricAdjacency a = symmetric_adjacency(*g);
  EXPECT_EQ(a.indptr, (std::vector<int64_t>{0, 1, 3, 3, 4, 4}));
  EXPECT_EQ(a.indices, (std::vector<int64_t>{1, 0, 3, 1}));
}

TEST(SymmetricAdjacency, RelationsPlacedAtOffsets) {
  // Types: a (nodes 0, 1) and b (nodes 2, 3, 4). a -> b: 0->0, 1->2; b -> a: 2->0; b -> b: 1->1.
  auto ab = RelationGraph::from_coo(
      2, 3, IdArray::from_host(std::vector<int64_t>{0, 1}.data(), DType::Int64, 2, DType::Int32),
      IdArray::from_host(std::vector<int64_t>{0, 2}.data(), DType::Int64, 2, DType::Int32));
  auto ba = RelationGraph::from_coo(
      3, 2, IdArray::from_host(std::vector<int64_t>{2}.data(), DType::Int64, 1, DType::Int32),
      IdArray::from_host(std::vector<int64_t>{0}.data(), DType::Int64, 1, DType::Int32));
  auto bb = from_edges(3, {1}, {1}, DType::Int32);
  const SymmetricAdjacency a =
      symmetric_adjacency({{ab.get(), 0, 2}, {ba.get(), 2, 0}, {bb.get(), 2, 2}}, 5);
  // Undirected: 0-2, 1-4, 4-0; 3-3 is a self-loop.
  EXPECT_EQ(a.indptr, (std::vector<int64_t>{0, 2, 3, 4, 4, 6}));
  EXPECT_EQ(a.indices, (std::vector<int64_t>{2, 4, 4, 0, 0, 1}));
  EXPECT_THROW(symmetric_adjacency({{ab.get(), 0, 3}}, 5), ValueError);  // reaches node 5
}

TEST(SymmetricAdjacency, SameAtOneAndTwoThreadsAndLikeASortedSetReference) {
  // Large enough (200,000 edges over 20,000 nodes) for the scatter passes to split over threads.
  std::mt19937_64 rng(8);
  const int64_t n = 20000, m = 200000;
  std::vector<int64_t> s(m), d(m);
  for (int64_t e = 0; e < m; ++e) {
    s[e] = static_cast<int64_t>(rng() % n);
    d[e] = static_cast<int64_t>(rng() % n);
  }
  auto g = from_edges(n, s, d);
  const int before = get_num_threads();
  set_num_threads(1);
  const SymmetricAdjacency one = symmetric_adjacency(*g);
  set_num_threads(2);
  const SymmetricAdjacency two = symmetric_adjacency(*g);
  MetisOptions opt;
  opt.num_parts = 3;
  const MetisResult direct = metis_partition({RelationSlice{g.get(), 0, 0}}, n, opt);
  set_num_threads(before);
  EXPECT_EQ(one.indptr, two.indptr);
  EXPECT_EQ(one.indices, two.indices);
  std::vector<std::vector<int64_t>> ref(n);
  for (int64_t e = 0; e < m; ++e)
    if (s[e] != d[e]) {
      ref[s[e]].push_back(d[e]);
      ref[d[e]].push_back(s[e]);
    }
  for (int64_t v = 0; v < n; ++v) {
    std::sort(ref[v].begin(), ref[v].end());
    ref[v].erase(std::unique(ref[v].begin(), ref[v].end()), ref[v].end());
    ASSERT_EQ(std::vector<int64_t>(one.indices.begin() + one.indptr[v],
                                   one.indices.begin() + one.indptr[v + 1]),
              ref[v])
        << "row " << v;
  }
  // Built straight in METIS' integers, the same parts as from the int64 adjacency.
  SymmetricAdjacency copy = one;
  EXPECT_EQ(direct.part, metis_partition(std::move(copy), opt).part);
}

int64_t communication_volume(const RelationGraph& g, const std::vector<int64_t>& part) {
  const SymmetricAdjacency adj = symmetric_adjacency(g);
  int64_t vol = 0;
  for (int64_t v = 0; v < adj.num_nodes(); ++v) {
    std::vector<int64_t> others;
    for (int64_t j = adj.indptr[v]; j < adj.indptr[v + 1]; ++j)
      if (part[adj.indices[j]] != part[v]) others.push_back(part[adj.indices[j]]);
    std::sort(others.begin(), others.end());
    vol += std::unique(others.begin(), others.end()) - others.begin();
  }
  return vol;
}

TEST(MetisPartition, ObjectiveValueIsTheCutOrTheVolume) {
  auto g = planted_partition(4, 60, 0.15, 0.01, 9);
  MetisOptions opt;
  opt.num_parts = 4;
  opt.seed = 2;
  MetisResult cut = metis_partition(symmetric_adjacency(*g), opt);
  EXPECT_EQ(cut.objective_value, edge_cut(*g, cut.part));
  EXPECT_EQ(cut.part, metis_partition(*g, opt));
  opt.objective = MetisObjective::kVolume;
  MetisResult vol = metis_partition(symmetric_adjacency(*g), opt);
  EXPECT_EQ(vol.objective_value, communication_volume(*g, vol.part));
  EXPECT_GT(vol.objective_value, 0);
  opt.mode = MetisMode::kRecursive;  // recursive bisection only cuts edges
  EXPECT_THROW(metis_partition(symmetric_adjacency(*g), opt), ValueError);
}

TEST(MetisPartition, PartsCoverEveryNodeOnceBalancedWithASmallCut) {
  for (DType idtype : {DType::Int32, DType::Int64}) {
    const int64_t k = 8, size = 125, n = k * size;
    auto g = planted_partition(k, size, 0.08, 0.002, 1, idtype);
    MetisOptions opt;
    opt.num_parts = k;
    opt.seed = 3;
    const std::vector<int64_t> part = metis_partition(*g, opt);
    ASSERT_EQ(static_cast<int64_t>(part.size()), n);
    std::vector<int64_t> sizes(k, 0);
    for (int64_t p : part) {
      ASSERT_GE(p, 0);
      ASSERT_LT(p, k);
      ++sizes[p];
    }
    // k-way METIS' default load imbalance is 1.03; one node of slack for the rounding.
    for (int64_t s : sizes) EXPECT_LE(s, static_cast<int64_t>(1.03 * n / k) + 1);
    std::vector<int64_t> random_part(n);
    std::mt19937_64 rng(5);
    for (auto& p : random_part) p = static_cast<int64_t>(rng() % k);
    const int64_t cut = edge_cut(*g, part), random_cut = edge_cut(*g, random_part);
    // The planted cut is about 0.002 * n^2 * 7/16 ≈ 875 edges against ≈ 5,800 inside; a random
    // assignment cuts 7/8 of all edges.
    EXPECT_LT(cut, random_cut / 4) << "cut " << cut << " vs random " << random_cut;
  }
}

TEST(MetisPartition, RecursiveModeAndOnePart) {
  auto g = planted_partition(4, 50, 0.2, 0.01, 2);
  MetisOptions opt;
  opt.num_parts = 4;
  opt.mode = MetisMode::kRecursive;
  const std::vector<int64_t> part = metis_partition(*g, opt);
  std::vector<int64_t> sizes(4, 0);
  for (int64_t p : part) ++sizes[p];
  for (int64_t s : sizes) EXPECT_LE(s, 52);  // recursive bisection's default tolerance is 1.001
  opt.num_parts = 1;
  const std::vector<int64_t> one = metis_partition(*g, opt);
  EXPECT_TRUE(std::all_of(one.begin(), one.end(), [](int64_t p) { return p == 0; }));
}

TEST(MetisPartition, NodeWeightConstraintsAreBalanced) {
  // Constraint 0: every node; constraint 1: "training" nodes, all in the first community. Without
  // the second constraint one or two parts would hold them all.
  const int64_t k = 4, size = 100, n = k * size;
  auto g = planted_partition(k, size, 0.1, 0.005, 4);
  MetisOptions opt;
  opt.num_parts = k;
  opt.num_constraints = 2;
  opt.node_weights.assign(static_cast<size_t>(2 * n), 0);
  for (int64_t v = 0; v < n; ++v) {
    opt.node_weights[2 * v] = 1;
    opt.node_weights[2 * v + 1] = v < 80;
  }
  const std::vector<int64_t> part = metis_partition(*g, opt);
  std::vector<int64_t> train(k, 0);
  for (int64_t v = 0; v < 80; ++v) ++train[part[v]];
  for (int64_t t : train) EXPECT_NEAR(t, 20, 4) << "training nodes per part";
}

TEST(MetisPartition, SameSeedSamePartsAtOneAndTwoThreads) {
  auto g = planted_partition(6, 200, 0.05, 0.003, 7);
  MetisOptions opt;
  opt.num_parts = 6;
  opt.seed = 11;
  const int before = get_num_threads();
  set_num_threads(1);
  const std::vector<int64_t> a = metis_partition(*g, opt);
  set_num_threads(2);
  const std::vector<int64_t> b = metis_partition(*g, opt);
  set_num_threads(before);
  EXPECT_EQ(a, b);
}

TEST(MetisPartition, GraphWithoutEdges) {
  auto g = from_edges(10, {}, {});
  MetisOptions opt;
  opt.num_parts = 3;
  const std::vector<int64_t> part = metis_partition(*g, opt);
  ASSERT_EQ(part.size(), 10u);
  for (int64_t p : part) EXPECT_TRUE(p >= 0 && p < 3);
}

TEST(MetisPartition, BadInputRaisesValueError) {
  auto g = planted_partition(2, 10, 0.5, 0.1, 1);
  MetisOptions opt;
  opt.num_parts = 0;
  EXPECT_THROW(metis_partition(*g, opt), ValueError);
  opt.num_parts = 21;
  EXPECT_THROW(metis_partition(*g, opt), ValueError);
  opt.num_parts = 2;
  opt.num_constraints = 1;
  opt.node_weights.assign(19, 1);  // one short
  EXPECT_THROW(metis_partition(*g, opt), ValueError);
  opt.node_weights.assign(20, 0);  // a constraint nothing carries
  EXPECT_THROW(metis_partition(*g, opt), ValueError);
  opt.node_weights.assign(20, 1);
  opt.node_weights[3] = -1;
  EXPECT_THROW(metis_partition(*g, opt), ValueError);
  auto bipartite = RelationGraph::from_coo(
      3, 4, IdArray::from_host(std::vector<int64_t>{0}.data(), DType::Int64, 1, DType::Int64),
      IdArray::from_host(std::vector<int64_t>{3}.data(), DType::Int64, 1, DType::Int64));
  MetisOptions two;
  two.num_parts = 2;
  EXPECT_THROW(metis_partition(*bipartite, two), ValueError);
}

}  // namespace
}  // namespace nodeweave::sampling
