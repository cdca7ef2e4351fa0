// The native binding of the kernel layer: every sparse kernel as an engine op with a gradient
// rule (DESIGN.md, "Layers"). Gradients are written with the same ops — gSpMM on the reversed
// graph for node operands, gSDDMM for edge operands, the arg outputs for max/min — so they are
// differentiable again and create_graph=True gives higher-order gradients.
#pragma once
#include <vector>

#include "core_framework/engine/attrs.h"
#include "core_framework/engine/tensor.h"
#include "core_framework/jit/object_input.h"
#include "graph/relation_graph.h"
#include "sparse/types.h"

namespace nodeweave::backend {

using sparse::BinaryOp;
using sparse::ReduceOp;
using sparse::Target;

// How an op carries its graph through the engine (an opaque attribute).
struct GraphAttr : OpaqueAttr, jit::ObjectAttr {
  // The derivation code (jit::ObjectAttr::lineage) of a reversed graph.
  static constexpr int kReversed = 1;
  explicit GraphAttr(graph::RelationGraphPtr g) : graph(std::move(g)) {}
  const char* kind() const override { return "relation_graph"; }
  // The graph, then the graph it is the reverse() of, the one that is the reverse() of, ... (a
  // reverse of a reverse is the graph itself again: parity decides).
  std::vector<std::pair<const void*, int>> lineage() const override;
  OpaquePtr derived(int derivation) const override;
  std::vector<int64_t> sizes() const override;  // num_src, num_dst, num_edges
  graph::RelationGraphPtr graph;
};

// out[v] = reduce_{e=(u->v)} op(lhs[u], rhs[e]). lhs (num_src, ...), rhs (num_edges, ...); one may
// be undefined for CopyLhs/CopyRhs. Feature dims broadcast NumPy-style.
Tensor gspmm(const graph::RelationGraphPtr& g, BinaryOp op, ReduceOp reduce, const Tensor& lhs,
             const Tensor& rhs);
// out[e] = op(lhs[target_lhs(e)], rhs[target_rhs(e)]).
Tensor gsddmm(const graph::RelationGraphPtr& g, BinaryOp op, const Tensor& lhs, const Tensor& rhs,
              Target lhs_target, Target rhs_target);
// Softmax of edge scores over each destination's in-edges (norm_by_dst) or source's out-edges.
Tensor edge_softmax(const graph::RelationGraphPtr& g, const Tensor& score, bool norm_by_dst = true);
// GAT's attention aggregation in one op: out[v] = sum_{e=(u->v)} a[e] * feat[u] with
// a = dropout(edge_softmax(leaky_relu(el[u] + er[v], negative_slope)), attn_drop);
// el (num_src, H[, 1]), er (num_dst, H[, 1]), feat (num_src, H, D). CPU only (gat_fused_op.cc).
Tensor gat_aggregate(const graph::RelationGraphPtr& g, const Tensor& el, const Tensor& er,
                     const Tensor& feat, double negative_slope, double attn_drop = 0.0);
// Reductions / softmax over consecutive segments: offsets (S + 1) int32/int64 on x's device.
Tensor segment_reduce(ReduceOp reduce, const Tensor& x, const Tensor& offsets);
Tensor segment_softmax(const Tensor& x, const Tensor& offsets);
// Segment lengths (int32/int64, on the CPU) -> int64 offsets (S + 1), as an op a jit trace sees.
Tensor segment_offsets(const Tensor& lengths);
// out[i] = a[idx_a[i]] @ b[idx_b[i]] (idx_a undefined: row i of a).
Tensor gather_mm(const Tensor& a, const Tensor& b, const Tensor& idx_a, const Tensor& idx_b);
// Rows of a in consecutive segments of seglen[r] rows, each times b[r].
Tensor segment_mm(const Tensor& a, const Tensor& b, const std::vector<int64_t>& seglen);
// x cut along dim 0 into views of sizes[k] rows, with one gradient node (a cat) for all of them.
TensorList split_rows(const Tensor& x, const std::vector<int64_t>& sizes);

}  // namespace nodeweave::backend
