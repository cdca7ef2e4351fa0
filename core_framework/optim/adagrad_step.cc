// Fused Adagrad (lr_decay, weight decay, maximize), matching torch.optim.Adagrad.
#include <cmath>

#include "core_framework/optim/fused_steps.h"
#include "core_framework/optim/step_checks.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::optim {

namespace {

template <typename T>
void adagrad_one(T* p, const T* g, T* sum, int64_t n, double clr_d, const AdagradOptions& o) {
  const T clr = static_cast<T>(clr_d), wd = static_cast<T>(o.weight_decay),
          eps = static_cast<T>(o.eps);
  const bool decay = o.weight_decay != 0, maximize = o.maximize;
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      T d = maximize ? -g[i] : g[i];
      if (decay) d += wd * p[i];
      sum[i] += d * d;
      p[i] += -clr * (d / (std::sqrt(sum[i]) + eps));
    }
  });
}

}  // namespace

void adagrad_step(const TensorList& params, const TensorList& grads, const TensorList& state_sums,
                  const std::vector<int64_t>& steps, const AdagradOptions& o) {
  const char* op = "adagrad_step";
  detail::check_hyper(op, "lr", o.lr);
  detail::check_hyper(op, "lr_decay", o.lr_decay);
  detail::check_hyper(op, "weight_decay", o.weight_decay);
  detail::check_hyper(op, "eps", o.eps);
  detail::check_params(op, params);
  TensorList g = detail::checked_grads(op, grads, params);
  detail::check_state(op, "state_sums", state_sums, params);
  detail::check_count(op, "steps", steps.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    NW_CHECK(steps[i] >= 1, ValueError, op, ": steps[", i, "] must be >= 1, got ", steps[i]);
    const double clr = o.lr / (1.0 + static_cast<double>(steps[i] - 1) * o.lr_decay);
    NW_DISPATCH_FLOAT(params[i].dtype(), op, {
      adagrad_one<scalar_t>(params[i].data<scalar_t>(), g[i].data<scalar_t>(),
                            state_sums[i].data<scalar_t>(), params[i].numel(), clr, o);
    });
  }
  detail::bump_versions(params);
  detail::bump_versions(state_sums);
}

}  // namespace nodeweave::optim
