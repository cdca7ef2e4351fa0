// The CUDA caching allocator: size-rounded free lists per device (see caching_allocator.h).
#include "core_framework/cuda/caching_allocator.h"

#include <cstdio>

#include "core_framework/cuda/cuda_check.cuh"

namespace nodeweave::cuda {

size_t CachingAllocator::round_size(size_t nbytes) {
  if (nbytes <= kMinBlock) return kMinBlock;
  size_t pow2 = 1;
  while (pow2 <= nbytes / 2) pow2 <<= 1;  // largest power of two <= nbytes
  size_t step = pow2 / 4 > kMinBlock ? pow2 / 4 : kMinBlock;
  return (nbytes + step - 1) / step * step;
}

void* CachingAllocator::allocate(size_t nbytes) {
  const size_t size = round_size(nbytes);
  std::lock_guard<std::mutex> lock(mu_);
  void* ptr = nullptr;
  auto it = free_blocks_.find(size);
  if (it != free_blocks_.end() && !it->second.empty()) {
    ptr = it->second.back();
    it->second.pop_back();
    cached_ -= size;
  } else {
    DeviceGuard guard(device_);
    cudaError_t err = cudaMalloc(&ptr, size);
    if (err == cudaErrorMemoryAllocation) {
      // Cached blocks of other sizes may be what stands in the way: give them back and retry once.
      cudaGetLastError();
      release_cached_locked();
      err = cudaMalloc(&ptr, size);
    }
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error(str_cat(
          "CUDA out of memory: allocating ", nbytes, " bytes on cuda:", device_, " failed (",
          cudaGetErrorString(err), "); ", in_use_, " bytes are in use by nodeweave tensors"));
    }
  }
  live_.emplace(ptr, size);
  in_use_ += size;
  return ptr;
}

void CachingAllocator::deallocate(void* ptr, size_t /*nbytes*/) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) {
    // Only an engine bug gets here; Storage destructors cannot throw, so report and keep going.
    std::fprintf(stderr, "nodeweave: cuda:%d caching allocator asked to free unknown block %p\n",
                 device_, ptr);
    return;
  }
  const size_t size = it->second;
  live_.erase(it);
  in_use_ -= size;
  // Reuse is safe without events: every kernel runs on the legacy default stream, so work queued
  // after this point on the block's next owner runs after the work that used it here.
  free_blocks_[size].push_back(ptr);
  cached_ += size;
}

size_t CachingAllocator::bytes_in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_use_;
}

size_t CachingAllocator::bytes_cached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  release_cached_locked();
}

void CachingAllocator::release_cached_locked() {
  DeviceGuard guard(device_);
  // Free everything before reporting an error, so the books stay consistent either way.
  cudaError_t first_error = cudaSuccess;
  for (auto& bucket : free_blocks_) {
    for (void* p : bucket.second) {
      cudaError_t err = cudaFree(p);
      if (first_error == cudaSuccess) first_error = err;
    }
  }
  free_blocks_.clear();
  cached_ = 0;
  NW_CUDA_CHECK(first_error);
}

}  // namespace nodeweave::cuda
