// Each pass on IR text in, IR text out (LLVM's habit): what it removes or rewrites, and what it
// must leave alone (random draws, in-place writes and what they touch).
#include <gtest/gtest.h>

#include "core_framework/jit/ir_text.h"
#include "core_framework/jit/passes/passes.h"
#include "core_framework/runtime/error.h"

namespace nodeweave::jit {
namespace {

std::string apply(void (*pass)(Program&), const std::string& text) {
  Program p = parse(text);
  pass(p);
  return print(p);
}

TEST(DeadCode, DropsUnreadNodesAndKeepsEffects) {
  EXPECT_EQ(apply(eliminate_dead_code,
                  "program(%0: float32[4]) {\n"
                  "  %1: float32[4] = exp(%0)\n"  // dead
                  "  %2: float32[4] = log(%1)\n"  // dead
                  "  %3: float32[4] = relu(%0)\n"
                  "  %4: float32[4] = bernoulli_mask(%0) {0.5}\n"  // random: kept
                  "  %5: float32[4] = neg(%0)\n"
                  "  %6: float32[4] = add_(%5, %0)\n"  // in-place: kept
                  "  return (%3)\n"
                  "}\n"),
            "program(%0: float32[4]) {\n"
            "  %1: float32[4] = relu(%0)\n"
            "  %2: float32[4] = bernoulli_mask(%0) {0.5}\n"
            "  %3: float32[4] = neg(%0)\n"
            "  %4: float32[4] = add_(%3, %0)\n"
            "  return (%1)\n"
            "}\n");
}

TEST(CommonSubexpressions, MergesSameOpAttrsAndInputs) {
  EXPECT_EQ(apply(eliminate_common_subexpressions,
                  "program(%0: float32[4, 3]) {\n"
                  "  %1: float32[4] = sum(%0) {[1], false, dtype(float32)}\n"
                  "  %2: float32[4] = sum(%0) {[1], false, dtype(float32)}\n"
                  "  %3: float32[3] = sum(%0) {[0], false, dtype(float32)}\n"  // other attrs
                  "  %4: float32[4] = add(%1, %2)\n"
                  "  %5: float32[4] = add(%2, %1)\n"  // operands in another order: not merged
                  "  return (%4, %5, %3)\n"
                  "}\n"),
            "program(%0: float32[4, 3]) {\n"
            "  %1: float32[4] = sum(%0) {[1], false, dtype(float32)}\n"
            "  %2: float32[3] = sum(%0) {[0], false, dtype(float32)}\n"
            "  %3: float32[4] = add(%1, %1)\n"
            "  return (%3, %3, %2)\n"
            "}\n");
}

TEST(CommonSubexpressions, LeavesRandomDrawsAndWrittenMemoryAlone) {
  const std::string text =
      "program(%0: float32[4]) {\n"
      "  %1: float32[4] = bernoulli_mask(%0) {0.5}\n"
      "  %2: float32[4] = bernoulli_mask(%0) {0.5}\n"
      "  %3: float32[4] = view(%0) {[4]}\n"
      "  %4: float32[4] = exp(%3)\n"
      "  %5: float32[4] = mul_(%0, %0)\n"  // writes %0's memory, which the view %3 shares
      "  %6: float32[4] = exp(%3)\n"       // reads the written memory: not the same value as %4
      "  return (%1, %2, %4, %6, %5)\n"
      "}\n";
  EXPECT_EQ(apply(eliminate_common_subexpressions, text), text);
}

TEST(CommonSubexpressions, MergesReadsBetweenTheSameWrites) {
  // A backward seeds its gradient with fill_ and then reads it twice the same way (h * h).
  EXPECT_EQ(apply(eliminate_common_subexpressions,
                  "program(%0: float32[4], %1: float32[4]) {\n"
                  "  %2: float32[4] = fill_(%0) {1.0}\n"
                  "  %3: float32[4] = mul(%2, %1)\n"
                  "  %4: float32[4] = mul(%2, %1)\n"  // same write count as %3: merged
                  "  %5: float32[4] = add_(%2, %1)\n"
                  "  %6: float32[4] = mul(%2, %1)\n"  // after another write: a new value
                  "  %7: float32[4] = add(%3, %4)\n"
                  "  return (%7, %6, %5)\n"
                  "}\n"),
            "program(%0: float32[4], %1: float32[4]) {\n"
            "  %2: float32[4] = fill_(%0) {1.0}\n"
            "  %3: float32[4] = mul(%2, %1)\n"
            "  %4: float32[4] = add_(%2, %1)\n"
            "  %5: float32[4] = mul(%2, %1)\n"
            "  %6: float32[4] = add(%3, %3)\n"
            "  return (%6, %5, %4)\n"
            "}\n");
}

TEST(ConstantFolding, RunsNodesOfConstantsAtCompileTime) {
  EXPECT_EQ(apply(fold_constants,
                  "program(%0: float32[3]) {\n"
                  "  %1: float32[3] = constant [1.0, 2.0, 3.0]\n"
                  "  %2: float32[] = constant 2.0\n"
                  "  %3: float32[3] = mul(%1, %2)\n"
                  "  %4: float32[3] = neg(%3)\n"
                  "  %5: float32[3] = add(%0, %4)\n"
                  "  return (%5)\n"
                  "}\n"),
            "program(%0: float32[3]) {\n"
            "  %1: float32[3] = constant [-2.0, -4.0, -6.0]\n"
            "  %2: float32[3] = add(%0, %1)\n"
            "  return (%2)\n"
            "}\n");
}

TEST(ConstantFolding, LeavesCapturesRandomAndWrittenResultsAlone) {
  const std::string text =
      "program(%0: float32[3]) {\n"
      "  %1: float32[3] = capture #0\n"
      "  %2: float32[3] = constant [1.0, 2.0, 3.0]\n"
      "  %3: float32[3] = mul(%1, %2)\n"               // a capture may change between runs
      "  %4: float32[3] = bernoulli_mask(%2) {0.5}\n"  // random
      "  %5: float32[3] = neg(%2)\n"                   // written below: stays a per-run value
      "  %6: float32[3] = add_(%5, %0)\n"
      "  return (%3, %4, %6)\n"
      "}\n";
  EXPECT_EQ(apply(fold_constants, text), text);
}

TEST(ConstantFolding, DropsGuardsThatFoldingSettles) {
  EXPECT_EQ(apply(fold_constants,
                  "program(%0: float32[2]) {\n"
                  "  %1: float32[2] = constant [1.0, 0.0]\n"
                  "  %2: float32[] = constant 0.0\n"
                  "  %3: bool[2] = eq(%1, %2)\n"
                  "  %4: float32[2] = capture #0\n"
                  "  %5: float32[] = sum(%4) {[], false, dtype(float32)}\n"
                  "  guard %3 == [false, true]\n"  // folds to a constant equal to it: dropped
                  "  guard %5 == 3.0\n"            // a capture's sum: checked at each run
                  "  return (%0)\n"
                  "}\n"),
            "program(%0: float32[2]) {\n"
            "  %1: float32[2] = capture #0\n"
            "  %2: float32[] = sum(%1) {[], false, dtype(float32)}\n"
            "  guard %2 == 3.0\n"
            "  return (%0)\n"
            "}\n");
}

TEST(PassList, RunsInOrderAndRefusesUnknownNames) {
  Program p = parse(
      "program(%0: float32[3]) {\n"
      "  %1: float32[] = constant 2.0\n"
      "  %2: float32[] = exp(%1)\n"
      "  %3: float32[3] = mul(%0, %2)\n"
      "  %4: float32[3] = mul(%0, %2)\n"
      "  %5: float32[3] = relu(%0)\n"
      "  return (%3, %4)\n"
      "}\n");
  Program all = p;
  run_passes(all);
  EXPECT_EQ(print(all),
            "program(%0: float32[3]) {\n"
            "  %1: float32[] = constant 7.389056\n"
            "  %2: float32[3] = mul(%0, %1)\n"
            "  return (%2, %2)\n"
            "}\n");
  Program some = p;
  run_passes(some, {"fold_constants", "eliminate_common_subexpressions"});
  EXPECT_EQ(print(some),
            "program(%0: float32[3]) {\n"
            "  %1: float32[] = constant 2.0\n"
            "  %2: float32[] = exp(%1)\n"
            "  %3: float32[3] = mul(%0, %2)\n"
            "  %4: float32[3] = mul(%0, %2)\n"
            "  return (%3, %4)\n"
            "}\n");
  EXPECT_THROW(run_passes(p, {"no_such_pass"}), ValueError);
}

}  // namespace
}  // namespace nodeweave::jit
