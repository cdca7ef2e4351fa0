// BcastInfo::compute: NumPy broadcasting of two feature shapes, plus the per-output-element offset
// tables the kernels read when the shapes differ.
#include "sparse/bcast.h"

#include <algorithm>

#include "core_framework/runtime/error.h"

namespace nodeweave::sparse {

namespace {

int64_t product(const std::vector<int64_t>& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= s[i];
  return n;
}

// Row-major strides of `shape` right-aligned to `rank` dims; broadcast (size-1 or missing) dims get
// stride 0 so that walking the output index space reads the right operand element.
std::vector<int64_t> aligned_strides(const std::vector<int64_t>& shape, size_t rank) {
  std::vector<int64_t> strides(rank, 0);
  int64_t s = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const size_t src = shape.size() - 1 - i;
    const size_t dst = rank - 1 - i;
    strides[dst] = shape[src] == 1 ? 0 : s;
    s *= shape[src];
  }
  return strides;
}

}  // namespace

BcastInfo BcastInfo::compute(BinaryOp op, const std::vector<int64_t>& lhs_feat,
                             const std::vector<int64_t>& rhs_feat, const char* op_name) {
  BcastInfo info;
  for (int64_t d : lhs_feat)
    NW_CHECK(d >= 0, ValueError, op_name, ": lhs feature shape ", shape_str(lhs_feat),
             " has a negative dimension");
  for (int64_t d : rhs_feat)
    NW_CHECK(d >= 0, ValueError, op_name, ": rhs feature shape ", shape_str(rhs_feat),
             " has a negative dimension");

  // Copy ops read one side only; the other may be absent and is never broadcast against.
  if (op == BinaryOp::CopyLhs || op == BinaryOp::CopyRhs) {
    const std::vector<int64_t>& used = op == BinaryOp::CopyLhs ? lhs_feat : rhs_feat;
    info.out_shape = used;
    info.out_len = product(used, 0, used.size());
    info.lhs_len = op == BinaryOp::CopyLhs ? info.out_len : product(lhs_feat, 0, lhs_feat.size());
    info.rhs_len = op == BinaryOp::CopyRhs ? info.out_len : product(rhs_feat, 0, rhs_feat.size());
    return info;
  }

  const bool dot = op == BinaryOp::Dot;
  std::vector<int64_t> lhs = lhs_feat, rhs = rhs_feat;
  if (dot) {
    NW_CHECK(!lhs.empty() && !rhs.empty(), ValueError, op_name,
             ": dot needs at least one feature dimension on both sides, got lhs ",
             shape_str(lhs_feat), " and rhs ", shape_str(rhs_feat));
    NW_CHECK(lhs.back() == rhs.back(), ValueError, op_name,
             ": dot needs equal last feature dimensions, got lhs ", shape_str(lhs_feat),
             " and rhs ", shape_str(rhs_feat));
    info.reduce_size = lhs.back();
    // Broadcast the leading dims only; the reduced dim comes back as a trailing 1.
    lhs.pop_back();
    rhs.pop_back();
  }

  const size_t rank = std::max(lhs.size(), rhs.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    const int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    NW_CHECK(l == r || l == 1 || r == 1, ValueError, op_name, ": feature shapes ",
             shape_str(lhs_feat), " (lhs) and ", shape_str(rhs_feat), " (rhs) do not broadcast (",
             binary_op_name(op), ")");
    out[rank - 1 - i] = l == 1 ? r : l;
  }

  info.lhs_len = product(lhs_feat, 0, lhs_feat.size());
  info.rhs_len = product(rhs_feat, 0, rhs_feat.size());
  info.out_len = product(out, 0, out.size());
  info.out_shape = out;
  if (dot) info.out_shape.push_back(1);

  // Broadcasting only ever expands size-1 dims, so equal element counts mean an identity mapping.
  const int64_t full = info.out_len * info.reduce_size;
  info.use_bcast = !(info.lhs_len == full && info.rhs_len == full);
  if (!info.use_bcast) return info;

  const std::vector<int64_t> ls = aligned_strides(lhs, rank), rs = aligned_strides(rhs, rank);
  info.lhs_offset.resize(info.out_len);
  info.rhs_offset.resize(info.out_len);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t k = 0; k < info.out_len; ++k) {
    int64_t lo = 0, ro = 0;
    for (size_t d = 0; d < rank; ++d) {
      lo += idx[d] * ls[d];
      ro += idx[d] * rs[d];
    }
    // Offsets are in elements of the full (unreduced) operand row.
    info.lhs_offset[k] = lo * info.reduce_size;
    info.rhs_offset[k] = ro * info.reduce_size;
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return info;
}

}  // namespace nodeweave::sparse
