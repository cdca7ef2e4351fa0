// Filtered ranking: each test triple is scored against every entity by one thread, which counts
// the entities above and tied with the true one, then takes back the known true triples among them.
#include "sparse/kge/filtered_ranking.h"

#include <algorithm>
#include <numeric>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::kge {

KnownTriples::KnownTriples(const Triples& all, int64_t num_entities, int64_t num_relations)
    : num_entities_(num_entities), num_relations_(num_relations) {
  for (int64_t i = 0; i < all.n; ++i) {
    NW_CHECK(all.head[i] >= 0 && all.head[i] < num_entities && all.tail[i] >= 0 &&
                 all.tail[i] < num_entities && all.rel[i] >= 0 && all.rel[i] < num_relations,
             IndexError, "known triple ", i, " (", all.head[i], ", ", all.rel[i], ", ", all.tail[i],
             ") is out of range for ", num_entities, " entities and ", num_relations, " relations");
  }
  auto build = [&](Index& ix, auto key_of, const int64_t* other) {
    std::vector<int64_t> order(static_cast<size_t>(all.n));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const uint64_t ka = key_of(a), kb = key_of(b);
      return ka < kb || (ka == kb && other[a] < other[b]);
    });
    // A triple listed twice (in train and test, say) is one known triple: kept once, so the
    // filter takes it back once.
    for (int64_t i : order) {
      const uint64_t k = key_of(i);
      if (!ix.key.empty() && ix.key.back() == k && ix.other.back() == other[i]) continue;
      ix.key.push_back(k);
      ix.other.push_back(other[i]);
    }
  };
  const auto nr = static_cast<uint64_t>(num_relations), ne = static_cast<uint64_t>(num_entities);
  build(by_head_, [&](int64_t i) { return static_cast<uint64_t>(all.head[i]) * nr + static_cast<uint64_t>(all.rel[i]); },
        all.tail);
  build(by_tail_, [&](int64_t i) { return static_cast<uint64_t>(all.rel[i]) * ne + static_cast<uint64_t>(all.tail[i]); },
        all.head);
}

std::pair<const int64_t*, const int64_t*> KnownTriples::lookup(const Index& ix, uint64_t key) const {
  const auto range = std::equal_range(ix.key.begin(), ix.key.end(), key);
  const int64_t* base = ix.other.data();
  return {base + (range.first - ix.key.begin()), base + (range.second - ix.key.begin())};
}

std::pair<const int64_t*, const int64_t*> KnownTriples::tails_of(int64_t h, int64_t r) const {
  return lookup(by_head_, static_cast<uint64_t>(h) * static_cast<uint64_t>(num_relations_) +
                              static_cast<uint64_t>(r));
}

std::pair<const int64_t*, const int64_t*> KnownTriples::heads_of(int64_t r, int64_t t) const {
  return lookup(by_tail_, static_cast<uint64_t>(r) * static_cast<uint64_t>(num_entities_) +
                              static_cast<uint64_t>(t));
}

template <typename T>
Ranks filtered_ranks(const ScoreSpec& spec, const Tables<T>& tab, const Triples& test,
                     const KnownTriples* known) {
  check_triples(spec, tab, test);
  const int64_t ew = entity_width(spec.model, spec.dim), rw = relation_width(spec.model, spec.dim);
  const T gamma = static_cast<T>(spec.gamma);
  Ranks out;
  out.head.resize(static_cast<size_t>(test.n));
  out.tail.resize(static_cast<size_t>(test.n));
  visit_model(spec.model, [&](auto model) {
    using M = decltype(model);
    parallel_for(0, test.n, 1, [&](int64_t b, int64_t e) {
      std::vector<T> scores(static_cast<size_t>(tab.num_entities));
      for (int64_t i = b; i < e; ++i) {
        const int64_t h = test.head[i], r = test.rel[i], t = test.tail[i];
        const T* hr = tab.entity + h * ew;
        const T* rr = tab.relation + r * rw;
        const T* tr = tab.entity + t * ew;
        for (int side = 0; side < 2; ++side) {
          const bool tails = side == 1;
          for (int64_t x = 0; x < tab.num_entities; ++x) {
            const T* xr = tab.entity + x * ew;
            scores[static_cast<size_t>(x)] = tails ? M::score(hr, rr, xr, spec.dim, gamma)
                                                   : M::score(xr, rr, tr, spec.dim, gamma);
          }
          const int64_t target = tails ? t : h;
          // The target's score from this same pass, so the tie test compares like with like.
          const T s = scores[static_cast<size_t>(target)];
          int64_t greater = 0, tied = 0;
          for (int64_t x = 0; x < tab.num_entities; ++x) {
            const T v = scores[static_cast<size_t>(x)];
            greater += v > s;
            tied += v == s;
          }
          tied -= 1;  // the target itself
          if (known) {
            const auto [fb, fe] = tails ? known->tails_of(h, r) : known->heads_of(r, t);
            for (const int64_t* f = fb; f != fe; ++f) {
              if (*f == target) continue;
              const T v = scores[static_cast<size_t>(*f)];
              greater -= v > s;
              tied -= v == s;
            }
          }
          const double rank = 1.0 + static_cast<double>(greater) + 0.5 * static_cast<double>(tied);
          (tails ? out.tail : out.head)[static_cast<size_t>(i)] = rank;
        }
      }
    });
  });
  return out;
}

template Ranks filtered_ranks<float>(const ScoreSpec&, const Tables<float>&, const Triples&,
                                     const KnownTriples*);
template Ranks filtered_ranks<double>(const ScoreSpec&, const Tables<double>&, const Triples&,
                                      const KnownTriples*);

}  // namespace nodeweave::kge
