// PinSAGE's random-walk neighbourhoods (Ying et al. KDD 2018; DGL's RandomWalkNeighborSampler and
// PinSAGESampler): the neighbours of a seed are the nodes of its own type that short random walks
// from it visit most often, weighted by their visit counts.
#pragma once
#include <cstdint>
#include <vector>

#include "sampling/random_walk.h"

namespace nodeweave::sampling {

struct PinSageOptions {
  // Relation index per step of one traversal, leaving from and arriving at the seeds' node type
  // (item -> user -> item; one step for a homogeneous graph).
  std::vector<int64_t> metapath;
  int64_t num_traversals = 1;    // traversals per walk, >= 1
  double termination_prob = 0;   // chance to stop before each traversal after the first
  int64_t num_random_walks = 1;  // walks per seed, >= 1
  int64_t num_neighbors = 1;     // neighbours kept per seed, >= 1
  uint64_t seed = 0;
};

// Edges neighbour -> seed, grouped by seed position in seed order; within a seed by visit count,
// most visited first, ties to the smaller node id.
struct PinSageNeighbors {
  std::vector<int64_t> src;     // the visited node
  std::vector<int64_t> dst;     // the seed
  std::vector<int64_t> counts;  // visits
};

// Walk w of seed position i is random_walk's walk number i * num_random_walks + w for the same
// seed, over the metapath repeated num_traversals times with restart probability
// termination_prob before every traversal after the first: the node ending each traversal is a
// visit, except -1 (the walk ended) and the seed itself. Validates like random_walk, plus the
// counts (ValueError) and a metapath that must return to its start type.
PinSageNeighbors pinsage_neighbors(const std::vector<WalkRelation>& relations,
                                   const ArrayView& seeds, const PinSageOptions& opt);

}  // namespace nodeweave::sampling
