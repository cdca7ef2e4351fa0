// Neighbour sampling of one relation, checked against the graph itself: every sampled edge exists
// and points at its seed, without replacement exactly min(fanout, degree) distinct edges, with
// replacement exactly fanout, weights of zero never picked, excluded edges never picked, weighted
// frequencies proportional to the weights (chi-square, fixed seed), the same sample at 1 and 2
// threads, and typed errors for bad input.
#include "sampling/neighbor_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "graph/relation_graph.h"

namespace nodeweave::sampling {
namespace {

using graph::IdArray;
using graph::RelationGraph;
using graph::RelationGraphPtr;

RelationGraphPtr random_graph(int64_t n, int64_t e, uint64_t seed, DType idtype = DType::Int64) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> s(e), d(e);
  for (int64_t i = 0; i < e; ++i) {
    // Skewed destinations: a few hubs with high in-degree, many nodes with degree 0..3.
    s[i] = static_cast<int64_t>(rng() % n);
    d[i] = static_cast<int64_t>((rng() % 4 == 0) ? rng() % 4 : rng() % n);
  }
  return RelationGraph::from_coo(n, n, IdArray::from_host(s.data(), DType::Int64, e, idtype),
                                 IdArray::from_host(d.data(), DType::Int64, e, idtype));
}

std::vector<int64_t> coo_vec(const IdArray& a) {
  std::vector<int64_t> out(a.length);
  for (int64_t i = 0; i < a.length; ++i)
    out[i] = a.dtype == DType::Int32 ? a.data<int32_t>()[i] : a.data<int64_t>()[i];
  return out;
}

struct Checked {
  std::map<int64_t, std::vector<int64_t>> eids_per_seed;
};

// Checks the structural invariants and returns the sampled edge ids per seed position.
Checked check_sample(const RelationGraph& g, const std::vector<int64_t>& seeds,
                     const SampledEdges& out) {
  const auto src = coo_vec(g.coo().src), dst = coo_vec(g.coo().dst);
  Checked c;
  for (int64_t i = 0; i < out.size(); ++i) {
    const int64_t e = out.eid[i], pos = out.seed_pos[i];
    EXPECT_GE(pos, 0);
    EXPECT_LT(pos, static_cast<int64_t>(seeds.size()));
    EXPECT_EQ(dst[e], seeds[pos]) << "edge " << e << " does not point at its seed";
    EXPECT_EQ(src[e], out.neighbor[i]) << "neighbour is not the edge's source";
    if (i) EXPECT_LE(out.seed_pos[i - 1], pos) << "not grouped by seed";
    c.eids_per_seed[pos].push_back(e);
  }
  return c;
}

TEST(SampleNeighbors, UniformWithoutReplacementTakesMinFanoutDegreeDistinct) {
  for (DType idtype : {DType::Int32, DType::Int64}) {
    auto g = random_graph(200, 3000, 1, idtype);
    std::vector<int64_t> seeds;
    for (int64_t v = 0; v < 200; v += 3) seeds.push_back(v);
    const auto deg = coo_vec(g->in_degrees());
    for (int64_t fanout : {0, 1, 5, 40, -1}) {
      NeighborSampleOptions opt;
      opt.fanout = fanout;
      opt.key = 7;
      auto out = sample_neighbors(g->in_csc(), 200, host_int64_view(seeds), opt);
      auto c = check_sample(*g, seeds, out);
      for (size_t i = 0; i < seeds.size(); ++i) {
        const int64_t want = fanout < 0 ? deg[seeds[i]] : std::min(fanout, deg[seeds[i]]);
        auto& got = c.eids_per_seed[static_cast<int64_t>(i)];
        EXPECT_EQ(static_cast<int64_t>(got.size()), want) << "seed " << seeds[i];
        EXPECT_EQ(std::set<int64_t>(got.begin(), got.end()).size(), got.size()) << "duplicate edge";
      }
    }
  }
}

TEST(SampleNeighbors, WithReplacementTakesExactlyFanout) {
  auto g = random_graph(100, 800, 2);
  std::vector<int64_t> seeds = {0, 1, 2, 3, 50, 99};
  const auto deg = coo_vec(g->in_degrees());
  NeighborSampleOptions opt;
  opt.fanout = 25;
  opt.replace = true;
  opt.key = 3;
  auto out = sample_neighbors(g->in_csc(), 100, host_int64_view(seeds), opt);
  auto c = check_sample(*g, seeds, out);
  for (size_t i = 0; i < seeds.size(); ++i)
    EXPECT_EQ(static_cast<int64_t>(c.eids_per_seed[static_cast<int64_t>(i)].size()),
              deg[seeds[i]] ? 25 : 0);
}

TEST(SampleNeighbors, OutEdgesUseTheCsr) {
  auto g = random_graph(50, 400, 4);
  std::vector<int64_t> seeds = {3, 9};
  NeighborSampleOptions opt;
  opt.fanout = 4;
  auto out = sample_neighbors(g->out_csr(), 50, host_int64_view(seeds), opt);
  const auto src = coo_vec(g->coo().src), dst = coo_vec(g->coo().dst);
  for (int64_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(src[out.eid[i]], seeds[out.seed_pos[i]]);
    EXPECT_EQ(dst[out.eid[i]], out.neighbor[i]);
  }
}

TEST(SampleNeighbors, WeightedFrequenciesFollowTheWeights) {
  // One seed with 6 in-edges of weights 0, 1, 2, 3, 4, 10; fanout 1 many times.
  const std::vector<int64_t> s = {1, 2, 3, 4, 5, 6}, d(6, 0);
  auto g = RelationGraph::from_coo(7, 7, IdArray::from_host(s.data(), DType::Int64, 6, DType::Int64),
                                   IdArray::from_host(d.data(), DType::Int64, 6, DType::Int64));
  const std::vector<double> w = {0, 1, 2, 3, 4, 10};
  const WeightedRows rows = build_weighted_rows(g->in_csc(), 7, host_float64_view(w));
  for (bool cached : {false, true}) {
    for (bool replace : {false, true}) {
      std::vector<int64_t> count(6, 0);
      const int trials = 20000;
      std::vector<int64_t> seeds = {0};
      for (int t = 0; t < trials; ++t) {
        NeighborSampleOptions opt;
        opt.fanout = 1;
        opt.replace = replace;
        opt.weights = host_float64_view(w);
        opt.weighted_rows = cached ? &rows : nullptr;
        opt.key = static_cast<uint64_t>(t);
        auto out = sample_neighbors(g->in_csc(), 7, host_int64_view(seeds), opt);
        ASSERT_EQ(out.size(), 1);
        ++count[out.eid[0]];
      }
      EXPECT_EQ(count[0], 0) << "a zero-weight edge was sampled";
      double chi2 = 0;
      for (int e = 1; e < 6; ++e) {
        const double expect = trials * w[e] / 20.0;
        chi2 += (count[e] - expect) * (count[e] - expect) / expect;
      }
      EXPECT_LT(chi2, 18.47) << "cached=" << cached << " replace=" << replace;  // 4 dof, p=0.001
    }
  }
}

TEST(SampleNeighbors, WeightedWithoutReplacementSkipsZeroWeightsAndRepeats) {
  auto g = random_graph(300, 6000, 5);
  std::vector<double> w(6000);
  std::mt19937_64 rng(1);
  for (auto& x : w) x = (rng() % 3 == 0) ? 0.0 : static_cast<double>(rng() % 100) / 7.0;
  const WeightedRows rows = build_weighted_rows(g->in_csc(), 300, host_float64_view(w));
  std::vector<int64_t> seeds(300);
  for (int64_t v = 0; v < 300; ++v) seeds[v] = v;
  for (bool cached : {false, true}) {
    NeighborSampleOptions opt;
    opt.fanout = 6;
    opt.weights = host_float64_view(w);
    opt.weighted_rows = cached ? &rows : nullptr;
    opt.key = 11;
    auto out = sample_neighbors(g->in_csc(), 300, host_int64_view(seeds), opt);
    auto c = check_sample(*g, seeds, out);
    const auto dst = coo_vec(g->coo().dst);
    std::vector<int64_t> positive(300, 0);
    for (int64_t e = 0; e < 6000; ++e) positive[dst[e]] += w[e] > 0;
    for (int64_t v = 0; v < 300; ++v) {
      auto& got = c.eids_per_seed[v];
      EXPECT_EQ(static_cast<int64_t>(got.size()), std::min<int64_t>(6, positive[v]));
      EXPECT_EQ(std::set<int64_t>(got.begin(), got.end()).size(), got.size());
      for (int64_t e : got) EXPECT_GT(w[e], 0);
    }
  }
}

TEST(SampleNeighbors, ExcludedEdgesAreNeverSampled) {
  auto g = random_graph(60, 900, 6);
  std::vector<int64_t> seeds(60);
  for (int64_t v = 0; v < 60; ++v) seeds[v] = v;
  NeighborSampleOptions opt;
  opt.fanout = -1;
  for (int64_t e = 0; e < 900; e += 2) opt.exclude.push_back(e);
  auto out = sample_neighbors(g->in_csc(), 60, host_int64_view(seeds), opt);
  EXPECT_EQ(out.size(), 450);
  for (int64_t e : out.eid) EXPECT_EQ(e % 2, 1);
  opt.fanout = 3;
  out = sample_neighbors(g->in_csc(), 60, host_int64_view(seeds), opt);
  check_sample(*g, seeds, out);
  for (int64_t e : out.eid) EXPECT_EQ(e % 2, 1);
}

TEST(SampleNeighbors, SameSampleAtAnyThreadCount) {
  auto g = random_graph(20000, 400000, 7);
  std::vector<double> w(400000);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(i % 13);
  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < 20000; v += 2) seeds.push_back(v);
  const int before = get_num_threads();
  for (bool weighted : {false, true}) {
    for (bool replace : {false, true}) {
      NeighborSampleOptions opt;
      opt.fanout = 7;
      opt.replace = replace;
      opt.key = 99;
      if (weighted) opt.weights = host_float64_view(w);
      set_num_threads(1);
      auto one = sample_neighbors(g->in_csc(), 20000, host_int64_view(seeds), opt);
      set_num_threads(2);
      auto two = sample_neighbors(g->in_csc(), 20000, host_int64_view(seeds), opt);
      EXPECT_EQ(one.eid, two.eid);
      EXPECT_EQ(one.seed_pos, two.seed_pos);
      opt.key = 100;
      auto other = sample_neighbors(g->in_csc(), 20000, host_int64_view(seeds), opt);
      EXPECT_NE(one.eid, other.eid) << "a different key should give a different sample";
    }
  }
  set_num_threads(before);
}

TEST(SampleNeighbors, BadInputRaisesTypedErrors) {
  auto g = random_graph(10, 30, 8);
  std::vector<int64_t> seeds = {0, 10};
  NeighborSampleOptions opt;
  opt.fanout = 2;
  EXPECT_THROW(sample_neighbors(g->in_csc(), 10, host_int64_view(seeds), opt), IndexError);
  seeds = {0};
  opt.fanout = -2;
  EXPECT_THROW(sample_neighbors(g->in_csc(), 10, host_int64_view(seeds), opt), ValueError);
  opt.fanout = 2;
  std::vector<double> w(29, 1.0);
  opt.weights = host_float64_view(w);
  EXPECT_THROW(sample_neighbors(g->in_csc(), 10, host_int64_view(seeds), opt), ValueError);
  w.assign(30, 1.0);
  w[3] = -1;
  opt.weights = host_float64_view(w);
  EXPECT_THROW(sample_neighbors(g->in_csc(), 10, host_int64_view(seeds), opt), ValueError);
  w[3] = std::nan("");
  EXPECT_THROW(sample_neighbors(g->in_csc(), 10, host_int64_view(seeds), opt), ValueError);
}

}  // namespace
}  // namespace nodeweave::sampling

namespace nodeweave::sampling {
namespace {

// The alias table of every row implies exactly the row's normalized weights: entry i is drawn with
// probability (1/d) * (keep_i + sum over j aliasing i of (1 - keep_j)), zero weights never.
TEST(WeightedRows, AliasTablesImplyTheWeights) {
  auto g = random_graph(80, 2000, 12);
  std::mt19937_64 rng(5);
  std::vector<double> w(2000);
  for (auto& x : w) x = (rng() % 4 == 0) ? 0.0 : static_cast<double>(rng() % 1000) / 37.0;
  const auto& csc = g->in_csc();
  const WeightedRows rows = build_weighted_rows(csc, 80, host_float64_view(w));
  const int64_t* indptr = csc.indptr.data<int64_t>();
  const int64_t* eids = csc.eids.data<int64_t>();
  for (int64_t r = 0; r < 80; ++r) {
    const int64_t b = indptr[r], d = indptr[r + 1] - b;
    double total = 0;
    int64_t nz = 0;
    for (int64_t j = 0; j < d; ++j) {
      total += w[eids[b + j]];
      nz += w[eids[b + j]] > 0;
    }
    EXPECT_EQ(rows.nonzero[r], nz);
    if (nz == 0) continue;
    std::vector<double> p(d, 0.0);
    for (int64_t j = 0; j < d; ++j) {
      const AliasEntry a = rows.entry[b + j];
      const double keep = std::max(0.0, static_cast<double>(a.keep));
      p[j] += keep / d;
      ASSERT_LT(a.alias, static_cast<uint32_t>(d));
      p[a.alias] += (1.0 - keep) / d;
    }
    for (int64_t j = 0; j < d; ++j) {
      EXPECT_NEAR(p[j], w[eids[b + j]] / total, 1e-6) << "row " << r << " entry " << j;
      EXPECT_EQ(rows.entry[b + j].keep < 0, w[eids[b + j]] == 0);
    }
  }
}

}  // namespace
}  // namespace nodeweave::sampling

namespace nodeweave::sampling {
namespace {

// most_picks is what uniform sampling gives exactly (without exclusions or zero weights), and a
// bound when weights leave fewer edges to pick.
TEST(SampleNeighbors, MostPicksIsExactForUniformAndABoundOtherwise) {
  auto g = random_graph(400, 5000, 12);
  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < 400; v += 3) seeds.push_back(v);
  const auto n = static_cast<int64_t>(seeds.size());
  std::vector<double> w(5000);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(i % 3);  // a third are zero
  for (bool replace : {false, true}) {
    for (int64_t fanout : {0, 1, 5, 40, -1}) {
      if (replace && fanout < 0) continue;
      NeighborSampleOptions opt;
      opt.fanout = fanout;
      opt.replace = replace;
      opt.key = 5;
      const int64_t most = most_picks(g->in_csc(), seeds.data(), n, fanout, replace);
      EXPECT_EQ(sample_neighbors_unchecked(g->in_csc(), seeds.data(), n, opt).size(), most)
          << "fanout " << fanout << " replace " << replace;
      opt.weights = host_float64_view(w);
      EXPECT_LE(sample_neighbors_unchecked(g->in_csc(), seeds.data(), n, opt).size(), most);
    }
  }
}

}  // namespace
}  // namespace nodeweave::sampling
