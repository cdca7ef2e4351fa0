#include "core_framework/runtime/allocator.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core_framework/runtime/error.h"

namespace nodeweave {

namespace {

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) nbytes = 1;  // a unique, freeable pointer even for empty tensors
    size_t rounded = (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
    void* p = std::aligned_alloc(kCpuAlignment, rounded);
    if (!p) throw std::runtime_error(str_cat("out of CPU memory allocating ", nbytes, " bytes"));
    in_use_ += rounded;
    return p;
  }
  void deallocate(void* ptr, size_t nbytes) override {
    if (nbytes == 0) nbytes = 1;
    in_use_ -= (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
    std::free(ptr);
  }
  size_t bytes_in_use() const override { return in_use_.load(); }

 private:
  std::atomic<size_t> in_use_{0};
};

CudaHooks& cuda_hooks() {
  static CudaHooks hooks;
  return hooks;
}

}  // namespace

Allocator* get_allocator(Device device) {
  static CpuAllocator cpu;
  if (device.is_cpu()) return &cpu;
  if (!cuda_hooks().allocator)
    throw std::runtime_error(str_cat("device ", device.str(),
                                     " is not available: nodeweave was built without CUDA support"));
  return cuda_hooks().allocator(device.index);
}

void register_cuda_hooks(const CudaHooks& hooks) { cuda_hooks() = hooks; }

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) {
  if (nbytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, nbytes);
    return;
  }
  if (!cuda_hooks().copy)
    throw std::runtime_error("copy between CPU and CUDA requested, but nodeweave was built without CUDA");
  cuda_hooks().copy(dst, dst_device, src, src_device, nbytes);
}

bool cuda_built() { return cuda_hooks().copy != nullptr; }
int cuda_device_count() { return cuda_hooks().device_count ? cuda_hooks().device_count() : 0; }

}  // namespace nodeweave
