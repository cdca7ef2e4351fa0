// Shortest distances against Bellman-Ford-style relaxation of the edge list on random graphs with
// both id types; every returned path is a walk of edge ids from the root to the node of exactly the
// distance, padded with -1; the result is the same at 1 and 2 threads; typed errors.
#include "graph/shortest_dist.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::graph {
namespace {

struct Edges {
  int64_t n;
  std::vector<int64_t> src, dst;
};

RelationGraphPtr make(const Edges& g, DType dt) {
  const auto m = static_cast<int64_t>(g.src.size());
  return RelationGraph::from_coo(g.n, g.n, IdArray::from_host(g.src.data(), DType::Int64, m, dt),
                                 IdArray::from_host(g.dst.data(), DType::Int64, m, dt));
}

Edges random_edges(int64_t n, int64_t e, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Edges g{n, {}, {}};
  for (int64_t i = 0; i < e; ++i) {
    g.src.push_back(static_cast<int64_t>(rng() % n));
    g.dst.push_back(static_cast<int64_t>(rng() % n));
  }
  return g;
}

std::vector<int64_t> relaxed(const Edges& g, int64_t root) {
  std::vector<int64_t> d(g.n, -1);
  d[root] = 0;
  for (int64_t round = 0; round < g.n; ++round)
    for (size_t e = 0; e < g.src.size(); ++e)
      if (d[g.src[e]] >= 0 && (d[g.dst[e]] < 0 || d[g.src[e]] + 1 < d[g.dst[e]]))
        d[g.dst[e]] = d[g.src[e]] + 1;
  return d;
}

TEST(ShortestDist, MatchesRelaxationAndPathsAreShortestWalks) {
  for (DType dt : {DType::Int32, DType::Int64}) {
    for (uint64_t seed = 0; seed < 4; ++seed) {
      const Edges g = random_edges(35, 40 + 25 * seed, seed);  // sparse to fairly dense
      std::vector<int64_t> roots(g.n);
      for (int64_t i = 0; i < g.n; ++i) roots[i] = i;
      const ShortestPaths sp = shortest_paths(*make(g, dt), roots, true);
      ASSERT_EQ(sp.num_roots, g.n);
      int64_t longest = 0;
      for (int64_t r = 0; r < g.n; ++r) {
        const std::vector<int64_t> want = relaxed(g, r);
        for (int64_t v : want) longest = std::max(longest, v);
        EXPECT_EQ(std::vector<int64_t>(sp.dist.begin() + r * g.n, sp.dist.begin() + (r + 1) * g.n),
                  want);
      }
      ASSERT_EQ(sp.max_len, longest);
      const int64_t L = sp.max_len;
      ASSERT_EQ(static_cast<int64_t>(sp.paths.size()), g.n * g.n * L);
      for (int64_t r = 0; r < g.n; ++r) {
        for (int64_t v = 0; v < g.n; ++v) {
          const int64_t d = sp.dist[r * g.n + v];
          const int64_t* path = &sp.paths[(r * g.n + v) * L];
          int64_t at = r;
          for (int64_t k = 0; k < L; ++k) {
            if (k >= std::max<int64_t>(d, 0)) {
              EXPECT_EQ(path[k], -1);
              continue;
            }
            ASSERT_GE(path[k], 0);
            EXPECT_EQ(g.src[path[k]], at) << r << "->" << v << " step " << k;
            at = g.dst[path[k]];
          }
          if (d > 0) EXPECT_EQ(at, v);
        }
      }
    }
  }
}

TEST(ShortestDist, SameAtAnyThreadCountAndForChosenRoots) {
  const Edges g = random_edges(300, 900, 7);
  std::vector<int64_t> roots(g.n);
  for (int64_t i = 0; i < g.n; ++i) roots[i] = (i * 37) % g.n;
  const int before = get_num_threads();
  set_num_threads(1);
  const ShortestPaths one = shortest_paths(*make(g, DType::Int64), roots, true);
  set_num_threads(2);
  const ShortestPaths two = shortest_paths(*make(g, DType::Int64), roots, true);
  set_num_threads(before);
  EXPECT_EQ(one.dist, two.dist);
  EXPECT_EQ(one.paths, two.paths);
  // Row r belongs to roots[r].
  const ShortestPaths single = shortest_paths(*make(g, DType::Int32), {roots[5]}, false);
  EXPECT_EQ(single.dist,
            std::vector<int64_t>(one.dist.begin() + 5 * g.n, one.dist.begin() + 6 * g.n));
  EXPECT_TRUE(single.paths.empty());
}

TEST(ShortestDist, EdgeCasesAndErrors) {
  // No edges: distance 0 to itself, -1 elsewhere, paths of length 0.
  const ShortestPaths none = shortest_paths(*make(Edges{3, {}, {}}, DType::Int64), {0, 1, 2}, true);
  EXPECT_EQ(none.dist, (std::vector<int64_t>{0, -1, -1, -1, 0, -1, -1, -1, 0}));
  EXPECT_EQ(none.max_len, 0);
  EXPECT_TRUE(none.paths.empty());
  // Parallel edges and a self-loop: the lower edge id is the path.
  const ShortestPaths multi =
      shortest_paths(*make(Edges{2, {0, 0, 0}, {0, 1, 1}}, DType::Int64), {0}, true);
  EXPECT_EQ(multi.dist, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(multi.paths, (std::vector<int64_t>{-1, 1}));
  const RelationGraphPtr rel = make(Edges{3, {0}, {1}}, DType::Int64);
  EXPECT_THROW(shortest_paths(*rel, {3}, false), IndexError);
  const int64_t s[] = {0}, d[] = {1};
  const RelationGraphPtr bip =
      RelationGraph::from_coo(1, 2, IdArray::from_host(s, DType::Int64, 1, DType::Int64),
                              IdArray::from_host(d, DType::Int64, 1, DType::Int64));
  EXPECT_THROW(shortest_paths(*bip, {0}, false), ValueError);
}

}  // namespace
}  // namespace nodeweave::graph
