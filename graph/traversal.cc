// Traversals over the compressed rows of one relation: level-synchronous BFS, Kahn's topological
// layers and an explicit-stack DFS (no recursion, so a path of millions of nodes cannot overflow
// the call stack). Each runs on one thread: every step depends on the one before it.
#include "graph/traversal.h"

#include <algorithm>

#include "core_framework/runtime/error.h"
#include "graph/typed_rows.h"

namespace nodeweave::graph {

namespace {

// One BFS, recording the reached nodes and the edges that reached them, level by level.
template <typename I>
void bfs(const TypedRows<I>& rows, int64_t n, const std::vector<int64_t>& sources, Frontiers* nodes,
         Frontiers* edges) {
  std::vector<uint8_t> visited(static_cast<size_t>(n), 0);
  std::vector<int64_t> level(sources), next, next_edges;
  for (int64_t s : sources) visited[s] = 1;
  while (!level.empty()) {
    if (nodes) {
      nodes->ids.insert(nodes->ids.end(), level.begin(), level.end());
      nodes->sections.push_back(static_cast<int64_t>(level.size()));
    }
    next.clear();
    next_edges.clear();
    for (int64_t u : level) {
      for (int64_t p = rows.begin(u); p < rows.end(u); ++p) {
        const auto v = rows.node(p);
        if (visited[v]) continue;
        visited[v] = 1;
        next.push_back(v);
        next_edges.push_back(rows.edge(p));
      }
    }
    if (edges && !next_edges.empty()) {
      edges->ids.insert(edges->ids.end(), next_edges.begin(), next_edges.end());
      edges->sections.push_back(static_cast<int64_t>(next_edges.size()));
    }
    level.swap(next);
  }
}

template <typename I>
Frontiers topological(const TypedRows<I>& rows, const TypedRows<I>& opposite, int64_t n) {
  // Remaining in-degree of each node: the length of its row in the opposite format.
  std::vector<int64_t> remaining(static_cast<size_t>(n));
  std::vector<int64_t> level;
  for (int64_t v = 0; v < n; ++v) {
    remaining[v] = opposite.end(v) - opposite.begin(v);
    if (remaining[v] == 0) level.push_back(v);
  }
  Frontiers out;
  std::vector<int64_t> next;
  while (!level.empty()) {
    out.ids.insert(out.ids.end(), level.begin(), level.end());
    out.sections.push_back(static_cast<int64_t>(level.size()));
    next.clear();
    for (int64_t u : level) {
      for (int64_t p = rows.begin(u); p < rows.end(u); ++p) {
        const auto v = rows.node(p);
        if (--remaining[v] == 0) next.push_back(v);
      }
    }
    level.swap(next);
  }
  if (static_cast<int64_t>(out.ids.size()) < n) {
    int64_t stuck = 0;
    while (remaining[stuck] == 0) ++stuck;
    throw ValueError(str_cat(
        "topological_nodes: the graph has a cycle: ", n - static_cast<int64_t>(out.ids.size()),
        " nodes are on a cycle or reachable from one (node ", stuck, " is one of them)"));
  }
  return out;
}

struct DfsStep {
  int64_t edge;
  int8_t label;
};

// One DFS from `source`; `visited` is all zero on entry and on exit (only the nodes this search
// reached are cleared again, so that many searches on a large graph stay cheap).
template <typename I>
void dfs(const TypedRows<I>& rows, int64_t source, bool reverse_edges, bool nontree_edges,
         std::vector<uint8_t>& visited, std::vector<DfsStep>& steps) {
  struct Frame {
    int64_t node, pos, via;  // via: the tree edge that reached node (-1 for the source)
  };
  std::vector<Frame> stack;
  std::vector<int64_t> reached{source};
  visited[source] = 1;
  stack.push_back({source, rows.begin(source), -1});
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.pos < rows.end(top.node)) {
      const int64_t p = top.pos++;
      const auto v = rows.node(p);
      const auto e = rows.edge(p);
      if (!visited[v]) {
        visited[v] = 1;
        reached.push_back(v);
        steps.push_back({e, kDfsForward});
        stack.push_back({v, rows.begin(v), e});  // invalidates `top`
      } else if (nontree_edges) {
        steps.push_back({e, kDfsNontree});
      }
      continue;
    }
    if (reverse_edges && top.via >= 0) steps.push_back({top.via, kDfsReverse});
    stack.pop_back();
  }
  for (int64_t v : reached) visited[v] = 0;
}

}  // namespace

Frontiers bfs_nodes(const RelationGraph& g, const std::vector<int64_t>& sources, bool reverse) {
  const CompressedArrays& c = walk_rows(g, reverse, "bfs_nodes");
  check_walk_nodes(sources, g.num_src(), "bfs_nodes", "sources");
  Frontiers out;
  with_typed_rows(g, c, [&](const auto& rows) { bfs(rows, g.num_src(), sources, &out, nullptr); });
  return out;
}

Frontiers bfs_edges(const RelationGraph& g, const std::vector<int64_t>& sources, bool reverse) {
  const CompressedArrays& c = walk_rows(g, reverse, "bfs_edges");
  check_walk_nodes(sources, g.num_src(), "bfs_edges", "sources");
  Frontiers out;
  with_typed_rows(g, c, [&](const auto& rows) { bfs(rows, g.num_src(), sources, nullptr, &out); });
  return out;
}

Frontiers topological_nodes(const RelationGraph& g, bool reverse) {
  const CompressedArrays& c = walk_rows(g, reverse, "topological_nodes");
  const CompressedArrays& opposite = walk_rows(g, !reverse, "topological_nodes");
  return with_typed_rows(g, c, [&](const auto& rows) {
    using R = std::decay_t<decltype(rows)>;
    return topological(rows, R(opposite), g.num_src());
  });
}

Frontiers dfs_labeled_edges(const RelationGraph& g, const std::vector<int64_t>& sources,
                            bool reverse, bool reverse_edges, bool nontree_edges) {
  const CompressedArrays& c = walk_rows(g, reverse, "dfs_labeled_edges");
  check_walk_nodes(sources, g.num_src(), "dfs_labeled_edges", "sources");
  std::vector<std::vector<DfsStep>> searches(sources.size());
  std::vector<uint8_t> visited(static_cast<size_t>(g.num_src()), 0);
  with_typed_rows(g, c, [&](const auto& rows) {
    for (size_t i = 0; i < sources.size(); ++i)
      dfs(rows, sources[i], reverse_edges, nontree_edges, visited, searches[i]);
  });
  // Frontier k: the k-th step of every search that has one, in source order. Placed by counting
  // (frontier sizes, then offsets), so that many short searches cost their steps, not
  // sources x longest.
  size_t longest = 0;
  for (const auto& s : searches) longest = std::max(longest, s.size());
  Frontiers out;
  out.sections.assign(longest, 0);
  for (const auto& s : searches)
    for (size_t k = 0; k < s.size(); ++k) ++out.sections[k];
  std::vector<int64_t> next(longest, 0);
  for (size_t k = 1; k < longest; ++k) next[k] = next[k - 1] + out.sections[k - 1];
  const int64_t total = longest ? next[longest - 1] + out.sections[longest - 1] : 0;
  out.ids.resize(static_cast<size_t>(total));
  out.labels.resize(static_cast<size_t>(total));
  for (const auto& s : searches) {
    for (size_t k = 0; k < s.size(); ++k) {
      const int64_t at = next[k]++;
      out.ids[at] = s[k].edge;
      out.labels[at] = s[k].label;
    }
  }
  return out;
}

}  // namespace nodeweave::graph
