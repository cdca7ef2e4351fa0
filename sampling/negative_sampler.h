// Negative sampling for link prediction on one relation: pairs (u, v) to score against the positive
// edges of a mini-batch.
//
//  - per_source_uniform_negatives: DGL's dataloading.negative_sampler.PerSourceUniform(k) (alias
//    Uniform): every positive edge (u, v) gives k pairs (u, v'), v' uniform over the destination
//    nodes. Existing edges are not excluded (as in DGL): the pairs are cheap corrupted copies.
//  - global_uniform_negatives: DGL's sampling.global_uniform_negative_sampling: pairs drawn
//    uniformly from all (source, destination) pairs that are NOT edges of the relation, optionally
//    not self-loops, optionally without repeats. The existence check is exact.
//
// Randomness comes only from sampling/random.h, keyed by (key, position) for the per-source sampler
// and (key, round, chunk of candidates) for the global one, so the output is bit-identical at any
// thread count.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/relation_graph.h"

namespace nodeweave::sampling {

struct NegativePairs {
  std::vector<int64_t> src, dst;
  int64_t size() const { return static_cast<int64_t>(src.size()); }
};

// For each i, pairs [i * k, (i + 1) * k) are (source of edge eids[i], uniform destination).
// Throws ValueError for k < 1 or a relation without destination nodes (with eids given),
// IndexError naming eids[i] for an edge id outside [0, num_edges).
NegativePairs per_source_uniform_negatives(const graph::RelationGraph& g, const int64_t* eids,
                                           int64_t num_eids, int64_t k, uint64_t key);

// How a candidate pair is checked against the relation's edges. Every choice gives the same
// answer (and so the same output); they differ only in cost.
enum class EdgeLookup {
  kAuto,        // binary search when the CSR rows are sorted already or sorting pays, else scan
  kRowScan,     // scan the candidate's CSR row: O(degree) per candidate, nothing built
  kSortedRows,  // binary search in CSR rows sorted once per call (a sorted copy when needed)
};

struct GlobalNegativeOptions {
  int64_t num_samples = 0;
  // Leave out pairs (v, v). The caller decides whether that applies: DGL only excludes self-loops
  // when the relation's source and destination node types are the same.
  bool exclude_self_loops = true;
  // Without replacement no pair appears twice in the output.
  bool replace = false;
  // Extra candidates drawn in the first round, as a fraction of num_samples (DGL's redundancy);
  // unset: chosen from the relation's density so that one round usually suffices.
  std::optional<double> redundancy;
  uint64_t key = 0;
  EdgeLookup lookup = EdgeLookup::kAuto;
};

// Up to num_samples non-edges in random order. Candidates are drawn in rounds (each candidate slot
// tries a few random pairs); a short result after de-duplication triggers another round for the
// shortfall, until the count is reached, a round finds nothing new, or the round limit passes. So
// it returns fewer than num_samples only when the relation is so dense (or small) that non-edges
// are rare or fewer than asked exist, as DGL documents for its sampler.
// Throws ValueError for num_samples < 0 or a negative or non-finite redundancy.
NegativePairs global_uniform_negatives(const graph::RelationGraph& g,
                                       const GlobalNegativeOptions& opt);

}  // namespace nodeweave::sampling
