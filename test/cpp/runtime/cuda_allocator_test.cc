// The CUDA runtime pieces: device errors, the caching allocator's rounding and reuse, and copies
// between host and device. Tests that need a GPU skip (with that reason) when none is visible.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core_framework/engine/functional.h"
#include "core_framework/runtime/allocator.h"
#ifdef NODEWEAVE_WITH_CUDA
#include "core_framework/cuda/caching_allocator.h"
#include "core_framework/cuda/cuda_api.h"
#endif

namespace nodeweave {
namespace {

#define NW_SKIP_WITHOUT_GPU() \
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device"

TEST(CudaRuntime, BuildFlagMatchesRegisteredHooks) {
  // Creating a tensor builds the op table, which (in CUDA builds) installs the runtime hooks.
  Tensor t = zeros({1});
#ifdef NODEWEAVE_WITH_CUDA
  EXPECT_TRUE(cuda_built());
  EXPECT_EQ(cuda_device_count(), cuda::device_count());
#else
  EXPECT_FALSE(cuda_built());
  EXPECT_EQ(cuda_device_count(), 0);
#endif
  EXPECT_EQ(t.numel(), 1);
}

TEST(CudaRuntime, InvisibleDeviceIsAnErrorNamingIt) {
  const int n = cuda_device_count();
  const Device missing{DeviceType::CUDA, n};  // one past the last visible device
  const std::string name = "cuda:" + std::to_string(n);
  try {
    get_allocator(missing);
    FAIL() << "get_allocator(" << name << ") did not throw";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
  EXPECT_ANY_THROW(empty({4}, DType::Float32, missing));
}

#ifdef NODEWEAVE_WITH_CUDA

TEST(CachingAllocator, RoundingIsBoundedAndIdempotent) {
  const size_t kMin = cuda::CachingAllocator::kMinBlock;
  EXPECT_EQ(cuda::CachingAllocator::round_size(0), kMin);
  EXPECT_EQ(cuda::CachingAllocator::round_size(1), kMin);
  EXPECT_EQ(cuda::CachingAllocator::round_size(kMin), kMin);
  EXPECT_EQ(cuda::CachingAllocator::round_size(kMin + 1), 2 * kMin);
  EXPECT_EQ(cuda::CachingAllocator::round_size(5000), 5120u);         // 4096 + 1024
  EXPECT_EQ(cuda::CachingAllocator::round_size(1u << 20), 1u << 20);  // powers of two are exact
  EXPECT_EQ(cuda::CachingAllocator::round_size((1u << 20) + 1), (1u << 20) + (1u << 18));
  for (size_t n = 1; n < (size_t{1} << 26); n = n * 3 / 2 + 7) {
    const size_t r = cuda::CachingAllocator::round_size(n);
    EXPECT_GE(r, n);
    EXPECT_EQ(r % kMin, 0u) << n;  // every block stays 256-byte aligned when carved by cudaMalloc
    EXPECT_LT(r - n, std::max(n / 4 + 1, kMin)) << n;
    EXPECT_EQ(cuda::CachingAllocator::round_size(r), r) << n;
  }
}

TEST(CachingAllocator, FreedBlockServesTheNextRequestOfItsBucket) {
  NW_SKIP_WITHOUT_GPU();
  cuda::CachingAllocator alloc(0);
  void* p = alloc.allocate(1000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(alloc.bytes_in_use(), 1024u);
  EXPECT_EQ(alloc.bytes_cached(), 0u);
  alloc.deallocate(p, 1000);
  EXPECT_EQ(alloc.bytes_in_use(), 0u);
  EXPECT_EQ(alloc.bytes_cached(), 1024u);
  void* q = alloc.allocate(900);  // rounds to the same 1024-byte bucket
  EXPECT_EQ(q, p);
  EXPECT_EQ(alloc.bytes_cached(), 0u);
  void* r = alloc.allocate(5000);  // another bucket: a new block
  EXPECT_NE(r, p);
  EXPECT_EQ(alloc.bytes_in_use(), 1024u + 5120u);
  alloc.deallocate(q, 900);
  alloc.deallocate(r, 5000);
  EXPECT_EQ(alloc.bytes_cached(), 1024u + 5120u);
  alloc.empty_cache();
  EXPECT_EQ(alloc.bytes_cached(), 0u);
  EXPECT_EQ(alloc.bytes_in_use(), 0u);
}

TEST(CachingAllocator, TensorsOnTheDeviceGoThroughIt) {
  NW_SKIP_WITHOUT_GPU();
  Allocator* a = get_allocator(Device{DeviceType::CUDA, 0});
  EXPECT_EQ(a, cuda::caching_allocator(0));
  const size_t before = a->bytes_in_use();
  void* first = nullptr;
  {
    Tensor t = empty({1000}, DType::Float32, Device{DeviceType::CUDA, 0});  // 4000 bytes -> 4096
    first = t.data_ptr();
    EXPECT_EQ(a->bytes_in_use(), before + 4096);
  }
  EXPECT_EQ(a->bytes_in_use(), before);
  Tensor again = empty({1020}, DType::Float32, Device{DeviceType::CUDA, 0});  // 4080 -> 4096
  EXPECT_EQ(again.data_ptr(), first);
}

TEST(CudaCopy, HostDeviceHostRoundTrip) {
  NW_SKIP_WITHOUT_GPU();
  const Device gpu{DeviceType::CUDA, 0};
  std::vector<float> host(1000), back(1000, 0.0f), back2(1000, 0.0f);
  for (size_t i = 0; i < host.size(); ++i) host[i] = 0.5f * static_cast<float>(i) - 7.0f;
  Allocator* a = get_allocator(gpu);
  const size_t nbytes = host.size() * sizeof(float);
  void* d1 = a->allocate(nbytes);
  void* d2 = a->allocate(nbytes);
  copy_bytes(d1, gpu, host.data(), Device{}, nbytes);
  copy_bytes(d2, gpu, d1, gpu, nbytes);
  copy_bytes(back.data(), Device{}, d1, gpu, nbytes);
  copy_bytes(back2.data(), Device{}, d2, gpu, nbytes);
  EXPECT_EQ(back, host);
  EXPECT_EQ(back2, host);
  a->deallocate(d1, nbytes);
  a->deallocate(d2, nbytes);
}

TEST(CudaOps, FillAddAndSumMatchTheCpu) {
  NW_SKIP_WITHOUT_GPU();
  const Device gpu{DeviceType::CUDA, 0};
  Tensor x = arange(0, 12, 1, DType::Float32);
  Tensor xg = to_device(reshape(x, {3, 4}), gpu);
  Tensor y = to_device(add(sum(xg, {1}), full({3}, 0.5, DType::Float32, gpu)), Device{});
  ASSERT_EQ(y.shape(), (Shape{3}));
  EXPECT_FLOAT_EQ(y.data<float>()[0], 0 + 1 + 2 + 3 + 0.5f);
  EXPECT_FLOAT_EQ(y.data<float>()[1], 4 + 5 + 6 + 7 + 0.5f);
  EXPECT_FLOAT_EQ(y.data<float>()[2], 8 + 9 + 10 + 11 + 0.5f);
}

#endif  // NODEWEAVE_WITH_CUDA

}  // namespace
}  // namespace nodeweave
