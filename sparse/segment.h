// Reductions over consecutive row segments: out[i] = reduce(x[offsets[i] : offsets[i+1]]).
// Empty segments give 0; Max/Min write the winning row index into arg (-1 for empty segments).
// Also the segment form of softmax and its backward.
#pragma once
#include "sparse/types.h"

namespace nodeweave::sparse {

// x: (offsets[-1], *feat); offsets: int32/int64 (num_segments + 1), non-decreasing from 0;
// out: (num_segments, *feat); arg: int64 (num_segments, feat_len) for Max/Min, else absent.
void segment_reduce(ReduceOp reduce, const ArrayView& x, const ArrayView& offsets, ArrayView out,
                    ArrayView arg);
// Gradient of Sum/Mean: grad_x[j] = grad_out[segment(j)] (/ segment length for Mean).
void segment_reduce_backward(ReduceOp reduce, const ArrayView& grad_out, const ArrayView& offsets,
                             ArrayView grad_x);
void segment_softmax_forward(const ArrayView& x, const ArrayView& offsets, ArrayView out);
void segment_softmax_backward(const ArrayView& out, const ArrayView& grad_out,
                              const ArrayView& offsets, ArrayView grad_x);

}  // namespace nodeweave::sparse
