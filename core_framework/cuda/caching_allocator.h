// The per-device CUDA caching allocator. Freed blocks are not returned to the driver: they go to a
// free list keyed by their rounded size and serve the next request that rounds to the same size,
// because cudaMalloc/cudaFree synchronize the device and cost far more than a training step's
// short-lived temporaries can afford. empty_cache() hands the cached blocks back.
#pragma once
#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core_framework/runtime/allocator.h"

namespace nodeweave::cuda {

class CachingAllocator final : public Allocator {
 public:
  explicit CachingAllocator(int device) : device_(device) {}
  ~CachingAllocator() override = default;

  void* allocate(size_t nbytes) override;
  void deallocate(void* ptr, size_t nbytes) override;
  // Bytes of the blocks handed out and not yet freed (rounded sizes).
  size_t bytes_in_use() const override;
  // Bytes of the blocks kept in the free lists.
  size_t bytes_cached() const override;
  void empty_cache() override;

  int device() const { return device_; }

  // The size a request is served with: at least kMinBlock, and above that a multiple of a quarter
  // of the request's power of two (at least kMinBlock), so a block is at most 25% (or kMinBlock - 1
  // bytes) larger than asked for while nearby sizes still share a free list.
  // round_size(round_size(n))
  // == round_size(n): a cached block serves every request that rounds to its size.
  static size_t round_size(size_t nbytes);
  static constexpr size_t kMinBlock = 512;  // keeps every block 256-byte aligned, as CUDA's own

 private:
  void release_cached_locked();  // frees every cached block; mu_ held

  const int device_;
  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_blocks_;  // rounded size -> cached blocks
  std::unordered_map<void*, size_t> live_;            // block -> rounded size
  size_t in_use_ = 0;
  size_t cached_ = 0;
};

}  // namespace nodeweave::cuda
