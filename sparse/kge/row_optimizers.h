// Sparse optimizers for embedding tables: each step updates only the rows its batch touched.
//
//   adagrad  row-wise, as DGL-KE: one accumulator per row, s += mean(g^2),
//            row -= lr * g / (sqrt(s) + 1e-10)
//   adam     per element, as torch.optim.SparseAdam: m and v move only on touched rows, bias
//            correction by the optimizer's global step count
#pragma once
#include <cstdint>
#include <string>

namespace nodeweave::kge {

enum class Optimizer : int32_t { Adagrad, Adam };

// "adagrad" or "adam"; ValueError naming the choices otherwise.
Optimizer parse_optimizer(const std::string& name);

struct OptimizerSpec {
  Optimizer kind = Optimizer::Adagrad;
  double lr = 0.1;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam
};

// Floats of optimizer state per table row of `width` floats.
int64_t optimizer_state_width(Optimizer kind, int64_t width);

// Applies one update to `row` from its gradient; `state` is the row's optimizer_state_width floats;
// `step` is the 1-based global step (Adam's bias correction).
void update_row(const OptimizerSpec& spec, float* row, float* state, const float* grad, int64_t width,
                int64_t step);

}  // namespace nodeweave::kge
