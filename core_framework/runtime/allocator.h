// The allocator interface every storage goes through. The CPU allocator returns 64-byte-aligned
// blocks (one cache line, a full AVX-512 vector); CUDA builds register a caching allocator so that
// the many short-lived tensors of a training step do not pay cudaMalloc/cudaFree each time.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core_framework/runtime/device.h"

namespace nodeweave {

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
  // Memory held by the allocator (in use + cached), for tests and benchmarks.
  virtual size_t bytes_in_use() const = 0;
  virtual size_t bytes_cached() const { return 0; }
  virtual void empty_cache() {}
};

constexpr size_t kCpuAlignment = 64;

// The allocator for a device; throws ValueError/RuntimeError when the device is unavailable.
Allocator* get_allocator(Device device);
// Copies nbytes between any two devices (host<->device, device<->device, host<->host).
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes);

// What the CUDA sources provide. The runtime itself never includes CUDA headers: a CUDA build
// registers these at static-init time, a CPU-only build leaves them empty.
struct CudaHooks {
  Allocator* (*allocator)(int device_index) = nullptr;
  void (*copy)(void* dst, Device dst_device, const void* src, Device src_device,
               size_t nbytes) = nullptr;
  int (*device_count)() = nullptr;
};
void register_cuda_hooks(const CudaHooks& hooks);

}  // namespace nodeweave
