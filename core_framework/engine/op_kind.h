// Every primitive op of the engine, as an enum: the dispatcher, autograd, the tracer and graph
// passes index the op table with it (DESIGN.md: enums, not strings). Composite ops (linear,
// cross_entropy, var, ...) are C++ functions over these primitives and need no entry.
#pragma once
#include <cstdint>

namespace nodeweave {

// clang-format off
#define NW_FOR_EACH_OP(X)                                                                      \
  /* copies and conversions */                                                                 \
  X(Copy) X(Cast) X(ToDevice) X(Fill)                                                          \
  /* unary elementwise */                                                                      \
  X(Neg) X(Abs) X(Sign) X(Exp) X(Expm1) X(Log) X(Log1p) X(Sqrt) X(Rsqrt) X(Reciprocal)         \
  X(Sin) X(Cos) X(Tanh) X(Sigmoid) X(Erf) X(Relu) X(LeakyRelu) X(Elu) X(Gelu) X(Softplus)      \
  X(Clamp) X(LogicalNot)                                                                       \
  /* binary elementwise (NumPy broadcasting) */                                                \
  X(Add) X(Sub) X(Mul) X(Div) X(Pow) X(Maximum) X(Minimum)                                     \
  X(Eq) X(Ne) X(Lt) X(Le) X(Gt) X(Ge) X(LogicalAnd) X(LogicalOr) X(LogicalXor)                 \
  X(Where)                                                                                     \
  /* reductions */                                                                             \
  X(Sum) X(Prod) X(Max) X(Min) X(Softmax) X(LogSoftmax)                                        \
  /* linear algebra */                                                                         \
  X(Mm) X(Bmm)                                                                                 \
  /* views (outputs alias the input) */                                                        \
  X(View) X(Permute) X(Expand) X(Slice)                                                        \
  /* shape ops that copy */                                                                    \
  X(SliceScatter) X(Cat)                                                                       \
  /* indexing */                                                                               \
  X(IndexSelect) X(IndexAdd) X(IndexCopy) X(Gather) X(Scatter) X(ScatterAdd) X(MaskedFill)     \
  X(MaskedSelect) X(Nonzero)                                                                   \
  /* sorting, random, misc */                                                                  \
  X(Sort) X(TopK) X(OneHot) X(BernoulliMask)
// clang-format on

enum class OpKind : uint16_t {
#define NW_OP_ENUM(name) name,
  NW_FOR_EACH_OP(NW_OP_ENUM)
#undef NW_OP_ENUM
      kNumOps
};

constexpr int kNumOps = static_cast<int>(OpKind::kNumOps);
// Layers above the engine (backend/ graph kernels) add ops at startup with register_extension_op;
// they take the kinds after the built-in ones, up to this many in all.
constexpr int kMaxOps = 256;
const char* op_name(OpKind kind);

}  // namespace nodeweave
