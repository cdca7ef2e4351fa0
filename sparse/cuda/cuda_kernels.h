// CUDA implementations behind the validated entry points in sparse/*.h. Callers (the entry points)
// have already checked shapes, dtypes and devices, so these only compute. CPU-only builds link
// sparse/cuda/no_cuda.cc instead, whose versions throw NotImplementedError.
#pragma once
#include "sparse/bcast.h"
#include "sparse/gather_mm.h"
#include "sparse/sddmm.h"
#include "sparse/segment.h"
#include "sparse/spmm.h"

namespace nodeweave::sparse::cuda {

void spmm(const SpmmArgs& args, const BcastInfo& bcast);
void sddmm(const SddmmArgs& args, const BcastInfo& bcast);
void edge_softmax_forward(const CompressedView& rows, const ArrayView& score, ArrayView out);
void edge_softmax_backward(const CompressedView& rows, const ArrayView& out,
                           const ArrayView& grad_out, ArrayView grad_score);
void segment_reduce(ReduceOp reduce, const ArrayView& x, const ArrayView& offsets, ArrayView out,
                    ArrayView arg);
void segment_reduce_backward(ReduceOp reduce, const ArrayView& grad_out, const ArrayView& offsets,
                             ArrayView grad_x);
void segment_softmax_forward(const ArrayView& x, const ArrayView& offsets, ArrayView out);
void segment_softmax_backward(const ArrayView& out, const ArrayView& grad_out,
                              const ArrayView& offsets, ArrayView grad_x);
void gather_mm(const ArrayView& a, const ArrayView& b, const ArrayView& idx_a,
               const ArrayView& idx_b, ArrayView out);
void gather_mm_grad_b(const ArrayView& a, const ArrayView& grad_out, const ArrayView& idx_a,
                      const ArrayView& idx_b, ArrayView grad_b);
void segment_mm(const ArrayView& a, const ArrayView& b, const ArrayView& seglen, ArrayView out);
void segment_mm_grad_b(const ArrayView& a, const ArrayView& grad_out, const ArrayView& seglen,
                       ArrayView grad_b);

}  // namespace nodeweave::sparse::cuda
