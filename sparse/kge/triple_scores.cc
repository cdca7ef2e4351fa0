// Batch triple scoring: validation, then loops over the model's score_functions.h definitions.
// Scores run in parallel over triples (each writes its own outputs); the dense-gradient backward
// runs serially, since triples of a batch share rows. The trainer's sparse, lock-free updates are
// built on the same per-triple functions.
#include "sparse/kge/triple_scores.h"

#include <vector>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "sparse/kge/chunk_scores.h"

namespace nodeweave::kge {

namespace {

void check_ids(const char* what, const int64_t* ids, int64_t n, int64_t limit, const char* table) {
  for (int64_t i = 0; i < n; ++i)
    NW_CHECK(ids[i] >= 0 && ids[i] < limit, IndexError, what, "[", i, "] = ", ids[i],
             " is out of range for ", limit, " ", table);
}

}  // namespace

template <typename T>
void check_triples(const ScoreSpec& spec, const Tables<T>& tab, const Triples& tri) {
  NW_CHECK(spec.dim > 0, ValueError, "dim must be positive, got ", spec.dim);
  NW_CHECK(tri.n >= 0, ValueError, "the triple count must be non-negative, got ", tri.n);
  check_ids("head", tri.head, tri.n, tab.num_entities, "entities");
  check_ids("tail", tri.tail, tri.n, tab.num_entities, "entities");
  check_ids("relation", tri.rel, tri.n, tab.num_relations, "relations");
}

namespace {

void check_negatives(const Triples& tri, const NegativeSpec& neg, int64_t num_entities) {
  NW_CHECK(neg.chunk_size > 0, ValueError, "chunk_size must be positive, got ", neg.chunk_size);
  NW_CHECK(tri.n % neg.chunk_size == 0, ValueError, "chunk_size ", neg.chunk_size,
           " must divide the number of triples ", tri.n);
  NW_CHECK(neg.k >= 0, ValueError, "the negative count must be non-negative, got ", neg.k);
  check_ids("negatives", neg.entities, tri.n / neg.chunk_size * neg.k, num_entities, "entities");
}

struct Rows {
  int64_t ew, rw;
};

Rows widths(const ScoreSpec& spec) {
  return {entity_width(spec.model, spec.dim), relation_width(spec.model, spec.dim)};
}

// The checks every chunk-of-negatives entry point makes first; the row widths it then works with.
template <typename T>
Rows checked_negative_call(const ScoreSpec& spec, const Tables<T>& tab, const Triples& tri,
                           const NegativeSpec& neg) {
  check_triples(spec, tab, tri);
  check_negatives(tri, neg, tab.num_entities);
  return widths(spec);
}

}  // namespace

template <typename T>
void score_triples(const ScoreSpec& spec, const Tables<T>& tab, const Triples& tri, T* out) {
  check_triples(spec, tab, tri);
  const Rows w = widths(spec);
  const T gamma = static_cast<T>(spec.gamma);
  visit_model(spec.model, [&](auto model) {
    using M = decltype(model);
    parallel_for(0, tri.n, 256, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        out[i] = M::score(tab.entity + tri.head[i] * w.ew, tab.relation + tri.rel[i] * w.rw,
                          tab.entity + tri.tail[i] * w.ew, spec.dim, gamma);
    });
  });
}

// The rows of one chunk of triples and its negatives, as chunk_scores.h takes them.
template <typename T, typename Row>
struct ChunkRows {
  std::vector<Row> h, r, t, negs;
  void fill(Row entity, Row relation, int64_t ew, int64_t rw, const Triples& tri, const NegativeSpec& neg,
            int64_t chunk) {
    const int64_t c = neg.chunk_size;
    h.resize(static_cast<size_t>(c));
    r.resize(static_cast<size_t>(c));
    t.resize(static_cast<size_t>(c));
    negs.resize(static_cast<size_t>(neg.k));
    for (int64_t i = 0; i < c; ++i) {
      const int64_t g = chunk * c + i;
      h[static_cast<size_t>(i)] = entity + tri.head[g] * ew;
      r[static_cast<size_t>(i)] = relation + tri.rel[g] * rw;
      t[static_cast<size_t>(i)] = entity + tri.tail[g] * ew;
    }
    for (int64_t j = 0; j < neg.k; ++j)
      negs[static_cast<size_t>(j)] = entity + neg.entities[chunk * neg.k + j] * ew;
  }
};

template <typename T>
void score_negatives(const ScoreSpec& spec, const Tables<T>& tab, const Triples& tri,
                     const NegativeSpec& neg, T* out) {
  const Rows w = checked_negative_call(spec, tab, tri, neg);
  const T gamma = static_cast<T>(spec.gamma);
  const int64_t c = neg.chunk_size, k = neg.k;
  visit_model(spec.model, [&](auto model) {
    using M = decltype(model);
    parallel_for(0, tri.n / c, 1, [&](int64_t b, int64_t e) {
      ChunkWork<T> work;
      ChunkRows<T, const T*> rows;
      for (int64_t ch = b; ch < e; ++ch) {
        rows.fill(tab.entity, tab.relation, w.ew, w.rw, tri, neg, ch);
        chunk_forward<M>(rows.h.data(), rows.r.data(), rows.t.data(), c, rows.negs.data(), k,
                         neg.corrupt == Corrupt::Head, spec.dim, gamma, work, out + ch * c * k);
      }
    });
  });
}

template <typename T>
void backward_triples(const ScoreSpec& spec, const Tables<T>& tab, const Triples& tri, const T* grad,
                      const Grads<T>& grads) {
  check_triples(spec, tab, tri);
  const Rows w = widths(spec);
  const T gamma = static_cast<T>(spec.gamma);
  visit_model(spec.model, [&](auto model) {
    using M = decltype(model);
    for (int64_t i = 0; i < tri.n; ++i) {
      if (grad[i] == 0) continue;
      M::backward(tab.entity + tri.head[i] * w.ew, tab.relation + tri.rel[i] * w.rw,
                  tab.entity + tri.tail[i] * w.ew, spec.dim, gamma, grad[i],
                  grads.entity + tri.head[i] * w.ew, grads.relation + tri.rel[i] * w.rw,
                  grads.entity + tri.tail[i] * w.ew);
    }
  });
}

template <typename T>
void backward_negatives(const ScoreSpec& spec, const Tables<T>& tab, const Triples& tri,
                        const NegativeSpec& neg, const T* grad, const Grads<T>& grads) {
  const Rows w = checked_negative_call(spec, tab, tri, neg);
  const T gamma = static_cast<T>(spec.gamma);
  const int64_t c = neg.chunk_size, k = neg.k;
  visit_model(spec.model, [&](auto model) {
    using M = decltype(model);
    ChunkWork<T> work;
    ChunkRows<T, const T*> rows;
    ChunkRows<T, T*> out;
    std::vector<T> scores(static_cast<size_t>(c * k));
    for (int64_t ch = 0; ch < tri.n / c; ++ch) {
      rows.fill(tab.entity, tab.relation, w.ew, w.rw, tri, neg, ch);
      out.fill(grads.entity, grads.relation, w.ew, w.rw, tri, neg, ch);
      const bool head = neg.corrupt == Corrupt::Head;
      chunk_forward<M>(rows.h.data(), rows.r.data(), rows.t.data(), c, rows.negs.data(), k, head,
                       spec.dim, gamma, work, scores.data());
      chunk_backward<M>(rows.h.data(), rows.r.data(), rows.t.data(), c, rows.negs.data(), k, head,
                        spec.dim, gamma, work, scores.data(), grad + ch * c * k, out.h.data(),
                        out.r.data(), out.t.data(), out.negs.data());
    }
  });
}

#define NW_KGE_INSTANTIATE(T)                                                                      \
  template void check_triples<T>(const ScoreSpec&, const Tables<T>&, const Triples&);              \
  template void score_triples<T>(const ScoreSpec&, const Tables<T>&, const Triples&, T*);          \
  template void score_negatives<T>(const ScoreSpec&, const Tables<T>&, const Triples&,             \
                                   const NegativeSpec&, T*);                                        \
  template void backward_triples<T>(const ScoreSpec&, const Tables<T>&, const Triples&, const T*, \
                                    const Grads<T>&);                                               \
  template void backward_negatives<T>(const ScoreSpec&, const Tables<T>&, const Triples&,          \
                                      const NegativeSpec&, const T*, const Grads<T>&);
NW_KGE_INSTANTIATE(float)
NW_KGE_INSTANTIATE(double)
#undef NW_KGE_INSTANTIATE

}  // namespace nodeweave::kge
