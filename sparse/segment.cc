// Segment reduction and segment softmax entry points: validate offsets and row counts, then run
// the CPU or CUDA kernel.
#include "sparse/segment.h"

#include "core_framework/runtime/error.h"
#include "sparse/checks.h"
#include "sparse/cpu/cpu_kernels.h"
#include "sparse/cuda/cuda_kernels.h"

namespace nodeweave::sparse {

using detail::present;

namespace {

// Checks offsets and returns the number of rows the segmented array must have: offsets[-1] when
// offsets are on the CPU, or `rows` unchecked on a GPU (reading them would need a device copy;
// the CUDA kernels trust them).
int64_t check_offsets(const char* fn, const ArrayView& offsets, int64_t rows) {
  detail::check_index(fn, "offsets", offsets, -1);
  NW_CHECK(offsets.shape[0] >= 1, ValueError, fn,
           ": offsets must have num_segments + 1 >= 1 elements, got 0");
  if (!offsets.device.is_cpu()) return rows;
  return detail::check_offsets_values(fn, offsets);
}

void check_segmented(const char* fn, const char* name, const ArrayView& v, int64_t total) {
  detail::check_features(fn, name, v);
  detail::check_rows(fn, name, v, total, "offsets[-1]");
}

void check_like(const char* fn, const char* name, const ArrayView& v, const char* ref_name,
                const ArrayView& ref, int64_t rows, const char* what) {
  detail::check_features(fn, name, v);
  detail::check_same_dtype(fn, name, v, ref_name, ref);
  detail::check_rows(fn, name, v, rows, what);
  NW_CHECK(detail::feat_shape(v) == detail::feat_shape(ref), ValueError, fn, ": ", name,
           " feature shape must equal ", ref_name, "'s ", shape_str(detail::feat_shape(ref)),
           ", got ", shape_str(detail::feat_shape(v)));
}

}  // namespace

void segment_reduce(ReduceOp reduce, const ArrayView& x, const ArrayView& offsets, ArrayView out,
                    ArrayView arg) {
  const char* fn = "segment_reduce";
  detail::check_features(fn, "x", x);
  const int64_t total = check_offsets(fn, offsets, x.shape[0]);
  check_segmented(fn, "x", x, total);
  const int64_t segs = offsets.shape[0] - 1;
  check_like(fn, "out", out, "x", x, segs, "the number of segments");
  const bool minmax = reduce == ReduceOp::Max || reduce == ReduceOp::Min;
  ArrayView no_arg;
  if (minmax)
    detail::check_arg(fn, "arg", arg, segs, feat_len(x), out);
  else
    arg = no_arg;
  detail::check_same_device(fn, {{"x", &x}, {"offsets", &offsets}, {"out", &out}, {"arg", &arg}});
  if (out.device.is_cuda())
    cuda::segment_reduce(reduce, x, offsets, out, arg);
  else
    cpu::segment_reduce(reduce, x, offsets, out, arg);
}

void segment_reduce_backward(ReduceOp reduce, const ArrayView& grad_out, const ArrayView& offsets,
                             ArrayView grad_x) {
  const char* fn = "segment_reduce_backward";
  NW_CHECK(reduce == ReduceOp::Sum || reduce == ReduceOp::Mean, ValueError, fn,
           ": only sum and mean have a dense backward, got ", reduce_op_name(reduce),
           " (max/min scatter grad_out through arg)");
  detail::check_features(fn, "grad_x", grad_x);
  const int64_t total = check_offsets(fn, offsets, grad_x.shape[0]);
  check_segmented(fn, "grad_x", grad_x, total);
  check_like(fn, "grad_out", grad_out, "grad_x", grad_x, offsets.shape[0] - 1,
             "the number of segments");
  detail::check_same_device(fn,
                            {{"grad_out", &grad_out}, {"offsets", &offsets}, {"grad_x", &grad_x}});
  if (grad_x.device.is_cuda())
    cuda::segment_reduce_backward(reduce, grad_out, offsets, grad_x);
  else
    cpu::segment_reduce_backward(reduce, grad_out, offsets, grad_x);
}

void segment_softmax_forward(const ArrayView& x, const ArrayView& offsets, ArrayView out) {
  const char* fn = "segment_softmax_forward";
  detail::check_features(fn, "x", x);
  const int64_t total = check_offsets(fn, offsets, x.shape[0]);
  check_segmented(fn, "x", x, total);
  check_like(fn, "out", out, "x", x, total, "offsets[-1]");
  detail::check_same_device(fn, {{"x", &x}, {"offsets", &offsets}, {"out", &out}});
  if (out.device.is_cuda())
    cuda::segment_softmax_forward(x, offsets, out);
  else
    cpu::segment_softmax_forward(x, offsets, out);
}

void segment_softmax_backward(const ArrayView& out, const ArrayView& grad_out,
                              const ArrayView& offsets, ArrayView grad_x) {
  const char* fn = "segment_softmax_backward";
  detail::check_features(fn, "out", out);
  const int64_t total = check_offsets(fn, offsets, out.shape[0]);
  check_segmented(fn, "out", out, total);
  check_like(fn, "grad_out", grad_out, "out", out, total, "offsets[-1]");
  check_like(fn, "grad_x", grad_x, "out", out, total, "offsets[-1]");
  detail::check_same_device(
      fn, {{"out", &out}, {"grad_out", &grad_out}, {"offsets", &offsets}, {"grad_x", &grad_x}});
  if (grad_x.device.is_cuda())
    cuda::segment_softmax_backward(out, grad_out, offsets, grad_x);
  else
    cpu::segment_softmax_backward(out, grad_out, offsets, grad_x);
}

}  // namespace nodeweave::sparse
