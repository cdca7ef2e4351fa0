// A chunk of triples against the chunk's shared negative entities: forward scores and their
// gradient, through the model's query (score_functions.h) where it has one:
//   Dot        S = Q X^T, dQ += G X, dX += G^T Q                  (three GEMMs, OpenBLAS)
//   L2         S = gamma - sqrt(|q|^2 + |x|^2 - 2 Q X^T)           (GEMMs, as DGL-KE does)
//   L1         S = gamma - sum_d |q_d - x_d|                       (one tight loop per pair)
//   ComplexL1  S = gamma - sum_i |q_i - x_i| over complex pairs    (RotatE)
//   Direct     the model's own score and backward, pair by pair
// Rows are given as pointer arrays so that the same code serves the dense-gradient kernels
// (triple_scores.cc) and the trainer's compact per-step gradients.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sparse/cpu/blas.h"
#include "sparse/kge/score_functions.h"

namespace nodeweave::kge {

// f(q_i, x_j, &score_ij) for every query i and negative j of a chunk (rows of width ew).
template <typename T, typename F>
void each_pair(const T* Q, int64_t c, const T* X, int64_t k, int64_t ew, T* scores, const F& f) {
  for (int64_t i = 0; i < c; ++i)
    for (int64_t j = 0; j < k; ++j) f(Q + i * ew, X + j * ew, scores[i * k + j]);
}

// f(q_i, x_j, dq_i, dx_j, g_ij) for every pair of a chunk whose gradient g_ij is not 0.
template <typename T, typename F>
void each_pair_gradient(const T* Q, int64_t c, const T* X, int64_t k, int64_t ew, const T* G, T* dQ,
                        T* dX, const F& f) {
  for (int64_t i = 0; i < c; ++i)
    for (int64_t j = 0; j < k; ++j)
      if (G[i * k + j] != 0) f(Q + i * ew, X + j * ew, dQ + i * ew, dX + j * ew, G[i * k + j]);
}

template <typename T>
struct ChunkWork {
  std::vector<T> q, x, s, dq, dx, norm_q, norm_x, scaled;
};

// scores (c x k): triple i of the chunk with its head (corrupt_head) or tail replaced by
// negative j. Leaves the queries and gathered negatives in `w` for chunk_backward.
template <typename M, typename T>
void chunk_forward(const T* const* h, const T* const* r, const T* const* t, int64_t c,
                   const T* const* negs, int64_t k, bool corrupt_head, int64_t d, T gamma,
                   ChunkWork<T>& w, T* scores) {
  if constexpr (M::kCompare == Compare::Direct) {
    for (int64_t i = 0; i < c; ++i)
      for (int64_t j = 0; j < k; ++j)
        scores[i * k + j] = corrupt_head ? M::score(negs[j], r[i], t[i], d, gamma)
                                         : M::score(h[i], r[i], negs[j], d, gamma);
  } else {
    const int64_t ew = M::entity_width(d);
    w.q.resize(static_cast<size_t>(c * ew));
    w.x.resize(static_cast<size_t>(k * ew));
    for (int64_t i = 0; i < c; ++i) {
      T* q = w.q.data() + i * ew;
      if (corrupt_head)
        M::query_head(r[i], t[i], d, q);
      else
        M::query_tail(h[i], r[i], d, q);
    }
    for (int64_t j = 0; j < k; ++j) std::copy(negs[j], negs[j] + ew, w.x.data() + j * ew);
    const T* Q = w.q.data();
    const T* X = w.x.data();
    if constexpr (M::kCompare == Compare::Dot || M::kCompare == Compare::L2) {
      sparse::cpu::detail::gemm<T>(false, true, c, k, ew, Q, X, T(0), scores);
    }
    if constexpr (M::kCompare == Compare::L2) {
      w.norm_q.assign(static_cast<size_t>(c), T(0));
      w.norm_x.assign(static_cast<size_t>(k), T(0));
      for (int64_t i = 0; i < c; ++i)
        for (int64_t e = 0; e < ew; ++e) w.norm_q[static_cast<size_t>(i)] += Q[i * ew + e] * Q[i * ew + e];
      for (int64_t j = 0; j < k; ++j)
        for (int64_t e = 0; e < ew; ++e) w.norm_x[static_cast<size_t>(j)] += X[j * ew + e] * X[j * ew + e];
      for (int64_t i = 0; i < c; ++i)
        for (int64_t j = 0; j < k; ++j) {
          const T sq = w.norm_q[static_cast<size_t>(i)] + w.norm_x[static_cast<size_t>(j)] - 2 * scores[i * k + j];
          scores[i * k + j] = gamma - std::sqrt(std::max(sq, T(0)));
        }
    }
    if constexpr (M::kCompare == Compare::L1) {
      each_pair(Q, c, X, k, ew, scores, [&](const T* q, const T* x, T& out) {
        T acc = 0;
#pragma omp simd reduction(+ : acc)
        for (int64_t e = 0; e < ew; ++e) acc += std::abs(q[e] - x[e]);
        out = gamma - acc;
      });
    }
    if constexpr (M::kCompare == Compare::ComplexL1) {
      each_pair(Q, c, X, k, ew, scores, [&](const T* q, const T* x, T& out) {
        T acc = 0;
#pragma omp simd reduction(+ : acc)
        for (int64_t e = 0; e < d; ++e) {
          const T a = q[e] - x[e], b = q[d + e] - x[d + e];
          acc += std::sqrt(a * a + b * b);
        }
        out = gamma - acc;
      });
    }
  }
}

// Adds the gradient of sum(G * scores) into the rows' gradients (dh/dt may alias each other or
// dneg; contributions are added one after another). `w` and `scores` must come from chunk_forward
// on the same rows.
template <typename M, typename T>
void chunk_backward(const T* const* h, const T* const* r, const T* const* t, int64_t c,
                    const T* const* negs, int64_t k, bool corrupt_head, int64_t d, T gamma,
                    ChunkWork<T>& w, const T* scores, const T* G, T* const* dh, T* const* dr,
                    T* const* dt, T* const* dneg) {
  if constexpr (M::kCompare == Compare::Direct) {
    (void)scores;
    for (int64_t i = 0; i < c; ++i)
      for (int64_t j = 0; j < k; ++j) {
        const T g = G[i * k + j];
        if (g == 0) continue;
        if (corrupt_head)
          M::backward(negs[j], r[i], t[i], d, gamma, g, dneg[j], dr[i], dt[i]);
        else
          M::backward(h[i], r[i], negs[j], d, gamma, g, dh[i], dr[i], dneg[j]);
      }
  } else {
    const int64_t ew = M::entity_width(d);
    const T* Q = w.q.data();
    const T* X = w.x.data();
    w.dq.assign(static_cast<size_t>(c * ew), T(0));
    w.dx.assign(static_cast<size_t>(k * ew), T(0));
    T* dQ = w.dq.data();
    T* dX = w.dx.data();
    if constexpr (M::kCompare == Compare::Dot) {
      sparse::cpu::detail::gemm<T>(false, false, c, ew, k, G, X, T(1), dQ);
      sparse::cpu::detail::gemm<T>(true, false, k, ew, c, G, Q, T(1), dX);
    }
    if constexpr (M::kCompare == Compare::L2) {
      // d(gamma - |q - x|)/dq = (x - q) / |q - x|; with G' = G / dist (0 where dist = 0):
      // dQ_i = (G' X)_i - q_i sum_j G'_ij,  dX_j = (G'^T Q)_j - x_j sum_i G'_ij.
      w.scaled.resize(static_cast<size_t>(c * k));
      T* Gs = w.scaled.data();
      std::vector<T> row_sum(static_cast<size_t>(c), T(0)), col_sum(static_cast<size_t>(k), T(0));
      for (int64_t i = 0; i < c; ++i)
        for (int64_t j = 0; j < k; ++j) {
          const T dist = gamma - scores[i * k + j];
          const T v = dist > 0 ? G[i * k + j] / dist : T(0);
          Gs[i * k + j] = v;
          row_sum[static_cast<size_t>(i)] += v;
          col_sum[static_cast<size_t>(j)] += v;
        }
      sparse::cpu::detail::gemm<T>(false, false, c, ew, k, Gs, X, T(1), dQ);
      sparse::cpu::detail::gemm<T>(true, false, k, ew, c, Gs, Q, T(1), dX);
      for (int64_t i = 0; i < c; ++i)
        for (int64_t e = 0; e < ew; ++e) dQ[i * ew + e] -= Q[i * ew + e] * row_sum[static_cast<size_t>(i)];
      for (int64_t j = 0; j < k; ++j)
        for (int64_t e = 0; e < ew; ++e) dX[j * ew + e] -= X[j * ew + e] * col_sum[static_cast<size_t>(j)];
    }
    if constexpr (M::kCompare == Compare::L1) {
      each_pair_gradient(Q, c, X, k, ew, G, dQ, dX, [&](const T* q, const T* x, T* gq, T* gx, T g) {
#pragma omp simd
        for (int64_t e = 0; e < ew; ++e) {
          const T v = q[e] - x[e];
          const T s = v > 0 ? -g : v < 0 ? g : T(0);  // d(gamma - |v|)/dq
          gq[e] += s;
          gx[e] -= s;
        }
      });
    }
    if constexpr (M::kCompare == Compare::ComplexL1) {
      each_pair_gradient(Q, c, X, k, ew, G, dQ, dX, [&](const T* q, const T* x, T* gq, T* gx, T g) {
#pragma omp simd
        for (int64_t e = 0; e < d; ++e) {
          const T a = q[e] - x[e], b = q[d + e] - x[d + e];
          const T m2 = a * a + b * b;
          const T scale = m2 > 0 ? -g / std::sqrt(m2) : T(0);  // the modulus' subgradient 0 at 0
          const T sa = a * scale, sb = b * scale;
          gq[e] += sa;
          gq[d + e] += sb;
          gx[e] -= sa;
          gx[d + e] -= sb;
        }
      });
    }
    for (int64_t j = 0; j < k; ++j)
      for (int64_t e = 0; e < ew; ++e) dneg[j][e] += dX[j * ew + e];
    for (int64_t i = 0; i < c; ++i) {
      const T* gq = dQ + i * ew;
      if (corrupt_head)
        M::query_head_backward(r[i], t[i], d, gq, dr[i], dt[i]);
      else
        M::query_tail_backward(h[i], r[i], d, gq, dh[i], dr[i]);
    }
  }
}

}  // namespace nodeweave::kge
