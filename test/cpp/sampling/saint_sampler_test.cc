// GraphSAINT node sets: single draws follow the stated probabilities (chi-square, fixed keys), node
// sets are sorted and distinct, walks follow edges, the same key gives the same set at 1 and 2
// threads, the normalization equals a direct count over the same pre-sampled sets, and bad input
// raises ValueError.
#include "sampling/saint_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "sampling/random.h"

namespace nodeweave::sampling {
namespace {

using graph::IdArray;
using graph::RelationGraph;
using graph::RelationGraphPtr;

struct Edges {
  int64_t n;
  std::vector<int64_t> src, dst;
  RelationGraphPtr graph(DType idtype = DType::Int64) const {
    const int64_t e = static_cast<int64_t>(src.size());
    return RelationGraph::from_coo(n, n, IdArray::from_host(src.data(), DType::Int64, e, idtype),
                                   IdArray::from_host(dst.data(), DType::Int64, e, idtype));
  }
};

// Edges only from lower to higher ids (no pair is joined both ways), so the two endpoints of a
// single sampled edge name it; node 0 has no in-edges, the last nodes no out-edges.
Edges forward_graph(int64_t n, int64_t e, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::set<std::pair<int64_t, int64_t>> seen;
  Edges g{n, {}, {}};
  while (static_cast<int64_t>(g.src.size()) < e) {
    int64_t a = static_cast<int64_t>(rng() % n), b = static_cast<int64_t>(rng() % n);
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    if (!seen.insert({a, b}).second) continue;
    g.src.push_back(a);
    g.dst.push_back(b);
  }
  return g;
}

double chi_square(const std::vector<double>& observed, const std::vector<double>& weight) {
  double total_obs = 0, total_w = 0, chi2 = 0;
  for (size_t i = 0; i < observed.size(); ++i) total_obs += observed[i], total_w += weight[i];
  for (size_t i = 0; i < observed.size(); ++i) {
    const double expect = total_obs * weight[i] / total_w;
    chi2 += (observed[i] - expect) * (observed[i] - expect) / expect;
  }
  return chi2;
}

// Upper 0.1% point of chi-square with `dof` degrees of freedom (Wilson-Hilferty).
double chi2_critical(double dof) {
  const double z = 3.0902, t = 2.0 / (9.0 * dof);
  const double c = 1.0 - t + z * std::sqrt(t);
  return dof * c * c * c;
}

TEST(SaintSampler, NodeDrawsFollowOutDegree) {
  const Edges e = forward_graph(30, 120, 1);
  SaintSampler s(e.graph(), {SaintMode::kNode, 1, 0});
  std::vector<double> count(30, 0), weight(30, 0);
  for (int64_t u : e.src) weight[u] += 1;
  for (auto& w : weight) w = std::max(w, 1.0);  // nodes without out-edges stay reachable
  const int trials = 30000;
  for (int t = 0; t < trials; ++t) {
    const std::vector<int64_t> nodes = s.sample_nodes(derive_key(7, t));
    ASSERT_EQ(nodes.size(), 1u);
    count[nodes[0]] += 1;
  }
  EXPECT_LT(chi_square(count, weight), chi2_critical(29));
}

TEST(SaintSampler, EdgeDrawsFollowInverseDegrees) {
  const Edges e = forward_graph(25, 80, 2);
  SaintSampler s(e.graph(DType::Int32), {SaintMode::kEdge, 1, 0});
  std::vector<double> in(25, 0), out(25, 0);
  for (size_t i = 0; i < e.src.size(); ++i) out[e.src[i]] += 1, in[e.dst[i]] += 1;
  std::map<std::pair<int64_t, int64_t>, size_t> id;
  std::vector<double> weight, count(e.src.size(), 0);
  for (size_t i = 0; i < e.src.size(); ++i) {
    id[{e.src[i], e.dst[i]}] = i;
    weight.push_back(1.0 / in[e.dst[i]] + 1.0 / out[e.src[i]]);
  }
  const int trials = 40000;
  for (int t = 0; t < trials; ++t) {
    const std::vector<int64_t> nodes = s.sample_nodes(derive_key(3, t));
    ASSERT_EQ(nodes.size(), 2u);
    count[id.at({nodes[0], nodes[1]})] += 1;  // sorted: the lower id is the source
  }
  EXPECT_LT(chi_square(count, weight), chi2_critical(static_cast<double>(e.src.size()) - 1));
}

TEST(SaintSampler, WalkStepsFollowOutEdgesUniformly) {
  // One root, one step: P({r, x}) = 1/n * 1/outdeg(r); dead-end roots give {r}.
  const Edges e = forward_graph(12, 30, 4);
  SaintSampler s(e.graph(), {SaintMode::kWalk, 1, 1});
  std::map<std::pair<int64_t, int64_t>, double> count;
  std::vector<double> out(12, 0);
  for (int64_t u : e.src) out[u] += 1;
  const int trials = 30000;
  for (int t = 0; t < trials; ++t) {
    const std::vector<int64_t> nodes = s.sample_nodes(derive_key(5, t));
    ASSERT_TRUE(nodes.size() == 1 || nodes.size() == 2);
    if (nodes.size() == 1) {
      EXPECT_EQ(out[nodes[0]], 0) << "a walk stopped at a node with out-edges";
      count[{nodes[0], -1}] += 1;
    } else {
      count[{nodes[0], nodes[1]}] += 1;
    }
  }
  std::vector<double> observed, weight;
  for (int64_t v = 0; v < 12; ++v)
    if (out[v] == 0) {
      observed.push_back(count[{v, -1}]);
      weight.push_back(1.0);
    }
  for (size_t i = 0; i < e.src.size(); ++i) {
    observed.push_back(count[{e.src[i], e.dst[i]}]);
    weight.push_back(1.0 / out[e.src[i]]);
  }
  double total = 0;
  for (double o : observed) total += o;
  ASSERT_EQ(total, trials) << "a walk reached a pair that is not an edge";
  EXPECT_LT(chi_square(observed, weight), chi2_critical(static_cast<double>(observed.size()) - 1));
}

TEST(SaintSampler, SetsAreSortedDistinctAndThreadCountFree) {
  const Edges e = forward_graph(5000, 40000, 6);
  const int before = get_num_threads();
  for (SaintConfig cfg :
       {SaintConfig{SaintMode::kNode, 20000, 0}, SaintConfig{SaintMode::kEdge, 20000, 0},
        SaintConfig{SaintMode::kWalk, 3000, 4}}) {
    SaintSampler s(e.graph(), cfg);
    set_num_threads(1);
    const std::vector<int64_t> a = s.sample_nodes(99);
    set_num_threads(2);
    const std::vector<int64_t> b = s.sample_nodes(99);
    EXPECT_EQ(a, b);
    EXPECT_TRUE(std::adjacent_find(a.begin(), a.end(), std::greater_equal<int64_t>()) == a.end());
    EXPECT_NE(a, s.sample_nodes(100));
    const SaintNormalization n1 = s.normalization(8, 1);
    set_num_threads(1);
    const SaintNormalization n2 = s.normalization(8, 1);
    EXPECT_EQ(n1.node_count, n2.node_count);
    EXPECT_EQ(n1.edge_count, n2.edge_count);
  }
  set_num_threads(before);
}

TEST(SaintSampler, NormalizationEqualsADirectCount) {
  const Edges e = forward_graph(40, 150, 8);
  SaintSampler s(e.graph(), {SaintMode::kWalk, 4, 3});
  const int64_t samples = 25;
  const SaintNormalization norm = s.normalization(samples, 77);
  std::vector<int64_t> cv(40, 0), ce(e.src.size(), 0);
  for (int64_t i = 0; i < samples; ++i) {
    const std::vector<int64_t> nodes = s.sample_nodes(derive_key(77, i));
    std::set<int64_t> in(nodes.begin(), nodes.end());
    for (int64_t v : nodes) ++cv[v];
    for (size_t j = 0; j < e.src.size(); ++j) ce[j] += in.count(e.src[j]) && in.count(e.dst[j]);
  }
  EXPECT_EQ(norm.node_count, cv);
  EXPECT_EQ(norm.edge_count, ce);
  for (int64_t v = 0; v < 40; ++v)
    EXPECT_DOUBLE_EQ(norm.loss_norm[v], samples / (std::max<int64_t>(cv[v], 1) * 40.0));
  for (size_t j = 0; j < e.src.size(); ++j)
    EXPECT_DOUBLE_EQ(norm.aggr_norm[j], static_cast<double>(std::max<int64_t>(cv[e.dst[j]], 1)) /
                                            std::max<int64_t>(ce[j], 1));
}

TEST(SaintSampler, BadInputRaisesValueError) {
  const Edges e = forward_graph(10, 20, 9);
  EXPECT_THROW(SaintSampler(e.graph(), {SaintMode::kNode, 0, 0}), ValueError);
  EXPECT_THROW(SaintSampler(e.graph(), {SaintMode::kWalk, 3, -1}), ValueError);
  EXPECT_THROW(SaintSampler(Edges{4, {}, {}}.graph(), {SaintMode::kEdge, 3, 0}), ValueError);
  EXPECT_THROW(SaintSampler(Edges{0, {}, {}}.graph(), {SaintMode::kNode, 3, 0}), ValueError);
  SaintSampler ok(e.graph(), {SaintMode::kNode, 3, 0});
  EXPECT_THROW(ok.normalization(0, 1), ValueError);
}

}  // namespace
}  // namespace nodeweave::sampling
