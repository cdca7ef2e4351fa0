// The CUDA runtime services plain C++ code may call in a CUDA build (the Python binding, tests):
// device queries, stream hand-off for DLPack consumers and the caching allocators. Declared without
// CUDA headers so .cc files can include it; defined in device_runtime.cu.
#pragma once
#include <cstdint>

#include "core_framework/runtime/allocator.h"

namespace nodeweave::cuda {

// Visible CUDA devices; 0 when the driver or runtime reports an error (no GPU, no driver).
int device_count();
// The caching allocator of `device`; throws ValueError when no such device is visible.
Allocator* caching_allocator(int device);
// Makes a consumer's stream wait for all work nodeweave has queued on `device`. `stream` follows
// DLPack's numbering: 1 = legacy default stream, 2 = per-thread default stream, anything larger is
// a cudaStream_t. nodeweave queues everything on the legacy default stream.
void make_stream_wait(int device, int64_t stream);
// Blocks until all work queued on `device` has finished.
void synchronize(int device);
// Installs the CudaHooks (allocator, copy, device count) into the runtime. Runs at static-init
// time; also called from register_cuda_kernels() so the linker always keeps the registration.
void ensure_runtime_hooks();

}  // namespace nodeweave::cuda
