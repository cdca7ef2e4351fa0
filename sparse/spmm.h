// Generalized sparse-dense matrix multiplication (gSpMM): for every destination node v,
//   out[v] = reduce_{edges e = (u -> v)} op(lhs[u], rhs[e])
// with lhs on source nodes and rhs on edges. Sum/Mean/Max/Min; nodes without in-edges get 0.
// Max/Min also write, per output element, which source node (arg_lhs) and which edge (arg_rhs)
// won, or -1 when the node has no in-edges; backward routes gradients through them.
#pragma once
#include "sparse/bcast.h"
#include "sparse/types.h"

namespace nodeweave::sparse {

struct SpmmArgs {
  CompressedView in_edges;  // CSC orientation: rows = destination nodes
  BinaryOp op = BinaryOp::CopyLhs;
  ReduceOp reduce = ReduceOp::Sum;
  ArrayView lhs;      // (num_src, *lhs_feat) or absent for CopyRhs
  ArrayView rhs;      // (num_edges, *rhs_feat) or absent for CopyLhs
  ArrayView out;      // (num_dst, *out_feat), preallocated, same float dtype
  ArrayView arg_lhs;  // int64 (num_dst, out_len); required for Max/Min unless op == CopyRhs
  ArrayView arg_rhs;  // int64 (num_dst, out_len); required for Max/Min unless op == CopyLhs
};

// Validates shapes, dtypes and devices (ValueError/TypeError naming the argument), then runs the
// CPU or CUDA kernel. Features must be contiguous; float32 or float64.
void spmm(const SpmmArgs& args);

// Output feature shape for the given operand feature shapes (exposed so bindings can allocate).
std::vector<int64_t> spmm_out_feat(BinaryOp op, const std::vector<int64_t>& lhs_feat,
                                   const std::vector<int64_t>& rhs_feat);

}  // namespace nodeweave::sparse
