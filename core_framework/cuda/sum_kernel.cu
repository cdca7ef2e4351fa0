// CUDA kernel for Sum over any set of dims. The reduced dims are moved last (permute + contiguous),
// so every case is a row sum over an (rows, R) matrix: one block per row, or per slice of a row
// when there are few long rows, with the slices' partial sums added by a second pass. Blocks reduce
// in a fixed order, so results are deterministic.
#include <algorithm>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/cuda/elementwise.cuh"
#include "core_framework/cuda/kernels.h"
#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"
#include "core_framework/ops/reduce_util.h"

namespace nodeweave::cuda {

namespace {

// Block `b` sums slice (b % parts) of row (b / parts) of x (rows x R, row-major) into out[b].
template <typename T>
__global__ void row_sum_kernel(const T* x, T* out, int64_t rows, int64_t R, int64_t parts,
                               int64_t chunk) {
  __shared__ T partial[kThreads];
  for (int64_t b = blockIdx.x; b < rows * parts; b += gridDim.x) {
    const int64_t row = b / parts;
    const int64_t begin = (b % parts) * chunk;
    const int64_t end = begin + chunk < R ? begin + chunk : R;
    const T* src = x + row * R;
    T acc = 0;
    for (int64_t r = begin + threadIdx.x; r < end; r += blockDim.x) acc += src[r];
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (static_cast<int>(threadIdx.x) < s) partial[threadIdx.x] += partial[threadIdx.x + s];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[b] = partial[0];
    __syncthreads();  // partial[] is reused by this block's next row
  }
}

template <typename T>
void launch_row_sum(const T* x, T* out, int64_t rows, int64_t R, int64_t parts) {
  const int64_t chunk = (R + parts - 1) / parts;
  const int64_t blocks = std::min<int64_t>(rows * parts, int64_t{1} << 16);
  row_sum_kernel<T><<<static_cast<unsigned>(blocks), kThreads>>>(x, out, rows, R, parts, chunk);
  NW_CUDA_CHECK(cudaGetLastError());
}

// Attrs: dims (IntList), keepdim (bool), dtype (DType) — the same as the CPU kernel.
void sum_cuda(const TensorList& in, const Attrs& a, TensorList& out) {
  NoGradGuard no_grad;
  const Tensor& x0 = in[0];
  const IntList dims = normalize_dims(a.ints(0), x0.dim(), "sum");
  const DType acc_dtype = a.dtype(2);
  const bool half_out = is_half(acc_dtype);
  const DType cd = half_out ? DType::Float32 : acc_dtype;
  const Device dev = out[0].device();

  IntList perm;
  for (int64_t d = 0; d < x0.dim(); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d)) perm.push_back(d);
  for (int64_t d : dims) perm.push_back(d);
  int64_t R = 1;
  for (int64_t d : dims) R *= x0.size(d);
  const int64_t rows = shape_numel(reduced_shape(x0.shape(), dims, false));

  Tensor target = half_out ? empty(out[0].shape(), DType::Float32, dev) : out[0];
  if (rows > 0 && R == 0) {
    fill_(target, 0.0);
  } else if (rows > 0) {
    Tensor x = x0.dtype() == cd ? x0 : cast(x0, cd);
    // contiguous() copies only when the reduced dims were not already last and packed.
    x = contiguous(x.dim() > 0 ? permute(x, perm) : x);
    DeviceGuard guard(dev.index);
    // Few long rows would leave most of the GPU idle: split each row into up to `parts` slices.
    constexpr int64_t kPerBlock = kThreads * 16;
    const int64_t parts =
        rows >= 128 ? 1 : std::clamp<int64_t>((R + kPerBlock - 1) / kPerBlock, 1, 1024 / rows);
    NW_DISPATCH_NUMERIC(cd, "sum", {
      if (parts == 1) {
        launch_row_sum<scalar_t>(x.data<scalar_t>(), target.data<scalar_t>(), rows, R, 1);
      } else {
        Tensor partials = empty({rows * parts}, cd, dev);
        launch_row_sum<scalar_t>(x.data<scalar_t>(), partials.data<scalar_t>(), rows, R, parts);
        launch_row_sum<scalar_t>(partials.data<scalar_t>(), target.data<scalar_t>(), rows, parts,
                                 1);
      }
    });
  }
  if (half_out) {
    Tensor o = out[0];
    copy_(o, target);
  }
}

}  // namespace

void register_sum_kernel() { mutable_op_def(OpKind::Sum).kernels[1] = sum_cuda; }

}  // namespace nodeweave::cuda
