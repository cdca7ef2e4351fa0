// nodeweave._C.dlpack_kernels: the sparse kernels run directly on another framework's tensors
// (PyTorch), received as DLPack capsules and viewed in place, never copied. The caller allocates
// every output with its own allocator and passes it in, so this module neither owns nor frees
// tensor memory, and it never links against the producer's library: one binary serves every
// PyTorch version. The gradient rules live with the caller (nodeweave/backend/torch_autograd.py).
//
// Capsules are *borrowed*: they are read but not renamed, so each keeps owning its tensor and the
// producer's deleter runs when Python drops the capsule. The Python caller holds the source
// tensors for the duration of the call. The GIL is released while a kernel runs. On CUDA the work
// is queued on the stream the caller passes (its framework's current stream; 0 = legacy default).
#include <cstdint>
#include <vector>

#include "backend/graph_views.h"
#include "core_framework/runtime/dlpack.h"
#include "core_framework/runtime/stream.h"
#include "graph/relation_graph.h"
#include "graph_op_names.h"
#include "py_convert.h"
#include "sparse/edge_softmax.h"
#include "sparse/gather_mm.h"
#include "sparse/sddmm.h"
#include "sparse/segment.h"
#include "sparse/spmm.h"

namespace nodeweave::py {
namespace {

using graph::RelationGraph;
using GraphPtr = std::shared_ptr<RelationGraph>;

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";

// The view of capsule `obj` (None: an absent operand, data == nullptr). `writable` rejects a
// capsule its producer flagged read-only (DLPack 1.x), since the kernel writes outputs in place.
ArrayView borrow(pyb::handle obj, const char* what, bool writable = false) {
  if (obj.is_none()) return ArrayView{};
  PyObject* o = obj.ptr();
  if (PyCapsule_IsValid(o, kLegacyName)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(o, kLegacyName));
    return borrow_dltensor(m->dl_tensor, what);
  }
  if (PyCapsule_IsValid(o, kVersionedName)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(o, kVersionedName));
    NW_CHECK(m->version.major <= kDLPackMajor, ValueError, what, ": the producer exported DLPack ",
             m->version.major, ".", m->version.minor, ", nodeweave understands ", kDLPackMajor,
             ".x");
    NW_CHECK(!writable || !(m->flags & DLPACK_FLAG_BITMASK_READ_ONLY), ValueError, what,
             " is read-only, but the kernel writes its result into it");
    return borrow_dltensor(m->dl_tensor, what);
  }
  if (PyCapsule_CheckExact(o)) {
    throw ValueError(str_cat(what, ": the DLPack capsule was already consumed (name '",
                             PyCapsule_GetName(o) ? PyCapsule_GetName(o) : "", "')"));
  }
  throw TypeError(
      str_cat(what, " must be a DLPack capsule (e.g. torch.utils.dlpack.to_dlpack(t)) or None, "
                    "got ",
              type_name(obj)));
}

ArrayView borrow_out(pyb::handle obj, const char* what) { return borrow(obj, what, true); }

const RelationGraph& graph_arg(const GraphPtr& g) {
  NW_CHECK(g != nullptr, TypeError, "graph must be a RelationGraph, got None");
  return *g;
}

// Runs `fn` without the GIL, on `stream` when it is a CUDA stream handle (0: legacy default).
template <typename F>
void run(uintptr_t stream, F&& fn) {
  pyb::gil_scoped_release nogil;
  CudaStreamScope scope(reinterpret_cast<void*>(stream));
  fn();
}

}  // namespace

void bind_dlpack_kernels(pyb::module_& parent) {
  pyb::module_ m = parent.def_submodule(
      "dlpack_kernels",
      "Sparse kernels on DLPack capsules with caller-allocated outputs (the PyTorch backend).");

  m.def(
      "view_address",
      [](pyb::handle capsule) {
        return reinterpret_cast<uintptr_t>(borrow(capsule, "capsule").data);
      },
      pyb::arg("capsule"),
      "Address of the first element of the view a kernel would read (zero-copy check).");

  m.def(
      "spmm",
      [](const GraphPtr& g, const std::string& op, const std::string& reduce, pyb::handle lhs,
         pyb::handle rhs, pyb::handle out, pyb::handle arg_lhs, pyb::handle arg_rhs,
         uintptr_t stream) {
        sparse::SpmmArgs a;
        a.in_edges = backend::in_view(graph_arg(g));
        a.op = parse_op(op);
        a.reduce = parse_reduce(reduce);
        a.lhs = borrow(lhs, "lhs");
        a.rhs = borrow(rhs, "rhs");
        a.out = borrow_out(out, "out");
        a.arg_lhs = borrow_out(arg_lhs, "arg_lhs");
        a.arg_rhs = borrow_out(arg_rhs, "arg_rhs");
        run(stream, [&] { sparse::spmm(a); });
      },
      pyb::arg("graph"), pyb::arg("op"), pyb::arg("reduce"), pyb::arg("lhs"), pyb::arg("rhs"),
      pyb::arg("out"), pyb::arg("arg_lhs"), pyb::arg("arg_rhs"), pyb::arg("stream") = 0);

  m.def(
      "sddmm",
      [](const GraphPtr& g, const std::string& op, pyb::handle lhs, pyb::handle rhs,
         const std::string& lhs_target, const std::string& rhs_target, pyb::handle out,
         uintptr_t stream) {
        sparse::SddmmArgs a;
        a.edges = backend::coo_view(graph_arg(g));
        a.op = parse_op(op);
        a.lhs = borrow(lhs, "lhs");
        a.rhs = borrow(rhs, "rhs");
        a.lhs_target = parse_target(lhs_target, "lhs_target");
        a.rhs_target = parse_target(rhs_target, "rhs_target");
        a.out = borrow_out(out, "out");
        run(stream, [&] { sparse::sddmm(a); });
      },
      pyb::arg("graph"), pyb::arg("op"), pyb::arg("lhs"), pyb::arg("rhs"),
      pyb::arg("lhs_target"), pyb::arg("rhs_target"), pyb::arg("out"), pyb::arg("stream") = 0);

  // norm_by_dst: softmax over each destination's in-edges (else each source's out-edges).
  m.def(
      "edge_softmax_forward",
      [](const GraphPtr& g, bool norm_by_dst, pyb::handle score, pyb::handle out,
         uintptr_t stream) {
        const RelationGraph& rg = graph_arg(g);
        sparse::CompressedView rows = norm_by_dst ? backend::in_view(rg) : backend::out_view(rg);
        ArrayView s = borrow(score, "score"), o = borrow_out(out, "out");
        run(stream, [&] { sparse::edge_softmax_forward(rows, s, o); });
      },
      pyb::arg("graph"), pyb::arg("norm_by_dst"), pyb::arg("score"), pyb::arg("out"),
      pyb::arg("stream") = 0);
  m.def(
      "edge_softmax_backward",
      [](const GraphPtr& g, bool norm_by_dst, pyb::handle out, pyb::handle grad_out,
         pyb::handle grad_score, uintptr_t stream) {
        const RelationGraph& rg = graph_arg(g);
        sparse::CompressedView rows = norm_by_dst ? backend::in_view(rg) : backend::out_view(rg);
        ArrayView o = borrow(out, "out"), go = borrow(grad_out, "grad_out");
        ArrayView gs = borrow_out(grad_score, "grad_score");
        run(stream, [&] { sparse::edge_softmax_backward(rows, o, go, gs); });
      },
      pyb::arg("graph"), pyb::arg("norm_by_dst"), pyb::arg("out"), pyb::arg("grad_out"),
      pyb::arg("grad_score"), pyb::arg("stream") = 0);

  m.def(
      "segment_reduce",
      [](const std::string& reduce, pyb::handle x, pyb::handle offsets, pyb::handle out,
         pyb::handle arg, uintptr_t stream) {
        const sparse::ReduceOp r = parse_reduce(reduce);
        ArrayView xv = borrow(x, "value"), ov = borrow(offsets, "offsets");
        ArrayView outv = borrow_out(out, "out"), av = borrow_out(arg, "arg");
        run(stream, [&] { sparse::segment_reduce(r, xv, ov, outv, av); });
      },
      pyb::arg("reduce"), pyb::arg("value"), pyb::arg("offsets"), pyb::arg("out"),
      pyb::arg("arg"), pyb::arg("stream") = 0);
  m.def(
      "segment_softmax_forward",
      [](pyb::handle x, pyb::handle offsets, pyb::handle out, uintptr_t stream) {
        ArrayView xv = borrow(x, "value"), ov = borrow(offsets, "offsets");
        ArrayView outv = borrow_out(out, "out");
        run(stream, [&] { sparse::segment_softmax_forward(xv, ov, outv); });
      },
      pyb::arg("value"), pyb::arg("offsets"), pyb::arg("out"), pyb::arg("stream") = 0);
  m.def(
      "segment_softmax_backward",
      [](pyb::handle out, pyb::handle grad_out, pyb::handle offsets, pyb::handle grad_x,
         uintptr_t stream) {
        ArrayView o = borrow(out, "out"), go = borrow(grad_out, "grad_out");
        ArrayView ov = borrow(offsets, "offsets"), gx = borrow_out(grad_x, "grad_x");
        run(stream, [&] { sparse::segment_softmax_backward(o, go, ov, gx); });
      },
      pyb::arg("out"), pyb::arg("grad_out"), pyb::arg("offsets"), pyb::arg("grad_x"),
      pyb::arg("stream") = 0);

  m.def(
      "gather_mm",
      [](pyb::handle a, pyb::handle b, pyb::handle idx_a, pyb::handle idx_b, pyb::handle out,
         uintptr_t stream) {
        ArrayView av = borrow(a, "a"), bv = borrow(b, "b");
        ArrayView ia = borrow(idx_a, "idx_a"), ib = borrow(idx_b, "idx_b");
        ArrayView o = borrow_out(out, "out");
        run(stream, [&] { sparse::gather_mm(av, bv, ia, ib, o); });
      },
      pyb::arg("a"), pyb::arg("b"), pyb::arg("idx_a"), pyb::arg("idx_b"), pyb::arg("out"),
      pyb::arg("stream") = 0);
  // grad_b must arrive zero-filled: the kernel accumulates into it.
  m.def(
      "gather_mm_grad_b",
      [](pyb::handle a, pyb::handle grad_out, pyb::handle idx_a, pyb::handle idx_b,
         pyb::handle grad_b, uintptr_t stream) {
        ArrayView av = borrow(a, "a"), go = borrow(grad_out, "grad_out");
        ArrayView ia = borrow(idx_a, "idx_a"), ib = borrow(idx_b, "idx_b");
        ArrayView gb = borrow_out(grad_b, "grad_b");
        run(stream, [&] { sparse::gather_mm_grad_b(av, go, ia, ib, gb); });
      },
      pyb::arg("a"), pyb::arg("grad_out"), pyb::arg("idx_a"), pyb::arg("idx_b"),
      pyb::arg("grad_b"), pyb::arg("stream") = 0);

  // seglen stays on the host for every device (the kernels read it there).
  m.def(
      "segment_mm",
      [](pyb::handle a, pyb::handle b, const std::vector<int64_t>& seglen,
                    pyb::handle out, uintptr_t stream) {
        ArrayView av = borrow(a, "a"), bv = borrow(b, "b"), o = borrow_out(out, "out");
        ArrayView sv = host_int64_view(seglen);
        run(stream, [&] { sparse::segment_mm(av, bv, sv, o); });
      },
      pyb::arg("a"), pyb::arg("b"), pyb::arg("seglen"), pyb::arg("out"), pyb::arg("stream") = 0);
  m.def(
      "segment_mm_grad_b",
      [](pyb::handle a, pyb::handle grad_out, const std::vector<int64_t>& seglen,
                    pyb::handle grad_b, uintptr_t stream) {
        ArrayView av = borrow(a, "a"), go = borrow(grad_out, "grad_out");
        ArrayView gb = borrow_out(grad_b, "grad_b");
        ArrayView sv = host_int64_view(seglen);
        run(stream, [&] { sparse::segment_mm_grad_b(av, go, sv, gb); });
      },
      pyb::arg("a"), pyb::arg("grad_out"), pyb::arg("seglen"), pyb::arg("grad_b"),
      pyb::arg("stream") = 0);
}

}  // namespace nodeweave::py
