// Internals shared by the native graph ops: the registered op kinds, graph views for the kernels,
// and argument checks that name what the Python user passed.
#pragma once
#include "backend/graph_views.h"
#include "backend/native/graph_ops.h"
#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"
#include "core_framework/jit/program.h"
#include "sparse/types.h"

namespace nodeweave::backend {

struct GraphOpKinds {
  OpKind gspmm, gsddmm, edge_softmax, edge_softmax_backward, segment_reduce, segment_softmax,
      segment_softmax_backward, gather_mm, gather_mm_grad_b, segment_mm, segment_mm_grad_b,
      gat_aggregate, gat_aggregate_backward, segment_offsets, segment_ids, split_rows;
};
// Registers the ops on first use (extension ops of the engine's table).
const GraphOpKinds& kinds();

// Each op family file provides its definitions; kinds() registers them in this order.
OpDef gspmm_def();
OpDef gsddmm_def();
OpDef edge_softmax_def();
OpDef edge_softmax_backward_def();
OpDef segment_reduce_def();
OpDef segment_softmax_def();
OpDef segment_softmax_backward_def();
OpDef gather_mm_def();
OpDef gather_mm_grad_b_def();
OpDef segment_mm_def();
OpDef segment_mm_grad_b_def();
OpDef gat_aggregate_def();
OpDef gat_aggregate_backward_def();
OpDef segment_offsets_def();
OpDef segment_ids_def();
OpDef split_rows_def();
// The jit pass that replaces GAT's edge pipeline by gat_aggregate (gat_fusion_pass.cc).
void fuse_gat_edge_pipeline(jit::Program& p);

// The graph of a call, or of a program node (through an object input's traced graph).
inline const graph::RelationGraphPtr& graph_of(const Attrs& a, size_t k = 0) {
  if (const jit::ObjectInputAttr* in = jit::object_input_at(a, k)) {
    const auto* g = dynamic_cast<const GraphAttr*>(in->traced.get());
    NW_CHECK(g, std::logic_error, "op attribute ", k, " is a parsed graph input");
    return g->graph;
  }
  return a.opaque<GraphAttr>(k).graph;
}
inline Attrs graph_attrs(const graph::RelationGraphPtr& g) {
  Attrs a;
  a.push_back(OpaquePtr(std::make_shared<GraphAttr>(g)));
  return a;
}

// An absent operand is a view with data == nullptr.
ArrayView view_or_absent(const Tensor& t);

// Checks that a defined feature is a float tensor with `rows` rows on the graph's device.
void check_feature(const char* fn, const char* what, const Tensor& t, int64_t rows,
                   const char* rows_what, const graph::RelationGraph& g);
// (rows, *feat) -> (rows, 1.., *feat) so both operands have `rank` feature dims: the kernel layer
// broadcasts feature dims right-aligned, and the engine's sum_to then reduces gradients correctly.
Tensor pad_feature_rank(const Tensor& t, size_t rank);
// The last step before a binary graph op dispatches: one dtype for both operands, feature ranks
// padded to match, contiguous memory. Either operand may be undefined.
void align_operands(const char* fn, Tensor& lhs, Tensor& rhs);

}  // namespace nodeweave::backend

namespace nodeweave::backend {
// x: float (N, ...) and offsets: 1-D int32/int64 (S + 1) on x's device.
void check_segments(const char* fn, const Tensor& x, const Tensor& offsets);
// Segment id of every row offsets covers (row j is in segment i when offsets[i] <= j <
// offsets[i+1]), int64 on offsets' device: expands per-segment values back to rows.
// The segment of each of the num_rows rows (segment_index_ops.cc).
Tensor segment_ids(const Tensor& offsets, int64_t num_rows);
}  // namespace nodeweave::backend
