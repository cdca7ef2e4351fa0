// A reference-counted block of memory on one device. Either owned (allocated through an Allocator)
// or borrowed from another producer (NumPy, DLPack), in which case the deleter keeps the producer
// alive until the last tensor that views this memory is gone.
#pragma once
#include <functional>
#include <memory>

#include "core_framework/runtime/allocator.h"

namespace nodeweave {

class Storage {
 public:
  // Allocates nbytes on `device`.
  Storage(size_t nbytes, Device device);
  // Wraps external memory; `deleter` runs when the storage dies.
  Storage(void* data, size_t nbytes, Device device, std::function<void()> deleter);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  bool owned() const { return allocator_ != nullptr; }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  Allocator* allocator_ = nullptr;
  std::function<void()> deleter_;
};

using StoragePtr = std::shared_ptr<Storage>;

// Bytes of owned storage alive now on a device type, and the most alive at once since the last
// reset (PyTorch's memory_allocated / max_memory_allocated, for every device). Borrowed memory
// (NumPy, DLPack) is not counted.
int64_t storage_bytes_in_use(Device device);
int64_t storage_peak_bytes(Device device);
void reset_storage_peak(Device device);

}  // namespace nodeweave
