// Edge softmax entry points: validate the grouping view and the per-edge arrays, then run the CPU
// or CUDA kernel.
#include "sparse/edge_softmax.h"

#include "core_framework/runtime/error.h"
#include "sparse/checks.h"
#include "sparse/cpu/cpu_kernels.h"
#include "sparse/cuda/cuda_kernels.h"

namespace nodeweave::sparse {

namespace {

// Checks one per-edge array against the graph and, when given, against a reference array.
void check_edge_array(const char* fn, const char* name, const ArrayView& v,
                      const CompressedView& rows, const char* ref_name, const ArrayView* ref) {
  detail::check_features(fn, name, v);
  detail::check_rows(fn, name, v, rows.num_edges(), "the number of edges");
  if (!ref) return;
  detail::check_same_dtype(fn, name, v, ref_name, *ref);
  NW_CHECK(v.shape == ref->shape, ValueError, fn, ": ", name, " must have the shape of ", ref_name,
           " ", shape_str(ref->shape), ", got ", shape_str(v.shape));
}

}  // namespace

void edge_softmax_forward(const CompressedView& rows, const ArrayView& score, ArrayView out) {
  const char* fn = "edge_softmax_forward";
  detail::check_compressed(fn, rows);
  check_edge_array(fn, "score", score, rows, nullptr, nullptr);
  check_edge_array(fn, "out", out, rows, "score", &score);
  detail::check_same_device(fn, {{"indptr", &rows.indptr}, {"score", &score}, {"out", &out}});
  if (out.device.is_cuda())
    cuda::edge_softmax_forward(rows, score, out);
  else
    cpu::edge_softmax_forward(rows, score, out);
}

void edge_softmax_backward(const CompressedView& rows, const ArrayView& out,
                           const ArrayView& grad_out, ArrayView grad_score) {
  const char* fn = "edge_softmax_backward";
  detail::check_compressed(fn, rows);
  check_edge_array(fn, "out", out, rows, nullptr, nullptr);
  check_edge_array(fn, "grad_out", grad_out, rows, "out", &out);
  check_edge_array(fn, "grad_score", grad_score, rows, "out", &out);
  detail::check_same_device(fn, {{"indptr", &rows.indptr},
                                 {"out", &out},
                                 {"grad_out", &grad_out},
                                 {"grad_score", &grad_score}});
  if (out.device.is_cuda())
    cuda::edge_softmax_backward(rows, out, grad_out, grad_score);
  else
    cpu::edge_softmax_backward(rows, out, grad_out, grad_score);
}

}  // namespace nodeweave::sparse
