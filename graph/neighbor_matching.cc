// Greedy neighbour matching. Both the weighted and the unweighted matching take, for a visited
// node, the unmatched neighbour of highest priority; they differ only in the priority of an edge:
// its weight, or a random 64-bit key of (seed, edge id), whose maximum over any set of edges falls
// on each of them with equal chance. One loop serves both.
#include "graph/neighbor_matching.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/generator.h"
#include "core_framework/runtime/parallel.h"
#include "graph/typed_rows.h"

namespace nodeweave::graph {

namespace {

constexpr const char* kFn = "neighbor_matching";

// Uniform in [0, n) from one 64-bit draw (multiply-shift; bias below n / 2^64).
uint64_t below(uint64_t draw, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(draw) * n) >> 64);
}

// Keys of the two independent random streams one seed gives.
uint64_t order_key(uint64_t seed) { return splitmix64(seed ^ 0x6f72646572ull); }
uint64_t choice_key(uint64_t seed) { return splitmix64(seed ^ 0x63686f696365ull); }

// A uniformly random visiting order of n nodes (Fisher-Yates; draw i depends on (seed, i) only).
std::vector<int64_t> visiting_order(int64_t n, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  const uint64_t key = order_key(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(below(splitmix64(key ^ splitmix64(i)), i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

// The sorted distinct nodes of row v into `out`.
template <typename I>
void sorted_row(const TypedRows<I>& rows, int64_t v, std::vector<int64_t>& out) {
  out.clear();
  for (int64_t p = rows.begin(v); p < rows.end(v); ++p) out.push_back(rows.node(p));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

// The edge id of the first entry of row v that reaches node x (x is in the row).
template <typename I>
int64_t edge_to(const TypedRows<I>& rows, int64_t v, int64_t x) {
  for (int64_t p = rows.begin(v); p < rows.end(v); ++p)
    if (rows.node(p) == x) return rows.edge(p);
  return -1;
}

// ValueError naming an edge without its reverse: node u's out-neighbours (CSR) and in-neighbours
// (CSC) must be the same set. Rows are checked in parallel; the smallest bad row is reported.
template <typename I>
void check_symmetric(const TypedRows<I>& out_rows, const TypedRows<I>& in_rows, int64_t n,
                     int64_t num_edges) {
  std::atomic<int64_t> first_bad{n};
  const int64_t grain = std::max<int64_t>(1, kGrainSize * n / (num_edges + n + 1));
  parallel_for(0, n, grain, [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> outs, ins;
    for (int64_t u = lo; u < hi && u < first_bad.load(std::memory_order_relaxed); ++u) {
      sorted_row(out_rows, u, outs);
      sorted_row(in_rows, u, ins);
      if (outs == ins) continue;
      int64_t seen = first_bad.load();
      while (u < seen && !first_bad.compare_exchange_weak(seen, u)) {
      }
      return;
    }
  });
  const int64_t u = first_bad.load();
  if (u == n) return;
  std::vector<int64_t> outs, ins, only;
  sorted_row(out_rows, u, outs);
  sorted_row(in_rows, u, ins);
  std::set_difference(outs.begin(), outs.end(), ins.begin(), ins.end(), std::back_inserter(only));
  int64_t src = u, dst, eid;
  if (!only.empty()) {  // u -> x exists, x -> u does not
    dst = only.front();
    eid = edge_to(out_rows, u, dst);
  } else {  // x -> u exists, u -> x does not
    std::set_difference(ins.begin(), ins.end(), outs.begin(), outs.end(), std::back_inserter(only));
    src = only.front();
    dst = u;
    eid = edge_to(in_rows, u, src);
  }
  throw ValueError(str_cat(kFn,
                           ": the graph must be bidirected (every edge u -> v with its reverse ",
                           "v -> u), but edge ", eid, " (", src, " -> ", dst,
                           ") has no reverse; make it so with to_bidirected(g)"));
}

template <typename W>
void check_weights(const W* w, int64_t count) {
  for (int64_t e = 0; e < count; ++e)
    NW_CHECK(std::isfinite(w[e]) && w[e] >= 0, ValueError, kFn,
             ": e_weights must be finite and non-negative, got e_weights[", e, "] = ", w[e]);
}

// The greedy matching itself; priority(e) orders the edges a visited node may take.
template <typename I, typename P>
std::vector<int64_t> match(const TypedRows<I>& rows, int64_t n, uint64_t seed, const P& priority) {
  std::vector<int64_t> label(static_cast<size_t>(n), -1);
  for (int64_t u : visiting_order(n, seed)) {
    if (label[u] >= 0) continue;
    int64_t best = -1;
    decltype(priority(int64_t{0})) best_priority{};
    for (int64_t p = rows.begin(u); p < rows.end(u); ++p) {
      const int64_t v = rows.node(p);
      if (v == u || label[v] >= 0) continue;
      const auto pr = priority(rows.edge(p));
      if (best < 0 || pr > best_priority) {  // strict: the lowest edge id among equals
        best = v;
        best_priority = pr;
      }
    }
    if (best < 0) {
      label[u] = u;
    } else {
      label[u] = label[best] = std::min(u, best);
    }
  }
  return label;
}

// Cluster labels (each the smallest node of its cluster) to 0..k-1 in increasing label order. A
// node's label is never above the node, so it is renumbered before the node reads it.
void relabel_clusters(std::vector<int64_t>& label) {
  int64_t next = 0;
  for (size_t v = 0; v < label.size(); ++v)
    label[v] = label[v] == static_cast<int64_t>(v) ? next++ : label[label[v]];
}

}  // namespace

std::vector<int64_t> neighbor_matching(const RelationGraph& g, const ArrayView& weights,
                                       uint64_t seed, bool relabel) {
  const CompressedArrays& csr = walk_rows(g, false, kFn);
  const CompressedArrays& csc = walk_rows(g, true, kFn);
  const int64_t n = g.num_src(), m = g.num_edges();
  const bool weighted = weights.data != nullptr;
  if (weighted) {
    NW_CHECK(weights.dtype == DType::Float32 || weights.dtype == DType::Float64, TypeError, kFn,
             ": e_weights must be float32 or float64, got ", dtype_name(weights.dtype));
    NW_CHECK(weights.device.is_cpu(), ValueError, kFn, ": e_weights must be on the CPU, got ",
             weights.device.str());
    NW_CHECK(weights.shape.size() == 1 && weights.shape[0] == m, ValueError, kFn,
             ": e_weights must hold one value per edge, shape [", m, "], got ",
             shape_str(weights.shape));
    NW_CHECK(weights.is_contiguous(), ValueError, kFn, ": e_weights must be contiguous");
    if (weights.dtype == DType::Float32)
      check_weights(weights.ptr<const float>(), m);
    else
      check_weights(weights.ptr<const double>(), m);
  }
  std::vector<int64_t> label = dispatch_id(g.id_dtype(), [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    const TypedRows<I> out_rows(csr), in_rows(csc);
    check_symmetric(out_rows, in_rows, n, m);
    if (!weighted) {
      const uint64_t key = choice_key(seed);
      return match(out_rows, n, seed, [key](int64_t e) { return splitmix64(key ^ splitmix64(e)); });
    }
    if (weights.dtype == DType::Float32) {
      const float* w = weights.ptr<const float>();
      return match(out_rows, n, seed, [w](int64_t e) { return w[e]; });
    }
    const double* w = weights.ptr<const double>();
    return match(out_rows, n, seed, [w](int64_t e) { return w[e]; });
  });
  if (relabel) relabel_clusters(label);
  return label;
}

}  // namespace nodeweave::graph
