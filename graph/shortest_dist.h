// Unweighted shortest paths of a relation from one node set to itself (DGL's shortest_dist): hop
// counts from each root to every node by breadth-first search, and optionally one shortest path
// per pair as the edge ids along it.
//
// Roots are searched in parallel (one BFS per root, each writing its own rows), so all-pairs
// distances cost O(N (N + E)) spread over the threads. Of several shortest paths, the one returned
// is the first a BFS finds when it takes the nodes of a level in the order it reached them and each
// node's out-edges in increasing edge id: the same path on every run and any thread count.
#pragma once
#include <cstdint>
#include <vector>

#include "graph/relation_graph.h"

namespace nodeweave::graph {

struct ShortestPaths {
  int64_t num_roots = 0, num_nodes = 0;
  // num_roots x num_nodes, row-major: the hops from roots[r] to node v, -1 when v is unreachable.
  std::vector<int64_t> dist;
  // The longest distance found (0 when no root reaches another node): the path length L.
  int64_t max_len = 0;
  // With paths: num_roots x num_nodes x max_len, the edge ids of the path from roots[r] to v in
  // order, then -1 up to max_len (all -1 for v == roots[r] and for unreachable v).
  std::vector<int64_t> paths;
};

// roots must be in [0, num_nodes) (IndexError naming the position); the relation must be square
// and on the CPU (ValueError).
ShortestPaths shortest_paths(const RelationGraph& g, const std::vector<int64_t>& roots,
                             bool with_paths);

}  // namespace nodeweave::graph
