// Reductions, softmax, join/split, sorting and losses through the C++ API, checked against dense
// loops written out here (the Python suites compare against PyTorch).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core_framework/autograd/engine.h"
#include "core_framework/engine/functional.h"

namespace nodeweave {
namespace {

Tensor from(const std::vector<double>& v, const Shape& shape, DType dtype = DType::Float64) {
  Tensor t = empty(shape, DType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return dtype == DType::Float64 ? t : cast(t, dtype);
}

std::vector<double> values(const Tensor& t) {
  Tensor c = contiguous(cast(t, DType::Float64));
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}

// A deterministic, tie-free 3 x 4 x 5 input.
Tensor cube() {
  std::vector<double> v(60);
  for (int i = 0; i < 60; ++i) v[i] = std::sin(1.7 * i + 0.3) * 3;
  return from(v, {3, 4, 5});
}

TEST(Reduce, ProdAndMaxAlongMiddleDimMatchLoops) {
  Tensor x = cube();
  std::vector<double> xv = values(x);
  std::vector<double> p = values(prod(x, 1)), mx = values(max(x, 1).first),
                      mi = values(min(x, -2).first);
  std::vector<double> ix = values(max(x, 1).second);
  for (int o = 0; o < 3; ++o) {
    for (int i = 0; i < 5; ++i) {
      double pr = 1, best = -1e300, worst = 1e300;
      int arg = 0;
      for (int r = 0; r < 4; ++r) {
        double v = xv[(o * 4 + r) * 5 + i];
        pr *= v;
        if (v > best) best = v, arg = r;
        worst = std::min(worst, v);
      }
      EXPECT_NEAR(p[o * 5 + i], pr, 1e-12);
      EXPECT_EQ(mx[o * 5 + i], best);
      EXPECT_EQ(mi[o * 5 + i], worst);
      EXPECT_EQ(ix[o * 5 + i], arg);
    }
  }
}

TEST(Reduce, AmaxSplitsGradientAmongTies) {
  Tensor x = from({1, 4, 4, 4, 0, 2}, {2, 3});
  x.set_requires_grad(true);
  backward({amax(x)}, {}, false, false);
  std::vector<double> g = values(x.grad());
  std::vector<double> want = {0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(g[i], want[i]);
}

TEST(Reduce, ProdGradientWithOneZeroIsProductOfOthers) {
  Tensor x = from({2, 0, 3, 5}, {4});
  x.set_requires_grad(true);
  backward({prod(x)}, {}, false, false);
  std::vector<double> g = values(x.grad());
  std::vector<double> want = {0, 30, 0, 0};
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(g[i], want[i]);
}

TEST(Reduce, VarAndLogsumexpMatchFormulas) {
  Tensor x = from({1, 2, 3, 4, 1000, 1000}, {3, 2});
  std::vector<double> v = values(var(x, {1}, 1));
  EXPECT_DOUBLE_EQ(v[0], 0.5);
  EXPECT_DOUBLE_EQ(v[2], 0.0);
  std::vector<double> l = values(logsumexp(x, {1}));
  EXPECT_NEAR(l[0], std::log(std::exp(1.0) + std::exp(2.0)), 1e-14);
  EXPECT_NEAR(l[2], 1000 + std::log(2.0), 1e-12);  // no overflow
  EXPECT_NEAR(values(norm(x, 2.0, {0}))[0], std::sqrt(1 + 9 + 1e6), 1e-9);
}

TEST(Softmax, EveryDimSumsToOneAndMatchesFormula) {
  Tensor x = cube();
  std::vector<double> xv = values(x);
  for (int64_t dim = 0; dim < 3; ++dim) {
    std::vector<double> y = values(softmax(x, dim)), ly = values(log_softmax(x, dim));
    std::vector<double> s = values(sum(softmax(x, dim), {dim}));
    for (double v : s) EXPECT_NEAR(v, 1.0, 1e-14);
    for (int i = 0; i < 60; ++i) EXPECT_NEAR(std::log(y[i]), ly[i], 1e-13);
  }
  // Last dim against the formula.
  std::vector<double> y = values(softmax(x, -1));
  for (int row = 0; row < 12; ++row) {
    double z = 0;
    for (int c = 0; c < 5; ++c) z += std::exp(xv[row * 5 + c]);
    for (int c = 0; c < 5; ++c) EXPECT_NEAR(y[row * 5 + c], std::exp(xv[row * 5 + c]) / z, 1e-15);
  }
}

TEST(Softmax, ExtremeInputsAndWideColumns) {
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = from({-inf, 0, 1, -800, -750, -700, 1e4, 1e4 - 1, -1e4}, {3, 3}, dt);
    std::vector<double> y = values(softmax(x, 1));
    EXPECT_EQ(y[0], 0.0);
    EXPECT_NEAR(y[2], std::exp(1.0) / (1 + std::exp(1.0)), 1e-6);
    EXPECT_NEAR(y[5], 1 / (1 + std::exp(-50.0) + std::exp(-100.0)), 1e-6);
    EXPECT_NEAR(values(log_softmax(x, 1))[7], -1 - std::log1p(std::exp(-1.0)), 1e-3);
  }
  // dim 0 of a [3, 1000] tensor runs the column-block kernel.
  std::vector<double> v(3000);
  for (int i = 0; i < 3000; ++i) v[i] = std::cos(0.37 * i) * 20;
  std::vector<double> y = values(softmax(from(v, {3, 1000}), 0));
  for (int c = 0; c < 1000; c += 97) {
    double z = std::exp(v[c]) + std::exp(v[1000 + c]) + std::exp(v[2000 + c]);
    EXPECT_NEAR(y[1000 + c], std::exp(v[1000 + c]) / z, 1e-14);
  }
}

TEST(Reduce, LongRowMaxSplitsAcrossThreadsAndKeepsFirstIndex) {
  std::vector<double> v(200000);
  for (int i = 0; i < 200000; ++i) v[i] = (i * 7919) % 1000;
  Tensor x = from(v, {200000});
  auto [m, i] = max(x, 0);
  EXPECT_EQ(m.item(), 999.0);
  EXPECT_EQ(i.item(), 321.0);  // the first i with 7919 i = 999 (mod 1000)
  EXPECT_EQ(argmin(x).item(), 0.0);
}

TEST(Join, CatOfManyTensorsAndGradients) {
  TensorList parts;
  for (int k = 0; k < 40; ++k) {
    Tensor t = full({1, 2}, k, DType::Float64);
    t.set_requires_grad(true);
    parts.push_back(t);
  }
  Tensor c = cat(parts, 0);
  EXPECT_EQ(c.shape(), (Shape{40, 2}));
  EXPECT_EQ(values(c)[2 * 33 + 1], 33.0);
  backward({sum(mul(c, c))}, {}, false, false);
  EXPECT_EQ(values(parts[21].grad()), (std::vector<double>{42, 42}));
}

TEST(Join, CatThenSplitRoundTrips) {
  Tensor a = from({1, 2, 3, 4}, {2, 2}), b = from({5, 6}, {2, 1});
  Tensor c = cat({a, b}, 1);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  std::vector<double> want = {1, 2, 5, 3, 4, 6};
  EXPECT_EQ(values(c), want);
  TensorList parts = split_sizes(c, {2, 1}, 1);
  EXPECT_EQ(values(parts[0]), values(a));
  EXPECT_EQ(values(parts[1]), values(b));
  EXPECT_EQ(stack({a, a}, 2).shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(chunk(c, 2, 1).size(), 2u);
  EXPECT_THROW(cat({a, from({1, 2, 3}, {1, 3})}, 0), ValueError);
}

TEST(Sort, StableAndGradientReturnsToSource) {
  Tensor x = from({3, 1, 2, 1, 3}, {5});
  x.set_requires_grad(true);
  auto [v, i] = sort(x, 0, true);
  std::vector<double> want_i = {0, 4, 2, 1, 3};
  EXPECT_EQ(values(i), want_i);
  Tensor w = from({10, 20, 30, 40, 50}, {5});
  backward({sum(mul(v, w))}, {}, false, false);
  std::vector<double> want_g = {10, 40, 30, 50, 20};
  EXPECT_EQ(values(x.grad()), want_g);
  auto [tv, ti] = topk(from({4, 9, 1, 7}, {4}), 2);
  EXPECT_EQ(values(tv), (std::vector<double>{9, 7}));
  EXPECT_EQ(values(ti), (std::vector<double>{1, 3}));
}

TEST(Loss, NllLossPicksTargetsAndIgnoresIndex) {
  Tensor logp = from({-1, -2, -3, -4, -5, -6}, {3, 2});
  Tensor target = cast(from({1, 0, 1}, {3}), DType::Int64);
  EXPECT_DOUBLE_EQ(nll_loss(logp, target).item(), (2 + 3 + 6) / 3.0);
  Tensor ignored = cast(from({1, -100, 1}, {3}), DType::Int64);
  EXPECT_DOUBLE_EQ(nll_loss(logp, ignored).item(), (2 + 6) / 2.0);
  Tensor bad = cast(from({1, 2, 0}, {3}), DType::Int64);
  EXPECT_THROW(nll_loss(logp, bad), IndexError);
  Tensor oh = one_hot(target, 3);
  EXPECT_EQ(values(oh), (std::vector<double>{0, 1, 0, 1, 0, 0, 0, 1, 0}));
}

TEST(Dropout, KeepsExpectedFractionWithExactScale) {
  Tensor x = ones({100000}, DType::Float64);
  std::vector<double> y = values(dropout(x, 0.25, true));
  int64_t kept = 0;
  for (double v : y) {
    if (v != 0) {
      ++kept;
      EXPECT_DOUBLE_EQ(v, 1 / 0.75);
    }
  }
  EXPECT_NEAR(kept / 100000.0, 0.75, 0.01);
  EXPECT_THROW(dropout(x, 1.5, true), ValueError);
}

}  // namespace
}  // namespace nodeweave
