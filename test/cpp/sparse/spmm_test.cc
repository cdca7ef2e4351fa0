// gSpMM against a dense per-edge reference in double: every op x reduce, int32/int64 ids,
// float/double, plain and broadcast feature shapes, Dot, arg outputs, and degenerate graphs.
#include "sparse/spmm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sparse_test_util.h"

namespace nodeweave::sparse {
namespace {

using namespace test_util;

struct Shapes {
  std::vector<int64_t> lhs, rhs;
};

const BinaryOp kOps[] = {BinaryOp::Add, BinaryOp::Sub,     BinaryOp::Mul,    BinaryOp::Div,
                         BinaryOp::Dot, BinaryOp::CopyLhs, BinaryOp::CopyRhs};
const ReduceOp kReduces[] = {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Mean};

// Runs one gSpMM case and compares every output element (and arg) with the reference.
template <typename T, typename I>
void check_spmm(const Graph& g, BinaryOp op, ReduceOp reduce, const Shapes& s, uint32_t seed) {
  SCOPED_TRACE(::testing::Message()
               << "op=" << binary_op_name(op) << " reduce=" << reduce_op_name(reduce)
               << " T=" << dtype_name(DTypeOf<T>::value) << " I=" << dtype_name(DTypeOf<I>::value)
               << " lhs=" << shape_str(s.lhs) << " rhs=" << shape_str(s.rhs)
               << " E=" << g.num_edges());
  std::mt19937 rng(seed);
  const RefMessage ref(op, s.lhs, s.rhs);
  const int64_t ll = prod(s.lhs), rl = prod(s.rhs), ol = prod(ref.out_shape);
  // Division needs rhs away from zero; positive [0.5, 2] keeps every op well conditioned.
  auto lhs = random_values<T>(rng, g.num_src * ll, 0.5, 2.0);
  auto rhs = random_values<T>(rng, g.num_edges() * rl, 0.5, 2.0);
  std::vector<T> out(g.num_dst * ol, T(7));
  std::vector<int64_t> arg_l(g.num_dst * ol, 99), arg_r(g.num_dst * ol, 99);
  const Compressed<I> csc = compress<I>(g, /*by_dst=*/true);

  SpmmArgs a;
  a.in_edges = csc.view();
  a.op = op;
  a.reduce = reduce;
  a.lhs = view(lhs, with_rows(g.num_src, s.lhs));
  a.rhs = view(rhs, with_rows(g.num_edges(), s.rhs));
  a.out = view(out, with_rows(g.num_dst, ref.out_shape));
  const bool minmax = reduce == ReduceOp::Max || reduce == ReduceOp::Min;
  if (minmax) {
    a.arg_lhs = view(arg_l, {g.num_dst, ol});
    a.arg_rhs = view(arg_r, {g.num_dst, ol});
  }
  ASSERT_EQ(spmm_out_feat(op, s.lhs, s.rhs), ref.out_shape);
  spmm(a);

  // Reference: messages of every edge, then reduce per destination.
  std::vector<std::vector<double>> msg(g.num_edges());
  for (int64_t e = 0; e < g.num_edges(); ++e)
    msg[e] = ref(lhs.data() + g.src[e] * ll, rhs.data() + e * rl);
  for (int64_t v = 0; v < g.num_dst; ++v) {
    std::vector<int64_t> in;
    for (int64_t e = 0; e < g.num_edges(); ++e)
      if (g.dst[e] == v) in.push_back(e);
    for (int64_t k = 0; k < ol; ++k) {
      const double got = out[v * ol + k];
      if (in.empty()) {
        EXPECT_EQ(got, 0.0) << "v=" << v << " k=" << k;
        if (minmax) {
          EXPECT_EQ(arg_l[v * ol + k], -1);
          EXPECT_EQ(arg_r[v * ol + k], -1);
        }
        continue;
      }
      double want = 0;
      if (minmax) {
        want = msg[in[0]][k];
        for (int64_t e : in)
          want = reduce == ReduceOp::Max ? std::max(want, msg[e][k]) : std::min(want, msg[e][k]);
      } else {
        for (int64_t e : in) want += msg[e][k];
        if (reduce == ReduceOp::Mean) want /= static_cast<double>(in.size());
      }
      EXPECT_NEAR(got, want, tolerance<T>() * std::max(1.0, std::abs(want)))
          << "v=" << v << " k=" << k;
      if (minmax) {
        // The arg pair must name an in-edge of v whose message is the winning value.
        const int64_t e = arg_r[v * ol + k], u = arg_l[v * ol + k];
        ASSERT_GE(e, 0);
        ASSERT_LT(e, g.num_edges());
        EXPECT_EQ(g.dst[e], v);
        EXPECT_EQ(g.src[e], u);
        EXPECT_NEAR(msg[e][k], got, tolerance<T>() * std::max(1.0, std::abs(want)));
      }
    }
  }
}

template <typename T, typename I>
void check_all_ops(const Graph& g, const std::vector<Shapes>& shapes) {
  uint32_t seed = 1;
  for (BinaryOp op : kOps)
    for (ReduceOp reduce : kReduces)
      for (const Shapes& s : shapes) {
        // Dot needs equal last dims; copy ops use only one side.
        if (op == BinaryOp::Dot && s.lhs.back() != s.rhs.back()) continue;
        check_spmm<T, I>(g, op, reduce, s, seed++);
      }
}

const std::vector<Shapes> kShapes = {
    {{3}, {3}},              // plain
    {{2, 1, 3}, {1, 4, 3}},  // broadcast both sides
    {{4, 3}, {3}},           // different ranks
    {{1}, {5}},              // scalar lhs per node
    {{2, 3}, {2, 1}},        // broadcast the last dim (one rhs value per head)
    {{40, 16}, {40, 1}},     // the same with more heads than one accumulator tile holds
};

TEST(Spmm, AllOpsReducesFloatInt32) {
  std::mt19937 rng(11);
  check_all_ops<float, int32_t>(random_graph(rng, 7, 6, 25), kShapes);
}
TEST(Spmm, AllOpsReducesFloatInt64) {
  std::mt19937 rng(12);
  check_all_ops<float, int64_t>(random_graph(rng, 7, 6, 25), kShapes);
}
TEST(Spmm, AllOpsReducesDoubleInt32) {
  std::mt19937 rng(13);
  check_all_ops<double, int32_t>(random_graph(rng, 5, 9, 30), kShapes);
}
TEST(Spmm, AllOpsReducesDoubleInt64) {
  std::mt19937 rng(14);
  check_all_ops<double, int64_t>(random_graph(rng, 9, 5, 30), kShapes);
}

TEST(Spmm, ZeroEdges) {
  std::mt19937 rng(15);
  check_all_ops<float, int64_t>(random_graph(rng, 4, 3, 0), kShapes);
}

TEST(Spmm, ZeroNodes) {
  Graph g;  // no nodes, no edges
  check_all_ops<float, int32_t>(g, kShapes);
  Graph only_src;
  only_src.num_src = 3;
  check_all_ops<double, int64_t>(only_src, kShapes);
}

TEST(Spmm, ZeroFeatureLength) {
  std::mt19937 rng(16);
  const Graph g = random_graph(rng, 5, 5, 12);
  check_all_ops<float, int32_t>(g, {{{0}, {0}}, {{2, 0}, {1, 0}}});
}

// Feature rows longer than one accumulator tile, and a graph large enough to run on several
// threads with nnz-balanced row ranges (one hub row gets a third of the edges).
TEST(Spmm, LongRowsAndSkewedGraph) {
  std::mt19937 rng(17);
  Graph g = random_graph(rng, 300, 200, 3000);
  for (int64_t e = 0; e < 1000; ++e) g.dst[e] = 5;
  for (ReduceOp reduce : kReduces) {
    check_spmm<float, int64_t>(g, BinaryOp::CopyLhs, reduce, {{40}, {40}}, 3);
    check_spmm<double, int32_t>(g, BinaryOp::Mul, reduce, {{300}, {300}}, 4);
    check_spmm<float, int32_t>(g, BinaryOp::Add, reduce, {{2, 1, 150}, {1, 3, 150}}, 5);
    // Row widths that split into whole 256-byte chunks (the register-blocked path).
    check_spmm<float, int64_t>(g, BinaryOp::CopyRhs, reduce, {{128}, {128}}, 6);
    check_spmm<double, int64_t>(g, BinaryOp::Sub, reduce, {{64}, {64}}, 7);
  }
}

// Every row width around the 256-byte chunks: the plain Sum/Mean path splits a row into whole
// chunks and a tail of power-of-two passes (60 floats = 32 + 16 + 8 + 4), for copy_u, u_mul_e
// with one weight per edge and elementwise u_mul_e; with the graph long enough for prefetches to
// run up to its last edge.
TEST(Spmm, PlainPathEveryRowWidth) {
  std::mt19937 rng(19);
  const Graph g = random_graph(rng, 40, 30, 400);
  uint32_t seed = 100;
  for (int64_t w = 1; w <= 140; ++w)
    for (ReduceOp reduce : {ReduceOp::Sum, ReduceOp::Mean}) {
      check_spmm<float, int32_t>(g, BinaryOp::CopyLhs, reduce, {{w}, {w}}, seed++);
      check_spmm<float, int64_t>(g, BinaryOp::Mul, reduce, {{w}, {1}}, seed++);
      if (w <= 70) {
        check_spmm<double, int64_t>(g, BinaryOp::Mul, reduce, {{w}, {w}}, seed++);
        check_spmm<double, int32_t>(g, BinaryOp::CopyRhs, reduce, {{w}, {w}}, seed++);
      }
    }
}

// Max/Min on a copy op need only the matching arg; the other may be absent.
TEST(Spmm, MaxCopyWithOneArg) {
  std::mt19937 rng(18);
  const Graph g = random_graph(rng, 6, 6, 20);
  const Compressed<int64_t> csc = compress<int64_t>(g, true);
  auto lhs = random_values<float>(rng, 6 * 2);
  std::vector<float> out(6 * 2);
  std::vector<int64_t> arg(6 * 2);
  SpmmArgs a;
  a.in_edges = csc.view();
  a.op = BinaryOp::CopyLhs;
  a.reduce = ReduceOp::Max;
  a.lhs = view(lhs, {6, 2});
  a.out = view(out, {6, 2});
  a.arg_lhs = view(arg, {6, 2});
  spmm(a);
  for (int64_t v = 0; v < 6; ++v)
    for (int64_t k = 0; k < 2; ++k) {
      double want = -std::numeric_limits<double>::infinity();
      for (int64_t e = 0; e < g.num_edges(); ++e)
        if (g.dst[e] == v) want = std::max(want, double(lhs[g.src[e] * 2 + k]));
      if (std::isinf(want)) {
        EXPECT_EQ(arg[v * 2 + k], -1);
        continue;
      }
      EXPECT_EQ(out[v * 2 + k], want);
      EXPECT_EQ(lhs[arg[v * 2 + k] * 2 + k], want);
    }
}

}  // namespace
}  // namespace nodeweave::sparse
