// Internal to sparse/cpu: splitting the rows of a compressed matrix (or the segments of an offsets
// array) among threads so each gets about the same number of entries. Power-law graphs put most
// edges on a few rows, so equal row counts would leave one thread with most of the work.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core_framework/runtime/parallel.h"

namespace nodeweave::sparse::cpu::detail {

// Boundaries b[0] = 0 <= ... <= b[parts] = num_rows such that rows [b[p], b[p+1]) cost about
// 1/parts of the total, a row costing its entries plus one (its output write). indptr is a prefix
// sum, so each boundary is a binary search.
template <typename I>
std::vector<int64_t> balanced_splits(const I* indptr, int64_t num_rows, int parts) {
  const int64_t base = indptr[0];
  auto cost = [&](int64_t r) { return static_cast<int64_t>(indptr[r]) - base + r; };
  const int64_t total = cost(num_rows);
  std::vector<int64_t> b(parts + 1, num_rows);
  b[0] = 0;
  for (int p = 1; p < parts; ++p) {
    const int64_t target = total / parts * p + total % parts * p / parts;
    int64_t lo = b[p - 1], hi = num_rows;  // first row r with cost(r) >= target
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (cost(mid) < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    b[p] = lo;
  }
  return b;
}

// Runs fn(row_begin, row_end) over disjoint row ranges covering [0, num_rows), one range per
// thread, balanced by entries; stays on one thread when (entries + rows) * feat_len is small.
template <typename I, typename F>
void parallel_rows(const I* indptr, int64_t num_rows, int64_t feat_len, const F& fn) {
  if (num_rows <= 0) return;
  const int64_t entries = static_cast<int64_t>(indptr[num_rows]) - indptr[0];
  const int64_t work = (entries + num_rows) * std::max<int64_t>(feat_len, 1);
  const int64_t parts = std::min<int64_t>({get_num_threads(), work / kGrainSize, num_rows});
  if (parts <= 1 || omp_in_parallel()) {
    fn(int64_t{0}, num_rows);
    return;
  }
  const std::vector<int64_t> b = balanced_splits(indptr, num_rows, static_cast<int>(parts));
  parallel_for(0, parts, 1, [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p)
      if (b[p] < b[p + 1]) fn(b[p], b[p + 1]);
  });
}

}  // namespace nodeweave::sparse::cpu::detail
