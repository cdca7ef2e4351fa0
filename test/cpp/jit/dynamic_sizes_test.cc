// Generalizing two traces into one program whose sizes follow its inputs (dynamic_sizes.h), as IR
// text in and out: which integers become sizes (shapes, attributes, repeated-value constants,
// scalars), what must stay fixed, and every way two traces fail to generalize.
#include <gtest/gtest.h>

#include "core_framework/engine/functional.h"
#include "core_framework/jit/dynamic_sizes.h"
#include "core_framework/jit/executor.h"
#include "core_framework/jit/ir_text.h"
#include "jit_test_util.h"

namespace nodeweave::jit {
namespace {

// mean(x * ones) flattened, and the first two rows: the shapes follow x's rows (n), the view
// follows 2n, the slice's end (2) and the width (2) do not change.
std::string mean_program(int n) {
  std::string ones = "[";
  for (int i = 0; i < n; ++i) ones += (i ? ", " : "") + std::string("1.0");
  ones += "]";
  const std::string N = std::to_string(n), N2 = std::to_string(2 * n);
  return "program(%0: float32[" + N + ", 2]) {\n" +                 //
         "  %1: float32[" + N + ", 1] = constant " + ones + "\n" +  //
         "  %2: float32[] = scalar " + N + ".0\n" +                 //
         "  %3: float32[" + N + ", 2] = mul(%0, %1)\n" +            //
         "  %4: float32[" + N2 + "] = view(%3) {[" + N2 + "]}\n" +
         "  %5: float32[2, 2] = slice(%3) {0, 0, 2, 1}\n" +  //
         "  %6: float32[] = sum(%4) {[], false, dtype(float32)}\n" +
         "  %7: float32[] = div(%6, %2)\n" +  //
         "  return (%7, %5)\n}\n";
}

TEST(DynamicSizes, TwoTracesGeneralizeAndInstantiateForANewSize) {
  std::string why;
  std::optional<DynamicProgram> d =
      generalize(parse(mean_program(3)), parse(mean_program(5)), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->fills.size(), 1u);  // the ones column
  EXPECT_EQ(d->mismatch({7, 2}), "");
  const Program p = d->instantiate({7, 2});
  const std::string text = print(p);
  // The instantiated program is the one a trace on 7 rows would have recorded.
  EXPECT_EQ(text, print(parse(mean_program(7)))) << text;
  Tensor x = testing::from({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, {7, 2});
  const TensorList out = Executor(p).run({x});
  EXPECT_FLOAT_EQ(static_cast<float>(out[0].item()), 105.0f / 7.0f);
  EXPECT_EQ(out[1].shape(), (Shape{2, 2}));
}

TEST(DynamicSizes, SizesThatDidNotChangeStayFixedAndEqualSizesStayEqual) {
  std::optional<DynamicProgram> d = generalize(parse(mean_program(3)), parse(mean_program(5)));
  ASSERT_TRUE(d);
  // The width was 2 in both traces: a call with another width needs its own trace.
  EXPECT_EQ(d->mismatch({7, 3}), "dim 1 of input 0 is 3; it was 2 in every trace");
  // Two dims equal in both traces are one size: a call where they differ is not covered.
  const std::string sq3 =
      "program(%0: float32[3, 3]) {\n  %1: float32[3, 3] = relu(%0)\n"
      "  return (%1)\n}\n";
  const std::string sq5 =
      "program(%0: float32[5, 5]) {\n  %1: float32[5, 5] = relu(%0)\n"
      "  return (%1)\n}\n";
  std::optional<DynamicProgram> sq = generalize(parse(sq3), parse(sq5));
  ASSERT_TRUE(sq);
  EXPECT_EQ(sq->mismatch({6, 6}), "");
  EXPECT_EQ(sq->mismatch({6, 7}),
            "dim 1 of input 0 is 7 and dim 0 of input 0 is 6; they were equal "
            "in every trace");
}

TEST(DynamicSizes, TracesThatDifferInMoreThanSizesDoNotGeneralize) {
  auto why_not = [](const std::string& a, const std::string& b) {
    std::string why;
    EXPECT_FALSE(generalize(parse(a), parse(b), &why));
    return why;
  };
  const std::string relu =
      "program(%0: float32[3]) {\n  %1: float32[3] = relu(%0)\n"
      "  return (%1)\n}\n";
  EXPECT_EQ(why_not(relu,
                    "program(%0: float32[4]) {\n  %1: float32[4] = neg(%0)\n"
                    "  return (%1)\n}\n"),
            "node 0 (relu) differs between the traces");
  // A constant whose values are not one value repeated (host-computed degrees, say).
  EXPECT_NE(why_not("program(%0: float32[2]) {\n  %1: float32[2] = constant [1.0, 2.0]\n"
                    "  %2: float32[2] = mul(%0, %1)\n  return (%2)\n}\n",
                    "program(%0: float32[3]) {\n  %1: float32[3] = constant [1.0, 2.0, 3.0]\n"
                    "  %2: float32[3] = mul(%0, %1)\n  return (%2)\n}\n")
                .find("constant %1 holds other values"),
            std::string::npos);
  // An attribute that no size of the call explains.
  EXPECT_EQ(why_not("program(%0: float32[3]) {\n  %1: float32[2] = slice(%0) {0, 0, 2, 1}\n"
                    "  return (%1)\n}\n",
                    "program(%0: float32[4]) {\n  %1: float32[1] = slice(%0) {0, 0, 1, 1}\n"
                    "  return (%1)\n}\n"),
            "dim 0 of %1 is 2 and 1 in the traces, which no size of the call explains");
  // A scalar that is no size, nor 1 / n, n / (n - 1) or 1 / (n - 1) of one.
  EXPECT_EQ(why_not("program(%0: float32[2]) {\n  %1: float32[] = scalar 0.3\n"
                    "  %2: float32[2] = mul(%0, %1)\n  return (%2)\n}\n",
                    "program(%0: float32[4]) {\n  %1: float32[] = scalar 0.7\n"
                    "  %2: float32[4] = mul(%0, %1)\n  return (%2)\n}\n"),
            "scalar constant %1 differs between the traces and is no size of the call (nor 1 / n, "
            "n / (n - 1) or 1 / (n - 1) of one)");
  EXPECT_EQ(why_not(relu,
                    "program(%0: float32[3, 1]) {\n  %1: float32[3, 1] = relu(%0)\n"
                    "  return (%1)\n}\n"),
            "the traces take different inputs");
}

// A mean's 1 / n and an unbiased variance's n / (n - 1), made on the host as Python floats.
std::string scaled_program(int n) {
  const std::string N = std::to_string(n);
  return "program(%0: float32[" + N + "]) {\n  %1: float64[] = scalar " + std::to_string(1.0 / n) +
         "\n  %2: float64[] = scalar " + std::to_string(static_cast<double>(n) / (n - 1)) +
         "\n  %3: float32[" + N + "] = mul(%0, %1)\n  %4: float32[" + N +
         "] = mul(%3, %2)\n  return (%4)\n}\n";
}

TEST(DynamicSizes, AnIntegerSeveralSizesExplainTiesThem) {
  // 12 -> 18 is 6 times dim 0 (2 -> 3) and 3 times dim 1 (4 -> 6): the first is taken, and a run
  // checks that the second still agrees (a call where they part is not served).
  auto zeros = [](int n) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += i ? ", 0.0" : "0.0";
    return s + "]";
  };
  const std::string a = "program(%0: float32[2, 4]) {\n  %1: float32[12] = constant " + zeros(12) +
                        "\n  return (%1)\n}\n";
  const std::string b = "program(%0: float32[3, 6]) {\n  %1: float32[18] = constant " + zeros(18) +
                        "\n  return (%1)\n}\n";
  std::string why;
  std::optional<DynamicProgram> d = generalize(parse(a), parse(b), &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->ties.size(), 1u);
  EXPECT_EQ(d->mismatch({4, 8}), "");
  EXPECT_NE(print(d->instantiate({4, 8})).find("%1: float32[24] = constant"), std::string::npos);
  EXPECT_EQ(
      d->mismatch({4, 9}),
      "an integer of the program was 6 * (dim 0 of input 0) + 0 and 3 * (dim 1 of input 0) + 0 "
      "alike in every trace; they are 24 and 27 now");
}

TEST(DynamicSizes, ASegmentCountsOffsetsFollowItsCountPlusOne) {
  const auto program = [](int n) {
    const std::string N = std::to_string(n), N1 = std::to_string(n + 1);
    return parse("program(%0: int64[" + N + "]) {\n  %1: int64[" + N1 + "] = cat(%0, %0) {0}\n" +
                 "  %2: int64[" + N1 + "] = relu(%1)\n  return (%2)\n}\n");
  };
  std::string why;
  std::optional<DynamicProgram> d = generalize(program(4), program(7), &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(print(d->instantiate({10})), print(program(10)));
}

TEST(DynamicSizes, ScalarsOfASizeFollowIt) {
  // The text's scalars are the doubles' shortest forms: build them from the doubles themselves.
  auto program = [](int n) {
    Program p = parse(scaled_program(n));
    p.tensors[0] = full({}, 1.0 / n, DType::Float64);
    p.tensors[1] = full({}, static_cast<double>(n) / (n - 1), DType::Float64);
    p.tensors[0].impl()->wrapped_number = p.tensors[1].impl()->wrapped_number = true;
    return p;
  };
  std::string why;
  std::optional<DynamicProgram> d = generalize(program(3), program(5), &why);
  ASSERT_TRUE(d) << why;
  const Program p = d->instantiate({8});
  EXPECT_EQ(p.tensors[0].item(), 1.0 / 8);
  EXPECT_EQ(p.tensors[1].item(), 8.0 / 7);
  EXPECT_TRUE(p.tensors[0].impl()->wrapped_number);
}

TEST(DynamicSizes, ASizeFixedInTwoTracesBecomesDynamicWithAThird) {
  // Traces on 3 rows twice fix the row count; a third trace on 5 rows frees it.
  const Program a = parse(mean_program(3)), b = parse(mean_program(3)), c = parse(mean_program(5));
  std::optional<DynamicProgram> two = generalize(a, b);
  ASSERT_TRUE(two);
  EXPECT_NE(two->mismatch({5, 2}), "");
  std::optional<DynamicProgram> three = generalize({&a, &b, &c});
  ASSERT_TRUE(three);
  EXPECT_EQ(three->mismatch({9, 2}), "");
  EXPECT_EQ(print(three->instantiate({9, 2})), print(parse(mean_program(9))));
}

}  // namespace
}  // namespace nodeweave::jit
