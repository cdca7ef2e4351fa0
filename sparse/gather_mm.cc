// gather_mm / segment_mm entry points: validate matrix shapes, index arrays and segment lengths,
// then run the CPU or CUDA kernel.
#include "sparse/gather_mm.h"

#include "core_framework/runtime/error.h"
#include "sparse/checks.h"
#include "sparse/cpu/cpu_kernels.h"
#include "sparse/cuda/cuda_kernels.h"

namespace nodeweave::sparse {

using detail::present;

namespace {

// float16/bfloat16 are taken on the CPU (computed in float32, as DGL's typed layers allow them).
void check_matrix(const char* fn, const char* name, const ArrayView& v, size_t ndim) {
  const bool half = is_half(v.dtype);
  NW_CHECK(!half || v.device.is_cpu(), NotImplementedError, fn, ": ", name, " is ",
           dtype_name(v.dtype), " on ", v.device.str(),
           "; half-precision typed matmuls run on the CPU only so far (CUDA: float32/float64)");
  detail::check_features(fn, name, v, /*allow_half=*/true);
  NW_CHECK(v.shape.size() == ndim, ValueError, fn, ": ", name, " must be ", ndim, "-D, got shape ",
           shape_str(v.shape));
}

// Index values are read only on the CPU; GPU kernels trust them (a check would cost a device sync).
void check_index_range(const char* fn, const char* name, const ArrayView& idx, int64_t bound) {
  if (!idx.device.is_cpu()) return;
  for (int64_t i = 0; i < idx.shape[0]; ++i) {
    const int64_t v = detail::index_at(idx, i);
    NW_CHECK(v >= 0 && v < bound, IndexError, fn, ": ", name, "[", i, "] = ", v,
             " is out of range [0, ", bound, ")");
  }
}

// Shared checks of gather_mm and its b-gradient. Returns N, the number of gathered rows.
int64_t check_gather(const char* fn, const ArrayView& a, const ArrayView& idx_a,
                     const ArrayView& idx_b, int64_t num_b) {
  NW_CHECK(present(idx_b), ValueError, fn, ": idx_b is required");
  detail::check_index(fn, "idx_b", idx_b, -1);
  const int64_t n = idx_b.shape[0];
  if (present(idx_a)) {
    detail::check_index(fn, "idx_a", idx_a, n);
    NW_CHECK(idx_a.dtype == idx_b.dtype, TypeError, fn,
             ": idx_a and idx_b must share one dtype, got ", dtype_name(idx_a.dtype), " and ",
             dtype_name(idx_b.dtype));
    check_index_range(fn, "idx_a", idx_a, a.shape[0]);
  } else {
    detail::check_rows(fn, "a", a, n, "the length of idx_b (idx_a absent)");
  }
  check_index_range(fn, "idx_b", idx_b, num_b);
  return n;
}

// seglen: int64 on the CPU, non-negative, summing to `rows`.
void check_seglen(const char* fn, const ArrayView& seglen, int64_t num_b, int64_t rows) {
  NW_CHECK(seglen.dtype == DType::Int64, TypeError, fn, ": seglen must be int64, got ",
           dtype_name(seglen.dtype));
  detail::check_index(fn, "seglen", seglen, num_b);
  NW_CHECK(seglen.device.is_cpu(), ValueError, fn, ": seglen must be on cpu, got ",
           seglen.device.str());
  int64_t total = 0;
  for (int64_t r = 0; r < num_b; ++r) {
    const int64_t len = seglen.ptr<int64_t>()[r];
    NW_CHECK(len >= 0, ValueError, fn, ": seglen[", r, "] = ", len, " is negative");
    total += len;
  }
  NW_CHECK(total == rows, ValueError, fn, ": seglen sums to ", total, " but a has ", rows, " rows");
}

}  // namespace

void gather_mm(const ArrayView& a, const ArrayView& b, const ArrayView& idx_a,
               const ArrayView& idx_b, ArrayView out) {
  const char* fn = "gather_mm";
  check_matrix(fn, "a", a, 2);
  check_matrix(fn, "b", b, 3);
  check_matrix(fn, "out", out, 2);
  detail::check_same_dtype(fn, "a", a, "b", b);
  detail::check_same_dtype(fn, "a", a, "out", out);
  NW_CHECK(a.shape[1] == b.shape[1], ValueError, fn, ": a has ", a.shape[1],
           " columns but b has k = ", b.shape[1], " (b must be (R, k, n))");
  const int64_t n = check_gather(fn, a, idx_a, idx_b, b.shape[0]);
  NW_CHECK(out.shape == (std::vector<int64_t>{n, b.shape[2]}), ValueError, fn,
           ": out must have shape [", n, ", ", b.shape[2], "], got ", shape_str(out.shape));
  detail::check_same_device(
      fn, {{"a", &a}, {"b", &b}, {"idx_a", &idx_a}, {"idx_b", &idx_b}, {"out", &out}});
  if (out.device.is_cuda())
    cuda::gather_mm(a, b, idx_a, idx_b, out);
  else
    cpu::gather_mm(a, b, idx_a, idx_b, out);
}

void gather_mm_grad_b(const ArrayView& a, const ArrayView& grad_out, const ArrayView& idx_a,
                      const ArrayView& idx_b, ArrayView grad_b) {
  const char* fn = "gather_mm_grad_b";
  check_matrix(fn, "a", a, 2);
  check_matrix(fn, "grad_out", grad_out, 2);
  check_matrix(fn, "grad_b", grad_b, 3);
  detail::check_same_dtype(fn, "a", a, "grad_out", grad_out);
  detail::check_same_dtype(fn, "a", a, "grad_b", grad_b);
  const int64_t n = check_gather(fn, a, idx_a, idx_b, grad_b.shape[0]);
  detail::check_rows(fn, "grad_out", grad_out, n, "the length of idx_b");
  NW_CHECK(grad_b.shape[1] == a.shape[1] && grad_b.shape[2] == grad_out.shape[1], ValueError, fn,
           ": grad_b must have shape [R, ", a.shape[1], ", ", grad_out.shape[1], "], got ",
           shape_str(grad_b.shape));
  detail::check_same_device(fn, {{"a", &a},
                                 {"grad_out", &grad_out},
                                 {"idx_a", &idx_a},
                                 {"idx_b", &idx_b},
                                 {"grad_b", &grad_b}});
  if (grad_b.device.is_cuda())
    cuda::gather_mm_grad_b(a, grad_out, idx_a, idx_b, grad_b);
  else
    cpu::gather_mm_grad_b(a, grad_out, idx_a, idx_b, grad_b);
}

void segment_mm(const ArrayView& a, const ArrayView& b, const ArrayView& seglen, ArrayView out) {
  const char* fn = "segment_mm";
  check_matrix(fn, "a", a, 2);
  check_matrix(fn, "b", b, 3);
  check_matrix(fn, "out", out, 2);
  detail::check_same_dtype(fn, "a", a, "b", b);
  detail::check_same_dtype(fn, "a", a, "out", out);
  NW_CHECK(a.shape[1] == b.shape[1], ValueError, fn, ": a has ", a.shape[1],
           " columns but b has k = ", b.shape[1], " (b must be (R, k, n))");
  check_seglen(fn, seglen, b.shape[0], a.shape[0]);
  NW_CHECK(out.shape == (std::vector<int64_t>{a.shape[0], b.shape[2]}), ValueError, fn,
           ": out must have shape [", a.shape[0], ", ", b.shape[2], "], got ",
           shape_str(out.shape));
  detail::check_same_device(fn, {{"a", &a}, {"b", &b}, {"out", &out}});
  if (out.device.is_cuda())
    cuda::segment_mm(a, b, seglen, out);
  else
    cpu::segment_mm(a, b, seglen, out);
}

void segment_mm_grad_b(const ArrayView& a, const ArrayView& grad_out, const ArrayView& seglen,
                       ArrayView grad_b) {
  const char* fn = "segment_mm_grad_b";
  check_matrix(fn, "a", a, 2);
  check_matrix(fn, "grad_out", grad_out, 2);
  check_matrix(fn, "grad_b", grad_b, 3);
  detail::check_same_dtype(fn, "a", a, "grad_out", grad_out);
  detail::check_same_dtype(fn, "a", a, "grad_b", grad_b);
  detail::check_rows(fn, "grad_out", grad_out, a.shape[0], "the number of rows of a");
  check_seglen(fn, seglen, grad_b.shape[0], a.shape[0]);
  NW_CHECK(grad_b.shape[1] == a.shape[1] && grad_b.shape[2] == grad_out.shape[1], ValueError, fn,
           ": grad_b must have shape [R, ", a.shape[1], ", ", grad_out.shape[1], "], got ",
           shape_str(grad_b.shape));
  detail::check_same_device(fn, {{"a", &a}, {"grad_out", &grad_out}, {"grad_b", &grad_b}});
  if (grad_b.device.is_cuda())
    cuda::segment_mm_grad_b(a, grad_out, seglen, grad_b);
  else
    cpu::segment_mm_grad_b(a, grad_out, seglen, grad_b);
}

}  // namespace nodeweave::sparse
