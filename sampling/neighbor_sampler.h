// Neighbour sampling of one relation (DGL's sample_neighbors for one edge type): for every seed,
// pick up to `fanout` of its edges from the compressed adjacency whose rows are the seeds' side
// (the in-edge CSC to sample in-edges, the out-edge CSR for out-edges).
//
// A seed's picks depend only on (key, seed's node id, its row), drawn from a counter-based stream
// (sampling/random.h), so the sample is bit-identical at any thread count. The picked entries of a
// row come out in row order, rows in seed order.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "core_framework/runtime/array_view.h"
#include "graph/format_convert.h"
#include "sampling/edge_weights.h"
#include "sampling/packed_rows.h"

namespace nodeweave::sampling {

struct NeighborSampleOptions {
  int64_t fanout = -1;  // -1: every neighbour
  bool replace = false;
  // Optional per-edge-id weights (float probabilities or a bool mask); absent when data is null.
  ArrayView weights;
  // Optional alias tables of `weights` for this adjacency (see edge_weights.h): make weighted
  // picks O(fanout) instead of O(degree). Must match `weights` when given. Its entry table may
  // be empty when `packed` carries the alias entries.
  const WeightedRows* weighted_rows = nullptr;
  // Optional packed (neighbour, edge id) pairs of this adjacency (packed_rows.h): each pick is
  // then read with one cache miss instead of two. Must match the adjacency when given.
  const PackedRows* packed = nullptr;
  // Optional sorted, unique edge ids never to sample (link prediction's edge exclusion).
  std::vector<int64_t> exclude;
  uint64_t key = 0;  // derive_key(seed, batch, layer, ...) of the caller
  // Added to a row's index before it keys the row's draws: a part of a partitioned graph whose
  // rows are a contiguous range of the whole graph's passes the range's start, so each node's
  // picks are those the whole graph gives it (distributed sampling equals single-process).
  int64_t key_row_offset = 0;
};

// The sampled edges, grouped by seed in seed order.
struct SampledEdges {
  std::vector<int64_t> seed_pos;  // index into the seed array
  std::vector<int64_t> neighbor;  // global id of the other endpoint
  std::vector<int64_t> eid;       // edge id in the relation
  int64_t size() const { return static_cast<int64_t>(eid.size()); }
  void append(const SampledEdges& o) {
    seed_pos.insert(seed_pos.end(), o.seed_pos.begin(), o.seed_pos.end());
    neighbor.insert(neighbor.end(), o.neighbor.begin(), o.neighbor.end());
    eid.insert(eid.end(), o.eid.begin(), o.eid.end());
  }
  void append(SampledEdges&& o) {  // the first part is taken whole unless room was reserved
    if (eid.empty() && eid.capacity() < o.eid.size()) {
      *this = std::move(o);
    } else {
      append(static_cast<const SampledEdges&>(o));
    }
  }
};

// Receives the sampled edges chunk by chunk, in seed order, one call at a time (possibly from
// different threads while later chunks are still being sampled).
using EdgeSink = std::function<void(SampledEdges&&)>;

// Chunks' sampled edges joined in chunk order (moved when there is one).
template <typename Edges>
Edges join_chunks(std::vector<Edges>&& parts) {
  if (parts.size() == 1) return std::move(parts[0]);
  Edges out;
  for (const Edges& p : parts) out.append(p);
  return out;
}

// Validates the options against the relation (fanout >= -1, weights) and the seeds (ids in
// [0, num_rows)), then samples. `seeds` is int32 or int64 on the CPU.
SampledEdges sample_neighbors(const graph::CompressedArrays& adj, int64_t num_rows,
                              const ArrayView& seeds, const NeighborSampleOptions& opt);

// The same without the checks: for callers that validated once (the block sampler, the loader).
SampledEdges sample_neighbors_unchecked(const graph::CompressedArrays& adj,
                                        const int64_t* seeds, int64_t num_seeds,
                                        const NeighborSampleOptions& opt);

// The same, handing the edges to `sink` chunk by chunk in seed order: a caller whose next step is
// serial (compaction) runs it on each chunk while the next ones are sampled.
void sample_neighbors_streamed(const graph::CompressedArrays& adj, const int64_t* seeds,
                               int64_t num_seeds, const NeighborSampleOptions& opt,
                               const EdgeSink& sink);

// The most edges sampling these seeds can give: the sum over seeds of min(fanout, degree)
// (fanout for every seed of positive degree with replacement, the degree for fanout -1), so that a
// caller can size its lists once instead of regrowing them.
int64_t most_picks(const graph::CompressedArrays& adj, const int64_t* seeds, int64_t num_seeds,
                   int64_t fanout, bool replace);

// Validation shared by every caller: fanout >= -1 (ValueError naming `name`).
void check_fanout(const char* fn, const char* name, int64_t fanout);

// The checks every single-relation sampler entry makes, then the seeds as int64: the graph and the
// seeds on the CPU, seeds a contiguous 1-D int32/int64 array with ids in [0, num_rows)
// (IndexError naming the first that is not), weights (when given) valid for the relation, and the
// exclusions sorted.
std::vector<int64_t> checked_seeds(const char* fn, const graph::CompressedArrays& adj, int64_t num_rows,
                                   const ArrayView& seeds, const ArrayView& weights,
                                   const std::vector<int64_t>& exclude);

}  // namespace nodeweave::sampling
