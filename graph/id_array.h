// A 1-D integer array (int32 or int64) owned through a runtime Storage: the unit every graph
// format is made of. Graph arrays are never written after construction, so sharing one between
// graphs (reverse(), with_formats(), subgraphs that keep a format) is safe.
#pragma once
#include <cstdint>

#include "core_framework/runtime/array_view.h"
#include "core_framework/runtime/storage.h"

namespace nodeweave::graph {

struct IdArray {
  StoragePtr storage;
  DType dtype = DType::Int64;
  int64_t length = 0;

  static IdArray empty(int64_t length, DType dtype, Device device = Device{});
  // Copies `length` elements of `src_dtype` from host memory, converting to `dtype`.
  static IdArray from_host(const void* data, DType src_dtype, int64_t length, DType dtype);

  Device device() const { return storage ? storage->device() : Device{}; }
  ArrayView view() const;  // 1-D contiguous
  template <typename T>
  T* data() const {
    return storage ? static_cast<T*>(storage->data()) : nullptr;
  }
  IdArray to(Device device) const;    // copy (same object when already there)
  IdArray astype(DType dtype) const;  // CPU only; copy (same object when already that dtype)
};

// Throws TypeError unless dtype is Int32 or Int64.
void check_id_dtype(DType dtype, const char* what);

// Calls fn with a typed null pointer (int32_t* or int64_t*) selecting the id type.
template <typename F>
auto dispatch_id(DType dtype, const F& fn) {
  if (dtype == DType::Int32) return fn(static_cast<int32_t*>(nullptr));
  return fn(static_cast<int64_t*>(nullptr));
}

}  // namespace nodeweave::graph
