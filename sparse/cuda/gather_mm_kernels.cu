// Typed matmuls on CUDA. gather_mm picks a weight matrix per row, so each row is its own small
// vector-matrix product: a block per output row, a chunk of the row's input staged in shared
// memory, threads over the output columns (consecutive threads read consecutive weights).
// gather_mm_grad_b scatters outer products with atomics. segment_mm and its weight gradient are
// one cuBLAS GEMM per segment; cuBLAS is column-major, so a row-major product C = A B is issued as
// C^T = B^T A^T, which reads every row-major operand in place.
#include <cublas_v2.h>

#include <climits>
#include <mutex>
#include <vector>

#include "sparse/cuda/cuda_kernels.h"
#include "sparse/cuda/sparse_cuda_common.cuh"

namespace nodeweave::sparse::cuda {

namespace {

#define NW_SPARSE_CUBLAS_CHECK(expr)                                                               \
  do {                                                                                             \
    cublasStatus_t nw_st_ = (expr);                                                                \
    if (nw_st_ != CUBLAS_STATUS_SUCCESS) {                                                         \
      throw std::runtime_error(::nodeweave::str_cat("cuBLAS error in ", #expr, ": ",               \
                                                    cublasGetStatusString(nw_st_), " (", __FILE__, \
                                                    ":", __LINE__, ")"));                          \
    }                                                                                              \
  } while (0)

// One handle per device, created on first use and never destroyed (the CUDA runtime may already be
// unloaded when static destructors run). The returned lock serializes calls on the handle.
cublasHandle_t lock_handle(int device, std::unique_lock<std::mutex>& lock) {
  static std::mutex mu;
  static std::vector<cublasHandle_t> handles;
  lock = std::unique_lock<std::mutex>(mu);
  if (handles.size() <= static_cast<size_t>(device)) handles.resize(device + 1, nullptr);
  if (!handles[device]) {
    NW_SPARSE_CUBLAS_CHECK(cublasCreate(&handles[device]));
  }
  // Per call: the calling thread's kernel stream may differ from the last caller's.
  NW_SPARSE_CUBLAS_CHECK(cublasSetStream(handles[device], stream()));
  return handles[device];
}

constexpr int kTileK = 256;  // elements of an input row staged in shared memory at a time

// out[i] = a[idx_a ? idx_a[i] : i] @ b[idx_b[i]]; a: (*, K), b: (R, K, N), out: (rows, N).
// All loops are block-uniform, so every thread reaches each __syncthreads.
template <typename T, typename I>
__global__ void gather_mm_kernel(const T* __restrict__ a, const T* __restrict__ b,
                                 const I* __restrict__ idx_a, const I* __restrict__ idx_b,
                                 T* __restrict__ out, int64_t rows, int64_t K, int64_t N) {
  __shared__ T tile[kTileK];
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    const T* arow = a + (idx_a ? static_cast<int64_t>(idx_a[i]) : i) * K;
    const T* w = b + static_cast<int64_t>(idx_b[i]) * K * N;
    for (int64_t j0 = 0; j0 < N; j0 += blockDim.x) {
      const int64_t j = j0 + threadIdx.x;
      T acc = 0;
      for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
        const int64_t kn = K - k0 < kTileK ? K - k0 : kTileK;
        __syncthreads();  // the previous tile has been consumed
        for (int64_t t = threadIdx.x; t < kn; t += blockDim.x) tile[t] = arow[k0 + t];
        __syncthreads();
        if (j < N) {
          const T* wk = w + k0 * N + j;
          for (int64_t t = 0; t < kn; ++t) acc += tile[t] * wk[t * N];
        }
      }
      if (j < N) out[i * N + j] = acc;
    }
  }
}

// grad_b[idx_b[i]][k][j] += a[idx_a[i]][k] * grad_out[i][j], one thread per (i, k, j).
template <typename T, typename I>
__global__ void gather_mm_grad_b_kernel(const T* __restrict__ a, const T* __restrict__ grad_out,
                                        const I* __restrict__ idx_a, const I* __restrict__ idx_b,
                                        T* __restrict__ grad_b, int64_t rows, int64_t K,
                                        int64_t N) {
  const int64_t total = rows * K * N;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = t / (K * N), rem = t % (K * N);
    const int64_t k = rem / N, j = rem % N;
    const int64_t ia = idx_a ? static_cast<int64_t>(idx_a[i]) : i;
    atomicAdd(grad_b + static_cast<int64_t>(idx_b[i]) * K * N + rem,
              a[ia * K + k] * grad_out[i * N + j]);
  }
}

int checked_int(int64_t v, const char* what, const char* op) {
  NW_CHECK(v <= INT_MAX, ValueError, op, ": ", what, " ", v,
           " exceeds cuBLAS's 32-bit limit; split the product");
  return static_cast<int>(v);
}

// Column-major C (m x n, ldc) = op(A) (m x k, lda) op(B) (k x n, ldb), beta = 0.
template <typename T>
void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
          const T* A, int lda, const T* B, int ldb, T* C, int ldc) {
  const T alpha = 1, beta = 0;
  if constexpr (std::is_same_v<T, float>) {
    NW_SPARSE_CUBLAS_CHECK(cublasSgemm(h, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
  } else {
    NW_SPARSE_CUBLAS_CHECK(cublasDgemm(h, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
  }
}

// Segment starts from the CPU seglen array.
std::vector<int64_t> segment_starts(const ArrayView& seglen) {
  const int64_t* len = seglen.ptr<int64_t>();
  std::vector<int64_t> starts(seglen.numel() + 1, 0);
  for (int64_t r = 0; r < seglen.numel(); ++r) starts[r + 1] = starts[r] + len[r];
  return starts;
}

}  // namespace

void gather_mm(const ArrayView& a, const ArrayView& b, const ArrayView& idx_a,
               const ArrayView& idx_b, ArrayView out) {
  const int64_t rows = out.shape[0], N = out.shape[1], K = a.shape[1];
  if (rows == 0 || N == 0) return;
  DeviceGuard guard(out.device.index);
  dispatch_float_index(out.dtype, idx_b.dtype, "gather_mm", [&](auto real, auto index) {
    using T = decltype(real);
    using I = decltype(index);
    const int threads =
        static_cast<int>(std::clamp<int64_t>((N + 31) / 32 * 32, 32, kBlockThreads));
    gather_mm_kernel<T, I><<<num_blocks(rows, 1), threads, 0, stream()>>>(
        a.ptr<T>(), b.ptr<T>(), idx_a.data ? idx_a.ptr<I>() : nullptr, idx_b.ptr<I>(), out.ptr<T>(),
        rows, K, N);
    check_launch();
  });
}

void gather_mm_grad_b(const ArrayView& a, const ArrayView& grad_out, const ArrayView& idx_a,
                      const ArrayView& idx_b, ArrayView grad_b) {
  const int64_t rows = grad_out.shape[0], N = grad_out.shape[1], K = a.shape[1];
  if (rows == 0 || N == 0 || K == 0) return;
  DeviceGuard guard(grad_b.device.index);
  dispatch_float_index(grad_b.dtype, idx_b.dtype, "gather_mm_grad_b", [&](auto real, auto index) {
    using T = decltype(real);
    using I = decltype(index);
    gather_mm_grad_b_kernel<T, I><<<num_blocks(rows * K * N, kBlockThreads), kBlockThreads, 0, stream()>>>(
        a.ptr<T>(), grad_out.ptr<T>(), idx_a.data ? idx_a.ptr<I>() : nullptr, idx_b.ptr<I>(),
        grad_b.ptr<T>(), rows, K, N);
    check_launch();
  });
}

void segment_mm(const ArrayView& a, const ArrayView& b, const ArrayView& seglen, ArrayView out) {
  const int64_t K = a.shape[1], N = out.shape[1];
  const std::vector<int64_t> starts = segment_starts(seglen);
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device.index);
  dispatch_float(out.dtype, "segment_mm", [&](auto real) {
    using T = decltype(real);
    if (K == 0) {  // empty products: cuBLAS is not needed to write zeros
      NW_CUDA_CHECK(cudaMemsetAsync(out.data, 0, sizeof(T) * out.numel(), stream()));
      return;
    }
    const int n = checked_int(N, "output columns", "segment_mm");
    const int k = checked_int(K, "inner dimension", "segment_mm");
    std::unique_lock<std::mutex> lock;
    cublasHandle_t h = lock_handle(out.device.index, lock);
    for (int64_t r = 0; r + 1 < static_cast<int64_t>(starts.size()); ++r) {
      const int64_t len = starts[r + 1] - starts[r];
      if (len == 0) continue;
      // out_seg^T (N x len) = b[r]^T (N x K) @ a_seg^T (K x len), all read in place.
      gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_N, n, checked_int(len, "segment length", "segment_mm"), k,
              b.ptr<T>() + r * K * N, n, a.ptr<T>() + starts[r] * K, k,
              out.ptr<T>() + starts[r] * N, n);
    }
  });
}

void segment_mm_grad_b(const ArrayView& a, const ArrayView& grad_out, const ArrayView& seglen,
                       ArrayView grad_b) {
  const int64_t K = a.shape[1], N = grad_out.shape[1];
  const std::vector<int64_t> starts = segment_starts(seglen);
  if (grad_b.numel() == 0) return;
  DeviceGuard guard(grad_b.device.index);
  dispatch_float(grad_b.dtype, "segment_mm_grad_b", [&](auto real) {
    using T = decltype(real);
    // Types without rows get a zero gradient; the rest are overwritten by their GEMM.
    NW_CUDA_CHECK(cudaMemsetAsync(grad_b.data, 0, sizeof(T) * grad_b.numel(), stream()));
    const int n = checked_int(N, "output columns", "segment_mm_grad_b");
    const int k = checked_int(K, "inner dimension", "segment_mm_grad_b");
    std::unique_lock<std::mutex> lock;
    cublasHandle_t h = lock_handle(grad_b.device.index, lock);
    for (int64_t r = 0; r + 1 < static_cast<int64_t>(starts.size()); ++r) {
      const int64_t len = starts[r + 1] - starts[r];
      if (len == 0) continue;
      // grad_b[r]^T (N x K) = grad_out_seg^T (N x len) @ a_seg (len x K); a_seg is the
      // column-major (K x len) matrix a_seg^T, so it goes in transposed.
      gemm<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, n, k,
              checked_int(len, "segment length", "segment_mm_grad_b"),
              grad_out.ptr<T>() + starts[r] * N, n, a.ptr<T>() + starts[r] * K, k,
              grad_b.ptr<T>() + r * K * N, n);
    }
  });
}

}  // namespace nodeweave::sparse::cuda
