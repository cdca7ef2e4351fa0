// Edge softmax forward/backward against a per-destination reference in double (by destination
// and by source), rows summing to one, a finite-difference check of the backward, and the
// segment form.
#include "sparse/edge_softmax.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sparse/segment.h"
#include "sparse_test_util.h"

namespace nodeweave::sparse {
namespace {

using namespace test_util;

// Reference softmax of score over the edges sharing `group[e]`, per feature.
std::vector<double> ref_softmax(const std::vector<int64_t>& group, int64_t f,
                                const std::vector<double>& score) {
  const int64_t ne = static_cast<int64_t>(group.size());
  std::vector<double> out(ne * f);
  for (int64_t e = 0; e < ne; ++e)
    for (int64_t k = 0; k < f; ++k) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < ne; ++j)
        if (group[j] == group[e]) mx = std::max(mx, score[j * f + k]);
      for (int64_t j = 0; j < ne; ++j)
        if (group[j] == group[e]) sum += std::exp(score[j * f + k] - mx);
      out[e * f + k] = std::exp(score[e * f + k] - mx) / sum;
    }
  return out;
}

template <typename T, typename I>
void check_edge_softmax(const Graph& g, bool by_dst, const std::vector<int64_t>& feat,
                        uint32_t seed) {
  SCOPED_TRACE(::testing::Message()
               << "T=" << dtype_name(DTypeOf<T>::value) << " I=" << dtype_name(DTypeOf<I>::value)
               << " by_dst=" << by_dst << " E=" << g.num_edges());
  std::mt19937 rng(seed);
  const int64_t f = prod(feat), ne = g.num_edges();
  // Wide range: the kernel must subtract the max to stay finite.
  auto score = random_values<T>(rng, ne * f, -30.0, 30.0);
  auto grad_out = random_values<T>(rng, ne * f);
  std::vector<T> out(ne * f), grad(ne * f);
  const Compressed<I> rows = compress<I>(g, by_dst);
  const auto shape = with_rows(ne, feat);
  edge_softmax_forward(rows.view(), view(score, shape), view(out, shape));
  edge_softmax_backward(rows.view(), view(out, shape), view(grad_out, shape), view(grad, shape));

  const std::vector<int64_t>& group = by_dst ? g.dst : g.src;
  const auto want = ref_softmax(group, f, std::vector<double>(score.begin(), score.end()));
  for (int64_t i = 0; i < ne * f; ++i) EXPECT_NEAR(out[i], want[i], tolerance<T>());
  // Rows sum to one.
  for (int64_t r = 0; r < rows.num_rows; ++r)
    for (int64_t k = 0; k < f; ++k) {
      double sum = 0;
      int64_t count = 0;
      for (int64_t e = 0; e < ne; ++e)
        if (group[e] == r) sum += out[e * f + k], ++count;
      if (count) EXPECT_NEAR(sum, 1.0, 10 * tolerance<T>());
    }
  // Backward formula with the reference forward.
  for (int64_t e = 0; e < ne; ++e)
    for (int64_t k = 0; k < f; ++k) {
      double dot = 0;
      for (int64_t j = 0; j < ne; ++j)
        if (group[j] == group[e]) dot += want[j * f + k] * double(grad_out[j * f + k]);
      const double gw = want[e * f + k] * (double(grad_out[e * f + k]) - dot);
      EXPECT_NEAR(grad[e * f + k], gw, 10 * tolerance<T>());
    }
}

TEST(EdgeSoftmax, MatchesReference) {
  std::mt19937 rng(31);
  const Graph g = random_graph(rng, 8, 7, 30);
  check_edge_softmax<float, int32_t>(g, true, {3}, 1);
  check_edge_softmax<float, int64_t>(g, false, {2, 2}, 2);
  check_edge_softmax<double, int32_t>(g, false, {1}, 3);
  check_edge_softmax<double, int64_t>(g, true, {4, 1}, 4);
}

TEST(EdgeSoftmax, LongFeaturesAndManyRows) {
  std::mt19937 rng(32);
  const Graph g = random_graph(rng, 150, 120, 900);
  check_edge_softmax<float, int64_t>(g, true, {300}, 5);
}

TEST(EdgeSoftmax, DegenerateGraphs) {
  std::mt19937 rng(33);
  check_edge_softmax<float, int32_t>(random_graph(rng, 4, 4, 0), true, {3}, 6);
  check_edge_softmax<double, int64_t>(Graph{}, true, {3}, 7);
  check_edge_softmax<float, int64_t>(random_graph(rng, 4, 4, 9), true, {0}, 8);
}

// d(sum w * softmax(score))/d score by central differences in double.
TEST(EdgeSoftmax, BackwardMatchesFiniteDifferences) {
  std::mt19937 rng(34);
  const Graph g = random_graph(rng, 6, 5, 18);
  const Compressed<int64_t> rows = compress<int64_t>(g, true);
  const int64_t ne = g.num_edges(), f = 2;
  auto score = random_values<double>(rng, ne * f, -2, 2);
  auto w = random_values<double>(rng, ne * f);
  std::vector<double> out(ne * f), grad(ne * f);
  const std::vector<int64_t> shape{ne, f};
  auto loss = [&](std::vector<double>& s) {
    std::vector<double> o(ne * f);
    edge_softmax_forward(rows.view(), view(s, shape), view(o, shape));
    double l = 0;
    for (int64_t i = 0; i < ne * f; ++i) l += w[i] * o[i];
    return l;
  };
  edge_softmax_forward(rows.view(), view(score, shape), view(out, shape));
  edge_softmax_backward(rows.view(), view(out, shape), view(w, shape), view(grad, shape));
  const double h = 1e-6;
  for (int64_t i = 0; i < ne * f; ++i) {
    auto sp = score, sm = score;
    sp[i] += h;
    sm[i] -= h;
    EXPECT_NEAR(grad[i], (loss(sp) - loss(sm)) / (2 * h), 1e-7) << "i=" << i;
  }
}

TEST(SegmentSoftmax, MatchesReferenceWithEmptySegments) {
  std::mt19937 rng(35);
  // Segments: [0,0) [0,3) [3,3) [3,7) [7,8) [8,8)
  const std::vector<int64_t> off64 = {0, 0, 3, 3, 7, 8, 8};
  const std::vector<int32_t> off32(off64.begin(), off64.end());
  std::vector<int64_t> group;
  for (size_t s = 0; s + 1 < off64.size(); ++s)
    for (int64_t j = off64[s]; j < off64[s + 1]; ++j) group.push_back(static_cast<int64_t>(s));
  const int64_t n = 8, f = 3;
  auto x = random_values<double>(rng, n * f, -20, 20);
  auto go = random_values<double>(rng, n * f);
  std::vector<double> out(n * f), gx(n * f);
  const std::vector<int64_t> shape{n, f};
  segment_softmax_forward(view(x, shape), view(off32, {7}), view(out, shape));
  segment_softmax_backward(view(out, shape), view(go, shape), view(off64, {7}), view(gx, shape));
  const auto want = ref_softmax(group, f, x);
  for (int64_t i = 0; i < n * f; ++i) EXPECT_NEAR(out[i], want[i], 1e-12);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t k = 0; k < f; ++k) {
      double dot = 0;
      for (int64_t i = 0; i < n; ++i)
        if (group[i] == group[j]) dot += want[i * f + k] * go[i * f + k];
      EXPECT_NEAR(gx[j * f + k], want[j * f + k] * (go[j * f + k] - dot), 1e-12);
    }
  // float too
  std::vector<float> xf(x.begin(), x.end()), of(n * f);
  segment_softmax_forward(view(xf, shape), view(off64, {7}), view(of, shape));
  for (int64_t i = 0; i < n * f; ++i) EXPECT_NEAR(of[i], want[i], 2e-6);
}

}  // namespace
}  // namespace nodeweave::sparse
