// Every primitive op of the engine, as an enum: the dispatcher, autograd, the tracer and graph
// passes index the op table with it (DESIGN.md: enums, not strings). Composite ops (linear,
// cross_entropy, var, ...) are C++ functions over these primitives and need no entry.
#pragma once
#include <cstdint>

namespace nodeweave {

// clang-format off
// X(Enum, signature): each op's one declaration of its call (op_signature.h); the name is the
// signature's, and what the table, the IR and program files call the op.
#define NW_FOR_EACH_OP(X)                                                                      \
  /* copies and conversions (copy and fill write their first input: copy_, fill_) */          \
  X(Copy, "copy(Tensor self, Tensor src) -> Tensor")                                           \
  X(Cast, "cast(Tensor x, dtype dtype) -> Tensor")                                             \
  X(ToDevice, "to_device(Tensor x, int device_type, int device_index) -> Tensor")              \
  X(Fill, "fill(Tensor self, float value) -> Tensor")                                          \
  /* unary elementwise */                                                                      \
  X(Neg, "neg(Tensor x) -> Tensor")                                                            \
  X(Abs, "abs(Tensor x) -> Tensor")                                                            \
  X(Sign, "sign(Tensor x) -> Tensor")                                                          \
  X(Exp, "exp(Tensor x) -> Tensor")                                                            \
  X(Expm1, "expm1(Tensor x) -> Tensor")                                                        \
  X(Log, "log(Tensor x) -> Tensor")                                                            \
  X(Log1p, "log1p(Tensor x) -> Tensor")                                                        \
  X(Sqrt, "sqrt(Tensor x) -> Tensor")                                                          \
  X(Rsqrt, "rsqrt(Tensor x) -> Tensor")                                                        \
  X(Reciprocal, "reciprocal(Tensor x) -> Tensor")                                              \
  X(Sin, "sin(Tensor x) -> Tensor")                                                            \
  X(Cos, "cos(Tensor x) -> Tensor")                                                            \
  X(Tanh, "tanh(Tensor x) -> Tensor")                                                          \
  X(Sigmoid, "sigmoid(Tensor x) -> Tensor")                                                    \
  X(Erf, "erf(Tensor x) -> Tensor")                                                            \
  X(Relu, "relu(Tensor x) -> Tensor")                                                          \
  X(LeakyRelu, "leaky_relu(Tensor x, float negative_slope) -> Tensor")                         \
  X(Elu, "elu(Tensor x, float alpha) -> Tensor")                                               \
  X(Gelu, "gelu(Tensor x, bool tanh_approximate) -> Tensor")                                   \
  X(Softplus, "softplus(Tensor x, float beta, float threshold) -> Tensor")                     \
  X(Clamp, "clamp(Tensor x, float min, float max, bool has_min, bool has_max) -> Tensor")      \
  X(LogicalNot, "logical_not(Tensor x) -> Tensor")                                             \
  /* binary elementwise (NumPy broadcasting) */                                                \
  X(Add, "add(Tensor a, Tensor b) -> Tensor")                                                  \
  X(Sub, "sub(Tensor a, Tensor b) -> Tensor")                                                  \
  X(Mul, "mul(Tensor a, Tensor b) -> Tensor")                                                  \
  X(Div, "div(Tensor a, Tensor b) -> Tensor")                                                  \
  X(Pow, "pow(Tensor a, Tensor b) -> Tensor")                                                  \
  X(Maximum, "maximum(Tensor a, Tensor b) -> Tensor")                                          \
  X(Minimum, "minimum(Tensor a, Tensor b) -> Tensor")                                          \
  X(Eq, "eq(Tensor a, Tensor b) -> Tensor")                                                    \
  X(Ne, "ne(Tensor a, Tensor b) -> Tensor")                                                    \
  X(Lt, "lt(Tensor a, Tensor b) -> Tensor")                                                    \
  X(Le, "le(Tensor a, Tensor b) -> Tensor")                                                    \
  X(Gt, "gt(Tensor a, Tensor b) -> Tensor")                                                    \
  X(Ge, "ge(Tensor a, Tensor b) -> Tensor")                                                    \
  X(LogicalAnd, "logical_and(Tensor a, Tensor b) -> Tensor")                                   \
  X(LogicalOr, "logical_or(Tensor a, Tensor b) -> Tensor")                                     \
  X(LogicalXor, "logical_xor(Tensor a, Tensor b) -> Tensor")                                   \
  X(Where, "where(Tensor condition, Tensor a, Tensor b) -> Tensor")                            \
  /* reductions */                                                                             \
  X(Sum, "sum(Tensor x, int[] dims, bool keepdim, dtype dtype) -> Tensor")                     \
  X(Prod, "prod(Tensor x, int dim, bool keepdim) -> Tensor")                                   \
  X(Max, "max(Tensor x, int dim, bool keepdim, bool split_ties) -> (Tensor values, Tensor indices)") \
  X(Min, "min(Tensor x, int dim, bool keepdim, bool split_ties) -> (Tensor values, Tensor indices)") \
  X(Softmax, "softmax(Tensor x, int dim) -> Tensor")                                           \
  X(LogSoftmax, "log_softmax(Tensor x, int dim) -> Tensor")                                    \
  /* linear algebra */                                                                         \
  X(Mm, "mm(Tensor a, Tensor b) -> Tensor")                                                    \
  X(Bmm, "bmm(Tensor a, Tensor b) -> Tensor")                                                  \
  /* views (outputs alias the input) */                                                        \
  X(View, "view(Tensor x, int[] shape) -> Tensor")                                             \
  X(Permute, "permute(Tensor x, int[] dims) -> Tensor")                                        \
  X(Expand, "expand(Tensor x, int[] shape) -> Tensor")                                         \
  X(Slice, "slice(Tensor x, int dim, int start, int end, int step) -> Tensor")                 \
  /* shape ops that copy */                                                                    \
  X(SliceScatter, "slice_scatter(Tensor src, int[] shape, int dim, int start, int end, int step) -> Tensor") \
  X(Cat, "cat(Tensor[] xs, int dim) -> Tensor")                                                \
  /* indexing */                                                                               \
  X(IndexSelect, "index_select(Tensor x, Tensor index, int dim) -> Tensor")                    \
  X(IndexAdd, "index_add(Tensor x, Tensor index, Tensor src, int dim, float alpha) -> Tensor") \
  X(IndexCopy, "index_copy(Tensor x, Tensor index, Tensor src, int dim) -> Tensor")            \
  X(Gather, "gather(Tensor x, Tensor index, int dim) -> Tensor")                               \
  X(Scatter, "scatter(Tensor x, Tensor index, Tensor src, int dim) -> Tensor")                 \
  X(ScatterAdd, "scatter_add(Tensor x, Tensor index, Tensor src, int dim) -> Tensor")          \
  X(MaskedFill, "masked_fill(Tensor x, Tensor mask, float value) -> Tensor")                   \
  X(MaskedSelect, "masked_select(Tensor x, Tensor mask) -> Tensor")                            \
  X(Nonzero, "nonzero(Tensor x) -> Tensor")                                                    \
  /* sorting, random, misc */                                                                  \
  X(Sort, "sort(Tensor x, int dim, bool descending) -> (Tensor values, Tensor indices)")       \
  X(TopK, "top_k(Tensor x, int k, int dim, bool largest) -> (Tensor values, Tensor indices)")  \
  X(OneHot, "one_hot(Tensor labels, int num_classes) -> Tensor")                               \
  X(BernoulliMask, "bernoulli_mask(Tensor x, float p) -> Tensor")
// clang-format on

enum class OpKind : uint16_t {
#define NW_OP_ENUM(name, signature) name,
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
