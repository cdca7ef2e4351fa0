// Vocabulary of the sparse kernel layer: the binary message ops, the reducers, where an operand
// lives (source node, edge, destination node) and the compressed-graph views kernels read.
// Framework-neutral: only core_framework/runtime is used.
#pragma once
#include <cstdint>

#include "core_framework/runtime/array_view.h"

namespace nodeweave::sparse {

// Dot reduces the last feature dimension (output keeps it with size 1, as in DGL).
// CopyLhs/CopyRhs ignore the other operand, which may be absent (data == nullptr).
enum class BinaryOp : uint8_t { Add, Sub, Mul, Div, Dot, CopyLhs, CopyRhs };
enum class ReduceOp : uint8_t { Sum, Max, Min, Mean };
// Where an operand's rows are indexed: by the edge's source, by the edge id, by its destination.
enum class Target : uint8_t { U = 0, E = 1, V = 2 };

// Elements per row (the product of every dimension after the first).
inline int64_t feat_len(const ArrayView& v) {
  int64_t n = 1;
  for (size_t i = 1; i < v.shape.size(); ++i) n *= v.shape[i];
  return n;
}

const char* binary_op_name(BinaryOp op);
const char* reduce_op_name(ReduceOp op);
const char* target_name(Target t);

// A compressed sparse matrix in the orientation a kernel needs. For the "in-edge" (CSC) view of a
// relation, rows are destination nodes, `indices` are source nodes and `eids` the edge id of each
// stored entry, so row r lists the edges entering r in increasing edge id. For the "out-edge" (CSR)
// view rows are sources and `indices` destinations. indptr/indices/eids share one integer dtype
// (int32 or int64); all three live on the same device as the features.
struct CompressedView {
  ArrayView indptr;   // num_rows + 1
  ArrayView indices;  // num_edges
  ArrayView eids;     // num_edges
  int64_t num_rows = 0;
  int64_t num_cols = 0;
  int64_t num_edges() const { return indices.numel(); }
};

// Edge list in edge-id order: edge e goes src[e] -> dst[e].
struct CooView {
  ArrayView src;  // num_edges
  ArrayView dst;  // num_edges
  int64_t num_src = 0;
  int64_t num_dst = 0;
  int64_t num_edges() const { return src.numel(); }
};

}  // namespace nodeweave::sparse
