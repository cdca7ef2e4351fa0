// Per-thread kernel stream (see stream.h).
#include "core_framework/runtime/stream.h"

namespace nodeweave {
namespace {
thread_local void* t_stream = nullptr;
}  // namespace

void* current_cuda_stream() { return t_stream; }

CudaStreamScope::CudaStreamScope(void* stream) : previous_(t_stream) { t_stream = stream; }
CudaStreamScope::~CudaStreamScope() { t_stream = previous_; }

}  // namespace nodeweave
