// Filtered ranking of test triples against every entity (Bordes et al., 2013): for a triple
// (h, r, t), the tail side scores (h, r, e) for every entity e and ranks t among them, leaving out
// every e != t for which (h, r, e) is a known true triple (train, valid or test); the head side does
// the same with (e, r, t). Ties count half: rank = 1 + #greater + #tied / 2 (the mean of the ranks
// the tied entities could take, LibKGE's and PyKEEN's "realistic" rank), so a model that scores
// everything alike gets the middle rank, not rank 1.
//
// Memory: the known triples (two sorted copies) and a block of scores per thread (at most 64 test
// triples x every entity, fewer on large graphs: about 2^22 scores); nothing grows with the number
// of test triples beyond the ranks themselves.
#pragma once
#include <cstdint>
#include <vector>

#include "sparse/kge/triple_scores.h"

namespace nodeweave::kge {

// Known true triples, indexed for the filter: for a (head, relation) pair its tails, for a
// (relation, tail) pair its heads, each sorted.
class KnownTriples {
 public:
  KnownTriples(const Triples& all, int64_t num_entities, int64_t num_relations);
  // Entities e with (h, r, e) known: [begin, end) of a sorted array.
  std::pair<const int64_t*, const int64_t*> tails_of(int64_t h, int64_t r) const;
  std::pair<const int64_t*, const int64_t*> heads_of(int64_t r, int64_t t) const;

 private:
  struct Index {
    std::vector<uint64_t> key;   // sorted (a * num_relations + r) or (r * num_entities + b)
    std::vector<int64_t> other;  // the third id of each, sorted within equal keys
  };
  std::pair<const int64_t*, const int64_t*> lookup(const Index& ix, uint64_t key) const;
  Index by_head_, by_tail_;
  int64_t num_entities_, num_relations_;
};

struct Ranks {
  std::vector<double> head;  // rank of the true head among all entities, per test triple
  std::vector<double> tail;
};

// Ranks of every test triple's head and tail; `known` may be null (raw, unfiltered ranks).
template <typename T>
Ranks filtered_ranks(const ScoreSpec& spec, const Tables<T>& tab, const Triples& test,
                     const KnownTriples* known);

}  // namespace nodeweave::kge
