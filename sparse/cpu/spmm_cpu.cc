// CPU gSpMM: one pass over the in-edge (CSC) view, parallel over destination rows, so every output
// row has a single writer and no atomics are needed. Row ranges are balanced by edge count.
//
// SpMM is memory-bound: per edge it reads an index and one operand row at a random address. The
// plain Sum/Mean path (no broadcast, not Dot: copy_u, u_mul_e, ...) walks each row's edges once
// per 256-byte feature chunk with the accumulator in vector registers, then covers the rest of the
// row in power-of-two passes, so an edge costs a handful of instructions and the out-of-order core
// keeps many row fetches in flight; operand rows are prefetched kPrefetchDistance edges ahead.
// Measured on a 2-core VM, 1 thread, R-MAT 2^20 nodes / 2^24 edges, float32 copy_u-sum: 62 / 101 /
// 593 ms at d = 16 / 64 / 256, 0.7x / 1.5x / 1.0x a STREAM copy loop in the same run (hot rows
// of the skewed graph come from cache). Broadcast, Dot and Max/Min paths use a runtime-length tile
// with a stack accumulator instead. GCC's unroll-and-jam is disabled for this file (see
// sparse/CMakeLists.txt): it turned the per-edge loop into gathers.
#include <algorithm>
#include <limits>

#include "core_framework/runtime/error.h"
#include "sparse/cpu/binary_ops.h"
#include "sparse/cpu/cpu_kernels.h"
#include "sparse/cpu/prefetch.h"
#include "sparse/cpu/row_partition.h"

namespace nodeweave::sparse::cpu {

namespace {

using detail::message;
using detail::prefetch_span;

// Accumulator tile, in elements: with two int64 arg buffers next to it still well inside L1.
constexpr int64_t kTile = 256;
// How many edges ahead to prefetch operand rows. R-MAT 2^18 (4.5M edges), copy_u-sum, 1 thread,
// float32 on 4 KiB pages, standalone loop: d=64 29 ms without prefetch, 28 / 23 / 20 ms at
// distance 16 / 32 / 64; d=128 62 / 57 / 53 ms at 16 / 32 / 64. 32 keeps the lines in flight
// (32 x 256 B) well inside L1.
constexpr int64_t kPrefetchDistance = 32;

template <typename T, typename I>
struct SpmmData {
  const I* indptr;
  const I* indices;
  const I* eids;
  int64_t nnz_end;  // indptr[num_rows]: prefetches must not read indices past it
  const T* lhs;
  const T* rhs;
  T* out;
  int64_t* arg_lhs;  // may be null
  int64_t* arg_rhs;  // may be null
  int64_t lhs_len, rhs_len, out_len, reduce_size;
  const int64_t* lhs_off;
  const int64_t* rhs_off;
  // > 0 when rhs holds one value per block of `rhs_block` consecutive output features and lhs is
  // not broadcast: GAT's (E, heads, 1) attention times (N, heads, D) features.
  int64_t rhs_block;
};

// Prefetches elements [l0, l0 + ll) of the lhs row and [r0, r0 + rl) of the rhs row read by the
// edge at position j (always_inline for the reason given in prefetch.h).
template <typename Op, typename T, typename I>
[[gnu::always_inline]] inline void prefetch_edge(const SpmmData<T, I>& d, int64_t j, int64_t l0,
                                                 int64_t ll, int64_t r0, int64_t rl) {
  if (j >= d.nnz_end) return;
  if constexpr (Op::kLhs)
    prefetch_span(d.lhs + static_cast<int64_t>(d.indices[j]) * d.lhs_len + l0, ll);
  if constexpr (Op::kRhs)
    prefetch_span(d.rhs + static_cast<int64_t>(d.eids[j]) * d.rhs_len + r0, rl);
}

// The tile [t0, t0 + tl) of the output for the generic (broadcast, Dot, Max/Min) loops: without
// broadcasting the operand rows line up with it; with broadcasting the first tile prefetches the
// start of each operand row (a row shorter than a tile is then fetched whole).
template <typename Op, bool kBcast, typename T, typename I>
[[gnu::always_inline]] inline void prefetch_tile(const SpmmData<T, I>& d, int64_t j, int64_t t0,
                                                 int64_t tl) {
  if constexpr (!kBcast) {
    const int64_t span = tl * d.reduce_size;  // Dot reads reduce_size elements per output
    prefetch_edge<Op>(d, j, t0 * d.reduce_size, span, t0 * d.reduce_size, span);
  } else if (t0 == 0) {
    prefetch_edge<Op>(d, j, 0, std::min(d.lhs_len, kTile), 0, std::min(d.rhs_len, kTile));
  }
}

template <typename Op, typename T, typename I>
inline const T* lhs_row(const SpmmData<T, I>& d, int64_t j) {
  if constexpr (Op::kLhs) return d.lhs + static_cast<int64_t>(d.indices[j]) * d.lhs_len;
  return nullptr;
}
template <typename Op, typename T, typename I>
inline const T* rhs_row(const SpmmData<T, I>& d, int64_t j) {
  if constexpr (Op::kRhs) return d.rhs + static_cast<int64_t>(d.eids[j]) * d.rhs_len;
  return nullptr;
}

// acc[k] += message(l[k], r[k]) over one tile: the plain path, kept in its own function with
// restrict pointers so the compiler emits a straight vector loop.
// kScalarRhs: the rhs is one value per edge (an edge weight broadcast over lhs's features).
template <typename Op, typename T, bool kScalarRhs = false>
inline void accumulate_tile(T* __restrict acc, const T* __restrict l, const T* __restrict r,
                            int64_t tl) {
  // omp simd: with a compile-time tl GCC otherwise unrolls first and leaves vectorizing to SLP,
  // which for the Mean variant of a 16-float chunk kept 16 scalar accumulators (1.6x slower).
#pragma omp simd
  for (int64_t k = 0; k < tl; ++k) acc[k] += Op::apply(l, k, r, kScalarRhs ? 0 : k, 1);
}

// One pass over the edges of row v accumulating output features [t0, t0 + kChunk) in a
// compile-time-sized accumulator that lives in vector registers. Few instructions per edge let the
// out-of-order window span many edges, so many row fetches overlap; this is what makes the kernel
// bandwidth- rather than latency-bound.
template <typename T, typename I, typename Op, bool kMean, int64_t kChunk, bool kScalarRhs>
[[gnu::always_inline]] inline void sum_chunk(const SpmmData<T, I>& d, int64_t beg, int64_t end,
                                             T deg, T* orow, int64_t t0) {
  T acc[kChunk] = {};
  for (int64_t j = beg; j < end; ++j) {
    // A scalar rhs is one value per edge: prefetch its one element, not a tile.
    prefetch_edge<Op>(d, j + kPrefetchDistance, t0, kChunk, kScalarRhs ? 0 : t0,
                      kScalarRhs ? 1 : kChunk);
    const T* l = lhs_row<Op>(d, j);
    const T* r = rhs_row<Op>(d, j);
    accumulate_tile<Op, T, kScalarRhs>(acc, Op::kLhs ? l + t0 : l,
                                       Op::kRhs && !kScalarRhs ? r + t0 : r, kChunk);
  }
  for (int64_t k = 0; k < kChunk; ++k) orow[t0 + k] = kMean ? acc[k] / deg : acc[k];
}

// The features left after the full chunks (fewer than 2 * kChunk): one pass per power of two in
// their count, largest first, so a 60-float row is 32 + 16 + 8 + 4 and every pass still keeps its
// accumulator in registers. (A runtime-length remainder loop kept it in memory: a store-to-load
// chain per edge that made d = 1, 8 or 60 cost up to 1.6x DGL's time.)
template <typename T, typename I, typename Op, bool kMean, int64_t kChunk, bool kScalarRhs>
[[gnu::always_inline]] inline void sum_tail(const SpmmData<T, I>& d, int64_t beg, int64_t end,
                                            T deg, T* orow, int64_t t0, int64_t len) {
  if (len - t0 >= kChunk) {
    sum_chunk<T, I, Op, kMean, kChunk, kScalarRhs>(d, beg, end, deg, orow, t0);
    t0 += kChunk;
  }
  if constexpr (kChunk > 1) {
    if (t0 < len)
      sum_tail<T, I, Op, kMean, kChunk / 2, kScalarRhs>(d, beg, end, deg, orow, t0, len);
  }
}

// The plain Sum/Mean path (no broadcast, not Dot): each row in 256-byte chunks, then the tail.
// kScalarRhs: the rhs is one value per edge (an edge weight broadcast over lhs's features).
template <typename T, typename I, typename Op, bool kMean, bool kScalarRhs = false>
void sum_rows_plain(const SpmmData<T, I>& d, int64_t row_begin, int64_t row_end) {
  constexpr int64_t kChunk = 256 / sizeof(T);
  const int64_t len = d.out_len;
  for (int64_t v = row_begin; v < row_end; ++v) {
    const int64_t beg = d.indptr[v], end = d.indptr[v + 1];
    const T deg = kMean && end > beg ? static_cast<T>(end - beg) : T(1);
    T* orow = d.out + v * len;
    int64_t t0 = 0;
    for (; t0 + kChunk <= len; t0 += kChunk)
      sum_chunk<T, I, Op, kMean, kChunk, kScalarRhs>(d, beg, end, deg, orow, t0);
    if (t0 < len)
      sum_tail<T, I, Op, kMean, kChunk / 2, kScalarRhs>(d, beg, end, deg, orow, t0, len);
  }
}

// Sum/Mean where rhs holds one value per block of D = rhs_block output features (multi-head
// attention weights): per edge, each block of lhs is scaled by its own rhs scalar. The blocks of a
// tile are vector loops over D, not the per-element offset lookups of the generic path. One pass
// over a row's edges covers every head that fits the tile: splitting the row into register-sized
// chunks (as sum_rows_plain does) re-reads each edge's scattered rhs row once per chunk, which
// measured 1.7x slower for 8 heads x 16 features.
template <typename T, typename I, typename Op, bool kMean>
void sum_rows_blocked_rhs(const SpmmData<T, I>& d, int64_t row_begin, int64_t row_end) {
  alignas(64) T acc[kTile];
  const int64_t len = d.out_len, D = d.rhs_block, heads = d.rhs_len;
  const int64_t per_tile = std::max<int64_t>(1, kTile / D);
  for (int64_t v = row_begin; v < row_end; ++v) {
    const int64_t beg = d.indptr[v], end = d.indptr[v + 1];
    const T deg = kMean && end > beg ? static_cast<T>(end - beg) : T(1);
    T* orow = d.out + v * len;
    for (int64_t h0 = 0; h0 < heads; h0 += per_tile) {
      const int64_t hl = std::min(per_tile, heads - h0), tl = hl * D;
      std::fill(acc, acc + tl, T(0));
      for (int64_t j = beg; j < end; ++j) {
        prefetch_edge<Op>(d, j + kPrefetchDistance, h0 * D, tl, h0, hl);
        const T* l = lhs_row<Op>(d, j) + h0 * D;
        const T* r = rhs_row<Op>(d, j) + h0;
        for (int64_t h = 0; h < hl; ++h)
          accumulate_tile<Op, T, true>(acc + h * D, l + h * D, r + h, D);
      }
      for (int64_t k = 0; k < tl; ++k) orow[h0 * D + k] = kMean ? acc[k] / deg : acc[k];
    }
  }
}

// Sum and Mean with broadcasting or Dot, tiled over the output features. Rows without in-edges
// come out as 0.
template <typename T, typename I, typename Op, bool kBcast, bool kMean>
void sum_rows(const SpmmData<T, I>& d, int64_t row_begin, int64_t row_end) {
  alignas(64) T acc[kTile];
  const I* indptr = d.indptr;
  for (int64_t v = row_begin; v < row_end; ++v) {
    const int64_t beg = indptr[v], end = indptr[v + 1];
    T* orow = d.out + v * d.out_len;
    for (int64_t t0 = 0; t0 < d.out_len; t0 += kTile) {
      const int64_t tl = std::min(kTile, d.out_len - t0);
      for (int64_t k = 0; k < tl; ++k) acc[k] = T(0);
      for (int64_t j = beg; j < end; ++j) {
        prefetch_tile<Op, kBcast>(d, j + kPrefetchDistance, t0, tl);
        const T* l = lhs_row<Op>(d, j);
        const T* r = rhs_row<Op>(d, j);
        for (int64_t k = 0; k < tl; ++k)
          acc[k] += message<Op, kBcast>(l, r, t0 + k, d.reduce_size, d.lhs_off, d.rhs_off);
      }
      if (kMean && end > beg) {
        const T deg = static_cast<T>(end - beg);
        for (int64_t k = 0; k < tl; ++k) orow[t0 + k] = acc[k] / deg;
      } else {
        for (int64_t k = 0; k < tl; ++k) orow[t0 + k] = acc[k];
      }
    }
  }
}

// Max and Min with the winning source node and edge per output element. The first in-edge
// initializes the tile, so every non-empty row reports a real edge even when values are NaN or
// infinite; later edges win only when strictly better, so ties go to the lowest position.
template <typename T, typename I, typename Op, bool kBcast, bool kMax>
void minmax_rows(const SpmmData<T, I>& d, int64_t row_begin, int64_t row_end) {
  alignas(64) T acc[kTile];
  alignas(64) int64_t win_u[kTile];
  alignas(64) int64_t win_e[kTile];
  for (int64_t v = row_begin; v < row_end; ++v) {
    const int64_t beg = d.indptr[v], end = d.indptr[v + 1];
    T* orow = d.out + v * d.out_len;
    int64_t* arg_l = d.arg_lhs ? d.arg_lhs + v * d.out_len : nullptr;
    int64_t* arg_r = d.arg_rhs ? d.arg_rhs + v * d.out_len : nullptr;
    if (beg == end) {
      std::fill(orow, orow + d.out_len, T(0));
      if (arg_l) std::fill(arg_l, arg_l + d.out_len, int64_t{-1});
      if (arg_r) std::fill(arg_r, arg_r + d.out_len, int64_t{-1});
      continue;
    }
    for (int64_t t0 = 0; t0 < d.out_len; t0 += kTile) {
      const int64_t tl = std::min(kTile, d.out_len - t0);
      {
        const T* l = lhs_row<Op>(d, beg);
        const T* r = rhs_row<Op>(d, beg);
        const int64_t u = d.indices[beg], e = d.eids[beg];
        for (int64_t k = 0; k < tl; ++k) {
          acc[k] = message<Op, kBcast>(l, r, t0 + k, d.reduce_size, d.lhs_off, d.rhs_off);
          win_u[k] = u;
          win_e[k] = e;
        }
      }
      for (int64_t j = beg + 1; j < end; ++j) {
        prefetch_tile<Op, kBcast>(d, j + kPrefetchDistance, t0, tl);
        const T* l = lhs_row<Op>(d, j);
        const T* r = rhs_row<Op>(d, j);
        const int64_t u = d.indices[j], e = d.eids[j];
        for (int64_t k = 0; k < tl; ++k) {
          const T m = message<Op, kBcast>(l, r, t0 + k, d.reduce_size, d.lhs_off, d.rhs_off);
          const bool better = kMax ? m > acc[k] : m < acc[k];
          acc[k] = better ? m : acc[k];
          win_u[k] = better ? u : win_u[k];
          win_e[k] = better ? e : win_e[k];
        }
      }
      std::copy(acc, acc + tl, orow + t0);
      if (arg_l) std::copy(win_u, win_u + tl, arg_l + t0);
      if (arg_r) std::copy(win_e, win_e + tl, arg_r + t0);
    }
  }
}

// Sum/Mean: the chunked kernel for the plain path and for u_mul_e with one weight per edge.
template <typename T, typename I, typename Op, bool kBcast, bool kMean>
void sum_dispatch(const SpmmData<T, I>& d, int64_t row_begin, int64_t row_end) {
  if constexpr (!kBcast && !Op::kDot) {
    sum_rows_plain<T, I, Op, kMean>(d, row_begin, row_end);
  } else if constexpr (!Op::kDot && Op::kLhs && Op::kRhs) {
    // u_mul_e with one weight per edge (GCN's edge weights) is the common broadcast: it gets the
    // chunked kernel too, reading the weight as a scalar instead of through the offset tables.
    if (d.rhs_len == 1 && d.lhs_len == d.out_len) {
      sum_rows_plain<T, I, Op, kMean, true>(d, row_begin, row_end);
    } else if (d.rhs_block > 0) {
      sum_rows_blocked_rhs<T, I, Op, kMean>(d, row_begin, row_end);
    } else {
      sum_rows<T, I, Op, kBcast, kMean>(d, row_begin, row_end);
    }
  } else {
    sum_rows<T, I, Op, kBcast, kMean>(d, row_begin, row_end);
  }
}

// The block length D when rhs broadcasts as (heads, 1) against lhs (heads, D): rhs_offset[k] is
// k / D and lhs is read element by element; 0 otherwise (or when a block exceeds a tile).
inline int64_t blocked_rhs(const BcastInfo& b) {
  if (!b.use_bcast || b.reduce_size != 1 || b.lhs_len != b.out_len || b.rhs_len <= 1 ||
      b.out_len % b.rhs_len != 0 || static_cast<int64_t>(b.rhs_offset.size()) != b.out_len ||
      static_cast<int64_t>(b.lhs_offset.size()) != b.out_len)
    return 0;
  const int64_t D = b.out_len / b.rhs_len;
  if (D > kTile) return 0;
  for (int64_t k = 0; k < b.out_len; ++k)
    if (b.rhs_offset[k] != k / D || b.lhs_offset[k] != k) return 0;
  return D;
}

template <typename T, typename I>
void spmm_typed(const SpmmArgs& args, const BcastInfo& bcast) {
  const CompressedView& g = args.in_edges;
  SpmmData<T, I> d;
  d.indptr = g.indptr.ptr<I>();
  d.indices = g.indices.ptr<I>();
  d.eids = g.eids.ptr<I>();
  d.nnz_end = d.indptr[g.num_rows];
  d.lhs = args.lhs.ptr<T>();
  d.rhs = args.rhs.ptr<T>();
  d.out = args.out.ptr<T>();
  d.arg_lhs = args.arg_lhs.ptr<int64_t>();
  d.arg_rhs = args.arg_rhs.ptr<int64_t>();
  d.lhs_len = bcast.lhs_len;
  d.rhs_len = bcast.rhs_len;
  d.out_len = bcast.out_len;
  d.reduce_size = bcast.reduce_size;
  d.lhs_off = bcast.lhs_offset.data();
  d.rhs_off = bcast.rhs_offset.data();
  d.rhs_block = blocked_rhs(bcast);
  const ReduceOp reduce = args.reduce;

  detail::dispatch_op<T>(args.op, [&](auto op) {
    using Op = decltype(op);
    detail::dispatch_bool(bcast.use_bcast, [&](auto use_bcast) {
      constexpr bool kBcast = decltype(use_bcast)::value;
      // Per-row cost grows with the features read per edge, including Dot's reduced span.
      const int64_t feat = d.out_len * d.reduce_size;
      detail::parallel_rows(d.indptr, g.num_rows, feat, [&](int64_t rb, int64_t re) {
        switch (reduce) {
          case ReduceOp::Sum:
            return sum_dispatch<T, I, Op, kBcast, false>(d, rb, re);
          case ReduceOp::Mean:
            return sum_dispatch<T, I, Op, kBcast, true>(d, rb, re);
          case ReduceOp::Max:
            return minmax_rows<T, I, Op, kBcast, true>(d, rb, re);
          case ReduceOp::Min:
            return minmax_rows<T, I, Op, kBcast, false>(d, rb, re);
        }
      });
    });
  });
}

}  // namespace

void spmm(const SpmmArgs& args, const BcastInfo& bcast) {
  if (args.in_edges.num_rows == 0 || bcast.out_len == 0) return;
  NW_DISPATCH_FLOAT(args.out.dtype, "gspmm", {
    using T = scalar_t;
    NW_DISPATCH_INDEX(args.in_edges.indptr.dtype, "gspmm",
                      { spmm_typed<T, scalar_t>(args, bcast); });
  });
}

}  // namespace nodeweave::sparse::cpu
