// Traversal frontiers against brute force over the edge list, on random graphs with both id types
// and in both directions: BFS levels equal the hop counts of repeated edge relaxation, and within a
// level nodes come in the order of their earliest discovering (parent position, edge id); BFS tree
// edges are those discoverers; topological layers are longest-path depths from the nodes without
// in-edges; the labelled DFS equals a recursive search; typed errors name the argument.
#include "graph/traversal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <tuple>

#include "core_framework/runtime/error.h"

namespace nodeweave::graph {
namespace {

struct Edges {
  int64_t n;
  std::vector<int64_t> src, dst;
};

Edges random_edges(int64_t n, int64_t e, uint64_t seed, bool acyclic = false) {
  std::mt19937_64 rng(seed);
  Edges g{n, {}, {}};
  for (int64_t i = 0; i < e; ++i) {
    int64_t u = static_cast<int64_t>(rng() % n), v = static_cast<int64_t>(rng() % n);
    if (acyclic) {
      if (u == v) continue;
      if (u > v) std::swap(u, v);
    }
    g.src.push_back(u);
    g.dst.push_back(v);
  }
  return g;
}

RelationGraphPtr make(const Edges& g, DType dt) {
  const auto m = static_cast<int64_t>(g.src.size());
  return RelationGraph::from_coo(g.n, g.n, IdArray::from_host(g.src.data(), DType::Int64, m, dt),
                                 IdArray::from_host(g.dst.data(), DType::Int64, m, dt));
}

// The edge list walked forwards (u -> v) or backwards.
Edges directed(const Edges& g, bool reverse) { return reverse ? Edges{g.n, g.dst, g.src} : g; }

std::vector<std::vector<int64_t>> split(const Frontiers& f) {
  std::vector<std::vector<int64_t>> out;
  size_t at = 0;
  for (int64_t len : f.sections) {
    EXPECT_GT(len, 0);
    out.emplace_back(f.ids.begin() + at, f.ids.begin() + at + len);
    at += len;
  }
  EXPECT_EQ(at, f.ids.size());
  return out;
}

// Level by level: the next level is every unvisited endpoint of an edge leaving the level, ordered
// by its earliest (position of the edge's source in the level, edge id); that edge discovered it.
void reference_bfs(const Edges& g, const std::vector<int64_t>& sources,
                   std::vector<std::vector<int64_t>>* nodes,
                   std::vector<std::vector<int64_t>>* edges) {
  std::vector<bool> seen(g.n, false);
  std::vector<int64_t> level = sources;
  for (int64_t s : sources) seen[s] = true;
  while (!level.empty()) {
    nodes->push_back(level);
    std::map<int64_t, std::pair<int64_t, int64_t>> best;  // node -> (source position, edge id)
    for (size_t pos = 0; pos < level.size(); ++pos) {
      for (size_t e = 0; e < g.src.size(); ++e) {
        if (g.src[e] != level[pos] || seen[g.dst[e]]) continue;
        const std::pair<int64_t, int64_t> key{static_cast<int64_t>(pos), static_cast<int64_t>(e)};
        auto it = best.find(g.dst[e]);
        if (it == best.end() || key < it->second) best[g.dst[e]] = key;
      }
    }
    std::vector<std::tuple<int64_t, int64_t, int64_t>> order;  // (pos, edge, node)
    for (const auto& [v, key] : best) order.emplace_back(key.first, key.second, v);
    std::sort(order.begin(), order.end());
    std::vector<int64_t> next, next_edges;
    for (const auto& [pos, e, v] : order) {
      seen[v] = true;
      next.push_back(v);
      next_edges.push_back(e);
    }
    if (!next_edges.empty()) edges->push_back(next_edges);
    level = next;
  }
}

TEST(Traversal, BfsMatchesLevelByLevelReference) {
  for (DType dt : {DType::Int32, DType::Int64}) {
    for (bool reverse : {false, true}) {
      for (uint64_t seed = 0; seed < 6; ++seed) {
        const Edges g = random_edges(40, 70 + 10 * seed, seed);
        const RelationGraphPtr rel = make(g, dt);
        std::mt19937_64 rng(seed + 100);
        std::vector<int64_t> sources{static_cast<int64_t>(rng() % g.n)};
        if (seed % 2) sources.push_back((sources[0] + 7) % g.n);
        std::vector<std::vector<int64_t>> want_nodes, want_edges;
        reference_bfs(directed(g, reverse), sources, &want_nodes, &want_edges);
        EXPECT_EQ(split(bfs_nodes(*rel, sources, reverse)), want_nodes) << seed << reverse;
        EXPECT_EQ(split(bfs_edges(*rel, sources, reverse)), want_edges) << seed << reverse;
      }
    }
  }
}

TEST(Traversal, TopologicalLayersAreLongestPathDepths) {
  for (DType dt : {DType::Int32, DType::Int64}) {
    for (bool reverse : {false, true}) {
      const Edges g = random_edges(50, 120, 3, /*acyclic=*/true);
      const Edges d = directed(g, reverse);
      // depth(v) = 0 without in-edges, else 1 + the largest depth of a predecessor; ids only grow
      // along forward edges, so one pass in id order (reverse order backwards) settles every depth.
      std::vector<int64_t> depth(g.n, 0);
      for (int64_t k = 0; k < g.n; ++k) {
        const int64_t v = reverse ? g.n - 1 - k : k;
        for (size_t e = 0; e < d.src.size(); ++e)
          if (d.dst[e] == v) depth[v] = std::max(depth[v], depth[d.src[e]] + 1);
      }
      const auto layers = split(topological_nodes(*make(g, dt), reverse));
      const int64_t deepest = *std::max_element(depth.begin(), depth.end());
      ASSERT_EQ(static_cast<int64_t>(layers.size()), deepest + 1);
      for (size_t k = 0; k < layers.size(); ++k) {
        std::vector<int64_t> want;
        for (int64_t v = 0; v < g.n; ++v)
          if (depth[v] == static_cast<int64_t>(k)) want.push_back(v);
        std::vector<int64_t> got = layers[k];
        if (k == 0) EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
        std::sort(got.begin(), got.end());
        EXPECT_EQ(got, want) << "layer " << k;
      }
    }
  }
}

TEST(Traversal, TopologicalRejectsCycles) {
  Edges g{4, {0, 1, 2, 3}, {1, 2, 3, 3}};  // a self-loop on 3
  EXPECT_THROW(topological_nodes(*make(g, DType::Int64), false), ValueError);
  Edges c{3, {0, 1, 2}, {1, 2, 1}};
  EXPECT_THROW(topological_nodes(*make(c, DType::Int32), true), ValueError);
}

struct Step {
  int64_t edge;
  int label;
  bool operator==(const Step& o) const { return edge == o.edge && label == o.label; }
};

// A recursive search taking each node's out-edges in increasing edge id.
std::vector<Step> reference_dfs(const Edges& g, int64_t source, bool rev, bool nontree) {
  std::vector<Step> steps;
  std::vector<bool> seen(g.n, false);
  std::function<void(int64_t)> visit = [&](int64_t u) {
    seen[u] = true;
    for (size_t e = 0; e < g.src.size(); ++e) {
      if (g.src[e] != u) continue;
      const int64_t v = g.dst[e];
      if (!seen[v]) {
        steps.push_back({static_cast<int64_t>(e), kDfsForward});
        visit(v);
        if (rev) steps.push_back({static_cast<int64_t>(e), kDfsReverse});
      } else if (nontree) {
        steps.push_back({static_cast<int64_t>(e), kDfsNontree});
      }
    }
  };
  visit(source);
  return steps;
}

TEST(Traversal, LabelledDfsMatchesRecursiveSearch) {
  for (DType dt : {DType::Int32, DType::Int64}) {
    for (bool reverse : {false, true}) {
      for (int flags = 0; flags < 4; ++flags) {
        const bool rev = flags & 1, nontree = flags & 2;
        const Edges g = random_edges(30, 60, 11 + flags);
        const std::vector<int64_t> sources{0, 5, 17};
        std::vector<std::vector<Step>> per_source;
        for (int64_t s : sources)
          per_source.push_back(reference_dfs(directed(g, reverse), s, rev, nontree));
        const Frontiers f = dfs_labeled_edges(*make(g, dt), sources, reverse, rev, nontree);
        ASSERT_EQ(f.labels.size(), f.ids.size());
        // Frontier k holds step k of each search that has one, in source order.
        size_t at = 0;
        for (size_t k = 0; k < f.sections.size(); ++k) {
          std::vector<Step> got, want;
          for (int64_t i = 0; i < f.sections[k]; ++i, ++at)
            got.push_back({f.ids[at], f.labels[at]});
          for (const auto& s : per_source)
            if (k < s.size()) want.push_back(s[k]);
          EXPECT_EQ(got, want) << "frontier " << k;
        }
        size_t longest = 0;
        for (const auto& s : per_source) longest = std::max(longest, s.size());
        EXPECT_EQ(f.sections.size(), longest);
      }
    }
  }
}

TEST(Traversal, ErrorsNameTheArgument) {
  const Edges g{3, {0, 1}, {1, 2}};
  const RelationGraphPtr rel = make(g, DType::Int64);
  try {
    bfs_nodes(*rel, {0, 3}, false);
    FAIL();
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("sources[1] = 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(dfs_labeled_edges(*rel, {-1}, false, false, false), IndexError);
  const int64_t s[] = {0}, d[] = {1};
  const RelationGraphPtr bip =
      RelationGraph::from_coo(2, 3, IdArray::from_host(s, DType::Int64, 1, DType::Int64),
                              IdArray::from_host(d, DType::Int64, 1, DType::Int64));
  EXPECT_THROW(bfs_edges(*bip, {0}, false), ValueError);
  EXPECT_THROW(topological_nodes(*bip, false), ValueError);
  // No sources: no frontiers; a graph without nodes: no layers.
  EXPECT_TRUE(bfs_nodes(*rel, {}, false).sections.empty());
  EXPECT_TRUE(topological_nodes(*make(Edges{0, {}, {}}, DType::Int32), false).ids.empty());
}

}  // namespace
}  // namespace nodeweave::graph
