// Argument checks shared by the sparse entry points.
#include "sparse/checks.h"

#include "core_framework/runtime/error.h"

namespace nodeweave::sparse::detail {

std::vector<int64_t> feat_shape(const ArrayView& v) {
  if (v.shape.empty()) return {};
  return std::vector<int64_t>(v.shape.begin() + 1, v.shape.end());
}

void check_features(const char* fn, const char* name, const ArrayView& v, bool allow_half) {
  NW_CHECK(!v.shape.empty(), ValueError, fn, ": ", name,
           " must have at least one (row) dimension, got a 0-d array");
  const bool half = is_half(v.dtype);
  NW_CHECK(!half || allow_half, TypeError, fn, ": ", name, " has dtype ", dtype_name(v.dtype),
           "; float16 and bfloat16 are not supported here (expected float32 or float64)");
  NW_CHECK(half || v.dtype == DType::Float32 || v.dtype == DType::Float64, TypeError, fn, ": ",
           name, " must be float32 or float64", allow_half ? " (or float16, bfloat16)" : "",
           ", got ", dtype_name(v.dtype));
  NW_CHECK(v.strides.size() == v.shape.size(), ValueError, fn, ": ", name, " has ", v.shape.size(),
           " dims but ", v.strides.size(), " strides");
  NW_CHECK(v.is_contiguous(), ValueError, fn, ": ", name, " must be contiguous (shape ",
           shape_str(v.shape), ", strides ", shape_str(v.strides), ")");
  NW_CHECK(v.data != nullptr || v.numel() == 0, ValueError, fn, ": ", name, " has shape ",
           shape_str(v.shape), " but no data");
}

void check_same_dtype(const char* fn, const char* name_a, const ArrayView& a, const char* name_b,
                      const ArrayView& b) {
  NW_CHECK(a.dtype == b.dtype, TypeError, fn, ": ", name_a, " and ", name_b,
           " must have the same dtype, got ", dtype_name(a.dtype), " and ", dtype_name(b.dtype));
}

void check_rows(const char* fn, const char* name, const ArrayView& v, int64_t expected,
                const char* what) {
  NW_CHECK(v.shape[0] == expected, ValueError, fn, ": ", name, " has ", v.shape[0], " rows but ",
           what, " is ", expected);
}

void check_index(const char* fn, const char* name, const ArrayView& v, int64_t len) {
  NW_CHECK(v.dtype == DType::Int32 || v.dtype == DType::Int64, TypeError, fn, ": ", name,
           " must be int32 or int64, got ", dtype_name(v.dtype));
  NW_CHECK(v.shape.size() == 1, ValueError, fn, ": ", name, " must be 1-D, got shape ",
           shape_str(v.shape));
  NW_CHECK(len < 0 || v.shape[0] == len, ValueError, fn, ": ", name, " must have length ", len,
           ", got ", v.shape[0]);
  NW_CHECK(v.strides.size() == 1 && (v.shape[0] <= 1 || v.strides[0] == 1), ValueError, fn, ": ",
           name, " must be contiguous (stride ", v.strides.empty() ? 0 : v.strides[0], ")");
  NW_CHECK(v.data != nullptr || v.shape[0] == 0, ValueError, fn, ": ", name, " has length ",
           v.shape[0], " but no data");
}

void check_arg(const char* fn, const char* name, const ArrayView& v, int64_t rows, int64_t feat_len,
               const ArrayView& like) {
  NW_CHECK(present(v), ValueError, fn, ": ", name, " is required for max/min");
  NW_CHECK(v.dtype == DType::Int64, TypeError, fn, ": ", name, " must be int64, got ",
           dtype_name(v.dtype));
  // Bindings may allocate arg shaped like the output or flattened to (rows, feat_len).
  const bool flat = v.shape == std::vector<int64_t>{rows, feat_len};
  NW_CHECK(flat || v.shape == like.shape, ValueError, fn, ": ", name, " must have shape [", rows,
           ", ", feat_len, "] or ", shape_str(like.shape), ", got ", shape_str(v.shape));
  NW_CHECK(v.strides.size() == v.shape.size() && v.is_contiguous(), ValueError, fn, ": ", name,
           " must be contiguous");
  NW_CHECK(v.data != nullptr || v.numel() == 0, ValueError, fn, ": ", name, " has no data");
}

void check_same_device(const char* fn,
                       std::initializer_list<std::pair<const char*, const ArrayView*>> arrays) {
  const std::pair<const char*, const ArrayView*>* first = nullptr;
  for (const auto& a : arrays) {
    if (!present(*a.second)) continue;
    if (!first) {
      first = &a;
      continue;
    }
    NW_CHECK(a.second->device == first->second->device, ValueError, fn, ": ", first->first,
             " is on ", first->second->device.str(), " but ", a.first, " is on ",
             a.second->device.str());
  }
}

void check_compressed(const char* fn, const CompressedView& g) {
  NW_CHECK(g.num_rows >= 0 && g.num_cols >= 0, ValueError, fn,
           ": graph has a negative size: ", g.num_rows, " rows, ", g.num_cols, " columns");
  check_index(fn, "indptr", g.indptr, g.num_rows + 1);
  check_index(fn, "indices", g.indices, -1);
  check_index(fn, "eids", g.eids, g.indices.shape[0]);
  NW_CHECK(g.indices.dtype == g.indptr.dtype && g.eids.dtype == g.indptr.dtype, TypeError, fn,
           ": indptr, indices and eids must share one dtype, got ", dtype_name(g.indptr.dtype),
           ", ", dtype_name(g.indices.dtype), " and ", dtype_name(g.eids.dtype));
  check_same_device(fn, {{"indptr", &g.indptr}, {"indices", &g.indices}, {"eids", &g.eids}});
}

void check_coo(const char* fn, const CooView& g) {
  NW_CHECK(g.num_src >= 0 && g.num_dst >= 0, ValueError, fn,
           ": graph has a negative size: ", g.num_src, " source nodes, ", g.num_dst,
           " destination nodes");
  check_index(fn, "src", g.src, -1);
  check_index(fn, "dst", g.dst, g.src.shape[0]);
  NW_CHECK(g.src.dtype == g.dst.dtype, TypeError, fn, ": src and dst must share one dtype, got ",
           dtype_name(g.src.dtype), " and ", dtype_name(g.dst.dtype));
  check_same_device(fn, {{"src", &g.src}, {"dst", &g.dst}});
}

int64_t index_at(const ArrayView& v, int64_t i) {
  return v.dtype == DType::Int32 ? static_cast<int64_t>(v.ptr<int32_t>()[i]) : v.ptr<int64_t>()[i];
}

int64_t check_offsets_values(const char* fn, const ArrayView& offsets) {
  const int64_t n = offsets.shape[0];
  NW_CHECK(n >= 1, ValueError, fn, ": offsets must have at least one element (num_segments + 1)");
  NW_CHECK(index_at(offsets, 0) == 0, ValueError, fn, ": offsets must start at 0, got ",
           index_at(offsets, 0));
  for (int64_t i = 1; i < n; ++i) {
    const int64_t a = index_at(offsets, i - 1), b = index_at(offsets, i);
    NW_CHECK(b >= a, ValueError, fn, ": offsets must be non-decreasing, got offsets[", i - 1,
             "] = ", a, " > offsets[", i, "] = ", b);
  }
  return index_at(offsets, n - 1);
}

void check_operand(const char* fn, const char* name, BinaryOp op, const ArrayView& v,
                   const ArrayView& out, int64_t rows, const char* rows_what) {
  NW_CHECK(present(v), ValueError, fn, ": ", name, " is required for op ", binary_op_name(op));
  check_features(fn, name, v);
  check_same_dtype(fn, name, v, "out", out);
  check_rows(fn, name, v, rows, rows_what);
}

BcastInfo check_out_bcast(const char* fn, BinaryOp op, const ArrayView& lhs, const ArrayView& rhs,
                          const ArrayView& out) {
  BcastInfo bcast = BcastInfo::compute(op, feat_shape(lhs), feat_shape(rhs), fn);
  NW_CHECK(feat_shape(out) == bcast.out_shape, ValueError, fn, ": out feature shape must be ",
           shape_str(bcast.out_shape), " for op ", binary_op_name(op), ", got ",
           shape_str(feat_shape(out)));
  return bcast;
}

}  // namespace nodeweave::sparse::detail
