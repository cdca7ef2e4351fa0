#include "sparse/kge/row_optimizers.h"

#include <cmath>

#include "core_framework/runtime/error.h"

namespace nodeweave::kge {

Optimizer parse_optimizer(const std::string& name) {
  if (name == "adagrad") return Optimizer::Adagrad;
  if (name == "adam") return Optimizer::Adam;
  throw ValueError(str_cat("unknown optimizer '", name, "': expected adagrad or adam"));
}

int64_t optimizer_state_width(Optimizer kind, int64_t width) {
  return kind == Optimizer::Adagrad ? 1 : 2 * width;
}

void update_row(const OptimizerSpec& spec, float* row, float* state, const float* grad, int64_t width,
                int64_t step) {
  if (spec.kind == Optimizer::Adagrad) {
    float sq = 0;
    for (int64_t i = 0; i < width; ++i) sq += grad[i] * grad[i];
    state[0] += sq / static_cast<float>(width);
    const float scale = static_cast<float>(spec.lr) / (std::sqrt(state[0]) + 1e-10f);
    for (int64_t i = 0; i < width; ++i) row[i] -= scale * grad[i];
    return;
  }
  float* m = state;
  float* v = state + width;
  const float b1 = static_cast<float>(spec.beta1), b2 = static_cast<float>(spec.beta2);
  const double t = static_cast<double>(step);
  const float c1 = static_cast<float>(1 - std::pow(spec.beta1, t));
  const float c2 = static_cast<float>(1 - std::pow(spec.beta2, t));
  const float lr = static_cast<float>(spec.lr), eps = static_cast<float>(spec.eps);
  for (int64_t i = 0; i < width; ++i) {
    m[i] = b1 * m[i] + (1 - b1) * grad[i];
    v[i] = b2 * v[i] + (1 - b2) * grad[i] * grad[i];
    row[i] -= lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + eps);
  }
}

}  // namespace nodeweave::kge
