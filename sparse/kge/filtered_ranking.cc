// Filtered ranking: a block of test triples is scored against every entity through the models'
// queries (chunk_scores.h: GEMMs for the bilinear models and TransE_l2, vectorised distance loops
// for the others), then each triple counts the entities above and tied with its true one and takes
// back the known true triples among them. Blocks run in parallel.
#include "sparse/kge/filtered_ranking.h"

#include <algorithm>
#include <numeric>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "sparse/kge/chunk_scores.h"

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
  const int64_t ne = tab.num_entities;
  const T gamma = static_cast<T>(spec.gamma);
  // Test triples per block: their scores against every entity are held at once (block x entities),
  // so memory stays near kBlockScores floats per thread whatever the number of test triples.
  constexpr int64_t kBlockScores = int64_t{1} << 22;
  const int64_t block = std::clamp<int64_t>(kBlockScores / std::max<int64_t>(ne, 1), 1, 64);
  // Entities scored per chunk_forward call: the "negatives" of chunk_scores.h.
  constexpr int64_t kEntityChunk = 1024;
  Ranks out;
  out.head.resize(static_cast<size_t>(test.n));
  out.tail.resize(static_cast<size_t>(test.n));
  visit_model(spec.model, [&](auto model) {
    using M = decltype(model);
    const int64_t nblocks = (test.n + block - 1) / block;
    parallel_for(0, nblocks, 1, [&](int64_t bb, int64_t be) {
      ChunkWork<T> work;
      std::vector<T> scores, part;
      std::vector<const T*> h, r, t, cand;
      for (int64_t blk = bb; blk < be; ++blk) {
        const int64_t first = blk * block, c = std::min(block, test.n - first);
        h.resize(static_cast<size_t>(c));
        r.resize(static_cast<size_t>(c));
        t.resize(static_cast<size_t>(c));
        for (int64_t i = 0; i < c; ++i) {
          h[static_cast<size_t>(i)] = tab.entity + test.head[first + i] * ew;
          r[static_cast<size_t>(i)] = tab.relation + test.rel[first + i] * rw;
          t[static_cast<size_t>(i)] = tab.entity + test.tail[first + i] * ew;
        }
        scores.resize(static_cast<size_t>(c * ne));
        for (int side = 0; side < 2; ++side) {
          const bool tails = side == 1;
          // Every entity in place of the head (or tail) of every triple of the block.
          for (int64_t e0 = 0; e0 < ne; e0 += kEntityChunk) {
            const int64_t k = std::min(kEntityChunk, ne - e0);
            cand.resize(static_cast<size_t>(k));
            for (int64_t j = 0; j < k; ++j) cand[static_cast<size_t>(j)] = tab.entity + (e0 + j) * ew;
            part.resize(static_cast<size_t>(c * k));
            chunk_forward<M>(h.data(), r.data(), t.data(), c, cand.data(), k, !tails, spec.dim, gamma,
                             work, part.data());
            for (int64_t i = 0; i < c; ++i)
              std::copy(part.begin() + i * k, part.begin() + (i + 1) * k, scores.begin() + i * ne + e0);
          }
          for (int64_t i = 0; i < c; ++i) {
            const int64_t g = first + i;
            const int64_t hh = test.head[g], rr = test.rel[g], tt = test.tail[g];
            const T* row = scores.data() + i * ne;
            const int64_t target = tails ? tt : hh;
            // The target's score from this same pass, so the tie test compares like with like.
            const T s = row[target];
            int64_t greater = 0, tied = 0;
            for (int64_t x = 0; x < ne; ++x) {
              greater += row[x] > s;
              tied += row[x] == s;
            }
            tied -= 1;  // the target itself
            if (known) {
              const auto [fb, fe] = tails ? known->tails_of(hh, rr) : known->heads_of(rr, tt);
              for (const int64_t* f = fb; f != fe; ++f) {
                if (*f == target) continue;
                greater -= row[*f] > s;
                tied -= row[*f] == s;
              }
            }
            const double rank = 1.0 + static_cast<double>(greater) + 0.5 * static_cast<double>(tied);
            (tails ? out.tail : out.head)[static_cast<size_t>(g)] = rank;
          }
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
