// Indexing beyond the one-function-per-op API of functional.h: the in-place index ops, NumPy-style
// tensor indexing (what Tensor.__getitem__ / __setitem__ run), the row-sparse embedding gradient,
// and the strided-offset helper the index kernels share.
#pragma once
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core_framework/engine/functional.h"

namespace nodeweave {

// ---- in-place forms (bump the version counter; recorded by autograd through dispatch_inplace)
// ----
Tensor& index_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                   double alpha = 1.0);
Tensor& index_copy_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, double value);
Tensor& scatter_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& masked_fill_(Tensor& x, const Tensor& mask, double value);
// `value` must be 0-d; it receives a gradient when it requires one.
Tensor& masked_fill_(Tensor& x, const Tensor& mask, const Tensor& value);

// Out-of-place overloads with a scalar or 0-d tensor operand.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, double value);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);

// ---- NumPy / PyTorch indexing: x[i, a:b:s, None, ..., mask, idx] ----
struct TensorIndex {
  enum class Kind { Int, Slice, NewAxis, Ellipsis, Tensor };
  Kind kind = Kind::Ellipsis;
  int64_t value = 0;  // Int
  // Slice bounds as Python gives them (negative counts from the end; clamped to the size).
  int64_t start = 0, stop = std::numeric_limits<int64_t>::max(), step = 1;
  Tensor tensor;  // Tensor: int32/int64 positions (negative allowed) or a bool mask

  static TensorIndex integer(int64_t v) {
    TensorIndex t;
    t.kind = Kind::Int;
    t.value = v;
    return t;
  }
  static TensorIndex slice(int64_t start, int64_t stop, int64_t step) {
    TensorIndex t;
    t.kind = Kind::Slice;
    t.start = start;
    t.stop = stop;
    t.step = step;
    return t;
  }
  static TensorIndex new_axis() {
    TensorIndex t;
    t.kind = Kind::NewAxis;
    return t;
  }
  static TensorIndex ellipsis() {
    TensorIndex t;
    t.kind = Kind::Ellipsis;
    return t;
  }
  static TensorIndex of(const Tensor& idx) {
    TensorIndex t;
    t.kind = Kind::Tensor;
    t.tensor = idx;
    return t;
  }
};

// x[indices]: ints, slices, None and ... give views of x; int/bool tensors select copies
// (several int tensors broadcast together, NumPy's advanced indexing). Differentiable.
Tensor tensor_index(const Tensor& x, const std::vector<TensorIndex>& indices);
// x[indices] = value (value broadcast to the shape of x[indices], cast to x's dtype). Writes x in
// place and bumps its version; with autograd on, records the write like any in-place op.
void tensor_index_put_(Tensor& x, const std::vector<TensorIndex>& indices, const Tensor& value);

// ---- sparse embedding gradient ----
// For out = embedding(weight, indices) with weight of num_rows rows, the gradient of weight as
// (sorted unique row ids (int64), per-row sums of grad_out (n_unique, dim)).
std::pair<Tensor, Tensor> embedding_sparse_grad(const Tensor& grad_out, const Tensor& indices,
                                                int64_t num_rows);

// ---- kernel helper ----
// Element offsets of a row-major walk over dims [begin, end) of a tensor with `sizes` and
// `strides`: one stride when those dims merge (contiguous, transposed, sliced views), else an
// explicit table, so the index kernels serve any strided tensor without a copy.
struct DimGroup {
  int64_t size = 1;
  int64_t stride = 0;
  std::vector<int64_t> table;
  int64_t at(int64_t i) const { return table.empty() ? i * stride : table[i]; }
  bool unit() const { return table.empty() && (stride == 1 || size <= 1); }
};
DimGroup group_dims(const Shape& sizes, const Shape& strides, int64_t begin, int64_t end);

// Pure data movement depends only on the element size: f(uintN_t{}) serves every dtype of that
// size.
template <typename F>
void dispatch_by_size(size_t itemsize, const F& f) {
  switch (itemsize) {
    case 1:
      f(uint8_t{});
      break;
    case 2:
      f(uint16_t{});
      break;
    case 4:
      f(uint32_t{});
      break;
    case 8:
      f(uint64_t{});
      break;
    default:
      throw std::logic_error("index kernels: unexpected element size");
  }
}

}  // namespace nodeweave
