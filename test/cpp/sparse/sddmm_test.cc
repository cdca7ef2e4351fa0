// gSDDMM against a per-edge reference in double: every op, every (lhs, rhs) target pair, int32 and
// int64 ids, float/double, with broadcasting and Dot, plus degenerate graphs.
#include "sparse/sddmm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sparse_test_util.h"

namespace nodeweave::sparse {
namespace {

using namespace test_util;

int64_t rows_for(const Graph& g, Target t) {
  return t == Target::U ? g.num_src : t == Target::V ? g.num_dst : g.num_edges();
}
int64_t pick(const Graph& g, Target t, int64_t e) {
  return t == Target::U ? g.src[e] : t == Target::V ? g.dst[e] : e;
}

template <typename T, typename I>
void check_sddmm(const Graph& g, BinaryOp op, Target lt, Target rt, const std::vector<int64_t>& lf,
                 const std::vector<int64_t>& rf, uint32_t seed) {
  SCOPED_TRACE(::testing::Message()
               << "op=" << binary_op_name(op) << " lhs@" << target_name(lt) << " rhs@"
               << target_name(rt) << " T=" << dtype_name(DTypeOf<T>::value)
               << " I=" << dtype_name(DTypeOf<I>::value) << " lhs=" << shape_str(lf)
               << " rhs=" << shape_str(rf) << " E=" << g.num_edges());
  std::mt19937 rng(seed);
  const RefMessage ref(op, lf, rf);
  const int64_t ll = prod(lf), rl = prod(rf), ol = prod(ref.out_shape);
  auto lhs = random_values<T>(rng, rows_for(g, lt) * ll, 0.5, 2.0);
  auto rhs = random_values<T>(rng, rows_for(g, rt) * rl, 0.5, 2.0);
  std::vector<T> out(g.num_edges() * ol, T(7));
  const Coo<I> edges = coo<I>(g);
  SddmmArgs a;
  a.edges = edges.view();
  a.op = op;
  a.lhs = view(lhs, with_rows(rows_for(g, lt), lf));
  a.rhs = view(rhs, with_rows(rows_for(g, rt), rf));
  a.lhs_target = lt;
  a.rhs_target = rt;
  a.out = view(out, with_rows(g.num_edges(), ref.out_shape));
  sddmm(a);
  for (int64_t e = 0; e < g.num_edges(); ++e) {
    const auto want = ref(lhs.data() + pick(g, lt, e) * ll, rhs.data() + pick(g, rt, e) * rl);
    for (int64_t k = 0; k < ol; ++k)
      EXPECT_NEAR(out[e * ol + k], want[k], tolerance<T>() * std::max(1.0, std::abs(want[k])))
          << "e=" << e << " k=" << k;
  }
}

template <typename T, typename I>
void check_all(const Graph& g) {
  const BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub,     BinaryOp::Mul,    BinaryOp::Div,
                          BinaryOp::Dot, BinaryOp::CopyLhs, BinaryOp::CopyRhs};
  const Target targets[] = {Target::U, Target::E, Target::V};
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{4}, {4}}, {{2, 1, 3}, {1, 4, 3}}, {{3, 5}, {5}}, {{1}, {6}}};
  uint32_t seed = 1;
  for (BinaryOp op : ops)
    for (Target lt : targets)
      for (Target rt : targets)
        for (const auto& s : shapes) {
          if (op == BinaryOp::Dot && s.first.back() != s.second.back()) continue;
          check_sddmm<T, I>(g, op, lt, rt, s.first, s.second, seed++);
        }
}

TEST(Sddmm, AllOpsTargetsFloatInt32) {
  std::mt19937 rng(21);
  check_all<float, int32_t>(random_graph(rng, 7, 5, 20));
}
TEST(Sddmm, AllOpsTargetsDoubleInt64) {
  std::mt19937 rng(22);
  check_all<double, int64_t>(random_graph(rng, 4, 8, 20));
}
TEST(Sddmm, FloatInt64AndDoubleInt32) {
  std::mt19937 rng(23);
  check_all<float, int64_t>(random_graph(rng, 6, 6, 15));
  check_all<double, int32_t>(random_graph(rng, 6, 6, 15));
}
TEST(Sddmm, ZeroEdgesAndZeroNodes) {
  std::mt19937 rng(24);
  check_all<float, int32_t>(random_graph(rng, 3, 3, 0));
  check_all<double, int64_t>(Graph{});
}
TEST(Sddmm, ZeroFeatureLength) {
  std::mt19937 rng(25);
  const Graph g = random_graph(rng, 5, 5, 10);
  check_sddmm<float, int64_t>(g, BinaryOp::Add, Target::U, Target::V, {0}, {0}, 1);
  check_sddmm<float, int64_t>(g, BinaryOp::Dot, Target::U, Target::V, {2, 0}, {0}, 2);
}
// Enough edges x features to run on several threads.
TEST(Sddmm, LargeParallel) {
  std::mt19937 rng(26);
  const Graph g = random_graph(rng, 500, 400, 5000);
  check_sddmm<float, int32_t>(g, BinaryOp::Dot, Target::U, Target::V, {4, 16}, {4, 16}, 3);
  check_sddmm<double, int64_t>(g, BinaryOp::Mul, Target::E, Target::U, {32}, {32}, 4);
}

}  // namespace
}  // namespace nodeweave::sparse
