#include "core_framework/engine/tensor.h"

#include <atomic>

#include "core_framework/autograd/node.h"
#include "core_framework/engine/dispatch_observer.h"
#include "core_framework/engine/functional.h"
#include "core_framework/runtime/allocator.h"

namespace nodeweave {

namespace {
void require_defined(const TensorImpl* impl) {
  if (!impl) throw std::runtime_error("operation on an undefined tensor");
}
}  // namespace

const Shape& Tensor::shape() const {
  require_defined(impl());
  return impl_->shape;
}
const Shape& Tensor::strides() const {
  require_defined(impl());
  return impl_->strides;
}
int64_t Tensor::size(int64_t d) const { return shape()[wrap_dim(d, dim())]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_dim(d, dim())]; }
int64_t Tensor::offset() const { return impl_->offset; }
int64_t Tensor::numel() const { return shape_numel(shape()); }
DType Tensor::dtype() const {
  require_defined(impl());
  return impl_->dtype;
}
Device Tensor::device() const {
  require_defined(impl());
  return impl_->storage->device();
}
const StoragePtr& Tensor::storage() const {
  require_defined(impl());
  return impl_->storage;
}

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;  // no element to lay out: every empty tensor counts as contiguous
  int64_t expected = 1;
  const Shape& sh = shape();
  const Shape& st = strides();
  for (int64_t i = static_cast<int64_t>(sh.size()) - 1; i >= 0; --i) {
    if (sh[i] != 1 && st[i] != expected) return false;
    expected *= sh[i];
  }
  return true;
}

void* Tensor::data_ptr() const {
  return static_cast<char*>(storage()->data()) + impl_->offset * static_cast<int64_t>(itemsize());
}

ArrayView Tensor::view_of() const {
  ArrayView v;
  v.data = data_ptr();
  v.device = device();
  v.dtype = dtype();
  v.shape = shape();
  v.strides = strides();
  return v;
}

bool Tensor::requires_grad() const { return impl_ && impl_->requires_grad; }

Tensor& Tensor::set_requires_grad(bool r) {
  require_defined(impl());
  if (!is_leaf()) {
    throw std::runtime_error(
        "requires_grad can only be changed on leaf tensors; use detach() to get a leaf from a "
        "non-leaf tensor");
  }
  if (r && !is_floating(dtype())) {
    throw TypeError(str_cat("only floating-point tensors can require gradients, got dtype ",
                            dtype_name(dtype())));
  }
  impl_->requires_grad = r;
  return *this;
}

bool Tensor::is_leaf() const { return !impl_ || impl_->grad_fn == nullptr; }
const Tensor& Tensor::grad() const {
  require_defined(impl());
  return impl_->grad;
}

void Tensor::set_grad(const Tensor& g) {
  require_defined(impl());
  if (g.defined()) {
    NW_CHECK(g.shape() == shape(), ValueError, "assigned grad has shape ", shape_str(g.shape()),
             " but the tensor has shape ", shape_str(shape()));
    NW_CHECK(g.dtype() == dtype(), TypeError, "assigned grad has dtype ", dtype_name(g.dtype()),
             " but the tensor has dtype ", dtype_name(dtype()));
  }
  if (DispatchObserver* obs = dispatch_observer()) obs->on_grad_write(*this, impl_->grad, false);
  impl_->grad = g;
}

const std::shared_ptr<Node>& Tensor::grad_fn() const {
  require_defined(impl());
  return impl_->grad_fn;
}
uint32_t Tensor::output_nr() const { return impl_->output_nr; }
int64_t Tensor::version() const { return *impl_->version; }
void Tensor::bump_version() const { ++*impl_->version; }

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = impl_->storage;
  impl->shape = impl_->shape;
  impl->strides = impl_->strides;
  impl->offset = impl_->offset;
  impl->dtype = impl_->dtype;
  impl->version = impl_->version;  // detach shares data, so in-place writes must stay visible
  impl->is_view = true;
  Tensor out(std::move(impl));
  if (DispatchObserver* obs = dispatch_observer()) obs->on_alias(*this, out);
  return out;
}

namespace detail {
uint64_t next_tensor_serial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace detail

int64_t Tensor::register_hook(std::function<Tensor(const Tensor&)> fn) const {
  require_defined(impl());
  NW_CHECK(requires_grad(), std::runtime_error,
           "cannot register a hook on a tensor that does not require grad");
  static int64_t next_id = 0;
  int64_t id = ++next_id;
  if (is_leaf()) {
    impl_->hooks.push_back(TensorHook{id, std::move(fn)});
  } else {
    impl_->grad_fn->add_pre_hook(impl_->output_nr, id, std::move(fn));
  }
  return id;
}

void Tensor::remove_hook(int64_t id) const {
  auto& hooks = impl_->hooks;
  for (auto it = hooks.begin(); it != hooks.end(); ++it) {
    if (it->id == id) {
      hooks.erase(it);
      return;
    }
  }
  if (impl_->grad_fn) impl_->grad_fn->remove_pre_hook(id);
}

void Tensor::retain_grad() const {
  NW_CHECK(requires_grad(), std::runtime_error,
           "can't retain_grad on a tensor that does not require grad");
  if (is_leaf() || impl_->retains_grad) return;
  impl_->retains_grad = true;
  std::weak_ptr<TensorImpl> weak = impl_;
  impl_->grad_fn->add_retain_grad_hook(impl_->output_nr, [weak](const Tensor& g) {
    if (auto self = weak.lock()) {
      // Accumulate like a leaf: a retained grad sums over repeated backward calls.
      self->grad = self->grad.defined() ? add_tensors(self->grad, g.detach()) : g.detach();
    }
    return Tensor();
  });
}

bool Tensor::retains_grad() const { return impl_->retains_grad; }

double Tensor::item() const {
  notify_read(*this, "item()");
  NW_CHECK(numel() == 1, ValueError, "item(): expected a tensor with one element, got shape ",
           shape_str(shape()));
  alignas(8) unsigned char buf[8];
  copy_bytes(buf, Device{}, data_ptr(), device(), itemsize());
  double v = 0;
  switch (dtype()) {
    case DType::Bool:
      v = *reinterpret_cast<bool*>(buf);
      break;
    case DType::UInt8:
      v = *reinterpret_cast<uint8_t*>(buf);
      break;
    case DType::Int8:
      v = *reinterpret_cast<int8_t*>(buf);
      break;
    case DType::Int32:
      v = *reinterpret_cast<int32_t*>(buf);
      break;
    case DType::Int64:
      v = static_cast<double>(*reinterpret_cast<int64_t*>(buf));
      break;
    case DType::Float16:
      v = half_to_float(*reinterpret_cast<uint16_t*>(buf));
      break;
    case DType::BFloat16:
      v = bfloat16_to_float(*reinterpret_cast<uint16_t*>(buf));
      break;
    case DType::Float32:
      v = *reinterpret_cast<float*>(buf);
      break;
    case DType::Float64:
      v = *reinterpret_cast<double*>(buf);
      break;
  }
  return v;
}

Shape contiguous_strides(const Shape& shape) {
  Shape st(shape.size());
  int64_t s = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    st[i] = s;
    s *= std::max<int64_t>(shape[i], 1);
  }
  return st;
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

int64_t wrap_dim(int64_t d, int64_t ndim, const char* what) {
  int64_t n = std::max<int64_t>(ndim, 1);  // 0-d tensors accept dim 0 and -1, like PyTorch
  if (d < -n || d >= n) {
    throw IndexError(
        str_cat(what, " out of range: expected a value in [", -n, ", ", n - 1, "], got ", d));
  }
  return d < 0 ? d + n : d;
}

Tensor empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t s : shape) {
    NW_CHECK(s >= 0, ValueError, "shape must be non-negative, got ", shape_str(shape));
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(shape_numel(shape) * dtype_size(dtype), device);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor make_view(const Tensor& base, Shape shape, Shape strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = base.dtype();
  impl->version = base.impl()->version;
  impl->is_view = true;
  return Tensor(std::move(impl));
}

}  // namespace nodeweave
