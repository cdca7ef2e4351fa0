// CPU implementations behind the validated entry points in sparse/*.h. Callers (the entry points)
// have already checked shapes, dtypes and devices, so these only compute.
#pragma once
#include "sparse/bcast.h"
#include "sparse/gat_fused.h"
#include "sparse/gather_mm.h"
#include "sparse/sddmm.h"
#include "sparse/segment.h"
#include "sparse/spmm.h"

namespace nodeweave::sparse::cpu {

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
void gat_aggregate_forward(const CompressedView& in_rows, const ArrayView& el, const ArrayView& er,
                           const ArrayView& feat, double slope, const GatDropout& dropout,
                           ArrayView out, ArrayView stats);
void gat_aggregate_backward(const CompressedView& in_rows, const CompressedView& out_rows,
                            const ArrayView& el, const ArrayView& er, const ArrayView& feat,
                            const ArrayView& out, const ArrayView& stats, const ArrayView& grad_out,
                            double slope, const GatDropout& dropout, ArrayView grad_el,
                            ArrayView grad_er, ArrayView grad_feat);

}  // namespace nodeweave::sparse::cpu
