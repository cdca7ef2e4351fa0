// The engine's C++ API: one function per user-visible operation, named like PyTorch's. Primitive
// ops forward to dispatch(); composite ops (linear, cross_entropy, var, ...) are written with
// primitives, so autograd and tracing see only table ops.
#pragma once
#include <optional>
#include <utility>

#include "core_framework/engine/attrs.h"
#include "core_framework/engine/op_kind.h"
#include "core_framework/engine/tensor.h"

namespace nodeweave {

// ---- dispatch ----
TensorList dispatch(OpKind kind, const TensorList& inputs, const Attrs& attrs = {});
inline Tensor dispatch1(OpKind kind, const TensorList& inputs, const Attrs& attrs = {}) {
  return dispatch(kind, inputs, attrs)[0];
}
// Runs an op into outputs the caller allocated with the op's inferred types (a static program's
// planned buffers). No autograd is recorded: for callers that run with recording off.
void dispatch_into(OpKind kind, const TensorList& inputs, const Attrs& attrs, TensorList& outputs);
// Runs an elementwise op writing into inputs[0] (add_, mul_, clamp_, ...), with autograd.
Tensor& dispatch_inplace(OpKind kind, Tensor& self, const TensorList& others,
                         const Attrs& attrs = {});

// Runs a kMutatesInputs op (an optimizer update): returns the inputs it wrote, in order.
TensorList dispatch_mutating(OpKind kind, const TensorList& inputs, const Attrs& attrs = {});

// ---- creation (not table ops: their results are constants to the tracer) ----
Tensor zeros(const Shape& shape, DType dtype = DType::Float32, Device device = Device{});
Tensor ones(const Shape& shape, DType dtype = DType::Float32, Device device = Device{});
Tensor full(const Shape& shape, double value, DType dtype = DType::Float32,
            Device device = Device{});
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, double value);
Tensor arange(double start, double end, double step, DType dtype, Device device = Device{});
Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device = Device{});
Tensor eye(int64_t n, int64_t m, DType dtype, Device device = Device{});
Tensor rand(const Shape& shape, DType dtype = DType::Float32, Device device = Device{});
Tensor randn(const Shape& shape, DType dtype = DType::Float32, Device device = Device{});
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype = DType::Int64,
               Device device = Device{});
Tensor randperm(int64_t n, DType dtype = DType::Int64, Device device = Device{});
// A 0-d tensor from a Python-style scalar; `wrapped` marks it weak for type promotion.
Tensor scalar_tensor(double value, DType dtype, Device device = Device{}, bool wrapped = false);
// dtype a Python scalar takes in an op with `t` (int with float tensor -> tensor's dtype, ...).
DType result_type(const Tensor& a, const Tensor& b);

// ---- copies and conversions ----
Tensor clone(const Tensor& t);
Tensor contiguous(const Tensor& t);
Tensor cast(const Tensor& t, DType dtype);
Tensor to_device(const Tensor& t, Device device);
Tensor& copy_(Tensor& dst, const Tensor& src);  // broadcasts src, casts to dst's dtype
Tensor& fill_(Tensor& t, double value);
Tensor& zero_(Tensor& t);

// ---- unary ----
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor gelu(const Tensor& x, bool tanh_approximate = false);
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor logsigmoid(const Tensor& x);
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max);
Tensor logical_not(const Tensor& x);
Tensor square(const Tensor& x);

// ---- binary (broadcasting) ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor add_tensors(const Tensor& a, const Tensor& b);  // alias used by autograd internals
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, double exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// Scalar forms (the scalar is a weak, wrapped 0-d tensor).
Tensor add(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);

// ---- reductions ----
// An empty `dims` list reduces over all dimensions.
Tensor sum(const Tensor& x, const IntList& dims = {}, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& x, const IntList& dims = {}, bool keepdim = false);
Tensor prod(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& x, const IntList& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const IntList& dims = {}, bool keepdim = false);
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor var(const Tensor& x, const IntList& dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor stddev(const Tensor& x, const IntList& dims = {}, int64_t correction = 1,
              bool keepdim = false);
Tensor logsumexp(const Tensor& x, const IntList& dims, bool keepdim = false);
Tensor norm(const Tensor& x, double p = 2.0, const IntList& dims = {}, bool keepdim = false);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
// Sums `x` down to `shape` (the inverse of broadcasting); used for broadcast gradients.
Tensor sum_to(const Tensor& x, const Shape& shape);

// ---- linear algebra ----
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& c, const Tensor& a, const Tensor& b, double beta = 1.0,
             double alpha = 1.0);
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// ---- views ----
Tensor view(const Tensor& x, const Shape& shape);  // -1 infers one dim; requires compatible strides
Tensor reshape(const Tensor& x, const Shape& shape);  // view when possible, else a copy
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor permute(const Tensor& x, const IntList& dims);
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor t(const Tensor& x);
Tensor expand(const Tensor& x, const Shape& shape);  // -1 keeps a dim
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor squeeze(const Tensor& x, std::optional<int64_t> dim = std::nullopt);
Tensor unsqueeze(const Tensor& x, int64_t dim);

// ---- joining and splitting ----
Tensor cat(const TensorList& xs, int64_t dim = 0);
Tensor stack(const TensorList& xs, int64_t dim = 0);
TensorList split(const Tensor& x, int64_t split_size, int64_t dim = 0);
TensorList split_sizes(const Tensor& x, const IntList& sizes, int64_t dim = 0);
TensorList chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);

// ---- indexing ----
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                 double alpha = 1.0);
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
Tensor masked_select(const Tensor& x, const Tensor& mask);
Tensor nonzero(const Tensor& x);  // (n, ndim) int64
Tensor embedding(const Tensor& weight, const Tensor& indices);

// ---- sorting, random, misc ----
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true,
                               bool sorted = true);
Tensor one_hot(const Tensor& labels, int64_t num_classes = -1);
Tensor dropout(const Tensor& x, double p, bool training);

// ---- losses (reduction: 0 none, 1 mean, 2 sum) ----
enum class Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };
Tensor nll_loss(const Tensor& logp, const Tensor& target, Reduction r = Reduction::Mean,
                const Tensor& weight = Tensor(), int64_t ignore_index = -100);
Tensor cross_entropy(const Tensor& logits, const Tensor& target, Reduction r = Reduction::Mean,
                     const Tensor& weight = Tensor(), int64_t ignore_index = -100,
                     double label_smoothing = 0.0);
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                        Reduction r = Reduction::Mean,
                                        const Tensor& pos_weight = Tensor());
Tensor mse_loss(const Tensor& a, const Tensor& b, Reduction r = Reduction::Mean);
Tensor l1_loss(const Tensor& a, const Tensor& b, Reduction r = Reduction::Mean);
Tensor margin_ranking_loss(const Tensor& a, const Tensor& b, const Tensor& y, double margin = 0.0,
                           Reduction r = Reduction::Mean);
Tensor reduce_loss(const Tensor& per_element, Reduction r);

}  // namespace nodeweave
