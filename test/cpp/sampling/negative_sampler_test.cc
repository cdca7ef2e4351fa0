// Negative samplers checked against the relation's own edge list: global negatives are never an
// edge (a std::set of pairs) nor, when excluded, a self-loop; without replacement no pair repeats;
// every edge-lookup strategy gives the same output; a dense graph gives every non-edge and no more;
// per-source negatives keep the positive edge's source and spread uniformly over destinations
// (chi-square, fixed key); both samplers give the same output at 1 and 2 threads; bad input raises
// the typed exception naming the argument.
#include "sampling/negative_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <utility>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::sampling {
namespace {

using graph::IdArray;
using graph::RelationGraph;
using graph::RelationGraphPtr;
using Pair = std::pair<int64_t, int64_t>;

struct Edges {
  std::vector<int64_t> src, dst;
};

// Random edges with self-loops and parallel edges, listed so that CSR rows are NOT sorted by
// column (edge ids are shuffled relative to columns).
Edges random_edges(int64_t ns, int64_t nd, int64_t e, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Edges out;
  for (int64_t i = 0; i < e; ++i) {
    out.src.push_back(static_cast<int64_t>(rng() % ns));
    out.dst.push_back(static_cast<int64_t>(rng() % nd));
  }
  if (e >= 2 && ns == nd) {
    out.dst[0] = out.src[0];  // a self-loop
    out.src[1] = out.src[0];  // and a second edge from the same source, to a higher id first
    out.dst[1] = (out.dst[0] + 1) % nd;
  }
  return out;
}

RelationGraphPtr make(int64_t ns, int64_t nd, const Edges& e, DType idtype) {
  const auto n = static_cast<int64_t>(e.src.size());
  return RelationGraph::from_coo(ns, nd, IdArray::from_host(e.src.data(), DType::Int64, n, idtype),
                                 IdArray::from_host(e.dst.data(), DType::Int64, n, idtype));
}

std::set<Pair> edge_set(const Edges& e) {
  std::set<Pair> s;
  for (size_t i = 0; i < e.src.size(); ++i) s.insert({e.src[i], e.dst[i]});
  return s;
}

// Runs fn at 1 and at 2 threads and returns both results.
template <typename F>
auto at_1_and_2_threads(const F& fn) {
  const int before = get_num_threads();
  set_num_threads(1);
  auto one = fn();
  set_num_threads(2);
  auto two = fn();
  set_num_threads(before);
  return std::make_pair(std::move(one), std::move(two));
}

TEST(GlobalUniformNegatives, NeverAnEdgeNorALoopNorARepeat) {
  for (DType idtype : {DType::Int32, DType::Int64}) {
    const Edges e = random_edges(300, 300, 4000, 1);
    const auto g = make(300, 300, e, idtype);
    const std::set<Pair> edges = edge_set(e);
    GlobalNegativeOptions opt;
    opt.num_samples = 5000;
    opt.key = 42;
    const NegativePairs p = global_uniform_negatives(*g, opt);
    ASSERT_EQ(p.size(), 5000);
    std::set<Pair> seen;
    for (int64_t i = 0; i < p.size(); ++i) {
      ASSERT_GE(p.src[i], 0);
      ASSERT_LT(p.src[i], 300);
      ASSERT_GE(p.dst[i], 0);
      ASSERT_LT(p.dst[i], 300);
      EXPECT_EQ(edges.count({p.src[i], p.dst[i]}), 0u) << "negative is an edge";
      EXPECT_NE(p.src[i], p.dst[i]) << "self-loop although excluded";
      EXPECT_TRUE(seen.insert({p.src[i], p.dst[i]}).second) << "repeat without replacement";
    }
  }
}

TEST(GlobalUniformNegatives, SelfLoopsAllowedWhenNotExcludedAndRepeatsWithReplacement) {
  // 4 nodes, no edges: 16 pairs, 4 of them loops. Many draws with replacement must hit loops and
  // repeat pairs; without replacement and loops allowed, exactly the 16 pairs come back.
  const auto g = make(4, 4, Edges{}, DType::Int64);
  GlobalNegativeOptions opt;
  opt.num_samples = 400;
  opt.exclude_self_loops = false;
  opt.replace = true;
  opt.key = 3;
  NegativePairs p = global_uniform_negatives(*g, opt);
  ASSERT_EQ(p.size(), 400);
  int loops = 0;
  for (int64_t i = 0; i < p.size(); ++i) loops += p.src[i] == p.dst[i];
  EXPECT_GT(loops, 50);  // about 100 expected
  EXPECT_LT(loops, 150);
  opt.replace = false;
  p = global_uniform_negatives(*g, opt);
  std::set<Pair> got;
  for (int64_t i = 0; i < p.size(); ++i) got.insert({p.src[i], p.dst[i]});
  EXPECT_EQ(p.size(), 16);
  EXPECT_EQ(got.size(), 16u);
}

TEST(GlobalUniformNegatives, DenseGraphGivesEveryNonEdgeAndNoMore) {
  // A complete 30-node graph without 7 pairs (and loops excluded): only those 7 pairs qualify.
  Edges e;
  std::set<Pair> missing = {{0, 1}, {3, 2}, {5, 29}, {29, 0}, {10, 11}, {11, 10}, {17, 4}};
  for (int64_t u = 0; u < 30; ++u)
    for (int64_t v = 0; v < 30; ++v)
      if (u != v && !missing.count({u, v})) e.src.push_back(u), e.dst.push_back(v);
  const auto g = make(30, 30, e, DType::Int32);
  GlobalNegativeOptions opt;
  opt.num_samples = 20;
  opt.key = 11;
  const NegativePairs p = global_uniform_negatives(*g, opt);
  std::set<Pair> got;
  for (int64_t i = 0; i < p.size(); ++i) got.insert({p.src[i], p.dst[i]});
  EXPECT_EQ(got, missing);
  EXPECT_EQ(p.size(), 7);
}

TEST(GlobalUniformNegatives, LookupStrategiesAgreeAndThreadCountDoesNotMatter) {
  const Edges e = random_edges(500, 200, 20000, 5);  // bipartite, dense rows, unsorted
  const auto g = make(500, 200, e, DType::Int64);
  GlobalNegativeOptions opt;
  opt.num_samples = 3000;
  opt.exclude_self_loops = false;
  opt.key = 77;
  std::vector<NegativePairs> outs;
  for (EdgeLookup l : {EdgeLookup::kAuto, EdgeLookup::kRowScan, EdgeLookup::kSortedRows}) {
    opt.lookup = l;
    auto [one, two] = at_1_and_2_threads([&] { return global_uniform_negatives(*g, opt); });
    EXPECT_EQ(one.src, two.src);
    EXPECT_EQ(one.dst, two.dst);
    outs.push_back(std::move(one));
  }
  for (const auto& o : outs) {
    EXPECT_EQ(o.src, outs[0].src);
    EXPECT_EQ(o.dst, outs[0].dst);
  }
  const std::set<Pair> edges = edge_set(e);
  for (int64_t i = 0; i < outs[0].size(); ++i)
    ASSERT_EQ(edges.count({outs[0].src[i], outs[0].dst[i]}), 0u);
  // A sorted-row graph (built from a column-sorted CSR) takes the no-copy path: same answer.
  opt.lookup = EdgeLookup::kSortedRows;
  Edges sorted = e;
  std::vector<size_t> order(sorted.src.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(e.src[a], e.dst[a]) < std::make_pair(e.src[b], e.dst[b]);
  });
  for (size_t i = 0; i < order.size(); ++i)
    sorted.src[i] = e.src[order[i]], sorted.dst[i] = e.dst[order[i]];
  const NegativePairs s = global_uniform_negatives(*make(500, 200, sorted, DType::Int64), opt);
  EXPECT_EQ(s.src, outs[0].src);
  EXPECT_EQ(s.dst, outs[0].dst);
}

TEST(GlobalUniformNegatives, KeyChangesTheSampleAndEmptyCases) {
  const Edges e = random_edges(100, 100, 300, 9);
  const auto g = make(100, 100, e, DType::Int64);
  GlobalNegativeOptions opt;
  opt.num_samples = 50;
  opt.key = 1;
  const NegativePairs a = global_uniform_negatives(*g, opt);
  opt.key = 2;
  const NegativePairs b = global_uniform_negatives(*g, opt);
  EXPECT_NE(a.src, b.src);
  opt.num_samples = 0;
  EXPECT_EQ(global_uniform_negatives(*g, opt).size(), 0);
  opt.num_samples = 5;
  EXPECT_EQ(global_uniform_negatives(*make(0, 7, Edges{}, DType::Int64), opt).size(), 0);
  // One node with loops excluded: nothing qualifies.
  EXPECT_EQ(global_uniform_negatives(*make(1, 1, Edges{}, DType::Int64), opt).size(), 0);
}

TEST(GlobalUniformNegatives, BadInputsRaiseNamedErrors) {
  const auto g = make(5, 5, random_edges(5, 5, 6, 2), DType::Int64);
  GlobalNegativeOptions opt;
  opt.num_samples = -1;
  try {
    global_uniform_negatives(*g, opt);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("num_samples"), std::string::npos) << e.what();
  }
  opt.num_samples = 3;
  for (double r : {-0.5, std::nan(""), 1e300}) {
    opt.redundancy = r;
    try {
      global_uniform_negatives(*g, opt);
      FAIL() << "expected ValueError for redundancy " << r;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("redundancy"), std::string::npos) << e.what();
    }
  }
}

TEST(PerSourceUniformNegatives, KeepsSourcesAndIsUniform) {
  for (DType idtype : {DType::Int32, DType::Int64}) {
    const int64_t nd = 13;
    const Edges e = random_edges(40, nd, 200, 4);
    const auto g = make(40, nd, e, idtype);
    std::vector<int64_t> eids;
    for (int64_t i = 0; i < 200; i += 2) eids.push_back(i);
    eids.push_back(0);  // a repeated positive edge is fine
    const int64_t k = 130;
    const NegativePairs p =
        per_source_uniform_negatives(*g, eids.data(), static_cast<int64_t>(eids.size()), k, 5);
    ASSERT_EQ(p.size(), static_cast<int64_t>(eids.size()) * k);
    std::vector<int64_t> count(nd, 0);
    for (size_t i = 0; i < eids.size(); ++i) {
      for (int64_t j = 0; j < k; ++j) {
        ASSERT_EQ(p.src[i * k + j], e.src[eids[i]]);
        ASSERT_GE(p.dst[i * k + j], 0);
        ASSERT_LT(p.dst[i * k + j], nd);
        ++count[p.dst[i * k + j]];
      }
    }
    double chi2 = 0;
    const double expect = static_cast<double>(p.size()) / nd;
    for (int64_t c : count) chi2 += (c - expect) * (c - expect) / expect;
    EXPECT_LT(chi2, 32.91);  // chi-square, 12 degrees of freedom, p = 0.001
  }
}

TEST(PerSourceUniformNegatives, SameAtOneAndTwoThreads) {
  const Edges e = random_edges(1000, 1000, 50000, 8);
  const auto g = make(1000, 1000, e, DType::Int64);
  std::vector<int64_t> eids(50000);
  for (int64_t i = 0; i < 50000; ++i) eids[i] = (i * 7919) % 50000;
  auto [one, two] = at_1_and_2_threads(
      [&] { return per_source_uniform_negatives(*g, eids.data(), 50000, 3, 123); });
  EXPECT_EQ(one.src, two.src);
  EXPECT_EQ(one.dst, two.dst);
}

TEST(PerSourceUniformNegatives, BadInputsRaiseNamedErrors) {
  const auto g = make(5, 5, random_edges(5, 5, 6, 2), DType::Int64);
  const std::vector<int64_t> ok = {0, 5};
  EXPECT_THROW(per_source_uniform_negatives(*g, ok.data(), 2, 0, 1), ValueError);
  try {
    per_source_uniform_negatives(*g, ok.data(), 2, 0, 1);
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("k "), std::string::npos) << e.what();
  }
  const std::vector<int64_t> bad = {0, 6};
  try {
    per_source_uniform_negatives(*g, bad.data(), 2, 1, 1);
    FAIL() << "expected IndexError";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("eids[1] = 6"), std::string::npos) << e.what();
  }
  const auto no_dst = make(3, 0, Edges{}, DType::Int64);
  EXPECT_EQ(per_source_uniform_negatives(*no_dst, nullptr, 0, 2, 1).size(), 0);
}

}  // namespace
}  // namespace nodeweave::sampling
