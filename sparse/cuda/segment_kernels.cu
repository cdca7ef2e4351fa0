// Segment reductions on CUDA: out[i] = reduce(x[offsets[i] : offsets[i+1]]) per feature, their
// Sum/Mean gradient, and segment softmax. Same mapping as gSpMM: a block holds blockDim.y segments,
// the blockDim.x threads of a segment (a power of two up to a warp) stride over the features and
// each walks the segment's rows, so outputs are written once without atomics. Segment softmax is
// edge softmax over a view whose position p is row p (edge_softmax_kernels.cu).
#include "sparse/cuda/cuda_kernels.h"
#include "sparse/cuda/sparse_cuda_common.cuh"

namespace nodeweave::sparse::cuda {

namespace {

template <typename T, typename I>
__global__ void segment_sum_kernel(const T* __restrict__ x, const I* __restrict__ offsets,
                                   T* __restrict__ out, int64_t num_segments, int64_t feat,
                                   bool mean) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; s < num_segments;
       s += step) {
    const int64_t begin = offsets[s], end = offsets[s + 1];
    for (int64_t k = threadIdx.x; k < feat; k += blockDim.x) {
      T acc = 0;
      for (int64_t j = begin; j < end; ++j) acc += x[j * feat + k];
      if (mean && end > begin) acc /= static_cast<T>(end - begin);
      out[s * feat + k] = acc;
    }
  }
}

// Max/Min and the row of x that won (the first on ties); empty segments give 0 and -1.
template <bool IsMax, typename T, typename I>
__global__ void segment_arg_kernel(const T* __restrict__ x, const I* __restrict__ offsets,
                                   T* __restrict__ out, int64_t* __restrict__ arg,
                                   int64_t num_segments, int64_t feat) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; s < num_segments;
       s += step) {
    const int64_t begin = offsets[s], end = offsets[s + 1];
    for (int64_t k = threadIdx.x; k < feat; k += blockDim.x) {
      T best = 0;
      int64_t best_j = -1;
      for (int64_t j = begin; j < end; ++j) {
        const T v = x[j * feat + k];
        if (best_j < 0 || (IsMax ? v > best : v < best)) {
          best = v;
          best_j = j;
        }
      }
      out[s * feat + k] = best;
      if (arg) arg[s * feat + k] = best_j;
    }
  }
}

// grad_x[j] = grad_out[segment(j)], divided by the segment length for Mean.
template <typename T, typename I>
__global__ void segment_sum_backward_kernel(const T* __restrict__ grad_out,
                                            const I* __restrict__ offsets, T* __restrict__ grad_x,
                                            int64_t num_segments, int64_t feat, bool mean) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; s < num_segments;
       s += step) {
    const int64_t begin = offsets[s], end = offsets[s + 1];
    if (begin == end) continue;
    const T scale = mean ? T(1) / static_cast<T>(end - begin) : T(1);
    for (int64_t k = threadIdx.x; k < feat; k += blockDim.x) {
      const T g = grad_out[s * feat + k] * scale;
      for (int64_t j = begin; j < end; ++j) grad_x[j * feat + k] = g;
    }
  }
}

dim3 segment_block(int64_t feat) {
  const int tx = feature_threads(feat);
  return dim3(tx, kBlockThreads / tx);
}

// A compressed view over consecutive segments, for the softmax kernels: no eids means position p
// is row p.
CompressedView segment_view(const ArrayView& offsets) {
  CompressedView v;
  v.indptr = offsets;
  v.num_rows = offsets.numel() - 1;
  return v;
}

}  // namespace

void segment_reduce(ReduceOp reduce, const ArrayView& x, const ArrayView& offsets, ArrayView out,
                    ArrayView arg) {
  const int64_t num_segments = offsets.numel() - 1;
  const int64_t feat = row_length(out);
  if (num_segments <= 0 || feat == 0) return;
  DeviceGuard guard(out.device.index);
  dispatch_float_index(out.dtype, offsets.dtype, "segment_reduce", [&](auto real, auto index) {
    using T = decltype(real);
    using I = decltype(index);
    const dim3 block = segment_block(feat);
    const unsigned grid = num_blocks(num_segments, block.y);
    const T* xp = x.ptr<T>();
    const I* off = offsets.ptr<I>();
    T* o = out.ptr<T>();
    switch (reduce) {
      case ReduceOp::Sum:
      case ReduceOp::Mean:
        segment_sum_kernel<T, I>
            <<<grid, block, 0, stream()>>>(xp, off, o, num_segments, feat, reduce == ReduceOp::Mean);
        break;
      case ReduceOp::Max:
        segment_arg_kernel<true, T, I>
            <<<grid, block, 0, stream()>>>(xp, off, o, arg.ptr<int64_t>(), num_segments, feat);
        break;
      case ReduceOp::Min:
        segment_arg_kernel<false, T, I>
            <<<grid, block, 0, stream()>>>(xp, off, o, arg.ptr<int64_t>(), num_segments, feat);
        break;
    }
    check_launch();
  });
}

void segment_reduce_backward(ReduceOp reduce, const ArrayView& grad_out, const ArrayView& offsets,
                             ArrayView grad_x) {
  const int64_t num_segments = offsets.numel() - 1;
  const int64_t feat = row_length(grad_x);
  if (num_segments <= 0 || grad_x.numel() == 0) return;
  DeviceGuard guard(grad_x.device.index);
  dispatch_float_index(
      grad_x.dtype, offsets.dtype, "segment_reduce_backward", [&](auto real, auto index) {
        using T = decltype(real);
        using I = decltype(index);
        const dim3 block = segment_block(feat);
        segment_sum_backward_kernel<T, I><<<num_blocks(num_segments, block.y), block, 0, stream()>>>(
            grad_out.ptr<T>(), offsets.ptr<I>(), grad_x.ptr<T>(), num_segments, feat,
            reduce == ReduceOp::Mean);
        check_launch();
      });
}

void segment_softmax_forward(const ArrayView& x, const ArrayView& offsets, ArrayView out) {
  edge_softmax_forward(segment_view(offsets), x, out);
}

void segment_softmax_backward(const ArrayView& out, const ArrayView& grad_out,
                              const ArrayView& offsets, ArrayView grad_x) {
  edge_softmax_backward(segment_view(offsets), out, grad_out, grad_x);
}

}  // namespace nodeweave::sparse::cuda
