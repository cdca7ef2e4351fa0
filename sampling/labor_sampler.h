// LABOR (layer-neighbour) sampling of one relation (Balin & Catalyurek, NeurIPS 2023; DGL's
// sample_labors): Poisson sampling where every neighbour t has one uniform variate r_t shared by
// all the seeds that see it, so seeds with common neighbours pick the same ones and a layer touches
// far fewer distinct nodes than neighbour sampling at the same fanout.
//
// Seed s keeps edge (t, s) when r_t <= min(1, c_s * p_ts), where p_ts = w_ts * pi_t (w: the edge
// weights, 1 without; pi: the importance of t, 1 for LABOR-0) and c_s solves
// sum_t min(1, c_s p_ts) = min(fanout, number of positive p_ts): every seed expects `fanout`
// edges, exactly as neighbour sampling gives. Each kept edge carries the weight 1 / min(1, c_s p_ts)
// (inverse inclusion probability: the unbiased estimator of the full aggregation).
//
// Importance sampling (LABOR-*, `importance_sampling` rounds, -1 until converged) raises pi_t to
// the largest inclusion probability t has among its seeds, then solves the c_s again: neighbours
// many seeds want become likely for all of them, and fewer distinct nodes are sampled.
#pragma once
#include <cstdint>
#include <vector>

#include "core_framework/runtime/array_view.h"
#include "graph/format_convert.h"
#include "sampling/neighbor_sampler.h"

namespace nodeweave::sampling {

struct LaborOptions {
  int64_t fanout = -1;          // -1: every neighbour
  ArrayView weights;            // optional per-edge-id weights (probabilities or a mask)
  int importance_sampling = 0;  // rounds of the pi update; -1: until the c_s settle (at most 100)
  uint64_t variate_key = 0;     // r_t = uniform_of(variate_key, t)
  // Optional sorted, unique edge ids never to sample: they count as weight 0.
  std::vector<int64_t> exclude;
};

struct LaborEdges : SampledEdges {
  std::vector<double> weight;  // 1 / inclusion probability of each sampled edge
  void append(const LaborEdges& o) {
    SampledEdges::append(o);
    weight.insert(weight.end(), o.weight.begin(), o.weight.end());
  }
};

// Validates (fanout >= -1, seeds in range, weights, importance_sampling >= -1) then samples.
LaborEdges sample_labors(const graph::CompressedArrays& adj, int64_t num_rows,
                         const ArrayView& seeds, const LaborOptions& opt);
LaborEdges sample_labors_unchecked(const graph::CompressedArrays& adj, const int64_t* seeds,
                                   int64_t num_seeds, const LaborOptions& opt);

// The c solving sum_i min(1, c p[i]) = k for positive p (k < count of p): the capped entries are
// the largest p, so p is sorted descending in place. Exposed for tests.
double labor_solve_c(std::vector<double>& p, double k);

}  // namespace nodeweave::sampling
