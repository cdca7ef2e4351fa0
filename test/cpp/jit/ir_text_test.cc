// The IR's text form: print(parse(text)) gives the canonical text back, ids are renumbered in
// definition order, and malformed text fails with the line and what was expected.
#include <gtest/gtest.h>

#include <random>

#include "core_framework/jit/ir_text.h"
#include "core_framework/runtime/error.h"

namespace nodeweave::jit {
namespace {

TEST(IrText, RoundTripsEveryKindOfLine) {
  const std::string text =
      "program(%0: float32[4, 8], %1: int64[4]) {\n"
      "  %2: float32[8, 16] = capture #0 requires_grad\n"
      "  %3: float32[] = constant 2.5\n"
      "  %4: int64[3] = constant [1, -2, 3]\n"
      "  %5: bool[2] = constant [true, false]\n"
      "  %6: float64[] = scalar 0.5\n"
      "  %7: float32[4, 16] = mm(%0, %2) grad\n"
      "  %8: float32[4, 16] = mul_(%7, %3)\n"
      "  %9: float32[4, 16], %10: int64[4, 16] = sort(%8) {1, false}\n"
      "  %11: float32[4] = sum(%9) {[1], false, dtype(float64)}\n"
      "  %12: float32[4, 16] = leaky_relu(%8) {0.01}\n"
      "  %13: float32[4, 16] = mul(%12, %6)\n"
      "  guard %3 == 2.5\n"
      "  guard %12 == #1\n"
      "  return (%11, %10, %4, %5, %13)\n"
      "}\n";
  EXPECT_EQ(print(parse(text)), text);
}

TEST(IrText, RenumbersInDefinitionOrderAndDropsUnreadCaptures) {
  const Program p = parse(
      "program(%5: float32[2]) {\n"
      "  %9: float32[2] = capture #0\n"
      "  %7: float32[2] = capture #1 ; never read\n"
      "  %3: float32[2] = add(%5, %9)\n"
      "  return (%3)\n"
      "}\n");
  EXPECT_EQ(print(p),
            "program(%0: float32[2]) {\n"
            "  %1: float32[2] = capture #0\n"
            "  %2: float32[2] = add(%0, %1)\n"
            "  return (%2)\n"
            "}\n");
}

TEST(IrText, DoublesKeepTheirValueAndTheirKind) {
  const std::string text =
      "program(%0: float64[3]) {\n"
      "  %1: float64[3] = constant [0.1, 1e+300, -inf]\n"
      "  %2: float64[3] = maximum(%0, %1)\n"
      "  %3: float64[3] = softplus(%2) {2.0, nan}\n"
      "  return (%3)\n"
      "}\n";
  EXPECT_EQ(print(parse(text)), text);
}

// The parser holds every node to its op's signature (op_signature.h): a program file whose node
// has other operands than its op takes is refused, naming the node, the op and the argument.
TEST(IrText, NodesThatDoNotFitTheirOpsSignatureAreRefused) {
  auto refused = [](const std::string& node, const std::string& what) {
    const std::string text = "program(%0: float32[2]) {\n  " + node + "\n  return (%1)\n}\n";
    try {
      parse(text);
      ADD_FAILURE() << node << " was accepted";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused("%1: float32[2] = mul(%0)", "node 0: mul: takes 2 tensor inputs (a, b), got 1");
  refused("%1: float32[2] = add(%0, none)", "add: input 1 (b) is none, which the op does not take");
  refused("%1: float32[2] = leaky_relu(%0)", "leaky_relu: takes 1 attribute, got 0");
  refused("%1: float32[2] = leaky_relu(%0) {true}",
          "attribute 0 (negative_slope) is float, got bool");
  refused("%1: float32[2], %2: int64[2] = relu(%0)", "relu: makes 1 result, not 2");
}

TEST(IrText, ARegionLineIsNotTheSuffixOfTheNodeBeforeIt) {
  // The last node has no `backward #k` of its own: the region on the next line is not it.
  const std::string text =
      "program(%0: float32[2]) {\n"
      "  %1: float32[2] = neg(%0) backward #0\n"
      "  %2: float32[2] = exp(%1)\n"
      "  backward #0 of none (%0) -> (%1)\n"
      "  return (%2)\n"
      "}\n";
  const Program p = parse(text);
  EXPECT_EQ(p.nodes[1].region, -1);
  EXPECT_EQ(print(p), text);
}

void expect_error(const std::string& text, const std::string& fragment) {
  try {
    parse(text);
    FAIL() << "no error for:\n" << text;
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(IrText, MalformedTextNamesTheLineAndTheProblem) {
  expect_error("program(%0: float32[2]) {\n  %1: float32[2] = frobnicate(%0)\n  return (%1)\n}\n",
               "line 2: unknown op 'frobnicate'");
  expect_error("program(%0: float32[2]) {\n  %1: float32[2] = add(%0, %7)\n  return (%1)\n}\n",
               "line 2: %7 is used before it is defined");
  expect_error("program(%0: float33[2]) {\n  return (%0)\n}\n", "unknown dtype 'float33'");
  expect_error("program(%0: float32[2]) {\n  %0: float32[2] = neg(%0)\n  return (%0)\n}\n",
               "%0 is defined twice");
  expect_error(
      "program(%0: float32[2]) {\n  %1: float32[3] = constant [1.0, 2.0]\n  return (%1)\n}\n",
      "the constant has 2 values but its type float32[3] holds 3");
  expect_error("program(%0: float32[2]) {\n  return (%0)\n", "expected '}'");
  expect_error("program(%0: float32[2]) {\n  return (%0)\n} trailing", "text after the program");
  expect_error("", "expected 'program'");
}

TEST(IrText, MutatedTextParsesOrFailsWithValueError) {
  // Runs under the sanitizers in scripts/test.sh: no mutation may crash the parser or make it read
  // out of bounds; each either parses (to a program that verifies) or raises ValueError.
  const std::string text =
      "program(%0: float32[4, 8], %1: int64[4]) {\n"
      "  %2: float32[8, 16] = capture #0 requires_grad\n"
      "  %3: float32[] = constant 2.5\n"
      "  %4: float64[] = scalar 0.5\n"
      "  %5: float32[4, 16] = mm(%0, %2) grad\n"
      "  %6: float32[4] = sum(%5) {[1], false, dtype(float32)}\n"
      "  %7: float32[4, 16] = mul_(%5, %4)\n"
      "  guard %3 == 2.5\n"
      "  return (%6, %7)\n"
      "}\n";
  const std::string alphabet = "%#[](){},:=_-.0123456789 \nabcdefgrnupt@";
  std::mt19937 rng(3);
  int parsed = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string t = text;
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
      const size_t at = rng() % t.size();
      switch (rng() % 3) {
        case 0:
          t[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          t.erase(at, 1 + rng() % 4);
          break;
        default:
          t.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
      }
    }
    try {
      parse(t).verify();
      ++parsed;
    } catch (const ValueError&) {
    }
  }
  EXPECT_GT(parsed, 0);  // some edits keep a valid program (a digit of a constant, say)
}

}  // namespace
}  // namespace nodeweave::jit
