// The CUDA stream the framework-neutral kernels (sparse/) launch their work on. nodeweave's own
// engine orders everything on the legacy default stream (nullptr). A foreign framework's binding
// (PyTorch through DLPack) sets that framework's current stream for the duration of one call, so
// the kernels are ordered with the producer's work without events or device-wide syncs. The
// setting is per thread; plain C++ with no CUDA headers, so CPU-only builds compile it too.
#pragma once

namespace nodeweave {

// The calling thread's kernel stream as a cudaStream_t; nullptr is the legacy default stream.
void* current_cuda_stream();

// Sets the calling thread's kernel stream until the scope ends (restores the previous one).
class CudaStreamScope {
 public:
  explicit CudaStreamScope(void* stream);
  ~CudaStreamScope();
  CudaStreamScope(const CudaStreamScope&) = delete;
  CudaStreamScope& operator=(const CudaStreamScope&) = delete;

 private:
  void* previous_;
};

}  // namespace nodeweave
