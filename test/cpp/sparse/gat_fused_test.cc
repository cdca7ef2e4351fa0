// Fused GAT forward/backward (sparse/gat_fused.h) against an unfused reference in double that
// materializes every per-edge array the way gSDDMM + leaky ReLU + edge softmax + gSpMM would, on
// multigraphs with self-loops, isolated sources and destinations and num_src != num_dst; the
// backward also against central finite differences; bit-identical results for 1 and 4 threads;
// empty graphs; and argument errors naming the argument.
#include "sparse/gat_fused.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>

#include "core_framework/runtime/generator.h"
#include "core_framework/runtime/parallel.h"
#include "sparse_test_util.h"

namespace nodeweave::sparse {
namespace {

using namespace test_util;

struct Result {
  std::vector<double> out, stats, grad_el, grad_er, grad_feat;
};

// The unfused pipeline in plain loops: s, l, a and da are stored per edge, the softmax per
// destination subtracts the row max, and the softmax backward uses the row sum of a * da (not
// <grad_out, out> as the kernel does), so the two share no shortcut.
// With dropout, edge e's attention in head h is scaled by k = 1/(1-p) where bernoulli_mask keeps
// element e * H + h (uniform_at(seed, e * H + h) >= p, the double test it documents), else 0.
Result reference(const Graph& g, int64_t H, int64_t D, const std::vector<double>& el,
                 const std::vector<double>& er, const std::vector<double>& feat,
                 const std::vector<double>& grad_out, double slope, GatDropout drop = {}) {
  const int64_t ne = g.num_edges(), nd = g.num_dst, ns = g.num_src;
  std::vector<double> s(ne * H), l(ne * H), a(ne * H), da(ne * H, 0.0), keep(ne * H, 1.0);
  if (drop.p > 0)
    for (int64_t i = 0; i < ne * H; ++i)
      keep[i] = uniform_at(drop.seed, static_cast<uint64_t>(i)) >= drop.p
                 ? static_cast<double>(static_cast<float>(1.0 / (1.0 - drop.p)))
                 : 0.0;
  for (int64_t e = 0; e < ne; ++e)
    for (int64_t h = 0; h < H; ++h) {
      s[e * H + h] = el[g.src[e] * H + h] + er[g.dst[e] * H + h];
      l[e * H + h] = s[e * H + h] > 0 ? s[e * H + h] : slope * s[e * H + h];
    }
  Result r;
  r.out.assign(nd * H * D, 0.0);
  r.stats.assign(nd * H * 2, 0.0);
  for (int64_t v = 0; v < nd; ++v)
    for (int64_t h = 0; h < H; ++h) {
      double mx = -INFINITY, sum = 0;
      bool any = false;
      for (int64_t e = 0; e < ne; ++e)
        if (g.dst[e] == v) mx = std::max(mx, l[e * H + h]), any = true;
      if (!any) continue;
      for (int64_t e = 0; e < ne; ++e)
        if (g.dst[e] == v) sum += std::exp(l[e * H + h] - mx);
      for (int64_t e = 0; e < ne; ++e)
        if (g.dst[e] == v) a[e * H + h] = std::exp(l[e * H + h] - mx) / sum;
      r.stats[(v * H + h) * 2] = mx;
      r.stats[(v * H + h) * 2 + 1] = 1.0 / sum;
    }
  for (int64_t e = 0; e < ne; ++e)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t k = 0; k < D; ++k) {
        const int64_t uo = (g.src[e] * H + h) * D + k, vo = (g.dst[e] * H + h) * D + k;
        r.out[vo] += a[e * H + h] * keep[e * H + h] * feat[uo];
        da[e * H + h] += keep[e * H + h] * grad_out[vo] * feat[uo];
      }
  std::vector<double> row_sum(nd * H, 0.0);
  for (int64_t e = 0; e < ne; ++e)
    for (int64_t h = 0; h < H; ++h) row_sum[g.dst[e] * H + h] += a[e * H + h] * da[e * H + h];
  r.grad_el.assign(ns * H, 0.0);
  r.grad_er.assign(nd * H, 0.0);
  r.grad_feat.assign(ns * H * D, 0.0);
  for (int64_t e = 0; e < ne; ++e)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t i = e * H + h;
      const double dl = a[i] * (da[i] - row_sum[g.dst[e] * H + h]);
      const double ds = dl * (s[i] > 0 ? 1.0 : slope);
      r.grad_el[g.src[e] * H + h] += ds;
      r.grad_er[g.dst[e] * H + h] += ds;
      for (int64_t c = 0; c < D; ++c)
        r.grad_feat[(g.src[e] * H + h) * D + c] +=
            a[i] * keep[i] * grad_out[(g.dst[e] * H + h) * D + c];
    }
  return r;
}

template <typename T>
struct Inputs {
  int64_t H = 0, D = 0;
  bool score_3d = false;  // el/er as (rows, H, 1) instead of (rows, H)
  std::vector<T> el, er, feat, grad_out;
};

template <typename T>
Inputs<T> random_inputs(std::mt19937& rng, const Graph& g, int64_t H, int64_t D, bool score_3d,
                        double score_range = 3.0) {
  Inputs<T> in;
  in.H = H;
  in.D = D;
  in.score_3d = score_3d;
  in.el = random_values<T>(rng, g.num_src * H, -score_range, score_range);
  in.er = random_values<T>(rng, g.num_dst * H, -score_range, score_range);
  in.feat = random_values<T>(rng, g.num_src * H * D);
  in.grad_out = random_values<T>(rng, g.num_dst * H * D);
  return in;
}

template <typename T>
std::vector<double> to_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

template <typename T>
struct Outputs {
  std::vector<T> out, stats, grad_el, grad_er, grad_feat;
};

// Runs the fused forward and backward. Outputs start as NaN so a value the kernel leaves unwritten
// shows up.
template <typename T, typename I>
Outputs<T> run_fused(const Graph& g, const Compressed<I>& in_rows, const Compressed<I>& out_rows,
                     const Inputs<T>& in, double slope, GatDropout drop = {}) {
  const int64_t H = in.H, D = in.D, ns = g.num_src, nd = g.num_dst;
  auto score_shape = [&](int64_t rows) {
    return in.score_3d ? std::vector<int64_t>{rows, H, 1} : std::vector<int64_t>{rows, H};
  };
  const T nan = std::numeric_limits<T>::quiet_NaN();
  Outputs<T> o;
  o.out.assign(nd * H * D, nan);
  o.stats.assign(nd * H * 2, nan);
  o.grad_el.assign(ns * H, nan);
  o.grad_er.assign(nd * H, nan);
  o.grad_feat.assign(ns * H * D, nan);
  const ArrayView el = view(in.el, score_shape(ns)), er = view(in.er, score_shape(nd));
  const ArrayView feat = view(in.feat, {ns, H, D});
  gat_aggregate_forward(in_rows.view(), el, er, feat, slope, drop, view(o.out, {nd, H, D}),
                        view(o.stats, {nd, H, 2}));
  gat_aggregate_backward(in_rows.view(), out_rows.view(), el, er, feat, view(o.out, {nd, H, D}),
                         view(o.stats, {nd, H, 2}), view(in.grad_out, {nd, H, D}), slope, drop,
                         view(o.grad_el, score_shape(ns)), view(o.grad_er, score_shape(nd)),
                         view(o.grad_feat, {ns, H, D}));
  return o;
}

template <typename T>
void expect_close(const char* what, const std::vector<T>& got, const std::vector<double>& want,
                  double tol) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1.0 + std::abs(want[i]))) << what << "[" << i << "]";
}

template <typename T, typename I>
void check_against_reference(const Graph& g, int64_t H, int64_t D, bool score_3d, double slope,
                             uint32_t seed, double score_range = 3.0) {
  SCOPED_TRACE(::testing::Message()
               << "T=" << dtype_name(DTypeOf<T>::value) << " I=" << dtype_name(DTypeOf<I>::value)
               << " H=" << H << " D=" << D << " score_3d=" << score_3d << " slope=" << slope
               << " src=" << g.num_src << " dst=" << g.num_dst << " E=" << g.num_edges());
  std::mt19937 rng(seed);
  const Inputs<T> in = random_inputs<T>(rng, g, H, D, score_3d, score_range);
  const Outputs<T> got = run_fused<T, I>(g, compress<I>(g, true), compress<I>(g, false), in, slope);
  const Result want = reference(g, H, D, to_double(in.el), to_double(in.er), to_double(in.feat),
                                to_double(in.grad_out), slope);
  const double tol = tolerance<T>();
  expect_close("out", got.out, want.out, tol);
  expect_close("stats", got.stats, want.stats, tol);
  expect_close("grad_el", got.grad_el, want.grad_el, 10 * tol);
  expect_close("grad_er", got.grad_er, want.grad_er, 10 * tol);
  expect_close("grad_feat", got.grad_feat, want.grad_feat, 10 * tol);
}

// Square graph and bipartite blocks both ways round; random_graph leaves the last source and the
// last destination without edges, puts a self-loop on node 0 and repeats one edge.
std::vector<Graph> test_graphs() {
  std::mt19937 rng(71);
  return {random_graph(rng, 9, 9, 40), random_graph(rng, 12, 5, 45), random_graph(rng, 4, 10, 30)};
}

template <typename T, typename I>
void check_all_shapes(uint32_t seed) {
  for (const Graph& g : test_graphs())
    for (int64_t H : {1, 3})
      for (int64_t D : {1, 5, 16}) check_against_reference<T, I>(g, H, D, D == 5, 0.2, seed++);
}

TEST(GatFused, MatchesUnfusedReferenceFloatInt32) { check_all_shapes<float, int32_t>(100); }
TEST(GatFused, MatchesUnfusedReferenceFloatInt64) { check_all_shapes<float, int64_t>(200); }
TEST(GatFused, MatchesUnfusedReferenceDoubleInt32) { check_all_shapes<double, int32_t>(300); }
TEST(GatFused, MatchesUnfusedReferenceDoubleInt64) { check_all_shapes<double, int64_t>(400); }

// The widths the kernel compiles separately (8, 32, 64) and other slopes, including plain ReLU.
TEST(GatFused, CompiledWidthsAndSlopes) {
  const Graph g = test_graphs()[1];
  for (int64_t D : {8, 32, 64}) check_against_reference<float, int64_t>(g, 2, D, true, 0.2, 500);
  check_against_reference<double, int64_t>(g, 3, 16, false, 0.0, 501);
  check_against_reference<double, int32_t>(g, 3, 5, false, 0.01, 502);
  check_against_reference<float, int32_t>(g, 1, 7, true, 1.0, 503);
}

// Logits up to 120: exp overflows float unless the row max is subtracted.
TEST(GatFused, LargeScoresStayFinite) {
  const Graph g = test_graphs()[0];
  check_against_reference<float, int64_t>(g, 3, 16, false, 0.2, 600, 60.0);
  check_against_reference<double, int32_t>(g, 2, 5, true, 0.2, 601, 300.0);
}

// A skewed graph large enough for parallel_rows to split it among 4 threads, with a hub
// destination and a hub source: every output must be bit-identical to the 1-thread run.
TEST(GatFused, BitIdenticalAcrossThreadCounts) {
  std::mt19937 rng(72);
  Graph g = random_graph(rng, 700, 600, 24000);
  for (int64_t e = 0; e < g.num_edges(); e += 5) g.dst[e] = 1;  // destination hub
  for (int64_t e = 2; e < g.num_edges(); e += 7) g.src[e] = 3;  // source hub
  const auto in_rows = compress<int64_t>(g, true), out_rows = compress<int64_t>(g, false);
  const auto in_rows32 = compress<int32_t>(g, true), out_rows32 = compress<int32_t>(g, false);
  const int before = get_num_threads();
  for (int64_t D : {5, 16}) {
    SCOPED_TRACE(::testing::Message() << "D=" << D);
    const Inputs<float> in = random_inputs<float>(rng, g, 3, D, false);
    const Inputs<double> ind = random_inputs<double>(rng, g, 3, D, true);
    set_num_threads(1);
    const Outputs<float> one = run_fused<float, int64_t>(g, in_rows, out_rows, in, 0.2);
    const Outputs<double> one_d = run_fused<double, int32_t>(g, in_rows32, out_rows32, ind, 0.2);
    set_num_threads(4);
    const Outputs<float> four = run_fused<float, int64_t>(g, in_rows, out_rows, in, 0.2);
    const Outputs<double> four_d = run_fused<double, int32_t>(g, in_rows32, out_rows32, ind, 0.2);
    set_num_threads(before);
    auto same = [](const auto& a, const auto& b) {
      return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
    };
    EXPECT_TRUE(same(one.out, four.out));
    EXPECT_TRUE(same(one.stats, four.stats));
    EXPECT_TRUE(same(one.grad_el, four.grad_el));
    EXPECT_TRUE(same(one.grad_er, four.grad_er));
    EXPECT_TRUE(same(one.grad_feat, four.grad_feat));
    EXPECT_TRUE(same(one_d.out, four_d.out));
    EXPECT_TRUE(same(one_d.stats, four_d.stats));
    EXPECT_TRUE(same(one_d.grad_el, four_d.grad_el));
    EXPECT_TRUE(same(one_d.grad_er, four_d.grad_er));
    EXPECT_TRUE(same(one_d.grad_feat, four_d.grad_feat));
    // And still right (the 4-thread run against the reference, on a sample of the outputs).
    const Result want = reference(g, 3, D, to_double(in.el), to_double(in.er), to_double(in.feat),
                                  to_double(in.grad_out), 0.2);
    expect_close("out", four.out, want.out, tolerance<float>());
    expect_close("grad_el", four.grad_el, want.grad_el, 10 * tolerance<float>());
    expect_close("grad_er", four.grad_er, want.grad_er, 10 * tolerance<float>());
    expect_close("grad_feat", four.grad_feat, want.grad_feat, 10 * tolerance<float>());
  }
}

// d(sum w * out)/d{el, er, feat} by central differences in float64.
TEST(GatFused, BackwardMatchesFiniteDifferences) {
  std::mt19937 rng(73);
  const Graph g = random_graph(rng, 7, 5, 22);
  const int64_t H = 2, D = 3, ns = g.num_src, nd = g.num_dst;
  const double slope = 0.2;
  const auto in_rows = compress<int64_t>(g, true), out_rows = compress<int64_t>(g, false);
  Inputs<double> in = random_inputs<double>(rng, g, H, D, true, 2.0);  // grad_out = w
  const Outputs<double> got = run_fused<double, int64_t>(g, in_rows, out_rows, in, slope);
  auto loss = [&]() {
    std::vector<double> out(nd * H * D), stats(nd * H * 2);
    gat_aggregate_forward(in_rows.view(), view(in.el, {ns, H, 1}), view(in.er, {nd, H, 1}),
                          view(in.feat, {ns, H, D}), slope, GatDropout{}, view(out, {nd, H, D}),
                          view(stats, {nd, H, 2}));
    double l = 0;
    for (size_t i = 0; i < out.size(); ++i) l += in.grad_out[i] * out[i];
    return l;
  };
  const double h = 1e-6;
  auto check = [&](const char* name, std::vector<double>& x, const std::vector<double>& grad) {
    for (size_t i = 0; i < x.size(); ++i) {
      const double x0 = x[i];
      x[i] = x0 + h;
      const double lp = loss();
      x[i] = x0 - h;
      const double lm = loss();
      x[i] = x0;
      EXPECT_NEAR(grad[i], (lp - lm) / (2 * h), 1e-7) << name << "[" << i << "]";
    }
  };
  check("el", in.el, got.grad_el);
  check("er", in.er, got.grad_er);
  check("feat", in.feat, got.grad_feat);
}

// Attention dropout: the mask bernoulli_mask would draw on the (E, H, 1) attention, applied in the
// aggregation and redrawn in backward (float, so the scale is rounded to float as eager's mask is).
TEST(GatFused, AttentionDropoutMatchesTheMaskedReference) {
  for (double p : {0.3, 0.6, 1.0})
    for (uint64_t seed : {uint64_t{1}, uint64_t{0x9e3779b97f4a7c15}}) {
      SCOPED_TRACE(::testing::Message() << "p=" << p << " seed=" << seed);
      for (const Graph& g : test_graphs()) {
        std::mt19937 rng(static_cast<uint32_t>(seed + 17));
        const Inputs<float> in = random_inputs<float>(rng, g, 3, 5, true);
        const GatDropout drop{p, seed};
        const Outputs<float> got = run_fused<float, int64_t>(g, compress<int64_t>(g, true),
                                                             compress<int64_t>(g, false), in, 0.2,
                                                             drop);
        const Result want = reference(g, 3, 5, to_double(in.el), to_double(in.er),
                                      to_double(in.feat), to_double(in.grad_out), 0.2, drop);
        const double tol = tolerance<float>();
        expect_close("out", got.out, want.out, tol);
        expect_close("grad_el", got.grad_el, want.grad_el, 10 * tol);
        expect_close("grad_er", got.grad_er, want.grad_er, 10 * tol);
        expect_close("grad_feat", got.grad_feat, want.grad_feat, 10 * tol);
      }
    }
  std::mt19937 rng(75);
  const Graph g = test_graphs()[0];
  const Inputs<float> in = random_inputs<float>(rng, g, 2, 4, false);
  auto bad_p = [&] {
    run_fused<float, int64_t>(g, compress<int64_t>(g, true), compress<int64_t>(g, false), in, 0.2,
                              GatDropout{1.5, 0});
  };
  EXPECT_THROW(bad_p(), ValueError);
}

// No edges (every output zero, every output written), and no destination rows at all.
TEST(GatFused, EmptyGraphs) {
  std::mt19937 rng(74);
  for (const Graph& g : {random_graph(rng, 3, 4, 0), random_graph(rng, 3, 0, 0)}) {
    SCOPED_TRACE(::testing::Message() << "src=" << g.num_src << " dst=" << g.num_dst);
    const Inputs<float> in = random_inputs<float>(rng, g, 2, 5, false);
    const Outputs<float> o = run_fused<float, int32_t>(g, compress<int32_t>(g, true),
                                                       compress<int32_t>(g, false), in, 0.2);
    for (const auto* v : {&o.out, &o.stats, &o.grad_el, &o.grad_er, &o.grad_feat})
      for (float x : *v) EXPECT_EQ(x, 0.0f);
    EXPECT_EQ(o.grad_el.size(), 6u);
    EXPECT_EQ(o.grad_feat.size(), 30u);
  }
}

// A valid setup (4 sources, 3 destinations, 5 edges, H = 2, D = 3) to break one piece at a time.
struct Fixture {
  Graph g;
  Compressed<int64_t> in_rows, out_rows;
  std::vector<float> el = std::vector<float>(4 * 2), er = std::vector<float>(3 * 2),
                     feat = std::vector<float>(4 * 2 * 3), out = std::vector<float>(3 * 2 * 3),
                     stats = std::vector<float>(3 * 2 * 2),
                     grad_out = std::vector<float>(3 * 2 * 3), grad_el = std::vector<float>(4 * 2),
                     grad_er = std::vector<float>(3 * 2), grad_feat = std::vector<float>(4 * 2 * 3),
                     big = std::vector<float>(64);
  std::vector<double> feat_d = std::vector<double>(4 * 2 * 3);
  CompressedView iv, ov;
  ArrayView a_el, a_er, a_feat, a_out, a_stats, a_go, a_gel, a_ger, a_gfeat;
  Fixture() {
    g.num_src = 4;
    g.num_dst = 3;
    g.src = {0, 1, 2, 3, 0};
    g.dst = {0, 0, 1, 2, 2};
    in_rows = compress<int64_t>(g, true);
    out_rows = compress<int64_t>(g, false);
    iv = in_rows.view();
    ov = out_rows.view();
    a_el = view(el, {4, 2});
    a_er = view(er, {3, 2, 1});
    a_feat = view(feat, {4, 2, 3});
    a_out = view(out, {3, 2, 3});
    a_stats = view(stats, {3, 2, 2});
    a_go = view(grad_out, {3, 2, 3});
    a_gel = view(grad_el, {4, 2});
    a_ger = view(grad_er, {3, 2, 1});
    a_gfeat = view(grad_feat, {4, 2, 3});
  }
  void forward() { gat_aggregate_forward(iv, a_el, a_er, a_feat, 0.2, {}, a_out, a_stats); }
  void backward() {
    gat_aggregate_backward(iv, ov, a_el, a_er, a_feat, a_out, a_stats, a_go, 0.2, {}, a_gel, a_ger,
                           a_gfeat);
  }
};

TEST(GatFused, ValidFixtureRuns) {
  Fixture f;
  f.forward();
  f.backward();
}

TEST(GatFused, RejectsWrongShapes) {
  const char* fwd = "gat_aggregate_forward";
  const char* bwd = "gat_aggregate_backward";
  {
    Fixture f;
    f.a_er = view(f.big, {4, 2});
    expect_error<ValueError>([&] { f.forward(); }, {fwd, ": er has 4 rows", "destination"});
  }
  {
    Fixture f;
    f.a_el = view(f.big, {3, 2});
    expect_error<ValueError>([&] { f.forward(); }, {fwd, ": el has 3 rows", "source"});
  }
  {
    Fixture f;
    f.a_el = view(f.big, {4, 2, 2});
    expect_error<ValueError>([&] { f.forward(); }, {fwd, "el must have shape (rows, heads)"});
  }
  {
    Fixture f;
    f.a_feat = view(f.big, {4, 6});
    expect_error<ValueError>([&] { f.backward(); }, {bwd, "feat must have shape"});
  }
  {
    Fixture f;
    f.a_out = view(f.big, {3, 2, 4});
    expect_error<ValueError>([&] { f.forward(); }, {fwd, "out must have shape [3, 2, 3]"});
  }
  {
    Fixture f;
    f.a_stats = view(f.big, {3, 2, 1});
    expect_error<ValueError>([&] { f.forward(); }, {fwd, "stats must have shape [3, 2, 2]"});
  }
  {
    Fixture f;
    f.a_go = view(f.big, {3, 2, 2});
    expect_error<ValueError>([&] { f.backward(); }, {bwd, "grad_out must have shape [3, 2, 3]"});
  }
  {
    Fixture f;
    f.a_gel = view(f.big, {4, 2, 1});  // el is (4, 2): the gradient must match it exactly
    expect_error<ValueError>([&] { f.backward(); }, {bwd, "grad_el must have shape [4, 2]"});
  }
  {
    Fixture f;
    f.a_ger = view(f.big, {2, 2, 1});
    expect_error<ValueError>([&] { f.backward(); }, {bwd, "grad_er has 2 rows"});
  }
  {
    Fixture f;
    f.a_gfeat = view(f.big, {4, 2, 2});
    expect_error<ValueError>([&] { f.backward(); }, {bwd, "grad_feat must have shape [4, 2, 3]"});
  }
  {
    Fixture f;
    f.ov = f.iv;  // 3 x 4 where the out-edge view must be 4 x 3
    expect_error<ValueError>([&] { f.backward(); }, {bwd, "out_rows"});
  }
  {
    Fixture f;
    f.iv.indptr = view(f.in_rows.indptr, {3});
    expect_error<ValueError>([&] { f.forward(); }, {fwd, "in_rows", "indptr"});
  }
}

TEST(GatFused, RejectsHeadMismatch) {
  {
    Fixture f;
    f.a_er = view(f.big, {3, 3});
    expect_error<ValueError>([&] { f.forward(); }, {"gat_aggregate_forward", "er has 3 heads"});
  }
  {
    Fixture f;
    f.a_feat = view(f.big, {4, 1, 6});
    expect_error<ValueError>([&] { f.backward(); }, {"gat_aggregate_backward", "feat has 1 heads"});
  }
}

TEST(GatFused, RejectsDtypeMismatch) {
  {
    Fixture f;
    f.a_feat = view(f.feat_d, {4, 2, 3});
    expect_error<TypeError>([&] { f.forward(); }, {"gat_aggregate_forward", "feat and el"});
  }
  {
    Fixture f;
    f.a_gfeat = view(f.feat_d, {4, 2, 3});
    expect_error<TypeError>([&] { f.backward(); }, {"gat_aggregate_backward", "grad_feat and el"});
  }
  {
    Fixture f;
    std::vector<int32_t> indptr32(f.out_rows.indptr.begin(), f.out_rows.indptr.end()),
        indices32(f.out_rows.indices.begin(), f.out_rows.indices.end()),
        eids32(f.out_rows.eids.begin(), f.out_rows.eids.end());
    f.ov.indptr = view(indptr32, {5});
    f.ov.indices = view(indices32, {5});
    f.ov.eids = view(eids32, {5});
    expect_error<TypeError>([&] { f.backward(); }, {"gat_aggregate_backward", "index dtype"});
  }
}

TEST(GatFused, RejectsNonFiniteSlopeAndNonContiguous) {
  Fixture f;
  expect_error<ValueError>(
      [&] { gat_aggregate_forward(f.iv, f.a_el, f.a_er, f.a_feat, NAN, {}, f.a_out, f.a_stats); },
      {"gat_aggregate_forward", "slope"});
  f.a_feat.strides = {6, 1, 2};
  expect_error<ValueError>([&] { f.forward(); },
                           {"gat_aggregate_forward", "feat must be contiguous"});
}

TEST(GatFused, CudaArraysAreNotImplemented) {
  const Device cuda{DeviceType::CUDA, 0};
  {
    Fixture f;
    for (ArrayView* a :
         {&f.iv.indptr, &f.iv.indices, &f.iv.eids, &f.ov.indptr, &f.ov.indices, &f.ov.eids, &f.a_el,
          &f.a_er, &f.a_feat, &f.a_out, &f.a_stats, &f.a_go, &f.a_gel, &f.a_ger, &f.a_gfeat})
      a->device = cuda;
    expect_error<NotImplementedError>([&] { f.forward(); },
                                      {"gat_aggregate_forward", "no CUDA implementation"});
    expect_error<NotImplementedError>([&] { f.backward(); },
                                      {"gat_aggregate_backward", "no CUDA implementation"});
  }
  {
    Fixture f;
    f.a_feat.device = cuda;  // mixed devices: a ValueError naming the pair
    expect_error<ValueError>([&] { f.forward(); }, {"gat_aggregate_forward", "feat is on cuda:0"});
  }
}

}  // namespace
}  // namespace nodeweave::sparse
