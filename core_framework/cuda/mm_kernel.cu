// CUDA kernel for Mm: cuBLAS for float32/float64 (transposed operands are passed as transposes,
// never copied), a plain kernel for the integer types the CPU kernel also accepts.
#include <cublas_v2.h>

#include <climits>
#include <mutex>
#include <vector>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/cuda/elementwise.cuh"
#include "core_framework/cuda/kernels.h"
#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"

namespace nodeweave::cuda {

namespace {

#define NW_CUBLAS_CHECK(expr)                                                                    \
  do {                                                                                           \
    cublasStatus_t nw_st_ = (expr);                                                              \
    if (nw_st_ != CUBLAS_STATUS_SUCCESS) {                                                       \
      throw std::runtime_error(                                                                  \
          ::nodeweave::str_cat("cuBLAS error in ", #expr, ": ", cublasGetStatusString(nw_st_))); \
    }                                                                                            \
  } while (0)

// One handle per device, created on first use and never destroyed (see caching_allocator(): the
// runtime may be gone by the time static destructors run). Calls on a handle are serialized by
// the returned lock, since cuBLAS handles must not be used by two threads at once.
cublasHandle_t lock_handle(int device, std::unique_lock<std::mutex>& lock) {
  static std::mutex mu;
  static std::vector<cublasHandle_t> handles;
  lock = std::unique_lock<std::mutex>(mu);
  if (handles.size() <= static_cast<size_t>(device)) handles.resize(device + 1, nullptr);
  if (!handles[device]) NW_CUBLAS_CHECK(cublasCreate(&handles[device]));
  return handles[device];
}

// How a row-major 2-D operand goes to column-major cuBLAS without a copy. A row-major (r x c)
// matrix with unit column stride is the column-major (c x r) matrix X^T; one with unit row stride
// is X itself, which op T turns into X^T. Either way cuBLAS sees X^T, and C^T = B^T A^T gives C.
struct GemmOperand {
  Tensor t;
  cublasOperation_t op;
  int64_t ld;
};

GemmOperand gemm_operand(const Tensor& m) {
  const int64_t r = m.size(0), c = m.size(1);
  const int64_t s0 = m.stride(0), s1 = m.stride(1);
  if ((s1 == 1 || c == 1) && s0 >= std::max<int64_t>(c, 1))
    return {m, CUBLAS_OP_N, std::max<int64_t>(s0, 1)};
  if ((s0 == 1 || r == 1) && s1 >= std::max<int64_t>(r, 1))
    return {m, CUBLAS_OP_T, std::max<int64_t>(s1, 1)};
  return {contiguous(m), CUBLAS_OP_N, std::max<int64_t>(c, 1)};
}

template <typename T>
__global__ void naive_mm_kernel(const T* a, const T* b, T* out, int64_t M, int64_t N, int64_t K,
                                int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  NW_CUDA_KERNEL_LOOP(idx, M * N) {
    const int64_t i = idx / N, j = idx % N;
    T acc = 0;
    for (int64_t k = 0; k < K; ++k) acc += a[i * a0 + k * a1] * b[k * b0 + j * b1];
    out[idx] = acc;
  }
}

void mm_cuda(const TensorList& in, const Attrs&, TensorList& out) {
  NoGradGuard no_grad;
  const Tensor &a = in[0], &b = in[1];
  Tensor c = out[0];
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  if (M == 0 || N == 0) return;
  if (K == 0) {
    zero_(c);
    return;
  }
  const DType d = c.dtype();
  DeviceGuard guard(c.device().index);
  if (d != DType::Float32 && d != DType::Float64) {
    NW_DISPATCH_NUMERIC(d, "mm", {
      naive_mm_kernel<scalar_t><<<grid_size(M * N), kThreads>>>(
          a.data<scalar_t>(), b.data<scalar_t>(), c.data<scalar_t>(), M, N, K, a.stride(0),
          a.stride(1), b.stride(0), b.stride(1));
      NW_CUDA_CHECK(cudaGetLastError());
    });
    return;
  }
  const GemmOperand A = gemm_operand(a), B = gemm_operand(b);
  for (int64_t v : {M, N, K, A.ld, B.ld}) {
    NW_CHECK(v <= INT_MAX, ValueError, "mm: dimension or leading stride ", v,
             " exceeds cuBLAS's 32-bit limit; split the product");
  }
  std::unique_lock<std::mutex> lock;
  cublasHandle_t h = lock_handle(c.device().index, lock);
  const int m = static_cast<int>(N), n = static_cast<int>(M), k = static_cast<int>(K);
  if (d == DType::Float32) {
    const float alpha = 1.0f, beta = 0.0f;
    NW_CUBLAS_CHECK(cublasSgemm(h, B.op, A.op, m, n, k, &alpha, B.t.data<float>(),
                                static_cast<int>(B.ld), A.t.data<float>(), static_cast<int>(A.ld),
                                &beta, c.data<float>(), m));
  } else {
    const double alpha = 1.0, beta = 0.0;
    NW_CUBLAS_CHECK(cublasDgemm(h, B.op, A.op, m, n, k, &alpha, B.t.data<double>(),
                                static_cast<int>(B.ld), A.t.data<double>(), static_cast<int>(A.ld),
                                &beta, c.data<double>(), m));
  }
}

}  // namespace

void register_mm_kernel() { mutable_op_def(OpKind::Mm).kernels[1] = mm_cuda; }

}  // namespace nodeweave::cuda
