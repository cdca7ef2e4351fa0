// Op signatures: the parser of the declarations, the table's entries, and the dispatcher's check
// of every call against them.
#include <gtest/gtest.h>

#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"
#include "core_framework/runtime/error.h"

namespace nodeweave {
namespace {

TEST(OpSignature, ParsesInputsAttributesAndResults) {
  const OpSignature s = parse_op_signature(
      "gspmm(Tensor? lhs, Tensor rhs, object graph, int op, int[] dims, float slope, bool flag, "
      "dtype dtype) -> (Tensor out, Tensor arg)");
  EXPECT_EQ(s.name, "gspmm");
  ASSERT_EQ(s.inputs.size(), 2u);
  EXPECT_EQ(s.inputs[0].name, "lhs");
  EXPECT_TRUE(s.inputs[0].optional);
  EXPECT_FALSE(s.inputs[1].optional);
  EXPECT_FALSE(s.variadic);
  ASSERT_EQ(s.attrs.size(), 6u);
  EXPECT_EQ(s.attrs[0].type, AttrType::kObject);
  EXPECT_EQ(s.attrs[2].type, AttrType::kInts);
  EXPECT_EQ(s.attrs[3].type, AttrType::kFloat);
  EXPECT_EQ(s.attrs[5].type, AttrType::kDType);
  EXPECT_EQ(s.outputs, (std::vector<std::string>{"out", "arg"}));
  const OpSignature v = parse_op_signature("cat(Tensor[] xs, int dim) -> Tensor[]");
  EXPECT_TRUE(v.variadic);
  EXPECT_TRUE(v.variadic_outputs);
}

TEST(OpSignature, MalformedDeclarationsAreProgrammingErrors) {
  for (const char* bad :
       {"f(Tensor x", "f(int n, Tensor x) -> Tensor", "f(Tensor[] a, Tensor b) -> Tensor",
        "f(string s) -> Tensor", "f(Tensor x) -> int", "f(Tensor x) -> Tensor junk",
        "(Tensor x) -> Tensor"})
    EXPECT_THROW(parse_op_signature(bad), std::logic_error) << bad;
}

// Every entry of the table, built-in and extension, has a signature whose name is the op's.
TEST(OpSignature, EveryOpHasOne) {
  for (int k = 0; k < num_registered_ops(); ++k) {
    const OpDef& d = op_def(static_cast<OpKind>(k));
    ASSERT_NE(d.signature, nullptr) << d.name;
    EXPECT_EQ(d.signature->name, d.name);
    EXPECT_EQ(parse_op_signature(d.declaration).text, d.signature->text);
  }
  EXPECT_EQ(std::string(op_def(OpKind::LogSoftmax).name), "log_softmax");
  EXPECT_EQ(std::string(op_def(OpKind::TopK).name), "top_k");
}

TEST(OpSignature, TheDispatcherChecksEveryCall) {
  const Tensor x = ones({3});
  try {
    dispatch(OpKind::Mul, {x});
    FAIL() << "mul with one input was dispatched";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "mul: takes 2 tensor inputs (a, b), got 1; the op is mul(Tensor a, Tensor b) -> "
                 "Tensor");
  }
  EXPECT_THROW(dispatch(OpKind::Mul, {x, Tensor()}), ValueError);
  EXPECT_THROW(dispatch(OpKind::LeakyRelu, {x}, {int64_t{1}}), ValueError);   // float expected
  EXPECT_THROW(dispatch(OpKind::Sum, {x}, {IntList{0}, false}), ValueError);  // dtype missing
  EXPECT_EQ(dispatch(OpKind::LeakyRelu, {x}, {0.5})[0].shape(), Shape{3});
}

}  // namespace
}  // namespace nodeweave
