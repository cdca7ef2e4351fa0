// BFS per root, roots spread over the threads. Paths take a second pass because their padded
// length (the longest distance over all roots) is only known once every distance is: the second
// BFS of a root crosses the same tree edges in the same order, and a node's path is its parent's
// path (already written, the parent being nearer) followed by the edge that reached it.
#include "graph/shortest_dist.h"

#include <algorithm>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "graph/typed_rows.h"

namespace nodeweave::graph {

namespace {

// One BFS from `root`: fills dist (num_nodes entries, all -1 on entry) and calls
// tree_edge(parent, child, edge) in the order nodes are reached. `queue` is scratch.
template <typename I, typename F>
void bfs_from(const TypedRows<I>& rows, int64_t root, int64_t* dist, std::vector<int64_t>& queue,
              const F& tree_edge) {
  queue.clear();
  queue.push_back(root);
  dist[root] = 0;
  for (size_t head = 0; head < queue.size(); ++head) {
    const int64_t u = queue[head];
    for (int64_t p = rows.begin(u); p < rows.end(u); ++p) {
      const int64_t v = rows.node(p);
      if (dist[v] >= 0) continue;
      dist[v] = dist[u] + 1;
      queue.push_back(v);
      tree_edge(u, v, rows.edge(p));
    }
  }
}

}  // namespace

ShortestPaths shortest_paths(const RelationGraph& g, const std::vector<int64_t>& roots,
                             bool with_paths) {
  const CompressedArrays& c = walk_rows(g, false, "shortest_dist");
  const int64_t n = g.num_src();
  check_walk_nodes(roots, n, "shortest_dist", "roots");
  ShortestPaths out;
  out.num_roots = static_cast<int64_t>(roots.size());
  out.num_nodes = n;
  out.dist.assign(static_cast<size_t>(out.num_roots * n), -1);
  // Roots per task: a BFS touches up to n + E entries, so a few small graphs' roots share one.
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (n + g.num_edges() + 1));
  const auto no_op = [](int64_t, int64_t, int64_t) {};
  with_typed_rows(g, c, [&](const auto& rows) {
    parallel_for(0, out.num_roots, grain, [&](int64_t b, int64_t e) {
      std::vector<int64_t> queue;
      for (int64_t r = b; r < e; ++r) bfs_from(rows, roots[r], &out.dist[r * n], queue, no_op);
    });
  });
  for (int64_t d : out.dist) out.max_len = std::max(out.max_len, d);
  if (!with_paths || out.max_len == 0) return out;  // paths: num_roots x n x 0
  const int64_t len = out.max_len;
  out.paths.assign(static_cast<size_t>(out.num_roots * n * len), -1);
  with_typed_rows(g, c, [&](const auto& rows) {
    parallel_for(0, out.num_roots, grain, [&](int64_t b, int64_t e) {
      std::vector<int64_t> queue, seen(static_cast<size_t>(n), -1);
      for (int64_t r = b; r < e; ++r) {
        int64_t* block = &out.paths[r * n * len];
        bfs_from(rows, roots[r], seen.data(), queue, [&](int64_t u, int64_t v, int64_t edge) {
          const int64_t d = seen[v];  // hops to v: the parent's path has d - 1 edges
          std::copy_n(block + u * len, d - 1, block + v * len);
          block[v * len + d - 1] = edge;
        });
        for (int64_t v : queue) seen[v] = -1;
      }
    });
  });
  return out;
}

}  // namespace nodeweave::graph
