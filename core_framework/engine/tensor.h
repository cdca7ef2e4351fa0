// The engine's tensor: a shared handle to a TensorImpl (storage + shape/strides/offset + dtype)
// with the autograd metadata PyTorch users expect (requires_grad, grad, grad_fn, version counter).
// Views share storage and the version counter with their base, so an in-place write through any
// alias is seen by the autograd check on saved tensors.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core_framework/runtime/array_view.h"
#include "core_framework/runtime/device.h"
#include "core_framework/runtime/dtype.h"
#include "core_framework/runtime/error.h"
#include "core_framework/runtime/storage.h"

namespace nodeweave {

class Node;
struct TensorImpl;
using Shape = std::vector<int64_t>;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  // Geometry.
  const Shape& shape() const;
  const Shape& strides() const;
  int64_t dim() const { return static_cast<int64_t>(shape().size()); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t stride(int64_t d) const;
  int64_t offset() const;  // in elements from the storage start
  int64_t numel() const;
  DType dtype() const;
  Device device() const;
  size_t itemsize() const { return dtype_size(dtype()); }
  bool is_contiguous() const;

  // Memory.
  const StoragePtr& storage() const;
  void* data_ptr() const;  // first element
  template <typename T>
  T* data() const {
    return static_cast<T*>(data_ptr());
  }
  ArrayView view_of() const;  // DLPack-style view for the kernel layer

  // Autograd.
  bool requires_grad() const;
  Tensor& set_requires_grad(bool r);  // only leaves; throws otherwise
  bool is_leaf() const;
  const Tensor& grad() const;
  void set_grad(const Tensor& g);
  const std::shared_ptr<Node>& grad_fn() const;
  uint32_t output_nr() const;
  int64_t version() const;
  void bump_version() const;
  // Returns a tensor sharing storage but cut from the graph.
  Tensor detach() const;
  // Registers fn(grad) -> grad (return an undefined tensor to keep grad); returns a handle id.
  int64_t register_hook(std::function<Tensor(const Tensor&)> fn) const;
  void remove_hook(int64_t id) const;
  void retain_grad() const;
  bool retains_grad() const;

  // Scalar value of a one-element tensor, as double (integers exact up to 2^53).
  double item() const;

 private:
  std::shared_ptr<TensorImpl> impl_;
};

using TensorList = std::vector<Tensor>;

struct TensorHook {
  int64_t id;
  std::function<Tensor(const Tensor&)> fn;
};

namespace detail {
// A number no earlier tensor has: the tracer tells tensors made during a trace from older ones.
uint64_t next_tensor_serial();
}  // namespace detail

struct TensorImpl {
  uint64_t serial = detail::next_tensor_serial();
  StoragePtr storage;
  Shape shape;
  Shape strides;
  int64_t offset = 0;
  DType dtype = DType::Float32;
  // Shared with every view of the same base; bumped by each in-place write.
  std::shared_ptr<int64_t> version = std::make_shared<int64_t>(0);
  bool is_view = false;
  // A Python scalar turned into a 0-d tensor: it does not raise the category's type in promotion
  // (float32 tensor * 2.0 stays float32), as in PyTorch.
  bool wrapped_number = false;

  // Autograd metadata.
  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;
  uint32_t output_nr = 0;
  Tensor grad;
  std::weak_ptr<Node> grad_accumulator;
  std::vector<TensorHook> hooks;  // leaves only; non-leaf hooks live on grad_fn
  bool retains_grad = false;
};

// Contiguous row-major strides for a shape.
Shape contiguous_strides(const Shape& shape);
int64_t shape_numel(const Shape& shape);
// Wraps negative dims and checks range; `what` names the argument in the error.
int64_t wrap_dim(int64_t d, int64_t ndim, const char* what = "dim");

// Allocation.
Tensor empty(const Shape& shape, DType dtype = DType::Float32, Device device = Device{});
// A new tensor viewing `base`'s storage with the given geometry (shares the version counter).
Tensor make_view(const Tensor& base, Shape shape, Shape strides, int64_t offset);

}  // namespace nodeweave
