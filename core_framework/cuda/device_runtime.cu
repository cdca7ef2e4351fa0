// The CUDA half of the runtime: device count, host<->device copies and the per-device caching
// allocators, installed into the runtime's CudaHooks at static-init time; plus the stream hand-off
// DLPack consumers need.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core_framework/cuda/caching_allocator.h"
#include "core_framework/cuda/cuda_api.h"
#include "core_framework/cuda/cuda_check.cuh"

namespace nodeweave::cuda {

int device_count() {
  // Asked once: the answer cannot change within a process, and a machine without a GPU (or without
  // a driver) must see 0 here rather than an exception, so `import nodeweave` works everywhere.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear the error so it is not reported by an unrelated later call
      return 0;
    }
    return n;
  }();
  return count;
}

Allocator* caching_allocator(int device) {
  const int n = device_count();
  if (device < 0 || device >= n) {
    throw ValueError(
        n == 0 ? str_cat("device cuda:", device, " is not available: no CUDA device is visible")
               : str_cat("device cuda:", device, " is not available: ", n,
                         " CUDA device(s) are visible"));
  }
  // Never destroyed: at process exit the CUDA runtime may be unloaded before static destructors
  // run, and cudaFree would then fail. The driver reclaims the memory with the process.
  static std::mutex mu;
  static std::vector<CachingAllocator*> allocators;
  std::lock_guard<std::mutex> lock(mu);
  if (allocators.size() < static_cast<size_t>(n)) allocators.resize(n, nullptr);
  if (!allocators[device]) allocators[device] = new CachingAllocator(device);
  return allocators[device];
}

void make_stream_wait(int device, int64_t stream) {
  cudaStream_t s;
  if (stream == 1) return;  // the consumer uses our stream: its work is already ordered after ours
  if (stream == 2) {
    s = cudaStreamPerThread;
  } else {
    s = reinterpret_cast<cudaStream_t>(static_cast<intptr_t>(stream));
  }
  DeviceGuard guard(device);
  // An event instead of a device-wide sync: the host does not block, the consumer's stream does.
  cudaEvent_t event;
  NW_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  cudaError_t err = cudaEventRecord(event, cudaStreamLegacy);
  if (err == cudaSuccess) err = cudaStreamWaitEvent(s, event, 0);
  // Destroying a recorded event is safe: the runtime releases it once the wait is satisfied.
  cudaEventDestroy(event);
  NW_CUDA_CHECK(err);
}

void synchronize(int device) {
  DeviceGuard guard(device);
  NW_CUDA_CHECK(cudaDeviceSynchronize());
}

namespace {

Allocator* allocator_hook(int device) { return caching_allocator(device); }

void copy_hook(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) {
  if (dst_device.is_cuda() && src_device.is_cuda() && dst_device.index != src_device.index) {
    NW_CUDA_CHECK(cudaMemcpyPeer(dst, dst_device.index, src, src_device.index, nbytes));
    return;
  }
  cudaMemcpyKind kind;
  if (dst_device.is_cuda()) {
    kind = src_device.is_cuda() ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
  } else {
    kind = src_device.is_cuda() ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost;
  }
  DeviceGuard guard(dst_device.is_cuda() ? dst_device.index : src_device.index);
  // cudaMemcpy runs on the legacy default stream, after every kernel queued there, so a
  // device-to-host copy sees finished results without an explicit synchronize.
  NW_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, kind));
}

int device_count_hook() { return device_count(); }

// Registration must not touch the GPU: it runs while `import nodeweave` loads the module.
const bool kHooksInstalled = (ensure_runtime_hooks(), true);

}  // namespace

void ensure_runtime_hooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    CudaHooks hooks;
    hooks.allocator = &allocator_hook;
    hooks.copy = &copy_hook;
    hooks.device_count = &device_count_hook;
    register_cuda_hooks(hooks);
  });
  (void)kHooksInstalled;
}

}  // namespace nodeweave::cuda
