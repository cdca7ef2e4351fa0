#include "sparse/kge/loss.h"

#include <algorithm>
#include <cmath>

#include "core_framework/runtime/error.h"

namespace nodeweave::kge {

Loss parse_loss(const std::string& name) {
  if (name == "logsigmoid" || name == "logistic" || name == "bce") return Loss::LogSigmoid;
  if (name == "hinge") return Loss::Hinge;
  throw ValueError(str_cat("unknown loss '", name, "': expected logsigmoid, logistic, bce or hinge"));
}

namespace {

// -log sigmoid(x) = softplus(-x), without overflow for large |x|.
template <typename T>
T neg_log_sigmoid(T x) {
  return std::max(-x, T(0)) + std::log1p(std::exp(-std::abs(x)));
}

template <typename T>
T sigmoid(T x) {
  if (x >= 0) return 1 / (1 + std::exp(-x));
  const T e = std::exp(x);
  return e / (1 + e);
}

}  // namespace

template <typename T>
T triple_loss(const LossSpec& spec, T p, const T* n, int64_t k, T* dp, T* dn) {
  const T margin = static_cast<T>(spec.margin);
  T pos_loss, neg_loss = 0;
  if (spec.kind == Loss::LogSigmoid) {
    pos_loss = neg_log_sigmoid(p);
    *dp = (sigmoid(p) - 1) / 2;
  } else {
    pos_loss = std::max(margin - p, T(0));
    *dp = margin - p > 0 ? T(-0.5) : T(0);
  }
  if (k == 0) return pos_loss / 2;
  // Weights: uniform, or the softmax of alpha * n (shifted by its maximum for stability).
  const T alpha = static_cast<T>(spec.adversarial_temperature);
  T top = n[0];
  for (int64_t j = 1; j < k; ++j) top = std::max(top, n[j]);
  T total = 0;
  for (int64_t j = 0; j < k; ++j) {
    dn[j] = alpha > 0 ? std::exp(alpha * (n[j] - top)) : T(1);  // the unnormalised weight
    total += dn[j];
  }
  for (int64_t j = 0; j < k; ++j) {
    const T w = dn[j] / total;
    if (spec.kind == Loss::LogSigmoid) {
      neg_loss += w * neg_log_sigmoid(-n[j]);
      dn[j] = w * sigmoid(n[j]) / 2;
    } else {
      neg_loss += w * std::max(margin + n[j], T(0));
      dn[j] = margin + n[j] > 0 ? w / 2 : T(0);
    }
  }
  return (pos_loss + neg_loss) / 2;
}

template float triple_loss<float>(const LossSpec&, float, const float*, int64_t, float*, float*);
template double triple_loss<double>(const LossSpec&, double, const double*, int64_t, double*, double*);

}  // namespace nodeweave::kge
