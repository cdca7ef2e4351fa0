// Bad inputs to every entry point raise the Python-facing exception type (ValueError, TypeError,
// IndexError) with a message naming the function and argument, never crash or compute.
#include <gtest/gtest.h>

#include <string>

#include "core_framework/runtime/device.h"
#include "sparse/edge_softmax.h"
#include "sparse/gather_mm.h"
#include "sparse/sddmm.h"
#include "sparse/segment.h"
#include "sparse/spmm.h"
#include "sparse_test_util.h"

namespace nodeweave::sparse {
namespace {

using namespace test_util;

// A valid gSpMM setup (4 sources, 3 destinations, 5 edges, 2 features) to break one piece at a
// time.
struct SpmmFixture {
  Graph g;
  Compressed<int64_t> csc;
  std::vector<float> lhs = std::vector<float>(4 * 2), rhs = std::vector<float>(5 * 2),
                     out = std::vector<float>(3 * 2);
  std::vector<double> lhs_d = std::vector<double>(4 * 2);
  std::vector<int64_t> arg_l = std::vector<int64_t>(3 * 2), arg_r = std::vector<int64_t>(3 * 2);
  std::vector<int32_t> arg32 = std::vector<int32_t>(3 * 2);
  SpmmArgs args;
  SpmmFixture() {
    g.num_src = 4;
    g.num_dst = 3;
    g.src = {0, 1, 2, 3, 0};
    g.dst = {0, 0, 1, 2, 2};
    csc = compress<int64_t>(g, true);
    args.in_edges = csc.view();
    args.op = BinaryOp::Mul;
    args.reduce = ReduceOp::Max;
    args.lhs = view(lhs, {4, 2});
    args.rhs = view(rhs, {5, 2});
    args.out = view(out, {3, 2});
    args.arg_lhs = view(arg_l, {3, 2});
    args.arg_rhs = view(arg_r, {3, 2});
  }
};

TEST(Validation, SpmmValidBaseline) {
  SpmmFixture f;
  EXPECT_NO_THROW(spmm(f.args));
}

TEST(Validation, SpmmRowCounts) {
  SpmmFixture f;
  f.args.lhs = view(f.lhs, {2, 4});
  expect_error<ValueError>([&] { spmm(f.args); }, {"gspmm", "lhs", "2 rows", "4"});
  SpmmFixture f2;
  f2.args.rhs = view(f2.rhs, {2, 5});
  expect_error<ValueError>([&] { spmm(f2.args); }, {"gspmm", "rhs", "edges"});
  SpmmFixture f3;
  f3.args.out = view(f3.out, {2, 3});
  expect_error<ValueError>([&] { spmm(f3.args); }, {"gspmm", "out"});
}

TEST(Validation, SpmmDtypes) {
  SpmmFixture f;
  f.args.lhs = view(f.lhs_d, {4, 2});
  expect_error<TypeError>([&] { spmm(f.args); }, {"gspmm", "lhs", "float64", "float32"});
  SpmmFixture h;
  h.args.lhs.dtype = DType::Float16;
  expect_error<TypeError>([&] { spmm(h.args); }, {"float16 and bfloat16 are not supported"});
  SpmmFixture i;
  i.args.out.dtype = DType::Int32;
  expect_error<TypeError>([&] { spmm(i.args); }, {"out", "int32"});
  // Graph arrays must share one id type.
  SpmmFixture m;
  std::vector<int32_t> idx32(m.csc.indices.begin(), m.csc.indices.end());
  m.args.in_edges.indices = view(idx32, {5});
  expect_error<TypeError>([&] { spmm(m.args); }, {"indices", "int32", "int64"});
  SpmmFixture fl;
  std::vector<float> fidx(5);
  fl.args.in_edges.indices = view(fidx, {5});
  expect_error<TypeError>([&] { spmm(fl.args); }, {"indices", "float32"});
}

TEST(Validation, SpmmNonContiguous) {
  SpmmFixture f;
  f.args.lhs.strides = {1, 4};  // a transposed view
  expect_error<ValueError>([&] { spmm(f.args); }, {"lhs", "must be contiguous"});
}

TEST(Validation, SpmmArgs) {
  SpmmFixture f;
  f.args.arg_lhs = view(f.arg_l, {3, 1});
  expect_error<ValueError>([&] { spmm(f.args); }, {"arg_lhs", "shape"});
  SpmmFixture g;
  g.args.arg_rhs = view(g.arg32, {3, 2});
  expect_error<TypeError>([&] { spmm(g.args); }, {"arg_rhs", "int64"});
  SpmmFixture h;
  h.args.arg_lhs = ArrayView{};
  expect_error<ValueError>([&] { spmm(h.args); }, {"arg_lhs", "required"});
  // Sum needs no args at all.
  SpmmFixture s;
  s.args.reduce = ReduceOp::Sum;
  s.args.arg_lhs = s.args.arg_rhs = ArrayView{};
  EXPECT_NO_THROW(spmm(s.args));
}

TEST(Validation, SpmmShapes) {
  SpmmFixture f;
  f.args.out = view(f.out, {3, 1, 2});
  expect_error<ValueError>([&] { spmm(f.args); }, {"out feature shape", "[2]"});
  SpmmFixture g;
  g.args.rhs = view(g.rhs, {5, 2, 1});
  g.args.lhs = view(g.lhs, {4, 1, 2});
  g.args.reduce = ReduceOp::Sum;
  std::vector<float> out4(3 * 4);
  g.args.out = view(out4, {3, 2, 2});
  EXPECT_NO_THROW(spmm(g.args));  // (1,2) x (2,1) broadcasts to (2,2)
  SpmmFixture h;
  std::vector<float> rhs3(5 * 3);
  h.args.rhs = view(rhs3, {5, 3});
  expect_error<ValueError>([&] { spmm(h.args); }, {"do not broadcast"});
  SpmmFixture m;
  m.args.lhs = ArrayView{};
  expect_error<ValueError>([&] { spmm(m.args); }, {"lhs is required"});
}

TEST(Validation, SpmmDevices) {
  SpmmFixture f;
  f.args.out.device = Device{DeviceType::CUDA, 0};
  expect_error<ValueError>([&] { spmm(f.args); }, {"cpu", "cuda:0", "out"});
}

// All arrays on a CUDA device reach the CUDA implementation; without CUDA that is a clean error.
TEST(Validation, CudaArraysWithoutCuda) {
#ifdef NODEWEAVE_WITH_CUDA
  // cuda_built() cannot tell here: this binary links only the kernel layer, not the engine's hooks.
  GTEST_SKIP() << "CUDA build";
#endif
  SpmmFixture f;
  const Device gpu{DeviceType::CUDA, 0};
  for (ArrayView* v : {&f.args.in_edges.indptr, &f.args.in_edges.indices, &f.args.in_edges.eids,
                       &f.args.lhs, &f.args.rhs, &f.args.out, &f.args.arg_lhs, &f.args.arg_rhs})
    v->device = gpu;
  expect_error<NotImplementedError>([&] { spmm(f.args); }, {"without CUDA"});
}

TEST(Validation, Sddmm) {
  Graph g;
  g.num_src = 3;
  g.num_dst = 2;
  g.src = {0, 1, 2};
  g.dst = {0, 1, 1};
  const Coo<int32_t> c = coo<int32_t>(g);
  std::vector<float> lhs(3 * 4), rhs(2 * 4), out(3 * 1), bad(5 * 4);
  std::vector<double> rhs_d(2 * 4);
  SddmmArgs a;
  a.edges = c.view();
  a.lhs = view(lhs, {3, 4});
  a.rhs = view(rhs, {2, 4});
  a.out = view(out, {3, 1});
  EXPECT_NO_THROW(sddmm(a));
  SddmmArgs b = a;
  b.rhs_target = Target::E;  // rhs has 2 rows, the graph 3 edges
  expect_error<ValueError>([&] { sddmm(b); }, {"gsddmm", "rhs", "edges"});
  b = a;
  b.lhs = view(bad, {5, 4});
  expect_error<ValueError>([&] { sddmm(b); }, {"lhs", "source nodes"});
  b = a;
  b.rhs = view(rhs_d, {2, 4});
  expect_error<TypeError>([&] { sddmm(b); }, {"rhs", "float64"});
  b = a;
  b.rhs = view(rhs, {2, 2, 2});
  expect_error<ValueError>([&] { sddmm(b); }, {"dot"});
  b = a;
  b.out = view(out, {1, 3});
  expect_error<ValueError>([&] { sddmm(b); }, {"out"});
  b = a;
  std::vector<int64_t> dst64(g.dst.begin(), g.dst.end());
  b.edges.dst = view(dst64, {3});
  expect_error<TypeError>([&] { sddmm(b); }, {"src and dst"});
}

TEST(Validation, EdgeSoftmax) {
  Graph g;
  g.num_src = 2;
  g.num_dst = 2;
  g.src = {0, 1, 1};
  g.dst = {0, 0, 1};
  const Compressed<int64_t> rows = compress<int64_t>(g, true);
  std::vector<float> s(3 * 2), o(3 * 2), small(2 * 2);
  std::vector<double> od(3 * 2);
  EXPECT_NO_THROW(edge_softmax_forward(rows.view(), view(s, {3, 2}), view(o, {3, 2})));
  expect_error<ValueError>(
      [&] {
        edge_softmax_forward(rows.view(), view(small, {2, 2}), view(o, {3, 2}));
      },
      {"edge_softmax_forward", "score", "2 rows"});
  expect_error<TypeError>(
      [&] {
        edge_softmax_forward(rows.view(), view(s, {3, 2}), view(od, {3, 2}));
      },
      {"out"});
  expect_error<ValueError>(
      [&] {
        edge_softmax_backward(rows.view(), view(o, {3, 2}), view(s, {3, 1, 2}), view(s, {3, 2}));
      },
      {"grad_out", "shape"});
  CompressedView bad = rows.view();
  bad.num_rows = 5;
  expect_error<ValueError>(
      [&] {
        edge_softmax_forward(bad, view(s, {3, 2}), view(o, {3, 2}));
      },
      {"indptr", "length"});
}

TEST(Validation, Segment) {
  std::vector<int64_t> off = {0, 2, 5}, bad_off = {0, 3, 2}, arg(2 * 3);
  std::vector<int32_t> arg32(2 * 3);
  std::vector<float> x(5 * 3), out(2 * 3), x4(4 * 3);
  EXPECT_NO_THROW(segment_reduce(ReduceOp::Max, view(x, {5, 3}), view(off, {3}), view(out, {2, 3}),
                                 view(arg, {2, 3})));
  expect_error<ValueError>(
      [&] {
        segment_reduce(ReduceOp::Sum, view(x4, {4, 3}), view(off, {3}), view(out, {2, 3}), {});
      },
      {"segment_reduce", "x", "offsets[-1]"});
  expect_error<ValueError>(
      [&] {
        segment_reduce(ReduceOp::Sum, view(x, {5, 3}), view(bad_off, {3}), view(out, {2, 3}), {});
      },
      {"non-decreasing"});
  expect_error<TypeError>(
      [&] {
        segment_reduce(ReduceOp::Min, view(x, {5, 3}), view(off, {3}), view(out, {2, 3}),
                       view(arg32, {2, 3}));
      },
      {"arg", "int64"});
  expect_error<ValueError>(
      [&] {
        segment_reduce(ReduceOp::Min, view(x, {5, 3}), view(off, {3}), view(out, {2, 3}),
                       view(arg, {3, 2}));
      },
      {"arg", "shape"});
  expect_error<ValueError>(
      [&] {
        segment_reduce_backward(ReduceOp::Max, view(out, {2, 3}), view(off, {3}), view(x, {5, 3}));
      },
      {"sum and mean"});
  expect_error<ValueError>(
      [&] {
        segment_softmax_forward(view(x, {5, 3}), view(off, {3}), view(x4, {4, 3}));
      },
      {"segment_softmax_forward", "out"});
}

TEST(Validation, GatherMm) {
  std::vector<float> a(4 * 3), b(2 * 3 * 5), out(6 * 5), gb(2 * 3 * 5);
  std::vector<double> bd(2 * 3 * 5);
  std::vector<int64_t> ia = {0, 1, 2, 3, 0, 1}, ib = {0, 1, 0, 1, 1, 0},
                       ib_bad = {0, 1, 2, 0, 0, 0};
  std::vector<int32_t> ib32(ib.begin(), ib.end());
  EXPECT_NO_THROW(gather_mm(view(a, {4, 3}), view(b, {2, 3, 5}), view(ia, {6}), view(ib, {6}),
                            view(out, {6, 5})));
  expect_error<IndexError>(
      [&] {
        gather_mm(view(a, {4, 3}), view(b, {2, 3, 5}), view(ia, {6}), view(ib_bad, {6}),
                  view(out, {6, 5}));
      },
      {"gather_mm", "idx_b[2] = 2"});
  expect_error<TypeError>(
      [&] {
        gather_mm(view(a, {4, 3}), view(bd, {2, 3, 5}), view(ia, {6}), view(ib, {6}),
                  view(out, {6, 5}));
      },
      {"b"});
  expect_error<TypeError>(
      [&] {
        gather_mm(view(a, {4, 3}), view(b, {2, 3, 5}), view(ia, {6}), view(ib32, {6}),
                  view(out, {6, 5}));
      },
      {"idx_a and idx_b"});
  expect_error<ValueError>(
      [&] {
        gather_mm(view(a, {4, 3}), view(b, {2, 3, 5}), ArrayView{}, view(ib, {6}),
                  view(out, {6, 5}));
      },
      {"a", "4 rows"});
  expect_error<ValueError>(
      [&] {
        gather_mm(view(a, {4, 3}), view(b, {2, 5, 3}), view(ia, {6}), view(ib, {6}),
                  view(out, {6, 3}));
      },
      {"k"});
  expect_error<ValueError>(
      [&] {
        gather_mm_grad_b(view(a, {4, 3}), view(out, {6, 5}), view(ia, {6}), view(ib, {6}),
                         view(gb, {2, 5, 3}));
      },
      {"grad_b"});

  std::vector<int64_t> seglen = {4, 1}, seglen_bad = {4, 2};
  std::vector<float> out5(4 * 5);
  std::vector<int32_t> seglen32 = {4, 0};
  EXPECT_NO_THROW(segment_mm(view(a, {4, 3}), view(b, {2, 3, 5}),
                             view(std::vector<int64_t>{4, 0}, {2}), view(out5, {4, 5})));
  expect_error<ValueError>(
      [&] {
        segment_mm(view(a, {4, 3}), view(b, {2, 3, 5}), view(seglen_bad, {2}), view(out5, {4, 5}));
      },
      {"seglen sums to 6"});
  expect_error<TypeError>(
      [&] {
        segment_mm(view(a, {4, 3}), view(b, {2, 3, 5}), view(seglen32, {2}), view(out5, {4, 5}));
      },
      {"seglen", "int64"});
}

}  // namespace
}  // namespace nodeweave::sparse
