// Negative samplers. The global sampler's cost is dominated by the existence check of each
// candidate pair. Mini-batch calls ask for a few thousand pairs of a graph with millions of edges:
// scanning the candidate's (unsorted) CSR row costs the average degree per candidate, far less
// than sorting every row once, so kAuto scans unless the call is large enough for the sort to pay
// (or the rows are sorted already, which is cheap to find out only when the call is large anyway).
#include "sampling/negative_sampler.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "sampling/random.h"

namespace nodeweave::sampling {

namespace {

using graph::CompressedArrays;
using graph::dispatch_id;
using graph::RelationGraph;

constexpr int kTrials = 3;        // random pairs one candidate slot tries (DGL tries 3 as well)
constexpr int64_t kChunk = 1024;  // candidate slots per random stream
constexpr int kMaxRounds = 8;     // rounds of candidates before a short result is returned
constexpr int64_t kMaxSlots = int64_t{1} << 31;

// Reads one CSR row per lookup, with binary search when the rows are sorted.
template <typename I>
class EdgeIndex {
 public:
  EdgeIndex(const CompressedArrays& csr, int64_t num_rows, bool want_sorted)
      : indptr_(csr.indptr.data<I>()), cols_(csr.indices.data<I>()) {
    if (!want_sorted) return;
    sorted_ = rows_sorted(num_rows);
    if (sorted_) return;
    // The CSR groups a row's entries in edge-id order, not by column: sort a copy.
    const int64_t n = csr.indices.length;
    copy_.assign(cols_, cols_ + n);
    parallel_for(0, num_rows, 4096, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r)
        std::sort(copy_.begin() + indptr_[r], copy_.begin() + indptr_[r + 1]);
    });
    cols_ = copy_.data();
    sorted_ = true;
  }

  bool contains(int64_t u, int64_t v) const {
    const I* b = cols_ + indptr_[u];
    const I* e = cols_ + indptr_[u + 1];
    const I x = static_cast<I>(v);
    return sorted_ ? std::binary_search(b, e, x) : std::find(b, e, x) != e;
  }

 private:
  bool rows_sorted(int64_t num_rows) const {
    std::atomic<bool> ok{true};
    parallel_for(0, num_rows, 4096, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e && ok.load(std::memory_order_relaxed); ++r) {
        if (!std::is_sorted(cols_ + indptr_[r], cols_ + indptr_[r + 1])) ok = false;
      }
    });
    return ok.load();
  }

  const I* indptr_;
  const I* cols_;
  std::vector<I> copy_;
  bool sorted_ = false;
};

void check_options(const char* fn, const GlobalNegativeOptions& opt) {
  NW_CHECK(opt.num_samples >= 0, ValueError, fn, ": num_samples must be >= 0, got ",
           opt.num_samples);
  if (opt.redundancy) {
    NW_CHECK(std::isfinite(*opt.redundancy) && *opt.redundancy >= 0, ValueError, fn,
             ": redundancy must be a finite number >= 0, got ", *opt.redundancy);
  }
}

// Candidate slots for `want` more pairs. With a user redundancy, DGL's count; otherwise the
// smallest n whose successes (each slot succeeds with probability q) reach `want` three standard
// deviations below their mean: n q - 3 sqrt(n q (1 - q)) >= want, a quadratic in sqrt(n).
int64_t candidate_slots(int64_t want, const RelationGraph& g, bool no_loops,
                        const std::optional<double>& redundancy) {
  double n;
  if (redundancy) {
    n = std::ceil(static_cast<double>(want) * (1.0 + *redundancy));
  } else {
    const double pairs = static_cast<double>(g.num_src()) * static_cast<double>(g.num_dst());
    const double loops = no_loops ? static_cast<double>(std::min(g.num_src(), g.num_dst())) : 0.0;
    // Existing edges and loops over-count the rejected pairs (multi-edges), so q is a lower bound;
    // the floor keeps a nearly complete graph from asking for unbounded candidates.
    const double rejected = std::min(1.0, (static_cast<double>(g.num_edges()) + loops) / pairs);
    const double q = std::max(1.0 - std::pow(rejected, kTrials), 1.0 / 64);
    const double s = 3.0 * std::sqrt(q * (1.0 - q));
    const double root = (s + std::sqrt(s * s + 4.0 * q * static_cast<double>(want))) / (2.0 * q);
    n = std::ceil(root * root);
  }
  NW_CHECK(n <= static_cast<double>(kMaxSlots), ValueError,
           "global_uniform_negative_sampling: num_samples * (1 + redundancy) = ", n,
           " candidates is more than the limit of ", kMaxSlots);
  return std::max<int64_t>(static_cast<int64_t>(n), want);
}

// One round: `slots` candidate slots in chunks of kChunk, chunk c drawing from its own stream, so
// the accepted pairs (appended in slot order) do not depend on how chunks meet threads.
template <typename I>
void draw_round(const EdgeIndex<I>& index, const RelationGraph& g, bool no_loops, int64_t slots,
                uint64_t round_key, NegativePairs& out) {
  const int64_t num_src = g.num_src(), num_dst = g.num_dst();
  std::vector<int64_t> us(static_cast<size_t>(slots)), vs(static_cast<size_t>(slots));
  const int64_t chunks = (slots + kChunk - 1) / kChunk;
  parallel_for(0, chunks, 2, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      CounterRng rng(derive_key(round_key, static_cast<uint64_t>(c)));
      const int64_t end = std::min(slots, (c + 1) * kChunk);
      for (int64_t i = c * kChunk; i < end; ++i) {
        us[i] = -1;
        for (int t = 0; t < kTrials; ++t) {
          const auto u = static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(num_src)));
          const auto v = static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(num_dst)));
          if ((no_loops && u == v) || index.contains(u, v)) continue;
          us[i] = u;
          vs[i] = v;
          break;
        }
      }
    }
  });
  for (int64_t i = 0; i < slots; ++i) {
    if (us[i] < 0) continue;
    out.src.push_back(us[i]);
    out.dst.push_back(vs[i]);
  }
}

// Drops every repeat of an earlier pair, keeping the first occurrences in their order.
void drop_repeats(NegativePairs& p) {
  const int64_t n = p.size();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    if (p.src[a] != p.src[b]) return p.src[a] < p.src[b];
    if (p.dst[a] != p.dst[b]) return p.dst[a] < p.dst[b];
    return a < b;
  });
  std::vector<char> keep(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t a = order[i];
    keep[a] = i == 0 || p.src[a] != p.src[order[i - 1]] || p.dst[a] != p.dst[order[i - 1]];
  }
  int64_t w = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!keep[i]) continue;
    p.src[w] = p.src[i];
    p.dst[w] = p.dst[i];
    ++w;
  }
  p.src.resize(w);
  p.dst.resize(w);
}

template <typename I>
NegativePairs global_negatives(const RelationGraph& g, const GlobalNegativeOptions& opt) {
  NegativePairs out;
  const bool no_loops = opt.exclude_self_loops;
  int64_t slots = candidate_slots(opt.num_samples, g, no_loops, opt.redundancy);
  bool sorted = opt.lookup == EdgeLookup::kSortedRows;
  if (opt.lookup == EdgeLookup::kAuto) {
    // A uniform source's row holds num_edges / num_src entries on average.
    const double scan_cost = static_cast<double>(slots) * kTrials *
                             static_cast<double>(g.num_edges()) / static_cast<double>(g.num_src());
    sorted = scan_cost > static_cast<double>(g.num_edges());
  }
  const EdgeIndex<I> index(g.out_csr(), g.num_src(), sorted);
  for (int round = 0; round < kMaxRounds; ++round) {
    const int64_t before = out.size();
    draw_round(index, g, no_loops, slots, derive_key(opt.key, static_cast<uint64_t>(round)), out);
    if (!opt.replace) drop_repeats(out);
    if (out.size() >= opt.num_samples || out.size() == before) break;
    slots = candidate_slots(opt.num_samples - out.size(), g, no_loops, opt.redundancy);
  }
  if (out.size() > opt.num_samples) {
    out.src.resize(opt.num_samples);
    out.dst.resize(opt.num_samples);
  }
  return out;
}

}  // namespace

NegativePairs per_source_uniform_negatives(const RelationGraph& g, const int64_t* eids,
                                           int64_t num_eids, int64_t k, uint64_t key) {
  const char* fn = "per_source_uniform_negatives";
  NW_CHECK(k >= 1, ValueError, fn, ": k (negatives per edge) must be >= 1, got ", k);
  NW_CHECK(num_eids >= 0, ValueError, fn, ": eids: negative length ", num_eids);
  NW_CHECK(num_eids == 0 || k <= std::numeric_limits<int64_t>::max() / num_eids, ValueError, fn,
           ": ", num_eids, " edges times k = ", k, " negatives overflows int64");
  NW_CHECK(g.device().is_cpu(), ValueError, fn, ": the relation must be on the CPU, got ",
           g.device().str());
  for (int64_t i = 0; i < num_eids; ++i) {
    NW_CHECK(eids[i] >= 0 && eids[i] < g.num_edges(), IndexError, fn, ": eids[", i, "] = ", eids[i],
             " is out of range: the relation has ", g.num_edges(), " edges");
  }
  NW_CHECK(num_eids == 0 || g.num_dst() > 0, ValueError, fn,
           ": the relation has no destination nodes to draw negatives from");
  NegativePairs out;
  out.src.resize(static_cast<size_t>(num_eids * k));
  out.dst.resize(static_cast<size_t>(num_eids * k));
  if (num_eids == 0) return out;
  const graph::IdArray& src_of = g.coo().src;
  const auto num_dst = static_cast<uint64_t>(g.num_dst());
  dispatch_id(src_of.dtype, [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    const I* src = src_of.data<I>();
    parallel_for(0, num_eids, std::max<int64_t>(1, kGrainSize / k), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        // One stream per position: edge i's negatives do not depend on the thread that draws them.
        CounterRng rng(derive_key(key, static_cast<uint64_t>(i)));
        const int64_t u = src[eids[i]];
        for (int64_t j = i * k; j < (i + 1) * k; ++j) {
          out.src[j] = u;
          out.dst[j] = static_cast<int64_t>(rng.uniform_int(num_dst));
        }
      }
    });
  });
  return out;
}

NegativePairs global_uniform_negatives(const RelationGraph& g, const GlobalNegativeOptions& opt) {
  const char* fn = "global_uniform_negative_sampling";
  check_options(fn, opt);
  NW_CHECK(g.device().is_cpu(), ValueError, fn, ": the relation must be on the CPU, got ",
           g.device().str());
  if (opt.num_samples == 0 || g.num_src() == 0 || g.num_dst() == 0) return {};
  return dispatch_id(g.id_dtype(), [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    return global_negatives<I>(g, opt);
  });
}

}  // namespace nodeweave::sampling
