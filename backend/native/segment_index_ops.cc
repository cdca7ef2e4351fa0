// The integer arithmetic of segments as engine ops: segment lengths to offsets (a batch's nodes per
// graph to where each graph's rows start) and offsets to each row's segment id. Done as ops rather
// than on the host, a jit trace sees them, so a program traced on one batch of graphs recomputes
// them for the next (core_framework/jit/dynamic_sizes.h). CPU kernels; device tensors take the
// host path of their callers.
#include "backend/native/op_util.h"

namespace nodeweave::backend {
namespace {

template <typename I>
void offsets_from(const I* len, int64_t n, int64_t* out) {
  out[0] = 0;
  for (int64_t i = 0; i < n; ++i) {
    NW_CHECK(len[i] >= 0, ValueError, "seglen must be non-negative, got ",
             static_cast<int64_t>(len[i]), " at ", i);
    out[i + 1] = out[i] + static_cast<int64_t>(len[i]);
  }
}

std::vector<TensorMeta> offsets_infer(const TensorList& in, const Attrs&) {
  return {TensorMeta{{in[0].numel() + 1}, DType::Int64, in[0].device()}};
}

void offsets_kernel(const TensorList& in, const Attrs&, TensorList& out) {
  const Tensor len = contiguous(in[0]);
  int64_t* o = out[0].data<int64_t>();
  if (len.dtype() == DType::Int32)
    offsets_from(len.data<int32_t>(), len.numel(), o);
  else
    offsets_from(len.data<int64_t>(), len.numel(), o);
}

std::vector<TensorMeta> ids_infer(const TensorList& in, const Attrs& a) {
  return {TensorMeta{{a.i(0)}, DType::Int64, in[0].device()}};
}

void ids_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const Tensor off = contiguous(cast(in[0], DType::Int64));
  const int64_t* o = off.data<int64_t>();
  const int64_t n_seg = off.numel() - 1, rows = a.i(0);
  NW_CHECK(o[0] == 0 && o[n_seg] == rows, ValueError, "segment_ids: offsets must run from 0 to ",
           rows, ", got ", o[0], " to ", o[n_seg]);
  int64_t* ids = out[0].data<int64_t>();
  for (int64_t i = 0; i < n_seg; ++i) {
    NW_CHECK(o[i] <= o[i + 1], ValueError, "segment_ids: offsets must not decrease (", o[i],
             " then ", o[i + 1], " at ", i, ")");
    std::fill(ids + o[i], ids + o[i + 1], i);
  }
}

}  // namespace

OpDef segment_offsets_def() {
  OpDef d;
  d.declaration = "segment_offsets(Tensor lengths) -> Tensor";
  d.infer = offsets_infer;
  d.kernels = {offsets_kernel, nullptr};
  return d;
}

OpDef segment_ids_def() {
  OpDef d;
  d.declaration = "segment_ids(Tensor offsets, int num_rows) -> Tensor";
  d.infer = ids_infer;
  d.kernels = {ids_kernel, nullptr};
  return d;
}

Tensor segment_offsets(const Tensor& lengths) {
  NW_CHECK(lengths.dim() == 1, ValueError, "seglen must be 1-D, got shape ",
           shape_str(lengths.shape()));
  NW_CHECK(lengths.dtype() == DType::Int32 || lengths.dtype() == DType::Int64, TypeError,
           "seglen must hold integers, got dtype ", dtype_name(lengths.dtype()));
  NW_CHECK(lengths.device().is_cpu(), ValueError, "segment_offsets: seglen must be on the CPU");
  return dispatch(kinds().segment_offsets, {lengths}, {})[0];
}

Tensor segment_ids(const Tensor& offsets, int64_t num_rows) {
  Attrs a;
  a.push_back(num_rows);
  if (offsets.device().is_cpu()) return dispatch(kinds().segment_ids, {offsets}, a)[0];
  // Device offsets: counted on the host (a jit trace does not replay this on CUDA yet).
  return to_device(dispatch(kinds().segment_ids, {to_device(offsets, Device{})}, a)[0],
                   offsets.device());
}

}  // namespace nodeweave::backend
