// Typed (relational) linear layers. gather_mm multiplies each row by a weight matrix picked per
// row; segment_mm multiplies consecutive row segments by one weight matrix each (rows sorted by
// type), which is one GEMM per segment.
#pragma once
#include "sparse/types.h"

namespace nodeweave::sparse {

// out[i] = a[idx_a[i]] @ b[idx_b[i]];  a: (Na, k), b: (R, k, n), out: (N, n).
// idx_a absent means i; idx_b is required. Index dtype int32/int64, checked in range.
void gather_mm(const ArrayView& a, const ArrayView& b, const ArrayView& idx_a,
               const ArrayView& idx_b, ArrayView out);
// Gradient of gather_mm w.r.t. b: grad_b[idx_b[i]] += a[idx_a[i]]^T grad_out[i] (grad_b zeroed by
// the caller). The lhs gradient is gather_mm of grad_out with b transposed (a binding composite).
void gather_mm_grad_b(const ArrayView& a, const ArrayView& grad_out, const ArrayView& idx_a,
                      const ArrayView& idx_b, ArrayView grad_b);
// a: (N, k), b: (R, k, n), seglen: int64 on CPU (R), sum(seglen) == N; out: (N, n).
// out[s_r : s_r + seglen[r]] = a[s_r : s_r + seglen[r]] @ b[r].
void segment_mm(const ArrayView& a, const ArrayView& b, const ArrayView& seglen, ArrayView out);
// grad_b[r] = a[segment r]^T @ grad_out[segment r]; the lhs gradient is segment_mm with b^T.
void segment_mm_grad_b(const ArrayView& a, const ArrayView& grad_out, const ArrayView& seglen,
                       ArrayView grad_b);

}  // namespace nodeweave::sparse
