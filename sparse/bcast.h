// NumPy-style broadcasting between the feature dimensions of two operands of a message op (the
// first, row dimension is never broadcast). Kernels iterate over the flat output feature index and
// look up the matching lhs/rhs feature offsets here, so a broadcast costs one table read per
// element only when the shapes differ; equal shapes take the plain path.
#pragma once
#include <cstdint>
#include <vector>

#include "sparse/types.h"

namespace nodeweave::sparse {

struct BcastInfo {
  bool use_bcast = false;          // false: lhs_len == rhs_len == out_len (or one side absent)
  int64_t lhs_len = 1;             // features per lhs row
  int64_t rhs_len = 1;             // features per rhs row
  int64_t out_len = 1;             // features per output row
  int64_t reduce_size = 1;         // Dot: length of the reduced last dimension; 1 otherwise
  std::vector<int64_t> out_shape;  // output feature shape (Dot keeps a trailing 1)
  // For output feature k (0 <= k < out_len): lhs/rhs element offsets of the first element of the
  // reduced span; only filled when use_bcast.
  std::vector<int64_t> lhs_offset, rhs_offset;

  // lhs/rhs_feat: feature shapes (row dimension removed). A CopyLhs/CopyRhs op uses only one side.
  // Throws ValueError naming `op_name` when the shapes do not broadcast (or Dot's last dims
  // differ).
  static BcastInfo compute(BinaryOp op, const std::vector<int64_t>& lhs_feat,
                           const std::vector<int64_t>& rhs_feat, const char* op_name);
};

}  // namespace nodeweave::sparse
