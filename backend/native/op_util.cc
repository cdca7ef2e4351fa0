// Registration of the native graph ops and helpers shared by their definitions.
#include "backend/native/op_util.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "core_framework/jit/passes/passes.h"
#include "core_framework/jit/program_file.h"

namespace nodeweave::backend {

namespace {

// Saved programs (core_framework/jit/program_file.h) hold a graph op's graph as its node counts
// and its edges in edge-id order, so that edge features still line up after loading.
void register_graph_codec() {
  jit::OpaqueCodec codec;
  codec.encode = [](const OpaqueAttr& a, std::vector<int64_t>& ints, TensorList& parts) {
    const graph::RelationGraph& g = *dynamic_cast<const GraphAttr&>(a).graph;
    const graph::RelationGraphPtr host =
        g.device().is_cpu() ? g.shared_from_this() : g.to(Device{});
    ints = {host->num_src(), host->num_dst(), static_cast<int64_t>(host->id_dtype())};
    for (const graph::IdArray* arr : {&host->coo().src, &host->coo().dst}) {
      Tensor t = empty({arr->length}, arr->dtype);
      if (arr->length > 0)
        std::memcpy(t.data_ptr(), arr->storage->data(),
                    static_cast<size_t>(arr->length) * dtype_size(arr->dtype));
      parts.push_back(t);
    }
  };
  codec.decode = [](const std::vector<int64_t>& ints, const TensorList& parts) -> OpaquePtr {
    NW_CHECK(ints.size() == 3 && parts.size() == 2, ValueError,
             "program file: a relation_graph record needs 3 integers and 2 arrays");
    NW_CHECK(ints[2] == static_cast<int64_t>(DType::Int32) ||
                 ints[2] == static_cast<int64_t>(DType::Int64),
             ValueError, "program file: a relation_graph's id dtype code ", ints[2],
             " is not int32/int64");
    const auto id = static_cast<DType>(ints[2]);
    NW_CHECK(parts[0].dim() == 1 && parts[1].dim() == 1 && parts[0].numel() == parts[1].numel(),
             ValueError, "program file: a relation_graph's src and dst must be 1-D and as long");
    auto ids = [&](const Tensor& t) {
      return graph::IdArray::from_host(t.data_ptr(), t.dtype(), t.numel(), id);
    };
    // from_coo checks every id against the node counts (ValueError on a corrupt file).
    return std::make_shared<GraphAttr>(
        graph::RelationGraph::from_coo(ints[0], ints[1], ids(parts[0]), ids(parts[1])));
  };
  jit::register_opaque_codec("relation_graph", std::move(codec));
}

}  // namespace

const GraphOpKinds& kinds() {
  static GraphOpKinds k = [] {
    GraphOpKinds r;
    r.gspmm = register_extension_op(gspmm_def());
    r.gsddmm = register_extension_op(gsddmm_def());
    r.edge_softmax = register_extension_op(edge_softmax_def());
    r.edge_softmax_backward = register_extension_op(edge_softmax_backward_def());
    r.segment_reduce = register_extension_op(segment_reduce_def());
    r.segment_softmax = register_extension_op(segment_softmax_def());
    r.segment_softmax_backward = register_extension_op(segment_softmax_backward_def());
    r.gather_mm = register_extension_op(gather_mm_def());
    r.gather_mm_grad_b = register_extension_op(gather_mm_grad_b_def());
    r.segment_mm = register_extension_op(segment_mm_def());
    r.segment_mm_grad_b = register_extension_op(segment_mm_grad_b_def());
    r.gat_aggregate = register_extension_op(gat_aggregate_def());
    r.gat_aggregate_backward = register_extension_op(gat_aggregate_backward_def());
    r.segment_offsets = register_extension_op(segment_offsets_def());
    r.segment_ids = register_extension_op(segment_ids_def());
    r.split_rows = register_extension_op(split_rows_def());
    register_graph_codec();
    // Graph-kernel fusion runs first: constant folding and CSE would otherwise merge the
    // backward's small ops with others and hide the pattern.
    jit::register_pass({"fuse_gat_edge_pipeline", fuse_gat_edge_pipeline}, "fold_constants");
    return r;
  }();
  return k;
}

ArrayView view_or_absent(const Tensor& t) {
  if (!t.defined()) return ArrayView{};
  return t.view_of();
}

void check_feature(const char* fn, const char* what, const Tensor& t, int64_t rows,
                   const char* rows_what, const graph::RelationGraph& g) {
  NW_CHECK(t.dim() >= 1, ValueError, fn, ": ", what,
           " must have a first dimension with one row per ", rows_what, ", got a 0-d tensor");
  NW_CHECK(t.size(0) == rows, ValueError, fn, ": ", what, " has ", t.size(0),
           " rows but the graph has ", rows, " ", rows_what);
  NW_CHECK(t.dtype() == DType::Float32 || t.dtype() == DType::Float64, TypeError, fn, ": ", what,
           " must be float32 or float64, got ", dtype_name(t.dtype()));
  NW_CHECK(t.device() == g.device(), ValueError, fn, ": ", what, " is on ", t.device().str(),
           " but the graph is on ", g.device().str(), " (move one with .to())");
}

Tensor pad_feature_rank(const Tensor& t, size_t rank) {
  if (!t.defined() || static_cast<size_t>(t.dim() - 1) >= rank) return t;
  Shape s{t.size(0)};
  for (size_t i = t.dim() - 1; i < rank; ++i) s.push_back(1);
  for (int64_t d = 1; d < t.dim(); ++d) s.push_back(t.size(d));
  return reshape(t, s);
}

void align_operands(const char* fn, Tensor& l, Tensor& r) {
  if (l.defined() && r.defined()) {
    NW_CHECK(l.dtype() == r.dtype(), TypeError, fn, ": lhs and rhs must have the same dtype, got ",
             dtype_name(l.dtype()), " and ", dtype_name(r.dtype()));
    const size_t rank = std::max(l.dim(), r.dim()) - 1;
    l = pad_feature_rank(l, rank);
    r = pad_feature_rank(r, rank);
  }
  if (l.defined()) l = contiguous(l);
  if (r.defined()) r = contiguous(r);
}

}  // namespace nodeweave::backend

namespace nodeweave::backend {

void check_segments(const char* fn, const Tensor& x, const Tensor& offsets) {
  NW_CHECK(x.dim() >= 1, ValueError, fn, ": x must have at least one dimension");
  NW_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Float64, TypeError, fn,
           ": x must be float32 or float64, got ", dtype_name(x.dtype()));
  NW_CHECK(offsets.dim() == 1 && offsets.numel() >= 1, ValueError, fn,
           ": offsets must be 1-D with num_segments + 1 entries, got shape ",
           shape_str(offsets.shape()));
  NW_CHECK(offsets.dtype() == DType::Int32 || offsets.dtype() == DType::Int64, TypeError, fn,
           ": offsets must be int32 or int64, got ", dtype_name(offsets.dtype()));
  NW_CHECK(offsets.device() == x.device(), ValueError, fn, ": offsets is on ",
           offsets.device().str(), " but x is on ", x.device().str());
}

}  // namespace nodeweave::backend
