// node2vec's second-order walk by rejection sampling (as KnightKing, Yang et al. SOSP 2019): a
// candidate edge v -> x is drawn from the first-order distribution (uniform or by weight) and
// accepted with probability a(t, x) / max(1/p, 1, 1/q). Accepted draws then follow
// w(v, x) * a(t, x) exactly, without an alias table per edge (t, v), which would cost memory in
// the sum of squared degrees (the reference implementation precomputes those tables).
// The test "is x a neighbour of t" is a binary search in t's row sorted by node id.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <type_traits>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "sampling/random_walk.h"
#include "sampling/random_walk_step.h"

namespace nodeweave::sampling {

using walk_detail::WalkAdj;

namespace {

// Rejections before a step switches to an exact draw over the whole row. Rejection needs
// max/min(1/p, 1, 1/q) trials on average at worst (p = 0.01, q = 100 would mean 10^4); after
// this many the row is scanned once instead. Falling back after a fixed count of rejected trials
// keeps the draw exact: a rejected trial says nothing about which edge the target picks.
constexpr int kMaxTrials = 32;

struct Bias {
  double ret = 1, out = 1;  // 1/p for going back, 1/q for moving away
  double lo = 1, hi = 1;    // min and max of (1/p, 1, 1/q)
};

// Out-neighbours of every node sorted by id (the CSR's own indices when already sorted).
template <typename IdType>
struct SortedRows {
  const IdType* indptr = nullptr;
  const IdType* ids = nullptr;
  std::vector<IdType> copy;

  // Branch-free binary search that prefetches both possible next probes: on a hub's row (R-MAT
  // hubs have 10^5 neighbours) each level is a cache miss, and this overlaps two levels' misses.
  bool contains(int64_t row, int64_t x) const {
    const IdType* base = ids + indptr[row];
    int64_t n = indptr[row + 1] - indptr[row];
    if (n == 0) return false;
    const IdType key = static_cast<IdType>(x);
    while (n > 1) {
      const int64_t half = n / 2;
      __builtin_prefetch(base + half / 2);
      __builtin_prefetch(base + half + half / 2);
      base = base[half] <= key ? base + half : base;
      n -= half;
    }
    return *base == key;
  }
};

template <typename IdType>
void sort_rows(const graph::CompressedArrays& c, int64_t num_rows, SortedRows<IdType>* out) {
  const IdType* indptr = c.indptr.data<IdType>();
  const IdType* indices = c.indices.data<IdType>();
  out->indptr = indptr;
  std::atomic<bool> sorted{true};
  parallel_for(0, num_rows, 4096, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e && sorted.load(std::memory_order_relaxed); ++r)
      if (!std::is_sorted(indices + indptr[r], indices + indptr[r + 1])) sorted = false;
  });
  if (sorted) {
    out->ids = indices;
    return;
  }
  out->copy.assign(indices, indices + c.indices.length);
  IdType* ids = out->copy.data();
  parallel_for(0, num_rows, 1024, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) std::sort(ids + indptr[r], ids + indptr[r + 1]);
  });
  out->ids = ids;
}

template <typename IdType>
inline double bias_of(const SortedRows<IdType>& s, const Bias& b, int64_t prev, int64_t x) {
  if (x == prev) return b.ret;
  return s.contains(prev, x) ? 1.0 : b.out;
}

// One exact draw over cur's row: the fallback after kMaxTrials rejections.
template <typename IdType>
int64_t pick_exact(const WalkAdj<IdType>& a, const SortedRows<IdType>& s, const Bias& b,
                   int64_t prev, int64_t cur, CounterRng& rng) {
  const int64_t begin = a.indptr[cur], end = a.indptr[cur + 1];
  double total = 0;
  for (int64_t j = begin; j < end; ++j)
    total += walk_detail::entry_weight(a, j) * bias_of(s, b, prev, a.indices[j]);
  const double target = rng.uniform() * total;
  double run = 0;
  int64_t last = -1;
  for (int64_t j = begin; j < end; ++j) {
    const double w = walk_detail::entry_weight(a, j) * bias_of(s, b, prev, a.indices[j]);
    if (w <= 0) continue;
    last = j;
    run += w;
    if (run > target) return j;
  }
  return last;  // rounding in the running sum
}

// Walks first .. first + count - 1 from starts[0 .. count - 1] into rows of nodes/eids, a group of
// kLanes walks at a time (the idea of walk_detail::walk_traces): each round proposes one
// candidate per unfinished walk and prefetches it and the middle of the previous node's sorted
// row, then tests every candidate. Per walk the draws are those of a walk alone: the pick of the
// first step; then per later step, per trial, a candidate and an acceptance variate (only the
// candidate when p = q = 1), and after kMaxTrials rejections one draw of the exact row pick.
template <typename IdType>
void walk_group(const WalkAdj<IdType>& a, const SortedRows<IdType>& s, const Bias& b,
                int64_t length, const int64_t* starts, int64_t first, int64_t count, uint64_t seed,
                int64_t* nodes, int64_t* eids) {
  constexpr int64_t kLanes = 16;
  const bool first_order = b.lo == b.hi;
  std::vector<CounterRng> rng;
  rng.reserve(kLanes);
  int64_t prev[kLanes], cur[kLanes], step[kLanes], entry[kLanes];
  double accept[kLanes];  // the acceptance variate of the pending candidate
  int trials[kLanes], live[kLanes];
  const int64_t width = length + 1;
  for (int64_t g = 0; g < count; g += kLanes) {
    const int n = static_cast<int>(std::min(kLanes, count - g));
    int num_live = 0;
    rng.clear();
    for (int l = 0; l < n; ++l) {
      rng.emplace_back(derive_key(seed, static_cast<uint64_t>(first + g + l)));
      prev[l] = -1;
      cur[l] = starts[g + l];
      step[l] = 0;
      trials[l] = 0;
      nodes[(g + l) * width] = cur[l];
      if (length > 0) live[num_live++] = l;
    }
    while (num_live > 0) {
      int still = 0;
      for (int i = 0; i < num_live; ++i) {  // propose
        const int l = live[i];
        const int64_t j = walk_detail::pick_entry(a, cur[l], rng[l]);
        if (j < 0) continue;  // no out-edge of positive weight: the walk ends
        entry[l] = j;
        accept[l] = -1;  // taken without a test
        if (step[l] > 0 && !first_order) {
          const double u = rng[l].uniform() * b.hi;
          // Below the smallest bias every candidate is accepted: no neighbour search.
          if (u >= b.lo) {
            accept[l] = u;
            __builtin_prefetch(a.indices + j);
            __builtin_prefetch(s.ids + (s.indptr[prev[l]] + s.indptr[prev[l] + 1]) / 2);
          }
        }
        live[still++] = l;
      }
      num_live = still;
      still = 0;
      for (int i = 0; i < num_live; ++i) {  // test, move
        const int l = live[i];
        int64_t j = entry[l];
        if (accept[l] >= 0 && accept[l] >= bias_of(s, b, prev[l], a.indices[j])) {
          if (++trials[l] < kMaxTrials) {
            live[still++] = l;  // rejected: another candidate next round
            continue;
          }
          j = pick_exact(a, s, b, prev[l], cur[l], rng[l]);
        }
        trials[l] = 0;
        prev[l] = cur[l];
        cur[l] = a.indices[j];
        nodes[(g + l) * width + step[l] + 1] = cur[l];
        if (eids) eids[(g + l) * length + step[l]] = a.eids[j];
        if (++step[l] < length) {
          __builtin_prefetch(a.indptr + cur[l]);
          live[still++] = l;
        }
      }
      num_live = still;
    }
    for (int l = 0; l < n; ++l)
      for (int64_t t = step[l]; t < length; ++t) {
        nodes[(g + l) * width + t + 1] = -1;
        if (eids) eids[(g + l) * length + t] = -1;
      }
  }
}

template <typename IdType>
void walk_all(const walk_detail::PreparedRelation& prepared, const std::vector<int64_t>& starts,
              const Node2vecOptions& opt, const Bias& bias, WalkTraces* out) {
  const WalkAdj<IdType> a = walk_detail::adj_of<IdType>(prepared);
  SortedRows<IdType> sorted;
  if (bias.lo != bias.hi) sort_rows(*prepared.rel->out_csr, prepared.rel->num_src, &sorted);
  const int64_t length = opt.walk_length;
  int64_t* nodes = out->nodes.data();
  int64_t* eids = out->eids.empty() ? nullptr : out->eids.data();
  parallel_for(0, out->num_walks, walk_detail::kWalkGrain, [&](int64_t b, int64_t e) {
    walk_group(a, sorted, bias, length, starts.data() + b, b, e - b, opt.seed,
               nodes + b * (length + 1), eids ? eids + b * length : nullptr);
  });
}

}  // namespace

WalkTraces node2vec_walk(const WalkRelation& relation, const ArrayView& starts,
                         const Node2vecOptions& opt) {
  const char* fn = "node2vec_random_walk";
  // Finite: 1/p = 0 would forbid a step that may be a node's only one.
  NW_CHECK(opt.p > 0 && std::isfinite(opt.p), ValueError, fn,
           ": p must be a finite number > 0, got ", opt.p);
  NW_CHECK(opt.q > 0 && std::isfinite(opt.q), ValueError, fn,
           ": q must be a finite number > 0, got ", opt.q);
  NW_CHECK(opt.walk_length >= 0, ValueError, fn, ": walk_length must be >= 0, got ",
           opt.walk_length);
  NW_CHECK(relation.src_type == relation.dst_type && relation.num_src == relation.num_dst,
           ValueError, fn, ": node2vec walks need a relation from one node type to itself, got ",
           relation.name, " from type ", relation.src_type, " (", relation.num_src,
           " nodes) to type ", relation.dst_type, " (", relation.num_dst, " nodes)");
  const walk_detail::PreparedRelation prepared =
      walk_detail::prepare_relation(fn, "prob", relation);
  const std::vector<int64_t> start_ids =
      walk_detail::read_starts(fn, "nodes", starts, relation.num_src, "nodes");

  Bias bias;
  bias.ret = 1 / opt.p;
  bias.out = 1 / opt.q;
  bias.lo = std::min({bias.ret, 1.0, bias.out});
  bias.hi = std::max({bias.ret, 1.0, bias.out});

  WalkTraces out;
  out.num_walks = static_cast<int64_t>(start_ids.size());
  out.length = opt.walk_length;
  out.types.assign(static_cast<size_t>(out.length + 1), relation.src_type);
  out.nodes.resize(static_cast<size_t>(out.num_walks * (out.length + 1)));
  if (opt.return_eids) out.eids.resize(static_cast<size_t>(out.num_walks * out.length));
  graph::dispatch_id(relation.out_csr->indptr.dtype, [&](auto* id_tag) {
    using IdType = std::remove_pointer_t<decltype(id_tag)>;
    walk_all<IdType>(prepared, start_ids, opt, bias, &out);
    return 0;
  });
  return out;
}

}  // namespace nodeweave::sampling
