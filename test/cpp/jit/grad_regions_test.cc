// Backward regions (program.h GradRegion): the tracer records which forward node each backward op
// differentiates, the text form round-trips them, and the passes keep them in step with the values
// they name (merged values renamed, dropped ones `none`).
#include <gtest/gtest.h>

#include "core_framework/autograd/engine.h"
#include "core_framework/jit/ir_text.h"
#include "core_framework/jit/passes/passes.h"
#include "core_framework/jit/tracer.h"
#include "core_framework/runtime/error.h"
#include "jit_test_util.h"

namespace nodeweave::jit {
namespace {

TEST(GradRegions, TracedGradRecordsOneRegionPerAutogradNode) {
  Tensor w = testing::from({1, -2, 3, 4}, {2, 2});
  w.set_requires_grad(true);
  Program p;
  {
    Tracer tracer;
    Tensor x = testing::from({1, 2}, {1, 2});
    tracer.add_input(x);
    Tensor y = relu(mm(x, w));
    Tensor loss = sum(y);
    TensorList g = grad({loss}, {w}, {}, false, false, false);
    p = tracer.finish({loss, g[0]});
  }
  // Three forward nodes that record autograd (mm, relu, sum): three regions, in backward order.
  ASSERT_EQ(p.regions.size(), 3u);
  auto producer_op = [&](int64_t v) {
    for (const OpNode& n : p.nodes)
      for (int64_t o : n.outputs)
        if (o == v) return std::string(op_def(n.op).name);
    return std::string("?");
  };
  EXPECT_EQ(producer_op(p.regions[0].forward), "sum");
  EXPECT_EQ(producer_op(p.regions[1].forward), "relu");
  EXPECT_EQ(producer_op(p.regions[2].forward), "mm");
  // Each region hands its gradient to the next; mm's is the program's second output.
  EXPECT_EQ(p.regions[1].grad_inputs.at(0), p.regions[0].grad_outputs.at(0));
  EXPECT_EQ(p.regions[2].grad_inputs.at(0), p.regions[1].grad_outputs.at(0));
  EXPECT_EQ(p.regions[2].grad_outputs.at(0), kNone);  // x needs no gradient
  EXPECT_EQ(p.regions[2].grad_outputs.at(1), p.outputs[1]);
  for (const OpNode& n : p.nodes) {
    const bool forward = n.op == OpKind::Mm && n.inputs[0] == p.inputs[0];
    if (forward) EXPECT_EQ(n.region, -1);
  }
  EXPECT_EQ(print(parse(print(p))), print(p));
}

TEST(GradRegions, TextRoundTripsAndIsValidated) {
  const std::string text =
      "program(%0: float32[4]) {\n"
      "  %1: float32[4] = exp(%0)\n"
      "  %2: float32[4] = neg(%1) backward #0\n"
      "  backward #0 of %1 (%0) -> (%2)\n"
      "  return (%1, %2)\n"
      "}\n";
  EXPECT_EQ(print(parse(text)), text);
  // Regions are declared in order, and a node names one that exists.
  EXPECT_THROW(parse("program(%0: float32[4]) {\n  backward #1 of %0 () -> ()\n  return (%0)\n}\n"),
               ValueError);
  EXPECT_THROW(parse("program(%0: float32[4]) {\n  %1: float32[4] = neg(%0) backward #3\n"
                     "  return (%1)\n}\n"),
               ValueError);
}

TEST(GradRegions, PassesRenameMergedValuesAndForgetDroppedOnes) {
  const std::string text =
      "program(%0: float32[4]) {\n"
      "  %1: float32[4] = exp(%0)\n"
      "  %2: float32[4] = exp(%0)\n"  // merged into %1 by CSE
      "  %3: float32[4] = neg(%2) backward #0\n"
      "  %4: float32[4] = log(%0) backward #0\n"  // read by nothing: dropped by DCE
      "  backward #0 of %2 (%0) -> (%3, %4)\n"
      "  return (%3)\n"
      "}\n";
  Program p = parse(text);
  eliminate_common_subexpressions(p);
  eliminate_dead_code(p);
  EXPECT_EQ(print(p),
            "program(%0: float32[4]) {\n"
            "  %1: float32[4] = exp(%0)\n"
            "  %2: float32[4] = neg(%1) backward #0\n"
            "  backward #0 of %1 (%0) -> (%2, none)\n"
            "  return (%2)\n"
            "}\n");
}

}  // namespace
}  // namespace nodeweave::jit
