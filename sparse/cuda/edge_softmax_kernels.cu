// Edge softmax on CUDA: a softmax over the edges of each row of a compressed view, per feature,
// with the row maximum subtracted first. A block holds blockDim.y rows and the blockDim.x threads
// of a row (a power of two up to a warp) stride over the features; each thread makes its passes
// (max, sum of exponentials, normalize) over the row's edges itself, so no reduction crosses
// threads. Scores are addressed by edge id through `eids`; segment softmax (segment_kernels.cu)
// passes a view without eids, meaning position p is row p of the data.
#include "sparse/cuda/cuda_kernels.h"
#include "sparse/cuda/sparse_cuda_common.cuh"

namespace nodeweave::sparse::cuda {

namespace {

template <typename I>
__device__ __forceinline__ int64_t edge_at(const I* eids, int64_t p) {
  return eids ? static_cast<int64_t>(eids[p]) : p;
}

template <typename T, typename I>
__global__ void softmax_forward_kernel(const I* __restrict__ indptr, const I* __restrict__ eids,
                                       const T* __restrict__ score, T* __restrict__ out,
                                       int64_t num_rows, int64_t feat) {
  const int64_t row_step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; row < num_rows;
       row += row_step) {
    const int64_t begin = indptr[row], end = indptr[row + 1];
    if (begin == end) continue;
    for (int64_t k = threadIdx.x; k < feat; k += blockDim.x) {
      T m = score[edge_at(eids, begin) * feat + k];
      for (int64_t p = begin + 1; p < end; ++p) {
        const T v = score[edge_at(eids, p) * feat + k];
        m = v > m ? v : m;
      }
      T sum = 0;
      for (int64_t p = begin; p < end; ++p)
        sum += device_exp(score[edge_at(eids, p) * feat + k] - m);
      const T inv = T(1) / sum;
      for (int64_t p = begin; p < end; ++p) {
        const int64_t i = edge_at(eids, p) * feat + k;
        out[i] = device_exp(score[i] - m) * inv;
      }
    }
  }
}

// grad_score = out * (grad_out - sum_row(out * grad_out)).
template <typename T, typename I>
__global__ void softmax_backward_kernel(const I* __restrict__ indptr, const I* __restrict__ eids,
                                        const T* __restrict__ out, const T* __restrict__ grad_out,
                                        T* __restrict__ grad_score, int64_t num_rows,
                                        int64_t feat) {
  const int64_t row_step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; row < num_rows;
       row += row_step) {
    const int64_t begin = indptr[row], end = indptr[row + 1];
    for (int64_t k = threadIdx.x; k < feat; k += blockDim.x) {
      T dot = 0;
      for (int64_t p = begin; p < end; ++p) {
        const int64_t i = edge_at(eids, p) * feat + k;
        dot += out[i] * grad_out[i];
      }
      for (int64_t p = begin; p < end; ++p) {
        const int64_t i = edge_at(eids, p) * feat + k;
        grad_score[i] = out[i] * (grad_out[i] - dot);
      }
    }
  }
}

dim3 softmax_block(int64_t feat) {
  const int tx = feature_threads(feat);
  return dim3(tx, kBlockThreads / tx);
}

}  // namespace

void edge_softmax_forward(const CompressedView& rows, const ArrayView& score, ArrayView out) {
  const int64_t feat = row_length(score);
  if (rows.num_rows == 0 || score.numel() == 0) return;
  DeviceGuard guard(out.device.index);
  dispatch_float_index(out.dtype, rows.indptr.dtype, "edge_softmax", [&](auto real, auto index) {
    using T = decltype(real);
    using I = decltype(index);
    const dim3 block = softmax_block(feat);
    softmax_forward_kernel<T, I><<<num_blocks(rows.num_rows, block.y), block, 0, stream()>>>(
        rows.indptr.ptr<I>(), rows.eids.ptr<I>(), score.ptr<T>(), out.ptr<T>(), rows.num_rows,
        feat);
    check_launch();
  });
}

void edge_softmax_backward(const CompressedView& rows, const ArrayView& out,
                           const ArrayView& grad_out, ArrayView grad_score) {
  const int64_t feat = row_length(out);
  if (rows.num_rows == 0 || out.numel() == 0) return;
  DeviceGuard guard(grad_score.device.index);
  dispatch_float_index(
      grad_score.dtype, rows.indptr.dtype, "edge_softmax_backward", [&](auto real, auto index) {
        using T = decltype(real);
        using I = decltype(index);
        const dim3 block = softmax_block(feat);
        softmax_backward_kernel<T, I><<<num_blocks(rows.num_rows, block.y), block, 0, stream()>>>(
            rows.indptr.ptr<I>(), rows.eids.ptr<I>(), out.ptr<T>(), grad_out.ptr<T>(),
            grad_score.ptr<T>(), rows.num_rows, feat);
        check_launch();
      });
}

}  // namespace nodeweave::sparse::cuda
