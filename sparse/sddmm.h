// Generalized sampled dense-dense matrix multiplication (gSDDMM): for every edge e = (u -> v),
//   out[e] = op(lhs[target_lhs(e)], rhs[target_rhs(e)])
// where each operand is indexed by the edge's source (U), the edge id (E) or its destination (V).
// Dot reduces the last feature dimension. Output rows are in edge-id order.
#pragma once
#include "sparse/bcast.h"
#include "sparse/types.h"

namespace nodeweave::sparse {

struct SddmmArgs {
  CooView edges;
  BinaryOp op = BinaryOp::Dot;
  ArrayView lhs;  // absent for CopyRhs
  ArrayView rhs;  // absent for CopyLhs
  Target lhs_target = Target::U;
  Target rhs_target = Target::V;
  ArrayView out;  // (num_edges, *out_feat), preallocated
};

void sddmm(const SddmmArgs& args);

}  // namespace nodeweave::sparse
