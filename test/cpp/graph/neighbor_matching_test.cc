// Neighbour matching on random bidirected graphs of both id types: clusters of one or two nodes,
// pairs joined by an edge, maximal, labels as documented (smallest node, or 0..k-1 in that order),
// the same for the same seed; with weights, every result is one the greedy heavy-edge rule gives
// for some visiting order (all orders of a small graph enumerated); self-loops ignored; an
// asymmetric graph and bad weights raise.
#include "graph/neighbor_matching.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "core_framework/runtime/error.h"

namespace nodeweave::graph {
namespace {

struct Edges {
  int64_t n;
  std::vector<int64_t> src, dst;
};

RelationGraphPtr make(const Edges& g, DType dt = DType::Int64) {
  const auto m = static_cast<int64_t>(g.src.size());
  return RelationGraph::from_coo(g.n, g.n, IdArray::from_host(g.src.data(), DType::Int64, m, dt),
                                 IdArray::from_host(g.dst.data(), DType::Int64, m, dt));
}

// Random undirected edges (self-loops and repeats included), each stored in both directions.
Edges random_bidirected(int64_t n, int64_t pairs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Edges g{n, {}, {}};
  for (int64_t i = 0; i < pairs; ++i) {
    const auto u = static_cast<int64_t>(rng() % n), v = static_cast<int64_t>(rng() % n);
    g.src.insert(g.src.end(), {u, v});
    g.dst.insert(g.dst.end(), {v, u});
  }
  return g;
}

const ArrayView kNoWeights{};

// Unrelabelled labels: each node's label is the smallest node of its cluster, clusters have one or
// two nodes, two nodes share a cluster only across an edge that is not a self-loop, and no edge
// joins two single nodes.
void check_matching(const Edges& g, const std::vector<int64_t>& label) {
  ASSERT_EQ(static_cast<int64_t>(label.size()), g.n);
  std::set<std::pair<int64_t, int64_t>> edges;
  for (size_t e = 0; e < g.src.size(); ++e)
    if (g.src[e] != g.dst[e]) edges.insert({g.src[e], g.dst[e]});
  std::map<int64_t, std::vector<int64_t>> clusters;
  for (int64_t v = 0; v < g.n; ++v) clusters[label[v]].push_back(v);
  for (const auto& [l, members] : clusters) {
    ASSERT_LE(members.size(), 2u);
    EXPECT_EQ(members.front(), l) << "a label is the smallest node of its cluster";
    if (members.size() == 2) EXPECT_TRUE(edges.count({members[0], members[1]}));
  }
  for (const auto& [u, v] : edges)
    EXPECT_FALSE(clusters[label[u]].size() == 1 && clusters[label[v]].size() == 1)
        << "edge " << u << " -> " << v << " joins two single nodes";
}

TEST(NeighborMatching, MaximalMatchingOnRandomGraphs) {
  for (DType dt : {DType::Int32, DType::Int64}) {
    for (uint64_t seed = 0; seed < 6; ++seed) {
      const Edges g = random_bidirected(40, 15 + 20 * seed, seed);  // sparse to dense
      const RelationGraphPtr rel = make(g, dt);
      std::vector<double> w(g.src.size());
      std::mt19937_64 rng(seed + 100);
      for (double& x : w) x = static_cast<double>(rng() % 5);  // many ties, zero weights included
      for (const ArrayView& weights : {kNoWeights, host_float64_view(w)}) {
        const std::vector<int64_t> label = neighbor_matching(*rel, weights, seed, false);
        check_matching(g, label);
        EXPECT_EQ(neighbor_matching(*rel, weights, seed, false), label) << "same seed, same result";
        // Relabelled: the rank of the label among the distinct labels.
        std::vector<int64_t> distinct = label;
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        const std::vector<int64_t> rel_label = neighbor_matching(*rel, weights, seed, true);
        for (int64_t v = 0; v < g.n; ++v)
          EXPECT_EQ(rel_label[v], std::lower_bound(distinct.begin(), distinct.end(), label[v]) -
                                      distinct.begin());
      }
    }
  }
}

TEST(NeighborMatching, SeedsChangeTheRandomChoices) {
  const Edges g = random_bidirected(60, 150, 3);
  const RelationGraphPtr rel = make(g);
  std::set<std::vector<int64_t>> results;
  for (uint64_t seed = 0; seed < 10; ++seed)
    results.insert(neighbor_matching(*rel, kNoWeights, seed, false));
  EXPECT_GT(results.size(), 5u);
}

// The greedy heavy-edge matching for one visiting order, written from its definition.
std::vector<int64_t> greedy(const Edges& g, const std::vector<double>& w,
                            const std::vector<int64_t>& order) {
  std::vector<int64_t> label(g.n, -1);
  for (int64_t u : order) {
    if (label[u] >= 0) continue;
    int64_t best = -1;
    size_t best_edge = 0;
    for (size_t e = 0; e < g.src.size(); ++e) {
      const int64_t v = g.dst[e];
      if (g.src[e] != u || v == u || label[v] >= 0) continue;
      if (best < 0 || w[e] > w[best_edge] || (w[e] == w[best_edge] && e < best_edge)) {
        best = v;
        best_edge = e;
      }
    }
    label[u] = best < 0 ? u : std::min(u, best);
    if (best >= 0) label[best] = label[u];
  }
  return label;
}

TEST(NeighborMatching, HeavyEdgeChoiceAgreesWithSomeVisitingOrder) {
  // Six nodes, a weighted cycle with two chords (each direction its own weight) and a self-loop.
  Edges g{6, {}, {}};
  std::vector<double> w;
  const int64_t pairs[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}, {0, 3}, {1, 4}};
  const double weights[][2] = {{3, 1}, {5, 5}, {2, 4}, {1, 1}, {6, 2}, {0, 7}, {4, 4}, {2, 9}};
  for (int k = 0; k < 8; ++k) {
    g.src.insert(g.src.end(), {pairs[k][0], pairs[k][1]});
    g.dst.insert(g.dst.end(), {pairs[k][1], pairs[k][0]});
    w.insert(w.end(), {weights[k][0], weights[k][1]});
  }
  g.src.push_back(2);
  g.dst.push_back(2);
  w.push_back(100);  // a self-loop never counts, however heavy
  std::set<std::vector<int64_t>> possible;
  std::vector<int64_t> order(6);
  std::iota(order.begin(), order.end(), 0);
  do {
    possible.insert(greedy(g, w, order));
  } while (std::next_permutation(order.begin(), order.end()));
  const RelationGraphPtr rel = make(g);
  std::set<std::vector<int64_t>> seen;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const std::vector<int64_t> label = neighbor_matching(*rel, host_float64_view(w), seed, false);
    EXPECT_TRUE(possible.count(label)) << "seed " << seed;
    seen.insert(label);
  }
  EXPECT_GT(seen.size(), 1u) << "the visiting order is random";
  // float32 weights give the same matching as float64 ones.
  const std::vector<float> wf(w.begin(), w.end());
  EXPECT_EQ(neighbor_matching(*rel, host_vector_view(wf, DType::Float32), 5, false),
            neighbor_matching(*rel, host_float64_view(w), 5, false));
}

TEST(NeighborMatching, EdgeCases) {
  // No nodes; isolated nodes and self-loops only: every node alone.
  EXPECT_TRUE(neighbor_matching(*make(Edges{0, {}, {}}), kNoWeights, 0, true).empty());
  EXPECT_EQ(neighbor_matching(*make(Edges{3, {1, 2}, {1, 2}}), kNoWeights, 0, true),
            (std::vector<int64_t>{0, 1, 2}));
  // One edge both ways, listed twice in one direction (parallel edges are one neighbour).
  EXPECT_EQ(neighbor_matching(*make(Edges{3, {2, 0, 0}, {0, 2, 2}}), kNoWeights, 1, false),
            (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(neighbor_matching(*make(Edges{3, {2, 0, 0}, {0, 2, 2}}), kNoWeights, 1, true),
            (std::vector<int64_t>{0, 1, 0}));
}

TEST(NeighborMatching, Errors) {
  const RelationGraphPtr one_way = make(Edges{3, {0, 1, 2}, {1, 0, 0}});  // 2 -> 0 has no reverse
  try {
    neighbor_matching(*one_way, kNoWeights, 0, true);
    FAIL() << "an asymmetric graph must raise";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("edge 2 (2 -> 0) has no reverse"), std::string::npos)
        << e.what();
  }
  const RelationGraphPtr ok = make(Edges{2, {0, 1}, {1, 0}});
  const std::vector<double> negative{1.0, -0.5}, nan{1.0, NAN}, short_w{1.0};
  EXPECT_THROW(neighbor_matching(*ok, host_float64_view(negative), 0, true), ValueError);
  EXPECT_THROW(neighbor_matching(*ok, host_float64_view(nan), 0, true), ValueError);
  EXPECT_THROW(neighbor_matching(*ok, host_float64_view(short_w), 0, true), ValueError);
  const std::vector<int64_t> ints{1, 1};
  EXPECT_THROW(neighbor_matching(*ok, host_int64_view(ints), 0, true), TypeError);
  const int64_t s[] = {0}, d[] = {1};
  const RelationGraphPtr bip =
      RelationGraph::from_coo(1, 2, IdArray::from_host(s, DType::Int64, 1, DType::Int64),
                              IdArray::from_host(d, DType::Int64, 1, DType::Int64));
  EXPECT_THROW(neighbor_matching(*bip, kNoWeights, 0, true), ValueError);
}

}  // namespace
}  // namespace nodeweave::graph
