// LABOR sampling: per seed, the p_ts of its row and the c_s that makes `fanout` edges expected;
// importance rounds over the union of the seeds' neighbours; then one pass that keeps the edges
// whose shared variate falls under their inclusion probability.
#include "sampling/labor_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "graph/id_hash_map.h"
#include "sampling/edge_weights.h"
#include "sampling/ordered_chunks.h"
#include "sampling/random.h"

namespace nodeweave::sampling {

double labor_solve_c(std::vector<double>& p, double k) {
  std::sort(p.begin(), p.end(), std::greater<double>());
  double rest = 0;  // sum of the uncapped p
  for (double x : p) rest += x;
  // With j entries capped at 1: c = (k - j) / (sum of the others), valid when c * p[j] <= 1.
  for (size_t j = 0; j < p.size(); ++j) {
    const double c = (k - static_cast<double>(j)) / rest;
    if (c * p[j] <= 1.0) return c;
    rest -= p[j];
  }
  return std::numeric_limits<double>::infinity();
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename Id>
LaborEdges labor_typed(const graph::CompressedArrays& adj, const int64_t* seeds, int64_t num_seeds,
                       const LaborOptions& opt) {
  const Id* indptr = adj.indptr.data<Id>();
  const Id* indices = adj.indices.data<Id>();
  const Id* eids = adj.eids.data<Id>();
  const bool weighted = opt.weights.data != nullptr;
  const bool excluding = !opt.exclude.empty();
  auto w_at = [&](int64_t entry) {
    const int64_t eid = static_cast<int64_t>(eids[entry]);
    if (excluding && std::binary_search(opt.exclude.begin(), opt.exclude.end(), eid)) return 0.0;
    return weighted ? edge_weight_at(opt.weights, eid) : 1.0;
  };
  // Importance of each neighbour, indexed through a map of the neighbours of the batch.
  const bool importance = opt.importance_sampling != 0 && opt.fanout >= 0;
  graph::IdHashMap local;
  std::vector<double> pi;
  if (importance) {
    for (int64_t i = 0; i < num_seeds; ++i)
      for (Id e = indptr[seeds[i]]; e < indptr[seeds[i] + 1]; ++e) local.insert(static_cast<int64_t>(indices[e]));
    pi.assign(static_cast<size_t>(local.size()), 1.0);
  }
  auto pi_of = [&](int64_t entry) {
    return importance ? pi[static_cast<size_t>(local.find(static_cast<int64_t>(indices[entry])))] : 1.0;
  };
  // c of every seed for the current pi (inf: every positive edge is kept).
  std::vector<double> c(static_cast<size_t>(num_seeds), kInf);
  auto solve_all = [&] {
    parallel_for(0, num_seeds, 256, [&](int64_t b, int64_t e) {
      std::vector<double> p;
      for (int64_t i = b; i < e; ++i) {
        const int64_t row = seeds[i], begin = static_cast<int64_t>(indptr[row]);
        const int64_t d = static_cast<int64_t>(indptr[row + 1]) - begin;
        p.clear();
        for (int64_t j = 0; j < d; ++j) {
          const double x = w_at(begin + j) * pi_of(begin + j);
          if (x > 0) p.push_back(x);
        }
        const int64_t k = opt.fanout;
        if (k < 0 || k >= static_cast<int64_t>(p.size())) {
          c[static_cast<size_t>(i)] = kInf;
        } else if (!weighted && !importance && !excluding) {
          c[static_cast<size_t>(i)] = static_cast<double>(k) / static_cast<double>(d);
        } else {
          c[static_cast<size_t>(i)] = labor_solve_c(p, static_cast<double>(k));
        }
      }
    });
  };
  solve_all();
  const int rounds = opt.importance_sampling < 0 ? 100 : opt.importance_sampling;
  for (int round = 0; importance && round < rounds; ++round) {
    // pi_t <- the largest inclusion probability of t among its seeds. Serial over the seeds, so
    // the result does not depend on the thread count.
    std::vector<double> next(pi.size(), 0.0);
    for (int64_t i = 0; i < num_seeds; ++i) {
      const int64_t row = seeds[i];
      for (Id e = indptr[row]; e < indptr[row + 1]; ++e) {
        const double incl = std::min(1.0, c[static_cast<size_t>(i)] * w_at(e) * pi_of(e));
        double& slot = next[static_cast<size_t>(local.find(static_cast<int64_t>(indices[e])))];
        slot = std::max(slot, incl);
      }
    }
    for (double& x : next)
      if (!(x > 0)) x = 1.0;  // a neighbour only zero-weight edges reach keeps any positive pi
    pi.swap(next);
    const std::vector<double> before = c;
    solve_all();
    double change = 0;
    for (size_t i = 0; i < c.size(); ++i)
      if (std::isfinite(c[i]) && std::isfinite(before[i]))
        change = std::max(change, std::abs(c[i] - before[i]) / std::max(c[i], before[i]));
    if (opt.importance_sampling < 0 && change < 1e-4) break;
  }
  // Keep edge (t, s) when r_t <= min(1, c_s p_ts); chunks joined in seed order.
  auto parts = ordered_chunks<LaborEdges>(num_seeds, 256, [&](int64_t b, int64_t e) {
    LaborEdges out;
    for (int64_t i = b; i < e; ++i) {
      const int64_t row = seeds[i];
      for (Id entry = indptr[row]; entry < indptr[row + 1]; ++entry) {
        const double p = w_at(entry) * pi_of(entry);
        if (!(p > 0)) continue;
        const double incl = std::min(1.0, c[static_cast<size_t>(i)] * p);
        const int64_t t = static_cast<int64_t>(indices[entry]);
        if (incl < 1.0 && uniform_of(opt.variate_key, static_cast<uint64_t>(t)) > incl) continue;
        out.seed_pos.push_back(i);
        out.neighbor.push_back(t);
        out.eid.push_back(static_cast<int64_t>(eids[entry]));
        out.weight.push_back(1.0 / incl);
      }
    }
    return out;
  });
  return join_chunks(std::move(parts));
}

}  // namespace

LaborEdges sample_labors_unchecked(const graph::CompressedArrays& adj, const int64_t* seeds,
                                   int64_t num_seeds, const LaborOptions& opt) {
  if (adj.indptr.dtype == DType::Int32) return labor_typed<int32_t>(adj, seeds, num_seeds, opt);
  return labor_typed<int64_t>(adj, seeds, num_seeds, opt);
}

LaborEdges sample_labors(const graph::CompressedArrays& adj, int64_t num_rows, const ArrayView& seeds,
                         const LaborOptions& opt) {
  const char* fn = "sample_labors";
  check_fanout(fn, "fanout", opt.fanout);
  NW_CHECK(opt.importance_sampling >= -1, ValueError, fn,
           ": importance_sampling must be -1 (until converged) or a number of rounds >= 0, got ",
           opt.importance_sampling);
  const std::vector<int64_t> ids = checked_seeds(fn, adj, num_rows, seeds, opt.weights, opt.exclude);
  return sample_labors_unchecked(adj, ids.data(), static_cast<int64_t>(ids.size()), opt);
}

}  // namespace nodeweave::sampling
