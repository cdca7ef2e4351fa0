// fuse_elementwise on IR text in, IR text out, and the fused node against the ops it replaces.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "core_framework/engine/functional.h"
#include "core_framework/jit/executor.h"
#include "core_framework/jit/fused_elementwise.h"
#include "core_framework/jit/ir_text.h"
#include "core_framework/jit/passes/passes.h"
#include "core_framework/jit/program_file.h"
#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::jit {
namespace {

bool equal(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor ca = contiguous(a), cb = contiguous(b);
  return std::memcmp(ca.data_ptr(), cb.data_ptr(),
                     static_cast<size_t>(ca.numel()) * ca.itemsize()) == 0;
}

// Fuses `text` (runs of min_elements and more), checks that it became one node, and that the node
// gives the unfused program's outputs for `in`, bit for bit.
void expect_one_node_equal_to_ops(const std::string& text, int64_t min_elements,
                                  const TensorList& in) {
  Program plain = parse(text);
  Program p = parse(text);
  fuse_elementwise(p, min_elements);
  ASSERT_EQ(p.nodes.size(), 1u) << print(p);
  const TensorList want = Executor(plain, false).run(in);
  const TensorList got = Executor(p, true).run(in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(equal(got[i], want[i])) << "output " << i;
}

std::string fused(const std::string& text) {
  Program p = parse(text);
  fuse_elementwise(p, 1024);  // small programs: the rules, not the default threshold
  return print(p);
}

TEST(ElementwiseFusion, FusesAChainAndKeepsWhatOthersRead) {
  EXPECT_EQ(fused("program(%0: float32[64, 32], %1: float32[64, 32]) {\n"
                  "  %2: float32[] = scalar 0.5\n"
                  "  %3: float32[64, 32] = mul(%0, %1)\n"
                  "  %4: float32[64, 32] = add(%3, %2)\n"
                  "  %5: float32[64, 32] = relu(%4)\n"
                  "  %6: float32[64, 32] = exp(%5)\n"
                  "  %7: float32[32, 64] = permute(%4) {[1, 0]}\n"  // reads %4 after the run
                  "  return (%6, %7)\n"
                  "}\n"),
            "program(%0: float32[64, 32], %1: float32[64, 32]) {\n"
            "  %2: float32[] = scalar 0.5\n"
            "  %3: float32[64, 32], %4: float32[64, 32] = fused_elementwise(%0, %1, %2) "
            "{opaque(elementwise: r3 = mul(r0 r1); r4 = add(r3 r2); r5 = relu(r4); "
            "r6 = exp(r5) -> r4 r6)}\n"
            "  %5: float32[32, 64] = permute(%3) {[1, 0]}\n"
            "  return (%4, %5)\n"
            "}\n");
}

TEST(ElementwiseFusion, LeavesAloneWhatItCannotFuse) {
  const std::string text =
      "program(%0: float32[8, 4, 32], %1: float32[4, 1]) {\n"
      "  %2: float32[8, 4, 32] = exp(%0) grad\n"  // records autograd
      "  %3: float32[8, 4, 32] = relu(%2) grad\n"
      "  %4: float32[8, 4, 32] = add(%0, %1)\n"  // broadcast over dims 0 and 2: not a row or column
      "  %5: float32[8, 4, 32] = neg(%4)\n"
      "  %6: float32[8, 4, 32] = bernoulli_mask(%5) {0.5}\n"  // random
      "  %7: float32[8, 4, 32] = neg_(%6)\n"                  // in place
      "  %8: float32[4, 1] = exp(%1)\n"
      "  return (%3, %7, %8)\n"
      "}\n";
  // neg alone is a run of one.
  EXPECT_EQ(fused(text), print(parse(text)));
}

TEST(ElementwiseFusion, IndependentNodesBetweenMoveAhead) {
  // A view, a small statistic and a random mask the run reads sit between its nodes: they read
  // nothing the run makes and write nothing, so they move ahead of the fused node.
  EXPECT_EQ(fused("program(%0: float32[64, 32], %1: float32[2048], %2: float32[64]) {\n"
                  "  %3: float32[64, 32] = mul(%0, %0)\n"
                  "  %4: float32[64, 32] = view(%1) {[64, 32]}\n"
                  "  %5: float32[64, 32] = add(%3, %4)\n"
                  "  %6: float32[1] = sum(%2) {[0], true, dtype(float32)}\n"
                  "  %7: float32[64, 32] = bernoulli_mask(%0) {0.5}\n"
                  "  %8: float32[64, 32] = mul(%5, %7)\n"
                  "  %9: float32[64, 32] = relu(%8)\n"
                  "  %10: float32[32, 64] = permute(%9) {[1, 0]}\n"
                  "  return (%10, %6)\n"
                  "}\n"),
            "program(%0: float32[64, 32], %1: float32[2048], %2: float32[64]) {\n"
            "  %3: float32[64, 32] = view(%1) {[64, 32]}\n"
            "  %4: float32[1] = sum(%2) {[0], true, dtype(float32)}\n"
            "  %5: float32[64, 32] = bernoulli_mask(%0) {0.5}\n"
            "  %6: float32[64, 32] = fused_elementwise(%0, %3, %5) "
            "{opaque(elementwise: r3 = mul(r0 r0); r4 = add(r3 r1); r5 = mul(r4 r2); "
            "r6 = relu(r5) -> r6)}\n"
            "  %7: float32[32, 64] = permute(%6) {[1, 0]}\n"
            "  return (%7, %4)\n"
            "}\n");
}

TEST(ElementwiseFusion, TheDefaultLeavesTensorsThatFitTheCachesAlone) {
  auto chain = [](int64_t n) {
    return str_cat("program(%0: float32[", n, "]) {\n  %1: float32[", n,
                   "] = exp(%0)\n  %2: float32[", n, "] = neg(%1)\n  return (%2)\n}\n");
  };
  Program small = parse(chain(kFuseMinElements - 1)), large = parse(chain(kFuseMinElements));
  fuse_elementwise(small);
  fuse_elementwise(large);
  EXPECT_EQ(small.nodes.size(), 2u);
  EXPECT_EQ(large.nodes.size(), 1u);
}

TEST(ElementwiseFusion, WritesAndReadersOfTheRunStayInOrder) {
  // An in-place write between two nodes of a run would see another order if it moved: the run
  // ends before it. So does a node that reads the run's value.
  const std::string write_between =
      "program(%0: float32[64, 32], %1: float32[64]) {\n"
      "  %2: float32[64, 32] = exp(%0)\n"
      "  %3: float32[64] = neg_(%1)\n"
      "  %4: float32[64, 32] = neg(%2)\n"
      "  return (%4, %3)\n"
      "}\n";
  EXPECT_EQ(fused(write_between), print(parse(write_between)));
  const std::string reader_between =
      "program(%0: float32[64, 32]) {\n"
      "  %1: float32[64, 32] = exp(%0)\n"
      "  %2: float32[1, 32] = sum(%1) {[0], true, dtype(float32)}\n"
      "  %3: float32[64, 32] = mul(%1, %2)\n"
      "  return (%3)\n"
      "}\n";
  EXPECT_EQ(fused(reader_between), print(parse(reader_between)));
}

TEST(ElementwiseFusion, SmallTensorsAndUnrelatedNeighboursStayApart) {
  const std::string small =
      "program(%0: float32[8]) {\n"
      "  %1: float32[8] = exp(%0)\n"
      "  %2: float32[8] = neg(%1)\n"
      "  return (%2)\n"
      "}\n";
  EXPECT_EQ(fused(small), print(parse(small)));
  const std::string unrelated =
      "program(%0: float32[2048], %1: float32[2048]) {\n"
      "  %2: float32[2048] = exp(%0)\n"
      "  %3: float32[2048] = neg(%1)\n"
      "  return (%2, %3)\n"
      "}\n";
  EXPECT_EQ(fused(unrelated), print(parse(unrelated)));
}

// The fused node computes what the ops compute, bit for bit, on every block size boundary and
// with any thread count; a saved program with it loads and runs.
TEST(ElementwiseFusion, EqualsTheUnfusedOpsAndSavesAndLoads) {
  for (int64_t n : {int64_t{1024}, kBlockElements - 1, kBlockElements + 7, 5 * kBlockElements}) {
    const std::string text =
        str_cat("program(%0: float32[", n, "], %1: float32[", n, "]) {\n",
                "  %2: float64[] = scalar 0.25\n", "  %3: float32[", n, "] = mul(%0, %1)\n",
                "  %4: float32[", n, "] = sub(%3, %2)\n", "  %5: bool[", n, "] = gt(%4, %2)\n",
                "  %6: float32[", n, "] = where(%5, %4, %0)\n", "  %7: float32[", n,
                "] = leaky_relu(%6) {0.1}\n", "  %8: float32[", n, "] = tanh(%7)\n",
                "  return (%8, %5)\n", "}\n");
    Program plain = parse(text);
    Program p = parse(text);
    fuse_elementwise(p, 1024);
    ASSERT_EQ(p.nodes.size(), 1u) << print(p);
    Tensor a = randn({n}), b = randn({n});
    const TensorList want = Executor(plain, false).run({a, b});
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      const TensorList got = Executor(p, true).run({a, b});
      ASSERT_EQ(got.size(), 2u);
      for (size_t i = 0; i < 2; ++i)
        EXPECT_TRUE(equal(got[i], want[i])) << "n " << n << " output " << i;
    }
    set_num_threads(1);
    const TensorList loaded = Executor(deserialize_program(serialize_program(p))).run({a, b});
    EXPECT_TRUE(equal(loaded[0], want[0]));
  }
}

// A one-element operand with dimensions promotes as a tensor (float32 x float64[1] is float64),
// a wrapped Python number as a scalar (float32 x 0.5 stays float32): the fused node reads both as
// eager mode does, so each step computes in the dtype its traced result has.
TEST(ElementwiseFusion, OneElementOperandsPromoteAsInEagerMode) {
  const std::string text =
      "program(%0: float32[3000], %1: float64[1]) {\n"
      "  %2: float64[] = scalar 0.5\n"
      "  %3: float64[3000] = mul(%0, %1)\n"
      "  %4: float64[3000] = tanh(%3)\n"
      "  %5: float32[3000] = mul(%0, %2)\n"
      "  %6: float32[3000] = add(%5, %0)\n"
      "  return (%4, %6)\n"
      "}\n";
  expect_one_node_equal_to_ops(text, 1024, {randn({3000}), cast(randn({1}), DType::Float64)});
}

// A body whose step does not fit its op (from a crafted or damaged file) is refused when it is
// read or run, with a ValueError, never a read past an operand list or a write past a buffer.
TEST(ElementwiseFusion, AStepThatDoesNotFitItsOpIsRefused) {
  const std::string text =
      "program(%0: float32[2048]) {\n"
      "  %1: float32[2048] = exp(%0)\n"
      "  %2: float32[2048] = neg(%1)\n"
      "  return (%2)\n"
      "}\n";
  auto with_body = [&](const std::function<void(FusedBody&)>& damage) {
    Program p = parse(text);
    fuse_elementwise(p, 1024);
    auto body = std::make_shared<FusedBody>(p.nodes[0].attrs.opaque<FusedBody>(0));
    damage(*body);
    p.nodes[0].attrs.mutable_at(0) = OpaquePtr(body);
    return p;
  };
  Program no_operand = with_body([](FusedBody& b) { b.steps[1].args.clear(); });
  try {
    deserialize_program(serialize_program(no_operand));
    ADD_FAILURE() << "a step without its operand was loaded";
  } catch (const ValueError& e) {
    EXPECT_NE(
        std::string(e.what()).find("an elementwise step: neg: takes 1 tensor input (x), got 0"),
        std::string::npos)
        << e.what();
  }
  Program wrong_dtype = with_body([](FusedBody& b) { b.steps[0].dtype = DType::Float16; });
  try {
    Executor(wrong_dtype, true).run({randn({2048})});
    ADD_FAILURE() << "a step with another dtype than its op computes ran";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("step 0 (exp) computes float32 but the body says float16"),
              std::string::npos)
        << e.what();
  }
}

// A body of one element (a dynamic program's smallest instance) reads a wrapped Python number as
// a scalar too: float32[1] * 0.5 stays float32, as unfused.
TEST(ElementwiseFusion, AOneElementBodyKeepsWeakScalars) {
  const std::string text =
      "program(%0: float32[1]) {\n"
      "  %1: float64[] = scalar 0.5\n"
      "  %2: float32[1] = mul(%0, %1)\n"
      "  %3: float32[1] = add(%2, %0)\n"
      "  return (%3)\n"
      "}\n";
  expect_one_node_equal_to_ops(text, 1, {randn({1})});
}

TEST(ElementwiseFusion, NothingMovesAheadOfAGuardedValue) {
  // The guard on %1 is checked after the fused node: the random draw between may not move there.
  const std::string text =
      "program(%0: float32[64, 32]) {\n"
      "  %1: float32[64, 32] = exp(%0)\n"
      "  %2: float32[64, 32] = bernoulli_mask(%0) {0.5}\n"
      "  %3: float32[64, 32] = mul(%1, %2)\n"
      "  guard %1 == #0\n"
      "  return (%3)\n"
      "}\n";
  Program p = parse(text);
  fuse_elementwise(p, 1024);
  EXPECT_EQ(p.nodes.size(), 3u) << print(p);
}

TEST(ElementwiseFusion, ACorruptBodyIsAValueError) {
  Program p = parse(
      "program(%0: float32[2048]) {\n"
      "  %1: float32[2048] = exp(%0)\n"
      "  %2: float32[2048] = neg(%1)\n"
      "  return (%2)\n"
      "}\n");
  fuse_elementwise(p, 1024);
  std::string bytes = serialize_program(p);
  // Cut the file anywhere: the loader refuses with ValueError, never crashes.
  for (size_t cut = 0; cut < bytes.size(); cut += 7)
    EXPECT_THROW(deserialize_program(bytes.substr(0, cut)), ValueError) << cut;
}

}  // namespace
}  // namespace nodeweave::jit
