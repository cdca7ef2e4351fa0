// Greedy neighbour matching of an undirected graph: the edge-coarsening step of METIS and Graclus
// (DGL's dgl.geometry.neighbor_matching, used by graclus pooling). Nodes are visited in a random
// order; a visited node that is still unmatched is matched with its unmatched neighbour across the
// heaviest edge (with weights) or with a random unmatched neighbour (without), or stays alone when
// every neighbour is taken. Every cluster is a single node or the two ends of an edge, and the
// matching is maximal: no edge joins two single nodes.
//
// The graph must be symmetric (bidirected): every edge u -> v has a reverse v -> u, parallel edges
// counted once. Self-loops are ignored. With weights, the visiting node u reads the weight of its
// own edge u -> v (the two directions may differ); a tie goes to the edge of lowest id. Without
// weights, each unmatched neighbour is equally likely per edge joining it to u.
//
// The random visiting order and neighbour choices are pure functions of `seed`: the same seed gives
// the same matching on every run. The matching itself is sequential (each choice depends on the
// ones before it); the symmetry check runs over the threads. CPU only.
#pragma once
#include <cstdint>
#include <vector>

#include "core_framework/runtime/array_view.h"
#include "graph/relation_graph.h"

namespace nodeweave::graph {

// g: a relation from one node set to itself, on the CPU (ValueError otherwise, and for an
// asymmetric graph, naming an edge without its reverse). weights: absent (data == nullptr) or one
// finite, non-negative float32/float64 value per edge id, contiguous, on the CPU (TypeError /
// ValueError naming `e_weights`).
// Returns the cluster of each node: with `relabel`, 0..k-1 numbered in the order of each cluster's
// smallest node; without, the smallest node of the cluster.
std::vector<int64_t> neighbor_matching(const RelationGraph& g, const ArrayView& weights,
                                       uint64_t seed, bool relabel);

}  // namespace nodeweave::graph
