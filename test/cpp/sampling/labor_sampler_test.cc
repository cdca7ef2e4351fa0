// LABOR: the per-seed rate c solves sum min(1, c p) = k exactly; kept edges exist and point at
// their seed with weight 1 / inclusion probability; seeds sharing neighbours pick alike; the same
// sample at 1 and 2 threads; bad input raises.
#include "sampling/labor_sampler.h"

#include <gtest/gtest.h>

#include <random>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "graph/relation_graph.h"

namespace nodeweave::sampling {
namespace {

using graph::IdArray;
using graph::RelationGraph;

TEST(LaborSolveC, MeetsTheFanoutExactly) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 200; ++trial) {
    const int d = 2 + static_cast<int>(rng() % 40);
    std::vector<double> p(d);
    for (double& x : p) x = (rng() % 3 == 0) ? 50.0 * (1 + rng() % 5) : 0.1 + (rng() % 100) / 10.0;
    const double k = 1 + static_cast<double>(rng() % (d - 1));
    std::vector<double> q = p;
    const double c = labor_solve_c(q, k);
    double sum = 0;
    for (double x : p) sum += std::min(1.0, c * x);
    EXPECT_NEAR(sum, k, 1e-9 * d) << "trial " << trial;
  }
}

graph::RelationGraphPtr bipartite_shared() {
  // Seeds 0 and 1 both have in-neighbours 2..9; seed 10 has 11..13.
  std::vector<int64_t> s, d;
  for (int64_t u = 2; u < 10; ++u) {
    s.push_back(u);
    d.push_back(0);
    s.push_back(u);
    d.push_back(1);
  }
  for (int64_t u = 11; u < 14; ++u) {
    s.push_back(u);
    d.push_back(10);
  }
  const int64_t e = static_cast<int64_t>(s.size());
  return RelationGraph::from_coo(14, 14, IdArray::from_host(s.data(), DType::Int64, e, DType::Int64),
                                 IdArray::from_host(d.data(), DType::Int64, e, DType::Int64));
}

TEST(SampleLabors, SharedNeighboursArePickedAlikeWithInverseProbabilityWeights) {
  auto g = bipartite_shared();
  std::vector<int64_t> seeds = {0, 1, 10};
  double total0 = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    LaborOptions opt;
    opt.fanout = 3;
    opt.variate_key = static_cast<uint64_t>(t);
    LaborEdges out = sample_labors(g->in_csc(), 14, host_int64_view(seeds), opt);
    std::vector<int64_t> picked0, picked1;
    int64_t count10 = 0;
    for (int64_t i = 0; i < out.size(); ++i) {
      const int64_t pos = out.seed_pos[i];
      if (pos == 0) picked0.push_back(out.neighbor[i]);
      if (pos == 1) picked1.push_back(out.neighbor[i]);
      if (pos == 2) {
        ++count10;
        EXPECT_DOUBLE_EQ(out.weight[i], 1.0);  // degree 3 = fanout: every edge, probability 1
      } else {
        EXPECT_DOUBLE_EQ(out.weight[i], 8.0 / 3.0);
      }
    }
    EXPECT_EQ(picked0, picked1);
    EXPECT_EQ(count10, 3);
    total0 += static_cast<double>(picked0.size());
  }
  EXPECT_NEAR(total0 / trials, 3.0, 0.1);  // Poisson sampling: fanout edges in expectation
}

TEST(SampleLabors, SameSampleAtAnyThreadCount) {
  std::mt19937_64 rng(3);
  const int64_t n = 5000, e = 80000;
  std::vector<int64_t> s(e), d(e);
  for (int64_t i = 0; i < e; ++i) {
    s[i] = static_cast<int64_t>(rng() % n);
    d[i] = static_cast<int64_t>(rng() % n);
  }
  auto g = RelationGraph::from_coo(n, n, IdArray::from_host(s.data(), DType::Int64, e, DType::Int64),
                                   IdArray::from_host(d.data(), DType::Int64, e, DType::Int64));
  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < n; v += 3) seeds.push_back(v);
  const int before = get_num_threads();
  for (int rounds : {0, 2, -1}) {
    LaborOptions opt;
    opt.fanout = 5;
    opt.importance_sampling = rounds;
    opt.variate_key = 17;
    set_num_threads(1);
    auto one = sample_labors(g->in_csc(), n, host_int64_view(seeds), opt);
    set_num_threads(2);
    auto two = sample_labors(g->in_csc(), n, host_int64_view(seeds), opt);
    EXPECT_EQ(one.eid, two.eid);
    EXPECT_EQ(one.weight, two.weight);
  }
  set_num_threads(before);
}

TEST(SampleLabors, BadInput) {
  auto g = bipartite_shared();
  std::vector<int64_t> seeds = {14};
  LaborOptions opt;
  opt.fanout = 2;
  EXPECT_THROW(sample_labors(g->in_csc(), 14, host_int64_view(seeds), opt), IndexError);
  seeds = {0};
  opt.fanout = -3;
  EXPECT_THROW(sample_labors(g->in_csc(), 14, host_int64_view(seeds), opt), ValueError);
  opt.fanout = 2;
  opt.importance_sampling = -2;
  EXPECT_THROW(sample_labors(g->in_csc(), 14, host_int64_view(seeds), opt), ValueError);
}

}  // namespace
}  // namespace nodeweave::sampling
