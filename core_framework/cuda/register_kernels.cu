// CUDA builds: adds the CUDA kernels to op table entries the CPU families declared (kernels[1]
// only; names, inference and gradients stay the ones every device shares).
#include "core_framework/cuda/cuda_api.h"
#include "core_framework/cuda/kernels.h"
#include "core_framework/engine/op_registry.h"

namespace nodeweave {

void register_cuda_kernels() {
  // Referencing the runtime hooks here keeps their static registration in every link that uses ops.
  cuda::ensure_runtime_hooks();
  cuda::register_copy_kernels();
  cuda::register_unary_kernels();
  cuda::register_binary_kernels();
  cuda::register_sum_kernel();
  cuda::register_mm_kernel();
}

}  // namespace nodeweave
