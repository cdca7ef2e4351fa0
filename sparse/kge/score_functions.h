// The score of one (head, relation, tail) triple for every knowledge-graph-embedding model, and its
// gradient, written once per model and templated on the float type (float32 for training, float64
// for the finite-difference tests). Higher scores mean more plausible triples.
//
// Each model declares the width of its entity and relation rows for a hidden size `d`, its score,
// and `backward`, which *adds* g * d(score)/d(row) into dh, dr, dt. The batch kernels
// (triple_scores.h) and, later, the trainer only ever call these two functions, so a model is
// defined in exactly one place.
//
// Row layouts (d = the hidden size given on the command line):
//   TransE (L1, L2)  entity [e (d)]            relation [r (d)]
//   TransR           entity [e (d)]            relation [r (d), M (d x d, row-major)]
//   RESCAL           entity [e (d)]            relation [M (d x d, row-major)]
//   DistMult         entity [e (d)]            relation [r (d)]
//   ComplEx          entity [re (d), im (d)]   relation [re (d), im (d)]
//   RotatE           entity [re (d), im (d)]   relation [phase (d), radians]
//   SimplE           entity [head (d), tail (d)] relation [r (d), r_inverse (d)]
//   PairRE           entity [e (d)]            relation [r_head (d), r_tail (d)]
//
// Negatives: scoring a triple against many candidate heads or tails is cheaper through a *query*
// where a model has one: score(h, r, x) = compare(query_tail(h, r), x) and
// score(x, r, t) = compare(query_head(r, t), x), with `compare` a dot product (+ nothing) or
// gamma minus an L1, L2 or complex-modulus distance. A chunk's scores against its shared negatives
// are then one GEMM (dot, L2) or one tight loop (L1), and the query's own gradient is taken once per
// triple (chunk_scores.h). Models whose score does not factor that way (TransR, SimplE's clipping,
// PairRE's normalised entities) declare Compare::Direct and are scored pair by pair.
#pragma once
#include <cmath>
#include <cstdint>

namespace nodeweave::kge {

enum class Compare { Direct, Dot, L1, L2, ComplexL1 };

namespace detail {
template <typename T>
T sign(T v) {
  return static_cast<T>((v > 0) - (v < 0));
}
}  // namespace detail

// gamma - ||h + r - t||_p, p = 1 or 2 (Bordes et al., 2013).
template <int P>
struct TransE {
  static int64_t entity_width(int64_t d) { return d; }
  static int64_t relation_width(int64_t d) { return d; }
  static constexpr Compare kCompare = P == 1 ? Compare::L1 : Compare::L2;
  // h + r - x = (h + r) - x;  x + r - t = x - (t - r)
  template <typename T>
  static void query_tail(const T* h, const T* r, int64_t d, T* q) {
    for (int64_t i = 0; i < d; ++i) q[i] = h[i] + r[i];
  }
  template <typename T>
  static void query_head(const T* r, const T* t, int64_t d, T* q) {
    for (int64_t i = 0; i < d; ++i) q[i] = t[i] - r[i];
  }
  template <typename T>
  static void query_tail_backward(const T*, const T*, int64_t d, const T* dq, T* dh, T* dr) {
    for (int64_t i = 0; i < d; ++i) {
      dh[i] += dq[i];
      dr[i] += dq[i];
    }
  }
  template <typename T>
  static void query_head_backward(const T*, const T*, int64_t d, const T* dq, T* dr, T* dt) {
    for (int64_t i = 0; i < d; ++i) {
      dt[i] += dq[i];
      dr[i] -= dq[i];
    }
  }
  template <typename T>
  static T score(const T* h, const T* r, const T* t, int64_t d, T gamma) {
    T acc = 0;
    for (int64_t i = 0; i < d; ++i) {
      const T v = h[i] + r[i] - t[i];
      acc += P == 1 ? std::abs(v) : v * v;
    }
    return gamma - (P == 1 ? acc : std::sqrt(acc));
  }
  template <typename T>
  static void backward(const T* h, const T* r, const T* t, int64_t d, T /*gamma*/, T g, T* dh, T* dr,
                       T* dt) {
    T scale = g;  // d(score)/dv_i = -sign(v_i) (L1) or -v_i / ||v|| (L2)
    if (P == 2) {
      T sq = 0;
      for (int64_t i = 0; i < d; ++i) {
        const T v = h[i] + r[i] - t[i];
        sq += v * v;
      }
      if (sq == 0) return;  // the norm's subgradient 0 at the minimum
      scale = g / std::sqrt(sq);
    }
    for (int64_t i = 0; i < d; ++i) {
      const T v = h[i] + r[i] - t[i];
      const T dv = -(P == 1 ? detail::sign(v) : v) * scale;
      dh[i] += dv;
      dr[i] += dv;
      dt[i] -= dv;
    }
  }
};

// gamma - ||M_r h + r - M_r t||_1 (Lin et al., 2015; the L1 distance, as DGL-KE scores it).
struct TransR {
  static int64_t entity_width(int64_t d) { return d; }
  static int64_t relation_width(int64_t d) { return d + d * d; }
  static constexpr Compare kCompare = Compare::Direct;
  // v = M (h - t) + r
  template <typename T>
  static T residual(const T* h, const T* r, const T* t, int64_t d, int64_t i) {
    const T* m = r + d + i * d;
    T acc = r[i];
    for (int64_t j = 0; j < d; ++j) acc += m[j] * (h[j] - t[j]);
    return acc;
  }
  template <typename T>
  static T score(const T* h, const T* r, const T* t, int64_t d, T gamma) {
    T acc = 0;
    for (int64_t i = 0; i < d; ++i) acc += std::abs(residual(h, r, t, d, i));
    return gamma - acc;
  }
  template <typename T>
  static void backward(const T* h, const T* r, const T* t, int64_t d, T /*gamma*/, T g, T* dh, T* dr,
                       T* dt) {
    for (int64_t i = 0; i < d; ++i) {
      const T dv = -detail::sign(residual(h, r, t, d, i)) * g;
      if (dv == 0) continue;
      const T* m = r + d + i * d;
      T* dm = dr + d + i * d;
      dr[i] += dv;
      for (int64_t j = 0; j < d; ++j) {
        dm[j] += dv * (h[j] - t[j]);
        dh[j] += dv * m[j];
        dt[j] -= dv * m[j];
      }
    }
  }
};

// h^T M_r t (Nickel et al., 2011).
struct Rescal {
  static int64_t entity_width(int64_t d) { return d; }
  static int64_t relation_width(int64_t d) { return d * d; }
  static constexpr Compare kCompare = Compare::Dot;
  // h^T M x = (M^T h) . x;  x^T M t = x . (M t)
  template <typename T>
  static void query_tail(const T* h, const T* r, int64_t d, T* q) {
    for (int64_t j = 0; j < d; ++j) q[j] = 0;
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) q[j] += h[i] * r[i * d + j];
  }
  template <typename T>
  static void query_head(const T* r, const T* t, int64_t d, T* q) {
    for (int64_t i = 0; i < d; ++i) {
      T acc = 0;
      for (int64_t j = 0; j < d; ++j) acc += r[i * d + j] * t[j];
      q[i] = acc;
    }
  }
  template <typename T>
  static void query_tail_backward(const T* h, const T* r, int64_t d, const T* dq, T* dh, T* dr) {
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) {
        dh[i] += r[i * d + j] * dq[j];
        dr[i * d + j] += h[i] * dq[j];
      }
  }
  template <typename T>
  static void query_head_backward(const T* r, const T* t, int64_t d, const T* dq, T* dr, T* dt) {
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) {
        dt[j] += r[i * d + j] * dq[i];
        dr[i * d + j] += dq[i] * t[j];
      }
  }
  template <typename T>
  static T score(const T* h, const T* r, const T* t, int64_t d, T /*gamma*/) {
    T acc = 0;
    for (int64_t i = 0; i < d; ++i) {
      T row = 0;
      for (int64_t j = 0; j < d; ++j) row += r[i * d + j] * t[j];
      acc += h[i] * row;
    }
    return acc;
  }
  template <typename T>
  static void backward(const T* h, const T* r, const T* t, int64_t d, T /*gamma*/, T g, T* dh, T* dr,
                       T* dt) {
    for (int64_t i = 0; i < d; ++i) {
      T row = 0;
      for (int64_t j = 0; j < d; ++j) {
        row += r[i * d + j] * t[j];
        dr[i * d + j] += g * h[i] * t[j];
        dt[j] += g * h[i] * r[i * d + j];
      }
      dh[i] += g * row;
    }
  }
};

// sum_i h_i r_i t_i (Yang et al., 2015).
struct DistMult {
  static int64_t entity_width(int64_t d) { return d; }
  static int64_t relation_width(int64_t d) { return d; }
  static constexpr Compare kCompare = Compare::Dot;
  template <typename T>
  static void query_tail(const T* h, const T* r, int64_t d, T* q) {
    for (int64_t i = 0; i < d; ++i) q[i] = h[i] * r[i];
  }
  template <typename T>
  static void query_head(const T* r, const T* t, int64_t d, T* q) {
    query_tail(r, t, d, q);
  }
  template <typename T>
  static void query_tail_backward(const T* h, const T* r, int64_t d, const T* dq, T* dh, T* dr) {
    for (int64_t i = 0; i < d; ++i) {
      dh[i] += dq[i] * r[i];
      dr[i] += dq[i] * h[i];
    }
  }
  template <typename T>
  static void query_head_backward(const T* r, const T* t, int64_t d, const T* dq, T* dr, T* dt) {
    query_tail_backward(t, r, d, dq, dt, dr);
  }
  template <typename T>
  static T score(const T* h, const T* r, const T* t, int64_t d, T /*gamma*/) {
    T acc = 0;
    for (int64_t i = 0; i < d; ++i) acc += h[i] * r[i] * t[i];
    return acc;
  }
  template <typename T>
  static void backward(const T* h, const T* r, const T* t, int64_t d, T /*gamma*/, T g, T* dh, T* dr,
                       T* dt) {
    for (int64_t i = 0; i < d; ++i) {
      dh[i] += g * r[i] * t[i];
      dr[i] += g * h[i] * t[i];
      dt[i] += g * h[i] * r[i];
    }
  }
};

// Re(sum_i h_i r_i conj(t_i)) (Trouillon et al., 2016).
struct ComplEx {
  static int64_t entity_width(int64_t d) { return 2 * d; }
  static int64_t relation_width(int64_t d) { return 2 * d; }
  static constexpr Compare kCompare = Compare::Dot;
  // Re(h r conj(x)) = (Re hr, Im hr) . (Re x, Im x);  Re(x r conj(t)) = (Re w, -Im w) . x with
  // w = r conj(t)
  template <typename T>
  static void query_tail(const T* h, const T* r, int64_t d, T* q) {
    for (int64_t i = 0; i < d; ++i) {
      q[i] = h[i] * r[i] - h[d + i] * r[d + i];
      q[d + i] = h[i] * r[d + i] + h[d + i] * r[i];
    }
  }
  template <typename T>
  static void query_head(const T* r, const T* t, int64_t d, T* q) {
    for (int64_t i = 0; i < d; ++i) {
      q[i] = r[i] * t[i] + r[d + i] * t[d + i];
      q[d + i] = r[i] * t[d + i] - r[d + i] * t[i];
    }
  }
  template <typename T>
  static void query_tail_backward(const T* h, const T* r, int64_t d, const T* dq, T* dh, T* dr) {
    for (int64_t i = 0; i < d; ++i) {
      const T a = h[i], b = h[d + i], c = r[i], e = r[d + i], gx = dq[i], gy = dq[d + i];
      dh[i] += gx * c + gy * e;
      dh[d + i] += -gx * e + gy * c;
      dr[i] += gx * a + gy * b;
      dr[d + i] += -gx * b + gy * a;
    }
  }
  template <typename T>
  static void query_head_backward(const T* r, const T* t, int64_t d, const T* dq, T* dr, T* dt) {
    for (int64_t i = 0; i < d; ++i) {
      const T c = r[i], e = r[d + i], x = t[i], y = t[d + i], gx = dq[i], gy = dq[d + i];
      dr[i] += gx * x + gy * y;
      dr[d + i] += gx * y - gy * x;
      dt[i] += gx * c - gy * e;
      dt[d + i] += gx * e + gy * c;
    }
  }
  template <typename T>
  static T score(const T* h, const T* r, const T* t, int64_t d, T /*gamma*/) {
    T acc = 0;
    for (int64_t i = 0; i < d; ++i) {
      const T a = h[i], b = h[d + i], c = r[i], e = r[d + i], x = t[i], y = t[d + i];
      acc += (a * c - b * e) * x + (a * e + b * c) * y;
    }
    return acc;
  }
  template <typename T>
  static void backward(const T* h, const T* r, const T* t, int64_t d, T /*gamma*/, T g, T* dh, T* dr,
                       T* dt) {
    for (int64_t i = 0; i < d; ++i) {
      const T a = h[i], b = h[d + i], c = r[i], e = r[d + i], x = t[i], y = t[d + i];
      dh[i] += g * (c * x + e * y);
      dh[d + i] += g * (c * y - e * x);
      dr[i] += g * (a * x + b * y);
      dr[d + i] += g * (a * y - b * x);
      dt[i] += g * (a * c - b * e);
      dt[d + i] += g * (a * e + b * c);
    }
  }
};

// gamma - sum_i |h_i * exp(i phase_i) - t_i| (Sun et al., 2019): the L1 sum of complex moduli.
struct RotatE {
  static int64_t entity_width(int64_t d) { return 2 * d; }
  static int64_t relation_width(int64_t d) { return d; }
  static constexpr Compare kCompare = Compare::ComplexL1;
  // |h e^{i p} - x| = |q - x|, q = h e^{i p};  |x e^{i p} - t| = |x - t e^{-i p}| (a unit rotation)
  template <typename T>
  static void query_tail(const T* h, const T* r, int64_t d, T* q) {
    for (int64_t i = 0; i < d; ++i) {
      const T c = std::cos(r[i]), s = std::sin(r[i]);
      q[i] = h[i] * c - h[d + i] * s;
      q[d + i] = h[i] * s + h[d + i] * c;
    }
  }
  template <typename T>
  static void query_head(const T* r, const T* t, int64_t d, T* q) {
    for (int64_t i = 0; i < d; ++i) {
      const T c = std::cos(r[i]), s = std::sin(r[i]);
      q[i] = t[i] * c + t[d + i] * s;
      q[d + i] = -t[i] * s + t[d + i] * c;
    }
  }
  template <typename T>
  static void query_tail_backward(const T* h, const T* r, int64_t d, const T* dq, T* dh, T* dr) {
    for (int64_t i = 0; i < d; ++i) {
      const T a = h[i], b = h[d + i], c = std::cos(r[i]), s = std::sin(r[i]);
      const T gx = dq[i], gy = dq[d + i];
      dh[i] += gx * c + gy * s;
      dh[d + i] += -gx * s + gy * c;
      dr[i] += gx * (-a * s - b * c) + gy * (a * c - b * s);
    }
  }
  template <typename T>
  static void query_head_backward(const T* r, const T* t, int64_t d, const T* dq, T* dr, T* dt) {
    for (int64_t i = 0; i < d; ++i) {
      const T x = t[i], y = t[d + i], c = std::cos(r[i]), s = std::sin(r[i]);
      const T gx = dq[i], gy = dq[d + i];
      dt[i] += gx * c - gy * s;
      dt[d + i] += gx * s + gy * c;
      dr[i] += gx * (-x * s + y * c) + gy * (-x * c - y * s);
    }
  }
  template <typename T>
  static T score(const T* h, const T* r, const T* t, int64_t d, T gamma) {
    T acc = 0;
    for (int64_t i = 0; i < d; ++i) {
      const T c = std::cos(r[i]), s = std::sin(r[i]);
      const T ure = h[i] * c - h[d + i] * s - t[i];
      const T uim = h[i] * s + h[d + i] * c - t[d + i];
      acc += std::sqrt(ure * ure + uim * uim);
    }
    return gamma - acc;
  }
  template <typename T>
  static void backward(const T* h, const T* r, const T* t, int64_t d, T /*gamma*/, T g, T* dh, T* dr,
                       T* dt) {
    for (int64_t i = 0; i < d; ++i) {
      const T a = h[i], b = h[d + i], c = std::cos(r[i]), s = std::sin(r[i]);
      const T ure = a * c - b * s - t[i];
      const T uim = a * s + b * c - t[d + i];
      const T m = std::sqrt(ure * ure + uim * uim);
      if (m == 0) continue;  // the modulus' subgradient 0 at the minimum
      const T gre = -g * ure / m, gim = -g * uim / m;  // d(score)/du
      dh[i] += gre * c + gim * s;
      dh[d + i] += -gre * s + gim * c;
      dt[i] -= gre;
      dt[d + i] -= gim;
      dr[i] += gre * (-a * s - b * c) + gim * (a * c - b * s);
    }
  }
};

// (<h_head, r, t_tail> + <t_head, r_inverse, h_tail>) / 2, clipped to [-20, 20] as the authors'
// implementation does (Kazemi & Poole, 2018); no gradient where clipped.
struct SimplE {
  static constexpr Compare kCompare = Compare::Direct;
  static constexpr double kClip = 20;
  static int64_t entity_width(int64_t d) { return 2 * d; }
  static int64_t relation_width(int64_t d) { return 2 * d; }
  template <typename T>
  static T raw(const T* h, const T* r, const T* t, int64_t d) {
    T acc = 0;
    for (int64_t i = 0; i < d; ++i) acc += h[i] * r[i] * t[d + i] + t[i] * r[d + i] * h[d + i];
    return acc / 2;
  }
  template <typename T>
  static T score(const T* h, const T* r, const T* t, int64_t d, T /*gamma*/) {
    const T v = raw(h, r, t, d), clip = static_cast<T>(kClip);
    return v > clip ? clip : v < -clip ? -clip : v;
  }
  template <typename T>
  static void backward(const T* h, const T* r, const T* t, int64_t d, T /*gamma*/, T g, T* dh, T* dr,
                       T* dt) {
    const T v = raw(h, r, t, d), clip = static_cast<T>(kClip);
    if (v > clip || v < -clip) return;
    const T half = g / 2;
    for (int64_t i = 0; i < d; ++i) {
      dh[i] += half * r[i] * t[d + i];
      dt[d + i] += half * h[i] * r[i];
      dr[i] += half * h[i] * t[d + i];
      dt[i] += half * r[d + i] * h[d + i];
      dh[d + i] += half * t[i] * r[d + i];
      dr[d + i] += half * t[i] * h[d + i];
    }
  }
};

// gamma - || h/|h| * r_head - t/|t| * r_tail ||_1 (Chao et al., 2021: entities on the unit sphere).
struct PairRE {
  static constexpr Compare kCompare = Compare::Direct;
  static int64_t entity_width(int64_t d) { return d; }
  static int64_t relation_width(int64_t d) { return 2 * d; }
  template <typename T>
  static T inverse_norm(const T* e, int64_t d) {
    T sq = 0;
    for (int64_t i = 0; i < d; ++i) sq += e[i] * e[i];
    return sq > 0 ? 1 / std::sqrt(sq) : 0;
  }
  template <typename T>
  static T score(const T* h, const T* r, const T* t, int64_t d, T gamma) {
    const T nh = inverse_norm(h, d), nt = inverse_norm(t, d);
    T acc = 0;
    for (int64_t i = 0; i < d; ++i) acc += std::abs(h[i] * nh * r[i] - t[i] * nt * r[d + i]);
    return gamma - acc;
  }
  template <typename T>
  static void backward(const T* h, const T* r, const T* t, int64_t d, T /*gamma*/, T g, T* dh, T* dr,
                       T* dt) {
    const T nh = inverse_norm(h, d), nt = inverse_norm(t, d);
    // u = unit(h) * r_head - unit(t) * r_tail; gu = d(score)/du = -g sign(u). The gradient through
    // unit(x) = x / |x| is (gx - unit(x) (unit(x) . gx)) / |x|.
    T hdot = 0, tdot = 0;
    for (int64_t i = 0; i < d; ++i) {
      const T uh = h[i] * nh, ut = t[i] * nt;
      const T gu = -g * detail::sign(uh * r[i] - ut * r[d + i]);
      hdot += uh * gu * r[i];
      tdot += ut * -gu * r[d + i];
    }
    for (int64_t i = 0; i < d; ++i) {
      const T uh = h[i] * nh, ut = t[i] * nt;
      const T gu = -g * detail::sign(uh * r[i] - ut * r[d + i]);
      dr[i] += gu * uh;
      dr[d + i] -= gu * ut;
      dh[i] += (gu * r[i] - uh * hdot) * nh;
      dt[i] += (-gu * r[d + i] - ut * tdot) * nt;
    }
  }
};

}  // namespace nodeweave::kge
