// GraphSAINT's subgraph samplers (Zeng et al., ICLR 2020) on one square relation: each batch is
// the subgraph induced by a random node set, drawn by one of
//   - node:  `budget` nodes with replacement, P(v) ∝ max(out-degree(v), 1) — the paper's
//            ||A_{:,v}||^2 for a 0/1 adjacency, as the authors' code and DGL;
//   - edge:  `budget` edges with replacement, P(u -> v) ∝ 1 / max(in-degree(v), 1) +
//            1 / max(out-degree(u), 1) (DGL's form of the paper's 1/deg(u) + 1/deg(v)); the set
//            is their endpoints;
//   - walk:  `budget` roots uniformly, each followed by a uniform random walk of `walk_length`
//            out-edges (cut short at a node without out-edges); the set is every visited node.
// Draw i of a batch uses CounterRng(derive_key(key, i)), so a node set is a pure function of the
// key at any thread count. The set comes back sorted; the caller extracts the induced subgraph.
//
// The normalization of the paper (section 3.2) is estimated as the authors' code does: sample N
// node sets, count C_v (sets holding v) and C_e (sets holding both ends of edge e), then
//   loss_norm[v] = N / (C_v |V|)   (1 / λ_v: Σ_{v in batch} loss_norm[v] L_v estimates the mean
//                                    of L over all nodes without bias),
//   aggr_norm[e] = C_dst(e) / C_e  (1 / α_{u,v}: weighting message u -> v by it makes the batch's
//                                    aggregation at v an unbiased estimate of the full graph's).
// Counts of zero are read as one (a node or edge seen once): weights stay finite, and the bias
// this leaves vanishes as N grows.
#pragma once
#include <cstdint>
#include <vector>

#include "graph/relation_graph.h"

namespace nodeweave::sampling {

enum class SaintMode { kNode, kEdge, kWalk };

struct SaintConfig {
  SaintMode mode = SaintMode::kNode;
  int64_t budget = 0;       // node / edge draws, or walk roots
  int64_t walk_length = 0;  // walk mode only
};

struct SaintNormalization {
  std::vector<int64_t> node_count, edge_count;  // C_v per node, C_e per edge id
  std::vector<double> loss_norm, aggr_norm;     // per node, per edge id
};

class SaintSampler {
 public:
  // Validates (ValueError naming the argument: budget <= 0, walk_length < 0, a relation that is
  // not square or not on the CPU, nothing to draw from) and lays out what the draws read:
  // running sums of the node or edge weights, or the out-edge CSR for walks.
  SaintSampler(graph::RelationGraphPtr g, SaintConfig config);

  const SaintConfig& config() const { return config_; }
  int64_t num_nodes() const { return g_->num_src(); }

  // The node set of the batch keyed by `key`: sorted, distinct global ids.
  std::vector<int64_t> sample_nodes(uint64_t key) const;

  // Counts and coefficients over `num_samples` node sets, set s drawn by sample_nodes(
  // derive_key(key, s)). ValueError for num_samples < 1.
  SaintNormalization normalization(int64_t num_samples, uint64_t key) const;

 private:
  void draw_weighted(uint64_t key, std::vector<int64_t>& out) const;
  void draw_walks(uint64_t key, std::vector<int64_t>& out) const;

  graph::RelationGraphPtr g_;
  SaintConfig config_;
  std::vector<double> cumsum_;  // node or edge weights' running sums (node and edge modes)
};

}  // namespace nodeweave::sampling
