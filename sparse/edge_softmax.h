// Softmax of edge scores over the edges that share a destination (or a source: pass the out-edge
// view). Numerically stable (max subtracted per row and feature). Rows without edges produce
// nothing. The backward kernel computes grad_score = out * (grad_out - sum_row(out * grad_out)).
// Segment softmax is the same computation with `eids` = identity over consecutive segments.
#pragma once
#include "sparse/types.h"

namespace nodeweave::sparse {

// score, out: (num_edges, *feat), contiguous, same float dtype, edge-id order.
void edge_softmax_forward(const CompressedView& rows, const ArrayView& score, ArrayView out);
void edge_softmax_backward(const CompressedView& rows, const ArrayView& out,
                           const ArrayView& grad_out, ArrayView grad_score);

}  // namespace nodeweave::sparse
