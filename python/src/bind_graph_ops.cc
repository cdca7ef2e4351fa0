// nodeweave._C graph kernels: gspmm, gsddmm, edge_softmax, segment ops, gather_mm, segment_mm as
// differentiable native ops. Op, reducer and target names are parsed here once, at the boundary.
#include "backend/native/graph_ops.h"
#include "graph_op_names.h"
#include "py_convert.h"

namespace nodeweave::py {
namespace {

using backend::BinaryOp;
using backend::ReduceOp;
using backend::Target;
using graph::RelationGraph;

Tensor optional_tensor(pyb::handle obj, const char* arg) {
  if (obj.is_none()) return Tensor();
  return tensor_arg(obj, arg);
}

graph::RelationGraphPtr graph_arg(const std::shared_ptr<RelationGraph>& g) {
  NW_CHECK(g != nullptr, TypeError, "graph must be a RelationGraph, got None");
  return g;
}

}  // namespace

void bind_graph_ops(pyb::module_& m) {
  m.def(
      "gspmm",
      [](const std::shared_ptr<RelationGraph>& g, const std::string& op, const std::string& reduce,
         pyb::handle lhs, pyb::handle rhs) {
        return backend::gspmm(graph_arg(g), parse_op(op), parse_reduce(reduce),
                              optional_tensor(lhs, "lhs"), optional_tensor(rhs, "rhs"));
      },
      pyb::arg("graph"), pyb::arg("op"), pyb::arg("reduce"), pyb::arg("lhs"), pyb::arg("rhs"));
  m.def(
      "gsddmm",
      [](const std::shared_ptr<RelationGraph>& g, const std::string& op, pyb::handle lhs,
         pyb::handle rhs, const std::string& lt, const std::string& rt) {
        return backend::gsddmm(graph_arg(g), parse_op(op), optional_tensor(lhs, "lhs"),
                               optional_tensor(rhs, "rhs"), parse_target(lt, "lhs_target"),
                               parse_target(rt, "rhs_target"));
      },
      pyb::arg("graph"), pyb::arg("op"), pyb::arg("lhs"), pyb::arg("rhs"),
      pyb::arg("lhs_target") = "u", pyb::arg("rhs_target") = "v");
  m.def(
      "edge_softmax",
      [](const std::shared_ptr<RelationGraph>& g, pyb::handle score, const std::string& norm_by) {
        NW_CHECK(norm_by == "dst" || norm_by == "src", ValueError,
                 "edge_softmax: norm_by must be 'dst' or 'src', got '", norm_by, "'");
        return backend::edge_softmax(graph_arg(g), tensor_arg(score, "logits"), norm_by == "dst");
      },
      pyb::arg("graph"), pyb::arg("logits"), pyb::arg("norm_by") = "dst");
  m.def(
      "segment_reduce",
      [](const std::string& reduce, pyb::handle x, pyb::handle offsets) {
        return backend::segment_reduce(parse_reduce(reduce), tensor_arg(x, "value"),
                                       tensor_arg(offsets, "offsets"));
      },
      pyb::arg("reduce"), pyb::arg("value"), pyb::arg("offsets"));
  m.def(
      "segment_offsets",
      [](pyb::handle lengths) { return backend::segment_offsets(tensor_arg(lengths, "seglen")); },
      pyb::arg("seglen"));
  m.def(
      "split_rows",
      [](pyb::handle x, const std::vector<int64_t>& sizes) {
        return backend::split_rows(tensor_arg(x, "x"), sizes);
      },
      pyb::arg("x"), pyb::arg("sizes"));
  m.def(
      "segment_softmax",
      [](pyb::handle x, pyb::handle offsets) {
        return backend::segment_softmax(tensor_arg(x, "value"), tensor_arg(offsets, "offsets"));
      },
      pyb::arg("value"), pyb::arg("offsets"));
  m.def(
      "gather_mm",
      [](pyb::handle a, pyb::handle b, pyb::handle idx_a, pyb::handle idx_b) {
        return backend::gather_mm(tensor_arg(a, "a"), tensor_arg(b, "b"),
                                  optional_tensor(idx_a, "idx_a"), tensor_arg(idx_b, "idx_b"));
      },
      pyb::arg("a"), pyb::arg("b"), pyb::arg("idx_a"), pyb::arg("idx_b"));
  m.def(
      "segment_mm",
      [](pyb::handle a, pyb::handle b, const std::vector<int64_t>& seglen) {
        return backend::segment_mm(tensor_arg(a, "a"), tensor_arg(b, "b"), seglen);
      },
      pyb::arg("a"), pyb::arg("b"), pyb::arg("seglen"));
}

}  // namespace nodeweave::py
