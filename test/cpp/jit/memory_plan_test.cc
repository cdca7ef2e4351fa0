// The memory plan on IR text: buffers are reused once every value sharing their memory is dead;
// views, outputs, autograd-recording nodes and what they read stay out of the plan. A planned
// replay computes what an unplanned one does.
#include <gtest/gtest.h>

#include "core_framework/engine/functional.h"
#include "core_framework/jit/executor.h"
#include "core_framework/jit/ir_text.h"
#include "core_framework/jit/memory_plan.h"

namespace nodeweave::jit {
namespace {

using Plan = std::vector<std::vector<int64_t>>;

TEST(MemoryPlan, ReusesBuffersByLiveness) {
  const Program p = parse(
      "program(%0: float32[4]) {\n"
      "  %1: float32[4] = exp(%0)\n"               // buffer 0
      "  %2: float32[4] = log(%1)\n"               // over %1, which dies here: buffer 0
      "  %3: float32[4] = neg(%2)\n"               // %2 is read again below: buffer 1
      "  %4: float32[2, 2] = view(%3) {[2, 2]}\n"  // a view: %3's memory lives on through it
      "  %5: float32[2, 2] = relu(%4)\n"           // the output: not planned
      "  %6: float32[4] = sigmoid(%2)\n"           // an output
      "  return (%5, %6)\n"
      "}\n");
  const MemoryPlan m = plan_memory(p);
  EXPECT_EQ(m.buffer_of, (Plan{{0}, {0}, {1}, {-1}, {-1}, {-1}}));
  EXPECT_EQ(m.arena_bytes, 32);
  EXPECT_EQ(m.planned_bytes, 48);
  EXPECT_EQ(m.in_place_bytes, 16);
}

TEST(MemoryPlan, ElementwiseResultsOverwriteInputsThatDieThere) {
  const Program p = parse(
      "program(%0: float32[4, 1], %1: float32[1, 4]) {\n"
      "  %2: float32[4, 1] = exp(%0)\n"      // buffer 0
      "  %3: float32[4, 1] = mul(%2, %2)\n"  // over %2 (read twice, dies here): buffer 0
      "  %4: float32[4, 4] = add(%3, %1)\n"  // another shape: a new buffer 1
      "  %5: bool[4, 4] = gt(%4, %4)\n"      // bool: not over %4; fits dead %3's buffer 0
      "  %6: float32[4, 4] = cast(%5) {dtype(float32)}\n"  // not over %5 (bool): %4's buffer 1
      "  %7: float32[4, 4] = softmax(%6) {1}\n"            // not elementwise: a new buffer 2
      "  %8: float32[4, 4] = tanh(%7)\n"                   // over %7: buffer 2
      "  %9: float32[4, 4] = neg(%8)\n"                    // the output: not planned
      "  return (%9)\n"
      "}\n");
  const MemoryPlan m = plan_memory(p);
  EXPECT_EQ(m.buffer_of, (Plan{{0}, {0}, {1}, {0}, {1}, {2}, {2}, {-1}}));
  EXPECT_EQ(m.in_place_bytes, 16 + 64);
  // The replay computes what an unplanned one does.
  const Executor planned(p, true), plain(p, false);
  Tensor x = empty({4, 1}), b = empty({1, 4});
  for (int i = 0; i < 4; ++i) {
    x.data<float>()[i] = 0.25f * static_cast<float>(i) - 0.4f;
    b.data<float>()[i] = 0.1f * static_cast<float>(i);
  }
  for (int run = 0; run < 2; ++run) {
    const Tensor u = planned.run({x, b})[0], v = plain.run({x, b})[0];
    for (int i = 0; i < 16; ++i) EXPECT_EQ(u.data<float>()[i], v.data<float>()[i]);
  }
}

TEST(MemoryPlan, LeavesAutogradAndItsInputsOut) {
  const Program p = parse(
      "program(%0: float32[4]) {\n"
      "  %1: float32[4] = capture #0 requires_grad\n"
      "  %2: float32[4] = exp(%0)\n"  // read by an autograd-recording node: not planned
      "  %3: float32[4] = mul(%2, %1) grad\n"
      "  %4: float32[4] = neg(%0)\n"  // planned
      "  %5: float32[4] = add(%4, %3)\n"
      "  return (%5)\n"
      "}\n");
  EXPECT_EQ(plan_memory(p).buffer_of, (Plan{{-1}, {-1}, {0}, {-1}}));
}

TEST(MemoryPlan, PlannedRunsComputeWhatUnplannedOnesDo) {
  const Program p = parse(
      "program(%0: float32[3]) {\n"
      "  %1: float32[] = constant 0.5\n"
      "  %2: float32[3] = exp(%0)\n"
      "  %3: float32[3] = mul(%2, %1)\n"
      "  %4: float32[3] = neg(%3)\n"
      "  %5: float32[3] = add(%4, %2)\n"
      "  %6: float32[3] = tanh(%5)\n"
      "  %7: float32[3] = mul(%6, %6)\n"
      "  return (%7)\n"
      "}\n");
  const Executor planned(p, true), plain(p, false);
  ASSERT_GT(planned.memory_plan().planned_bytes, 0);
  Tensor x = empty({3});
  for (int i = 0; i < 3; ++i) x.data<float>()[i] = 0.5f * static_cast<float>(i) - 0.3f;
  for (int run = 0; run < 3; ++run) {  // the buffers are reused from run to run
    const Tensor a = planned.run({x})[0], b = plain.run({x})[0];
    for (int i = 0; i < 3; ++i) EXPECT_EQ(a.data<float>()[i], b.data<float>()[i]);
  }
}

TEST(MemoryPlan, ADeclaredTypeTheOpDoesNotMakeIsRefusedNotWrittenPast) {
  // exp of a (4) is (4), not the (2) the text says: a planned buffer of 8 bytes would overflow.
  const Program p = parse(
      "program(%0: float32[4]) {\n"
      "  %1: float32[2] = exp(%0)\n"
      "  %2: float32[2] = neg(%1)\n"
      "  return (%2)\n"
      "}\n");
  const Executor planned(p, true);
  ASSERT_EQ(planned.memory_plan().buffer_of[0], (std::vector<int64_t>{0}));
  try {
    planned.run({empty({4})});
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("exp makes float32[4] for %1, which the program declares "
                                         "float32[2]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nodeweave::jit
