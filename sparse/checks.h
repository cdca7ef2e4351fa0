// Argument checks shared by the sparse entry points (internal to sparse/). Each throws the Python-
// facing exception type with a message naming the function, the argument, and expected vs actual.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "sparse/bcast.h"
#include "sparse/types.h"

namespace nodeweave::sparse::detail {

// Optional operands are "absent" when they carry neither data nor a shape; an empty array of a
// real shape (zero rows) is present.
inline bool present(const ArrayView& v) { return v.data != nullptr || !v.shape.empty(); }

// Shape without the leading row dimension.
std::vector<int64_t> feat_shape(const ArrayView& v);

// A feature array: at least 1-D, float32/float64 (TypeError) — or also float16/bfloat16 where the
// kernel takes them (`allow_half`) — contiguous (ValueError), strides consistent with the shape.
void check_features(const char* fn, const char* name, const ArrayView& v, bool allow_half = false);
void check_same_dtype(const char* fn, const char* name_a, const ArrayView& a, const char* name_b,
                      const ArrayView& b);
// ValueError "<fn>: <name> has R rows but <what> is N".
void check_rows(const char* fn, const char* name, const ArrayView& v, int64_t expected,
                const char* what);
// 1-D int32/int64 contiguous index array of the given length (len < 0: any length).
void check_index(const char* fn, const char* name, const ArrayView& v, int64_t len);
// int64 contiguous array with shape (rows, feat_len), or shaped like `like` (the output).
void check_arg(const char* fn, const char* name, const ArrayView& v, int64_t rows, int64_t feat_len,
               const ArrayView& like);
// Every present array on one device; ValueError naming the first pair that differs.
void check_same_device(const char* fn,
                       std::initializer_list<std::pair<const char*, const ArrayView*>> arrays);
// A message operand the op reads: present, a feature array of out's dtype with `rows` rows.
void check_operand(const char* fn, const char* name, BinaryOp op, const ArrayView& v,
                   const ArrayView& out, int64_t rows, const char* rows_what);
// Broadcast of the two operands' feature shapes; out's feature shape must be the result.
BcastInfo check_out_bcast(const char* fn, BinaryOp op, const ArrayView& lhs, const ArrayView& rhs,
                          const ArrayView& out);
// Structure of the graph views: lengths agree, one index dtype.
void check_compressed(const char* fn, const CompressedView& g);
void check_coo(const char* fn, const CooView& g);
// Offsets (CPU only: reads the values): offsets[0] == 0, non-decreasing; returns offsets[-1].
int64_t check_offsets_values(const char* fn, const ArrayView& offsets);
// Reads element i of an int32/int64 array on the CPU.
int64_t index_at(const ArrayView& v, int64_t i);

}  // namespace nodeweave::sparse::detail
