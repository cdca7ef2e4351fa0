// Traversal orders of a relation whose sources and destinations are one node set (DGL's
// bfs_nodes_generator, bfs_edges_generator, topological_nodes_generator, dfs_edges_generator and
// dfs_labeled_edges_generator), returned as frontiers: the ids of frontier 0, then of frontier 1,
// and so on, with the length of each frontier beside them, so that Python splits one array instead
// of building a list element by element.
//
// Every traversal walks the out-edge CSR (rows = sources), or with `reverse` the in-edge CSC (rows
// = destinations, following edges backwards). Within a row, edges are taken in increasing edge id
// (the order the compressed formats keep, format_convert.h), so the frontiers are the same on
// every run. Node ids are int64 whatever the graph's id type. CPU only.
#pragma once
#include <cstdint>
#include <vector>

#include "graph/relation_graph.h"

namespace nodeweave::graph {

struct Frontiers {
  std::vector<int64_t> ids;       // frontier after frontier
  std::vector<int64_t> sections;  // the length of each frontier (none is empty)
  std::vector<int8_t> labels;     // labelled DFS only: the DfsLabel of each id
};

// The kind of an edge in a depth-first search (networkx's dfs_labeled_edges; DGL's numbering).
enum DfsLabel : int8_t {
  kDfsForward = 0,  // reaches an unvisited node: a tree edge, when it is first crossed
  kDfsReverse = 1,  // the same tree edge, crossed back once everything below it is done
  kDfsNontree = 2,  // reaches a node already visited
};

// Breadth-first node frontiers: frontier 0 is `sources` as given (repeats kept), then each frontier
// holds the nodes first reached from the previous one, in the order they are reached.
Frontiers bfs_nodes(const RelationGraph& g, const std::vector<int64_t>& sources, bool reverse);
// The edges that reach those nodes (the BFS tree edges): frontier i holds the edges that reached
// node frontier i + 1, in the same order.
Frontiers bfs_edges(const RelationGraph& g, const std::vector<int64_t>& sources, bool reverse);
// Kahn's layers: frontier 0 is every node without in-edges (out-edges with `reverse`) in increasing
// id, then the nodes whose last remaining in-edge came from the previous frontier. ValueError when
// the graph has a cycle (a self-loop is one), naming a node on or after it.
Frontiers topological_nodes(const RelationGraph& g, bool reverse);
// A depth-first search from each source on its own (each with a fresh set of visited nodes, as DGL;
// sources in different components give a forest). Each search lists its edges in the order it
// crosses them: forward edges always, reverse edges with `reverse_edges`, non-tree edges with
// `nontree_edges`. Frontier k holds the k-th edge of every search that has one, in source order;
// `labels` says what each edge is.
Frontiers dfs_labeled_edges(const RelationGraph& g, const std::vector<int64_t>& sources,
                            bool reverse, bool reverse_edges, bool nontree_edges);

}  // namespace nodeweave::graph
