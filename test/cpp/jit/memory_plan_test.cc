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
      "  %2: float32[4] = log(%1)\n"               // buffer 1: %1 is read here
      "  %3: float32[4] = neg(%2)\n"               // buffer 0 again: %1 died at the last node
      "  %4: float32[2, 2] = view(%3) {[2, 2]}\n"  // a view: %3's memory lives on through it
      "  %5: float32[2, 2] = relu(%4)\n"           // the output: not planned
      "  %6: float32[4] = sigmoid(%2)\n"           // buffer 1 is still %2's: a new one
      "  return (%5, %6)\n"
      "}\n");
  const MemoryPlan m = plan_memory(p);
  EXPECT_EQ(m.buffer_of, (Plan{{0}, {1}, {0}, {-1}, {-1}, {-1}}));
  EXPECT_EQ(m.arena_bytes, 32);
  EXPECT_EQ(m.planned_bytes, 48);
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

}  // namespace
}  // namespace nodeweave::jit
