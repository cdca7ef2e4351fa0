// Internal to the walk samplers (random_walk.cc, node2vec_walk.cc, pinsage.cc): relations checked
// and prepared for walking, and the step and trace loops they share. PinSAGE runs the very trace
// loop random_walk runs, so its walks are the traces random_walk returns for the same seed (the
// Python tests rebuild PinSAGE's counts from those traces).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sampling/edge_weights.h"
#include "sampling/random.h"
#include "sampling/random_walk.h"

namespace nodeweave::sampling::walk_detail {

// A relation checked and ready to walk: for weighted relations, the alias table of every row
// (the layout the neighbour samplers use), so a weighted step is one uniform position and one
// biased coin, like a uniform step plus one read.
struct PreparedRelation {
  const WalkRelation* rel = nullptr;
  bool weighted = false;
  WeightedRows rows;  // per CSR entry; empty when uniform
};

// Checks the relation's arrays (one id dtype, consistent lengths) and its weights (TypeError for
// a dtype other than float32/float64; ValueError for a wrong length or a negative, NaN or infinite
// value, naming `fn`, `what` and the edge id), then builds the alias tables.
PreparedRelation prepare_relation(const char* fn, const char* what, const WalkRelation& rel);

// prepare_relation for each relation (at least one, all of one id dtype).
std::vector<PreparedRelation> prepare_relations(const char* fn,
                                                const std::vector<WalkRelation>& relations);

// Metapath entries index the relations, and each step leaves from the node type (and node count)
// the step before arrived at: ValueError naming the step, both relations and both types.
void check_metapath(const char* fn, const std::vector<WalkRelation>& rels,
                    const std::vector<int64_t>& metapath);

// The start nodes as int64 (ValueError/TypeError for a non-1-D or non-integer array, IndexError
// naming the first id outside [0, num_nodes)).
std::vector<int64_t> read_starts(const char* fn, const char* what, const ArrayView& starts,
                                 int64_t num_nodes, const std::string& node_what);

// Every restart probability in [0, 1] (ValueError naming `what`, the step and the value).
void check_probability(const char* fn, const char* what, double p);

// The out-edges of one relation as the inner loops read them.
template <typename IdType>
struct WalkAdj {
  const IdType* indptr = nullptr;
  const IdType* indices = nullptr;
  const IdType* eids = nullptr;
  const AliasEntry* alias = nullptr;  // null: uniform
  const int64_t* nonzero = nullptr;   // positive-weight entries per row (weighted only)
  ArrayView prob;                     // the weights by edge id (weighted only)
};

template <typename IdType>
WalkAdj<IdType> adj_of(const PreparedRelation& p) {
  WalkAdj<IdType> a;
  a.indptr = p.rel->out_csr->indptr.data<IdType>();
  a.indices = p.rel->out_csr->indices.data<IdType>();
  a.eids = p.rel->out_csr->eids.data<IdType>();
  if (p.weighted) {
    a.alias = p.rows.entry.data();
    a.nonzero = p.rows.nonzero.data();
    a.prob = p.rel->prob;
  }
  return a;
}

// The weight of CSR entry j (1 when uniform).
template <typename IdType>
inline double entry_weight(const WalkAdj<IdType>& a, int64_t j) {
  return a.alias ? edge_weight_at(a.prob, static_cast<int64_t>(a.eids[j])) : 1.0;
}

// A uniform position of v's row (CSR entry), or -1 when v has no out-edge of positive weight.
// One draw. For a weighted relation the position is then resolved by resolve_entry, a read of its
// alias entry that the caller can prefetch in between.
template <typename IdType>
inline int64_t draw_position(const WalkAdj<IdType>& a, int64_t v, CounterRng& rng) {
  const int64_t b = a.indptr[v], e = a.indptr[v + 1];
  if (b == e || (a.alias && a.nonzero[v] == 0)) return -1;
  return b + static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(e - b)));
}

// The entry picked at position j of v's row: j itself when uniform, else j kept with probability
// keep or its alias. One draw when weighted.
template <typename IdType>
inline int64_t resolve_entry(const WalkAdj<IdType>& a, int64_t v, int64_t j, CounterRng& rng) {
  if (!a.alias) return j;
  const AliasEntry x = a.alias[j];
  return rng.uniform() < static_cast<double>(x.keep) ? j : static_cast<int64_t>(a.indptr[v]) + x.alias;
}

// The CSR entry of v's out-edge picked uniformly or by weight, or -1 (no out-edge of positive
// weight): draw_position then resolve_entry.
template <typename IdType>
inline int64_t pick_entry(const WalkAdj<IdType>& a, int64_t v, CounterRng& rng) {
  const int64_t j = draw_position(a, v, rng);
  return j < 0 ? -1 : resolve_entry(a, v, j, rng);
}

// Walks number first .. first + count - 1 (walk w draws from CounterRng(derive_key(seed, w)))
// from starts[0 .. count - 1] along `steps` (one adjacency per step). Row i of `nodes` (length + 1
// wide) and of `eids` (length wide; skipped when null) receive walk first + i, -1 after it ends.
// Before step k a walk ends with probability restart[k]; a variate is drawn only where
// restart[k] > 0, so a walk without restart draws one number per uniform step.
//
// A step is two dependent cache misses (the row bounds, then the picked entry) on a large graph.
// Walking one walk at a time leaves the core waiting on each; here kLanes walks advance one step
// together, in two passes that each issue one prefetch per walk, so their misses overlap. Each
// walk still makes the same draws in the same order as alone: the traces do not depend on the
// interleaving (nor on how the caller splits walks between threads).
template <typename IdType>
void walk_traces(const WalkAdj<IdType>* steps, const double* restart, int64_t length,
                 const int64_t* starts, int64_t first, int64_t count, uint64_t seed, int64_t* nodes,
                 int64_t* eids) {
  constexpr int64_t kLanes = 16;
  std::vector<CounterRng> rng;
  rng.reserve(kLanes);
  int64_t cur[kLanes], entry[kLanes], taken[kLanes];
  int live[kLanes];
  const int64_t width = length + 1;
  for (int64_t g = 0; g < count; g += kLanes) {
    const int n = static_cast<int>(std::min(kLanes, count - g));
    int num_live = 0;
    rng.clear();
    for (int l = 0; l < n; ++l) {
      rng.emplace_back(derive_key(seed, static_cast<uint64_t>(first + g + l)));
      cur[l] = starts[g + l];
      nodes[(g + l) * width] = cur[l];
      taken[l] = length;
      live[num_live++] = l;
      if (length > 0) __builtin_prefetch(steps[0].indptr + cur[l]);
    }
    for (int64_t k = 0; k < length && num_live > 0; ++k) {
      const WalkAdj<IdType>& a = steps[k];
      const double r = restart[k];
      int still = 0;
      for (int i = 0; i < num_live; ++i) {  // draw a position, prefetch its entry (or alias)
        const int l = live[i];
        const int64_t j = r > 0 && rng[l].uniform() < r ? -1 : draw_position(a, cur[l], rng[l]);
        if (j < 0) {
          taken[l] = k;
          continue;
        }
        entry[l] = j;
        if (a.alias) {
          __builtin_prefetch(a.alias + j);
        } else {
          __builtin_prefetch(a.indices + j);
          if (eids) __builtin_prefetch(a.eids + j);
        }
        live[still++] = l;
      }
      num_live = still;
      if (a.alias) {
        for (int i = 0; i < num_live; ++i) {  // weighted: resolve, prefetch the picked entry
          const int l = live[i];
          entry[l] = resolve_entry(a, cur[l], entry[l], rng[l]);
          __builtin_prefetch(a.indices + entry[l]);
          if (eids) __builtin_prefetch(a.eids + entry[l]);
        }
      }
      const WalkAdj<IdType>* next = k + 1 < length ? &steps[k + 1] : nullptr;
      for (int i = 0; i < num_live; ++i) {  // move, and prefetch the next row's bounds
        const int l = live[i];
        cur[l] = a.indices[entry[l]];
        nodes[(g + l) * width + k + 1] = cur[l];
        if (eids) eids[(g + l) * length + k] = a.eids[entry[l]];
        if (next) __builtin_prefetch(next->indptr + cur[l]);
      }
    }
    for (int l = 0; l < n; ++l)
      for (int64_t t = taken[l]; t < length; ++t) {
        nodes[(g + l) * width + t + 1] = -1;
        if (eids) eids[(g + l) * length + t] = -1;
      }
  }
}

// Starts per parallel chunk: a walk is hundreds of cache misses, so even small batches are worth
// a thread, but each chunk should amortize the team's wake-up.
constexpr int64_t kWalkGrain = 64;

}  // namespace nodeweave::sampling::walk_detail
