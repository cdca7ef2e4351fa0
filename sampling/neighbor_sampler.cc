// Neighbour sampling of one relation. Per seed: uniform picks by Floyd's algorithm (O(fanout)
// draws, no O(degree) scratch), weighted picks from the row's alias table when the caller has one
// (rejecting repeats), else by Efraimidis-Spirakis exponential keys over the row.
// Successive weighted sampling and exponential keys give the same distribution over subsets, so
// the fallback from one to the other changes no probability.
#include "sampling/neighbor_sampler.h"

#include <algorithm>
#include <cmath>

#include "core_framework/runtime/error.h"
#include "sampling/ordered_chunks.h"
#include "sampling/random.h"

namespace nodeweave::sampling {

namespace {

// Per-thread scratch, reused across the seeds of a chunk.
struct Scratch {
  std::vector<int64_t> picks;
  std::vector<double> weight, key;
  std::vector<int64_t> order;
  std::vector<int64_t> draw_pos;
  std::vector<double> draw_coin;
};

// How far ahead the seed loop prefetches: the row offsets of seed i + kRowAhead, and the picked
// entries of seed i are read kEmitLag seeds after their prefetch was issued. Seeds are random
// nodes and picks random entries of their rows, so every one of those reads is a cache miss on a
// large graph; issued early, they overlap instead of queuing (measured on R-MAT 2^20).
constexpr int64_t kRowAhead = 16;
constexpr int64_t kEmitLag = 8;
// Weighted rows: the first alias draws of seed i + kDrawAhead are made (and their table entries
// prefetched) once seed i is picked, so a row's draws no longer wait on their own misses. Below
// kRowAhead, so the row's offsets and nonzero count are already cached.
constexpr int64_t kDrawAhead = 8;
// Seeds per chunk of the parallel loop: small enough that threads stay busy on skewed degrees and
// the sink's serial work overlaps the sampling, large enough that the prefetch lags fill.
constexpr int64_t kSeedsPerChunk = 256;

bool is_excluded(const std::vector<int64_t>& exclude, int64_t eid) {
  return !exclude.empty() && std::binary_search(exclude.begin(), exclude.end(), eid);
}

// Floyd's algorithm: `k` distinct positions of [0, d), k < d, each subset equally likely.
void floyd(int64_t d, int64_t k, CounterRng& rng, std::vector<int64_t>& picks) {
  for (int64_t j = d - k; j < d; ++j) {
    const int64_t t = static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(j + 1)));
    const bool seen = std::find(picks.begin(), picks.end(), t) != picks.end();
    picks.push_back(seen ? j : t);
  }
}

// `k` positions of a row by successive weighted draws: `draw()` returns one position with
// probability proportional to its weight. Returns false (picks cleared) when repeats make it slow:
// the caller then uses exponential keys.
template <typename Draw>
bool successive_weighted(int64_t k, bool replace, const Draw& draw, std::vector<int64_t>& picks) {
  const int64_t budget = replace ? k : 4 * k + 16;
  for (int64_t n = 0; n < budget && static_cast<int64_t>(picks.size()) < k; ++n) {
    const int64_t pos = draw();
    if (replace || std::find(picks.begin(), picks.end(), pos) == picks.end()) picks.push_back(pos);
  }
  if (static_cast<int64_t>(picks.size()) == k) return true;
  picks.clear();
  return false;
}

// One draw from running sums cum[0..d) of a row (total cum[d-1] > 0).
int64_t draw_cumulative(const double* cum, int64_t d, CounterRng& rng) {
  const double x = rng.uniform() * cum[d - 1];
  const int64_t pos = std::upper_bound(cum, cum + d, x) - cum;
  return std::min(pos, d - 1);  // x rounding up to the total
}

// `k` positions of the positive weights w[0..d) without replacement: the k smallest exponential
// keys -log(u) / w (Efraimidis & Spirakis, 2006).
void exponential_keys(const double* w, int64_t d, int64_t k, CounterRng& rng, Scratch& s) {
  s.key.resize(static_cast<size_t>(d));
  s.order.clear();
  for (int64_t j = 0; j < d; ++j) {
    const double u = rng.uniform_pos();  // drawn for every entry: the stream stays aligned
    if (w[j] > 0) {
      s.key[static_cast<size_t>(j)] = -std::log(u) / w[j];
      s.order.push_back(j);
    }
  }
  auto by_key = [&](int64_t a, int64_t b) {
    return s.key[static_cast<size_t>(a)] < s.key[static_cast<size_t>(b)] ||
           (s.key[static_cast<size_t>(a)] == s.key[static_cast<size_t>(b)] && a < b);
  };
  if (static_cast<int64_t>(s.order.size()) > k) {
    std::nth_element(s.order.begin(), s.order.begin() + k, s.order.end(), by_key);
    s.order.resize(static_cast<size_t>(k));
  }
  s.picks.insert(s.picks.end(), s.order.begin(), s.order.end());
}

// The first `k` alias-table draws of a row of `d` entries (positions and coins, in the order the
// row's generator gives them), their table entries prefetched.
template <typename EntryAt>
void predraw(int64_t d, int64_t k, CounterRng& rng, std::vector<int64_t>& pos,
             std::vector<double>& coin, const EntryAt& entry_at) {
  pos.resize(static_cast<size_t>(k));
  coin.resize(static_cast<size_t>(k));
  for (int64_t t = 0; t < k; ++t) {
    const int64_t j = static_cast<int64_t>(
        rng.alias_draw(static_cast<uint64_t>(d), &coin[static_cast<size_t>(t)]));
    pos[static_cast<size_t>(t)] = j;
    __builtin_prefetch(&entry_at(j));
  }
}

// A seed's first alias draws made ahead of its turn (index: its place in the seed list, -1 when
// empty) and the row's generator as they left it.
struct Predrawn {
  int64_t index = -1;
  CounterRng rng{0};
  std::vector<int64_t> pos;
  std::vector<double> coin;
};

// The alias entry of position j of the row starting at `begin`: beside the (neighbour, edge id)
// pair when packed that way.
inline const AliasEntry& alias_entry(const NeighborSampleOptions& opt, int64_t begin, int64_t j) {
  const PackedRows* pw = opt.packed && opt.packed->weighted() ? opt.packed : nullptr;
  return pw ? pw->alias(begin + j) : opt.weighted_rows->entry[static_cast<size_t>(begin + j)];
}

// Positions (0-based within the row) picked from a row of `d` entries starting at entry `begin`.
// `pre`: this seed's draws made ahead, or null.
template <typename Id>
void pick_row(const Id* eids, int64_t row, int64_t begin, int64_t d, CounterRng& rng,
              const NeighborSampleOptions& opt, Scratch& s, Predrawn* pre) {
  s.picks.clear();
  const int64_t k = opt.fanout;
  const bool weighted = opt.weights.data != nullptr;
  if (!weighted && opt.exclude.empty()) {
    if (k < 0 || (!opt.replace && k >= d)) {
      for (int64_t j = 0; j < d; ++j) s.picks.push_back(j);
    } else if (opt.replace) {
      if (d > 0)
        for (int64_t j = 0; j < k; ++j)
          s.picks.push_back(static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(d))));
    } else {
      floyd(d, k, rng, s.picks);
    }
    return;
  }
  if (weighted && opt.weighted_rows && opt.exclude.empty()) {
    auto entry_at = [&](int64_t j) -> const AliasEntry& { return alias_entry(opt, begin, j); };
    const int64_t nonzero = opt.weighted_rows->nonzero[static_cast<size_t>(row)];
    if (k < 0 || (!opt.replace && k >= nonzero)) {
      if (nonzero == d) {
        for (int64_t j = 0; j < d; ++j) s.picks.push_back(j);
      } else {
        for (int64_t j = 0; j < d; ++j)
          if (entry_at(j).keep >= 0) s.picks.push_back(j);
      }
      return;
    }
    if (nonzero == 0) return;
    // The first k draws are made up front and their table entries prefetched, so that their
    // cache misses overlap; they are resolved in draw order, so the picks do not change. The seed
    // loop usually made them kDrawAhead seeds earlier (predraw_row), with the row's generator.
    if (pre && pre->index >= 0) {
      rng = pre->rng;
      s.draw_pos.swap(pre->pos);
      s.draw_coin.swap(pre->coin);
      pre->index = -1;
    } else {
      predraw(d, k, rng, s.draw_pos, s.draw_coin, entry_at);
    }
    int64_t next = 0;
    auto draw = [&] {
      int64_t j;
      double coin;
      if (next < k) {
        j = s.draw_pos[static_cast<size_t>(next)];
        coin = s.draw_coin[static_cast<size_t>(next)];
        ++next;
      } else {
        j = static_cast<int64_t>(rng.alias_draw(static_cast<uint64_t>(d), &coin));
      }
      const AliasEntry a = entry_at(j);
      return coin < static_cast<double>(a.keep) ? j : static_cast<int64_t>(a.alias);
    };
    if (successive_weighted(k, opt.replace, draw, s.picks)) return;
    s.weight.resize(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j)
      s.weight[static_cast<size_t>(j)] =
          edge_weight_at(opt.weights, static_cast<int64_t>(eids[begin + j]));
    exponential_keys(s.weight.data(), d, k, rng, s);
    return;
  }
  // Weights read per edge id (and exclusions applied) for this row only.
  s.weight.resize(static_cast<size_t>(d));
  int64_t nonzero = 0;
  for (int64_t j = 0; j < d; ++j) {
    const int64_t eid = static_cast<int64_t>(eids[begin + j]);
    double v = weighted ? edge_weight_at(opt.weights, eid) : 1.0;
    if (v > 0 && is_excluded(opt.exclude, eid)) v = 0;
    s.weight[static_cast<size_t>(j)] = v;
    nonzero += v > 0;
  }
  if (k < 0 || (!opt.replace && k >= nonzero)) {
    for (int64_t j = 0; j < d; ++j)
      if (s.weight[static_cast<size_t>(j)] > 0) s.picks.push_back(j);
    return;
  }
  if (nonzero == 0) return;
  if (opt.replace) {
    s.key.resize(static_cast<size_t>(d));  // running sums of this row
    double run = 0;
    for (int64_t j = 0; j < d; ++j)
      s.key[static_cast<size_t>(j)] = run += s.weight[static_cast<size_t>(j)];
    successive_weighted(
        k, true, [&] { return draw_cumulative(s.key.data(), d, rng); }, s.picks);
    return;
  }
  exponential_keys(s.weight.data(), d, k, rng, s);
}

template <typename Id>
void sample_typed(const graph::CompressedArrays& adj, const int64_t* seeds, int64_t num_seeds,
                  const NeighborSampleOptions& opt, const EdgeSink& sink) {
  const Id* indptr = adj.indptr.data<Id>();
  const Id* indices = adj.indices.data<Id>();
  const Id* eids = adj.eids.data<Id>();
  // Each chunk of seeds fills its own lists, handed to the sink in seed order.
  auto produce = [&](int64_t b, int64_t e) {
    SampledEdges local;
    if (opt.fanout >= 0) {  // growing the lists page by page costs more than the sampling
      const size_t guess = static_cast<size_t>((e - b) * opt.fanout);
      local.seed_pos.reserve(guess);
      local.neighbor.reserve(guess);
      local.eid.reserve(guess);
    }
    Scratch s;
    // Seeds whose picks are prefetched but not yet emitted, in a ring of kEmitLag slots.
    struct Pending {
      int64_t pos = -1, begin = 0;
      std::vector<int64_t> picks;
    };
    Pending ring[kEmitLag];
    const PackedRows* packed = opt.packed;
    const int64_t* nonzero = opt.weighted_rows ? opt.weighted_rows->nonzero.data() : nullptr;
    auto emit = [&](Pending& p) {
      const size_t at = local.eid.size(), k = p.picks.size();
      local.seed_pos.resize(at + k, p.pos);
      local.neighbor.resize(at + k);
      local.eid.resize(at + k);
      int64_t* nbr = local.neighbor.data() + at;
      int64_t* eid = local.eid.data() + at;
      for (size_t t = 0; t < k; ++t) {
        const int64_t i = p.begin + p.picks[t];
        if (packed) {
          const PackedEntry pe = packed->pair(i);
          nbr[t] = pe.neighbor;
          eid[t] = pe.eid;
        } else {
          nbr[t] = static_cast<int64_t>(indices[i]);
          eid[t] = static_cast<int64_t>(eids[i]);
        }
      }
      p.pos = -1;
    };
    // Ahead draws only where pick_row takes the alias-draw path: weighted rows with a table, no
    // exclusions, a fanout below the row's nonzero count (or with replacement).
    const bool draw_ahead =
        opt.weights.data && opt.weighted_rows && opt.exclude.empty() && opt.fanout >= 0;
    Predrawn ahead[kDrawAhead];
    auto predraw_row = [&](int64_t i) {
      Predrawn& p = ahead[i % kDrawAhead];
      p.index = -1;
      const int64_t row = seeds[i];
      const int64_t begin = static_cast<int64_t>(indptr[row]);
      const int64_t d = static_cast<int64_t>(indptr[row + 1]) - begin;
      const int64_t nz = nonzero[row];
      if (nz == 0 || (!opt.replace && opt.fanout >= nz)) return;
      p.rng = CounterRng(derive_key(opt.key, static_cast<uint64_t>(row + opt.key_row_offset)));
      predraw(d, opt.fanout, p.rng, p.pos, p.coin,
              [&](int64_t j) -> const AliasEntry& { return alias_entry(opt, begin, j); });
      p.index = i;
    };
    if (draw_ahead)
      for (int64_t i = b; i < std::min(e, b + kDrawAhead); ++i) predraw_row(i);
    for (int64_t i = b; i < e; ++i) {
      if (i + kRowAhead < e) {
        __builtin_prefetch(indptr + seeds[i + kRowAhead]);
        if (nonzero) __builtin_prefetch(nonzero + seeds[i + kRowAhead]);
      }
      const int64_t row = seeds[i];
      const int64_t begin = static_cast<int64_t>(indptr[row]);
      const int64_t d = static_cast<int64_t>(indptr[row + 1]) - begin;
      CounterRng rng(derive_key(opt.key, static_cast<uint64_t>(row + opt.key_row_offset)));
      Predrawn* pre = nullptr;
      if (draw_ahead) {
        pre = &ahead[i % kDrawAhead];
        if (pre->index != i) pre = nullptr;
      }
      pick_row<Id>(eids, row, begin, d, rng, opt, s, pre);
      if (draw_ahead && i + kDrawAhead < e) predraw_row(i + kDrawAhead);
      std::sort(s.picks.begin(), s.picks.end());
      if (packed) {
        for (int64_t j : s.picks) __builtin_prefetch(packed->pair_ptr(begin + j));
      } else {
        for (int64_t j : s.picks) {
          __builtin_prefetch(indices + begin + j);
          __builtin_prefetch(eids + begin + j);
        }
      }
      Pending& slot = ring[i % kEmitLag];
      if (slot.pos >= 0) emit(slot);
      slot.pos = i;
      slot.begin = begin;
      slot.picks.swap(s.picks);
    }
    for (int64_t i = std::max(b, e - kEmitLag); i < e; ++i) emit(ring[i % kEmitLag]);
    return local;
  };
  ordered_pipeline<SampledEdges>(num_seeds, kSeedsPerChunk, produce, sink);
}

}  // namespace

int64_t most_picks(const graph::CompressedArrays& adj, const int64_t* seeds, int64_t num_seeds,
                   int64_t fanout, bool replace) {
  return graph::dispatch_id(adj.indptr.dtype, [&](auto* tag) {
    using Id = std::remove_pointer_t<decltype(tag)>;
    const Id* indptr = adj.indptr.data<Id>();
    int64_t total = 0;
    for (int64_t i = 0; i < num_seeds; ++i) {
      if (i + kRowAhead < num_seeds) __builtin_prefetch(indptr + seeds[i + kRowAhead]);
      const int64_t d = static_cast<int64_t>(indptr[seeds[i] + 1] - indptr[seeds[i]]);
      total += fanout < 0 ? d : replace ? (d > 0 ? fanout : 0) : std::min(fanout, d);
    }
    return total;
  });
}

void check_fanout(const char* fn, const char* name, int64_t fanout) {
  NW_CHECK(fanout >= -1, ValueError, fn, ": ", name,
           " must be -1 (every neighbour) or a non-negative count, got ", fanout);
}

void sample_neighbors_streamed(const graph::CompressedArrays& adj, const int64_t* seeds,
                               int64_t num_seeds, const NeighborSampleOptions& opt,
                               const EdgeSink& sink) {
  if (adj.indptr.dtype == DType::Int32)
    sample_typed<int32_t>(adj, seeds, num_seeds, opt, sink);
  else
    sample_typed<int64_t>(adj, seeds, num_seeds, opt, sink);
}

SampledEdges sample_neighbors_unchecked(const graph::CompressedArrays& adj, const int64_t* seeds,
                                        int64_t num_seeds, const NeighborSampleOptions& opt) {
  SampledEdges out;
  sample_neighbors_streamed(adj, seeds, num_seeds, opt,
                            [&](SampledEdges&& part) { out.append(std::move(part)); });
  return out;
}

std::vector<int64_t> checked_seeds(const char* fn, const graph::CompressedArrays& adj,
                                   int64_t num_rows, const ArrayView& seeds,
                                   const ArrayView& weights, const std::vector<int64_t>& exclude) {
  NW_CHECK(adj.indptr.device().is_cpu(), ValueError, fn, ": the graph must be on the CPU, got ",
           adj.indptr.device().str());
  NW_CHECK(seeds.device.is_cpu(), ValueError, fn, ": nodes must be on the CPU");
  NW_CHECK(seeds.shape.size() == 1 && seeds.is_contiguous(), ValueError, fn,
           ": nodes must be a contiguous 1-D array, got shape ", shape_str(seeds.shape));
  NW_CHECK(seeds.dtype == DType::Int32 || seeds.dtype == DType::Int64, TypeError, fn,
           ": nodes must hold int32 or int64 ids, got ", dtype_name(seeds.dtype));
  const int64_t n = seeds.shape[0];
  std::vector<int64_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v =
        seeds.dtype == DType::Int32 ? seeds.ptr<int32_t>()[i] : seeds.ptr<int64_t>()[i];
    NW_CHECK(v >= 0 && v < num_rows, IndexError, fn, ": nodes[", i, "] = ", v,
             " is out of range: the relation has ", num_rows, " nodes on that side");
    ids[static_cast<size_t>(i)] = v;
  }
  if (weights.data) check_edge_weights(fn, "prob", weights, adj.indices.length);
  NW_CHECK(std::is_sorted(exclude.begin(), exclude.end()), ValueError, fn,
           ": exclude must be sorted");
  return ids;
}

SampledEdges sample_neighbors(const graph::CompressedArrays& adj, int64_t num_rows,
                              const ArrayView& seeds, const NeighborSampleOptions& opt) {
  const char* fn = "sample_neighbors";
  check_fanout(fn, "fanout", opt.fanout);
  const std::vector<int64_t> ids =
      checked_seeds(fn, adj, num_rows, seeds, opt.weights, opt.exclude);
  return sample_neighbors_unchecked(adj, ids.data(), static_cast<int64_t>(ids.size()), opt);
}

}  // namespace nodeweave::sampling
