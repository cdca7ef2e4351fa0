// Stand-ins for the CUDA kernels in CPU-only builds. The entry points only call these for arrays
// on a CUDA device, which a CPU-only build cannot create, so reaching one means a foreign (DLPack)
// CUDA array was passed in.
#include "core_framework/runtime/error.h"
#include "sparse/cuda/cuda_kernels.h"

namespace nodeweave::sparse::cuda {

namespace {
[[noreturn]] void no_cuda(const char* fn) {
  throw NotImplementedError(str_cat(fn, ": nodeweave was built without CUDA"));
}
}  // namespace

void spmm(const SpmmArgs&, const BcastInfo&) { no_cuda("gspmm"); }
void sddmm(const SddmmArgs&, const BcastInfo&) { no_cuda("gsddmm"); }
void edge_softmax_forward(const CompressedView&, const ArrayView&, ArrayView) {
  no_cuda("edge_softmax_forward");
}
void edge_softmax_backward(const CompressedView&, const ArrayView&, const ArrayView&, ArrayView) {
  no_cuda("edge_softmax_backward");
}
void segment_reduce(ReduceOp, const ArrayView&, const ArrayView&, ArrayView, ArrayView) {
  no_cuda("segment_reduce");
}
void segment_reduce_backward(ReduceOp, const ArrayView&, const ArrayView&, ArrayView) {
  no_cuda("segment_reduce_backward");
}
void segment_softmax_forward(const ArrayView&, const ArrayView&, ArrayView) {
  no_cuda("segment_softmax_forward");
}
void segment_softmax_backward(const ArrayView&, const ArrayView&, const ArrayView&, ArrayView) {
  no_cuda("segment_softmax_backward");
}
void gather_mm(const ArrayView&, const ArrayView&, const ArrayView&, const ArrayView&, ArrayView) {
  no_cuda("gather_mm");
}
void gather_mm_grad_b(const ArrayView&, const ArrayView&, const ArrayView&, const ArrayView&,
                      ArrayView) {
  no_cuda("gather_mm_grad_b");
}
void segment_mm(const ArrayView&, const ArrayView&, const ArrayView&, ArrayView) {
  no_cuda("segment_mm");
}
void segment_mm_grad_b(const ArrayView&, const ArrayView&, const ArrayView&, ArrayView) {
  no_cuda("segment_mm_grad_b");
}

}  // namespace nodeweave::sparse::cuda
