// What the CUDA kernels of the sparse layer share: launch geometry, temporary device memory,
// the device-side view of BcastInfo, the binary message ops, and the dtype/op switches that turn
// runtime enums into template arguments (so the inner loops carry no per-element branches).
// Work is queued on the calling thread's kernel stream (runtime/stream.h): the legacy default
// stream, like the engine's CUDA kernels, unless a foreign framework's binding (PyTorch) set its
// current stream for the call.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "core_framework/cuda/cuda_check.cuh"
#include "core_framework/runtime/allocator.h"
#include "core_framework/runtime/array_view.h"
#include "core_framework/runtime/device.h"
#include "core_framework/runtime/dtype.h"
#include "core_framework/runtime/error.h"
#include "core_framework/runtime/stream.h"
#include "sparse/bcast.h"
#include "sparse/spmm.h"
#include "sparse/types.h"

namespace nodeweave::sparse::cuda {

using ::nodeweave::cuda::DeviceGuard;

constexpr int kBlockThreads = 256;
// Grid-stride loops cover any amount of work, so grids are capped rather than sized to it.
constexpr int64_t kMaxBlocks = int64_t{1} << 16;

inline unsigned num_blocks(int64_t work_items, int64_t items_per_block) {
  const int64_t b = (work_items + items_per_block - 1) / items_per_block;
  return static_cast<unsigned>(std::clamp<int64_t>(b, 1, kMaxBlocks));
}

// Threads given to one row's features: the next power of two of the feature length, at most a
// warp. Short feature vectors thus pack several rows into a warp instead of idling 31 lanes, and
// long ones get a whole warp per row looping over the features.
inline int feature_threads(int64_t len) {
  int t = 1;
  while (t < 32 && t < len) t *= 2;
  return t;
}

// Elements per row after the first dimension (the feature length of a (rows, *feat) array).
inline int64_t row_length(const ArrayView& a) {
  int64_t n = 1;
  for (size_t d = 1; d < a.shape.size(); ++d) n *= a.shape[d];
  return n;
}

inline void check_launch() { NW_CUDA_CHECK(cudaGetLastError()); }

// The stream every launch, async copy and library call of this layer uses.
inline cudaStream_t stream() { return static_cast<cudaStream_t>(current_cuda_stream()); }

// Temporary device memory, freed on scope exit. It comes from the runtime's allocator (the caching
// allocator once the engine's CUDA runtime has installed its hooks). A program that links only the
// kernel layer (its own tests, say) has no hooks: then plain cudaMalloc/cudaFree serve instead.
// On the legacy default stream, freeing right after queuing the kernels that use a block is safe:
// the allocator's next user queues on that stream too (or on a blocking stream, which the legacy
// stream orders), so it runs after them. On a foreign framework's stream that ordering does not
// hold, so release() first waits for the stream.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Device device, size_t nbytes) : nbytes_(nbytes) {
    if (nbytes == 0) return;
    if (cuda_built()) {
      alloc_ = get_allocator(device);
      ptr_ = alloc_->allocate(nbytes);
    } else {
      DeviceGuard guard(device.index);
      NW_CUDA_CHECK(cudaMalloc(&ptr_, nbytes));
    }
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      nbytes_ = std::exchange(o.nbytes_, 0);
      alloc_ = std::exchange(o.alloc_, nullptr);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void release() noexcept {
    if (!ptr_) return;
    if (stream() != nullptr) cudaStreamSynchronize(stream());  // see the class comment
    if (alloc_) {
      alloc_->deallocate(ptr_, nbytes_);
    } else {
      cudaFree(ptr_);  // no throw from a destructor; a failure resurfaces at the next call
    }
    ptr_ = nullptr;
  }

  void* ptr_ = nullptr;
  size_t nbytes_ = 0;
  Allocator* alloc_ = nullptr;
};

// A host vector copied into a fresh device buffer.
template <typename T>
DeviceBuffer upload(Device device, const std::vector<T>& host) {
  DeviceBuffer buf(device, host.size() * sizeof(T));
  if (!host.empty()) {
    // From pageable memory the call returns once `host` has been staged, so it may go out of
    // scope right after.
    NW_CUDA_CHECK(cudaMemcpyAsync(buf.get(), host.data(), host.size() * sizeof(T),
                                  cudaMemcpyHostToDevice, stream()));
  }
  return buf;
}

// BcastInfo as kernels read it: for output feature k, where the lhs/rhs spans start. Without
// broadcasting the tables are absent and output feature k reads element k * reduce_size of both
// operands (reduce_size is 1 except for Dot).
struct FeatureMap {
  const int64_t* lhs_offset = nullptr;
  const int64_t* rhs_offset = nullptr;
  int64_t lhs_len = 1, rhs_len = 1, out_len = 1, reduce_size = 1;

  __device__ __forceinline__ int64_t lhs_at(int64_t k) const {
    return lhs_offset ? lhs_offset[k] : k * reduce_size;
  }
  __device__ __forceinline__ int64_t rhs_at(int64_t k) const {
    return rhs_offset ? rhs_offset[k] : k * reduce_size;
  }
};

// Owns the device copies of the offset tables behind a FeatureMap.
class DeviceFeatureMap {
 public:
  DeviceFeatureMap(const BcastInfo& b, Device device) {
    map_.lhs_len = b.lhs_len;
    map_.rhs_len = b.rhs_len;
    map_.out_len = b.out_len;
    map_.reduce_size = b.reduce_size;
    if (!b.use_bcast) return;
    // A side the op does not read may come without a table; it is then never consulted.
    if (static_cast<int64_t>(b.lhs_offset.size()) == b.out_len) {
      lhs_ = upload(device, b.lhs_offset);
      map_.lhs_offset = lhs_.as<int64_t>();
    }
    if (static_cast<int64_t>(b.rhs_offset.size()) == b.out_len) {
      rhs_ = upload(device, b.rhs_offset);
      map_.rhs_offset = rhs_.as<int64_t>();
    }
  }
  const FeatureMap& map() const { return map_; }

 private:
  FeatureMap map_;
  DeviceBuffer lhs_, rhs_;
};

__host__ __device__ constexpr bool reads_lhs(BinaryOp op) { return op != BinaryOp::CopyRhs; }
__host__ __device__ constexpr bool reads_rhs(BinaryOp op) { return op != BinaryOp::CopyLhs; }

// One message element: op applied to the spans starting at l and r (Dot sums n products). A side
// the op does not read may be a null pointer.
template <BinaryOp Op, typename T>
__device__ __forceinline__ T apply_op(const T* l, const T* r, int64_t n) {
  if constexpr (Op == BinaryOp::Add) {
    return *l + *r;
  } else if constexpr (Op == BinaryOp::Sub) {
    return *l - *r;
  } else if constexpr (Op == BinaryOp::Mul) {
    return *l * *r;
  } else if constexpr (Op == BinaryOp::Div) {
    return *l / *r;
  } else if constexpr (Op == BinaryOp::Dot) {
    T acc = 0;
    for (int64_t i = 0; i < n; ++i) acc += l[i] * r[i];
    return acc;
  } else if constexpr (Op == BinaryOp::CopyLhs) {
    return *l;
  } else {
    return *r;
  }
}

template <typename T>
__device__ __forceinline__ T device_exp(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return expf(x);
  } else {
    return exp(x);
  }
}

// Runs f(real_t{}, index_t{}) with the float type of `real` and the integer type of `index`.
template <typename F>
void dispatch_float_index(DType real, DType index, const char* name, F&& f) {
  NW_DISPATCH_FLOAT(real, name, {
    using real_t = scalar_t;
    NW_DISPATCH_INDEX(index, name, { f(real_t{}, scalar_t{}); });
  });
}

template <typename F>
void dispatch_float(DType real, const char* name, F&& f) {
  NW_DISPATCH_FLOAT(real, name, { f(scalar_t{}); });
}

template <typename F>
void dispatch_index(DType index, const char* name, F&& f) {
  NW_DISPATCH_INDEX(index, name, { f(scalar_t{}); });
}

template <BinaryOp Op>
using OpConstant = std::integral_constant<BinaryOp, Op>;

// Runs f(OpConstant<op>{}) so that kernels take the op as a template argument.
template <typename F>
void dispatch_op(BinaryOp op, F&& f) {
  switch (op) {
    case BinaryOp::Add:
      f(OpConstant<BinaryOp::Add>{});
      return;
    case BinaryOp::Sub:
      f(OpConstant<BinaryOp::Sub>{});
      return;
    case BinaryOp::Mul:
      f(OpConstant<BinaryOp::Mul>{});
      return;
    case BinaryOp::Div:
      f(OpConstant<BinaryOp::Div>{});
      return;
    case BinaryOp::Dot:
      f(OpConstant<BinaryOp::Dot>{});
      return;
    case BinaryOp::CopyLhs:
      f(OpConstant<BinaryOp::CopyLhs>{});
      return;
    case BinaryOp::CopyRhs:
      f(OpConstant<BinaryOp::CopyRhs>{});
      return;
  }
  throw std::logic_error("sparse CUDA kernels: unknown BinaryOp");
}

// The cuSPARSE fast path of gSpMM (spmm_cusparse.cu). Returns false, having done nothing, when the
// arguments are not a case cuSPARSE computes (see spmm_cusparse_applies).
bool spmm_cusparse_applies(const SpmmArgs& args, const BcastInfo& bcast);
void spmm_cusparse(const SpmmArgs& args, const BcastInfo& bcast);

}  // namespace nodeweave::sparse::cuda
