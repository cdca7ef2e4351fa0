// CUDA kernels for Fill, Copy (broadcasting, converting write into an existing tensor) and Cast.
#include "core_framework/autograd/grad_mode.h"
#include "core_framework/cuda/elementwise.cuh"
#include "core_framework/cuda/kernels.h"
#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"

namespace nodeweave::cuda {

namespace {

template <typename Dst, typename Src>
struct ConvertOp {
  __device__ Dst operator()(Src v) const { return convert_to<Dst>(v); }
};

template <typename T>
struct FillOp {
  T value;
  __device__ T operator()() const { return value; }
};

// out = convert(src) broadcast to out's shape, for any pair of dtypes.
void convert_into(const Tensor& out, const Tensor& src_any) {
  Tensor src = on_device(src_any, out.device());
  if (src.dtype() == out.dtype() && src.shape() == out.shape() && src.is_contiguous() &&
      out.is_contiguous()) {
    // clone()/contiguous() of a contiguous tensor: a plain device-to-device copy.
    DeviceGuard guard(out.device().index);
    NW_CUDA_CHECK(cudaMemcpyAsync(out.data_ptr(), src.data_ptr(), out.numel() * out.itemsize(),
                                  cudaMemcpyDeviceToDevice, 0));
    return;
  }
  NW_CUDA_DISPATCH_ANY(out.dtype(), {
    using dst_t = scalar_t;
    NW_CUDA_DISPATCH_ANY(src.dtype(), {
      launch_elementwise<dst_t, scalar_t>(out, {src}, ConvertOp<dst_t, scalar_t>{});
    });
  });
}

// Copy(self, src): inputs[0] is the destination (its shape and dtype), inputs[1] the source.
void copy_cuda(const TensorList& in, const Attrs&, TensorList& out) {
  NoGradGuard no_grad;
  convert_into(out[0], in[1]);
}

void cast_cuda(const TensorList& in, const Attrs&, TensorList& out) {
  NoGradGuard no_grad;
  convert_into(out[0], in[0]);
}

void fill_cuda(const TensorList&, const Attrs& a, TensorList& out) {
  const double v = a.f(0);
  NW_CUDA_DISPATCH_ANY(out[0].dtype(), {
    // Converted on the host exactly as the CPU kernel converts it (half types through float).
    launch_elementwise<scalar_t>(out[0], {}, FillOp<scalar_t>{convert_to<scalar_t>(v)});
  });
}

}  // namespace

void register_copy_kernels() {
  mutable_op_def(OpKind::Copy).kernels[1] = copy_cuda;
  mutable_op_def(OpKind::Cast).kernels[1] = cast_cuda;
  mutable_op_def(OpKind::Fill).kernels[1] = fill_cuda;
}

}  // namespace nodeweave::cuda
