// Batch scoring of triples for knowledge-graph-embedding training and its gradient: the positive
// triples of a batch, and each triple against the shared negative entities of its chunk (DGL-KE's
// joint negative sampling: a batch of n triples is cut into chunks of `chunk_size`, and every triple
// of a chunk is scored with its head, or its tail, replaced by each of the chunk's k negatives).
//
// Entry points validate the ids and shapes (ValueError / IndexError naming the argument), then run
// the model's score_functions.h definitions; they are templated on float and double.
#pragma once
#include <cstdint>

#include "sparse/kge/models.h"

namespace nodeweave::kge {

enum class Corrupt : int32_t { Head, Tail };

template <typename T>
struct Tables {
  const T* entity = nullptr;  // num_entities x entity_width(model, dim), row-major
  int64_t num_entities = 0;
  const T* relation = nullptr;  // num_relations x relation_width(model, dim)
  int64_t num_relations = 0;
};

// Dense gradient tables of the same shapes as Tables (the finite-difference tests and small
// graphs); `backward_*` add into them.
template <typename T>
struct Grads {
  T* entity = nullptr;
  T* relation = nullptr;
};

struct Triples {
  const int64_t* head = nullptr;
  const int64_t* rel = nullptr;
  const int64_t* tail = nullptr;
  int64_t n = 0;
};

struct ScoreSpec {
  Model model = Model::TransE_L2;
  int64_t dim = 0;
  double gamma = 12.0;
};

struct NegativeSpec {
  int64_t chunk_size = 1;             // triples per chunk; must divide the triple count
  const int64_t* entities = nullptr;  // (n / chunk_size) x k negative entity ids
  int64_t k = 0;
  Corrupt corrupt = Corrupt::Tail;
};

// ValueError / IndexError naming the argument unless the spec is valid and every id is in range.
template <typename T>
void check_triples(const ScoreSpec& spec, const Tables<T>& tab, const Triples& tri);

// out[i] = score of triple i.
template <typename T>
void score_triples(const ScoreSpec& spec, const Tables<T>& tab, const Triples& tri, T* out);
// out[i * k + j] = score of triple i with its head (or tail) replaced by negative j of its chunk.
template <typename T>
void score_negatives(const ScoreSpec& spec, const Tables<T>& tab, const Triples& tri,
                     const NegativeSpec& neg, T* out);
// Adds sum_i grad[i] * d(score_i) into `grads`.
template <typename T>
void backward_triples(const ScoreSpec& spec, const Tables<T>& tab, const Triples& tri, const T* grad,
                      const Grads<T>& grads);
// Adds sum_{i,j} grad[i * k + j] * d(negative score_ij) into `grads`.
template <typename T>
void backward_negatives(const ScoreSpec& spec, const Tables<T>& tab, const Triples& tri,
                        const NegativeSpec& neg, const T* grad, const Grads<T>& grads);

}  // namespace nodeweave::kge
