// CPU-only builds: there are no CUDA kernels to add to the op table.
#include "core_framework/engine/op_registry.h"

namespace nodeweave {
void register_cuda_kernels() {}
}  // namespace nodeweave
