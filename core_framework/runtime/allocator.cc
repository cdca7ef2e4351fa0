#include "core_framework/runtime/allocator.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

#include <sys/mman.h>

#include "core_framework/runtime/error.h"

namespace nodeweave {

namespace {

// Large blocks are kept in a size-keyed cache after free: a training step allocates the same
// large activations every iteration, and handing back fresh mmap'ed memory each time costs a page
// fault per 4 KiB on first touch (measured: out-of-place add over 2^24 floats ran at under 40% of
// memory bandwidth without the cache). Small blocks go straight to malloc, which already pools
// them.
//
// Blocks of kHugeMin and more are aligned to 2 MiB and marked MADV_HUGEPAGE: with transparent huge
// pages in "madvise" mode (the Debian default) the sparse kernels' random row gathers otherwise
// miss the TLB on nearly every row (measured with bench_graph_kernels, one thread: copy_u-sum at
// d=64 on an R-MAT graph with 2^20 nodes went from 90% to 104% of the STREAM copy rate, itself
// measured on huge pages). The rounding wastes at most 2 MiB per block of >= 8 MiB.
class CpuAllocator final : public Allocator {
 public:
  static constexpr size_t kCacheMin = size_t{1} << 20;  // cache blocks of 1 MiB and more
  static constexpr size_t kPage = 4096;
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kHugeMin = size_t{8} << 20;

  CpuAllocator() {
    const char* env = std::getenv("NODEWEAVE_CPU_CACHE_BYTES");
    cache_limit_ = env ? static_cast<size_t>(std::strtoull(env, nullptr, 10)) : (size_t{2} << 30);
  }
  ~CpuAllocator() override { empty_cache(); }

  void* allocate(size_t nbytes) override {
    size_t rounded = round(nbytes);
    if (rounded >= kCacheMin) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(rounded);
      if (it != free_.end()) {
        void* p = it->second;
        free_.erase(it);
        cached_ -= rounded;
        in_use_ += rounded;
        return p;
      }
    }
    const size_t align = alignment(rounded);
    void* p = std::aligned_alloc(align, rounded);
    if (!p && rounded >= kCacheMin) {  // out of memory: give the cache back and retry once
      empty_cache();
      p = std::aligned_alloc(align, rounded);
    }
    if (!p) throw std::runtime_error(str_cat("out of CPU memory allocating ", nbytes, " bytes"));
#ifdef MADV_HUGEPAGE
    // Advisory only: where huge pages are off or unsupported the call fails and nothing changes.
    if (rounded >= kHugeMin) (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
    in_use_ += rounded;
    return p;
  }
  void deallocate(void* ptr, size_t nbytes) override {
    size_t rounded = round(nbytes);
    in_use_ -= rounded;
    if (rounded >= kCacheMin) {
      std::lock_guard<std::mutex> lock(mu_);
      if (cached_ + rounded <= cache_limit_) {
        free_.emplace(rounded, ptr);
        cached_ += rounded;
        return;
      }
    }
    std::free(ptr);
  }
  size_t bytes_in_use() const override { return in_use_.load(); }
  size_t bytes_cached() const override { return cached_.load(); }
  void empty_cache() override {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& kv : free_) std::free(kv.second);
    free_.clear();
    cached_ = 0;
  }

 private:
  static size_t alignment(size_t rounded) {
    return rounded >= kHugeMin ? kHugePage : rounded >= kCacheMin ? kPage : kCpuAlignment;
  }
  static size_t round(size_t nbytes) {
    if (nbytes == 0) nbytes = 1;  // a unique, freeable pointer even for empty tensors
    const size_t unit = alignment(nbytes);
    return (nbytes + unit - 1) / unit * unit;
  }
  std::atomic<size_t> in_use_{0};
  std::atomic<size_t> cached_{0};
  size_t cache_limit_;
  std::mutex mu_;
  std::multimap<size_t, void*> free_;
};

CudaHooks& cuda_hooks() {
  static CudaHooks hooks;
  return hooks;
}

}  // namespace

Allocator* get_allocator(Device device) {
  // Never destroyed: storages freed during interpreter shutdown may still call into it.
  static CpuAllocator* cpu_ptr = new CpuAllocator();
  CpuAllocator& cpu = *cpu_ptr;
  if (device.is_cpu()) return &cpu;
  if (!cuda_hooks().allocator)
    throw std::runtime_error(str_cat(
        "device ", device.str(), " is not available: nodeweave was built without CUDA support"));
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
    throw std::runtime_error(
        "copy between CPU and CUDA requested, but nodeweave was built without CUDA");
  cuda_hooks().copy(dst, dst_device, src, src_device, nbytes);
}

bool cuda_built() { return cuda_hooks().copy != nullptr; }
int cuda_device_count() { return cuda_hooks().device_count ? cuda_hooks().device_count() : 0; }

}  // namespace nodeweave
