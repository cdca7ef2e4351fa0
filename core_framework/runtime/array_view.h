// The one array ABI the framework-neutral layers (graph/, sparse/, sampling/) accept: a
// DLPack-compatible view (data, device, dtype, shape, strides in elements). It never owns memory.
#pragma once
#include <cstdint>
#include <vector>

#include "core_framework/runtime/device.h"
#include "core_framework/runtime/dtype.h"

namespace nodeweave {

struct ArrayView {
  void* data = nullptr;
  Device device;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
  bool is_contiguous() const {
    // An empty array has no element to lay out, so it counts as contiguous whatever its strides
    // (the same rule as Tensor::is_contiguous; zero-size slices may carry stride 0).
    for (int64_t s : shape)
      if (s == 0) return true;
    int64_t expected = 1;
    for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
      if (shape[i] != 1 && strides[i] != expected) return false;
      expected *= shape[i];
    }
    return true;
  }
  template <typename T>
  T* ptr() const {
    return static_cast<T*>(data);
  }
};

// A 1-D view of a host vector (segment lengths and the like that kernels read on the host
// whatever the device of their other operands; weights in tests). The vector must outlive the view.
template <typename T>
ArrayView host_vector_view(const std::vector<T>& v, DType dtype) {
  ArrayView a;
  a.data = const_cast<T*>(v.data());
  a.dtype = dtype;
  a.shape = {static_cast<int64_t>(v.size())};
  a.strides = {1};
  return a;
}
inline ArrayView host_int64_view(const std::vector<int64_t>& v) {
  return host_vector_view(v, DType::Int64);
}
inline ArrayView host_float64_view(const std::vector<double>& v) {
  return host_vector_view(v, DType::Float64);
}

}  // namespace nodeweave
