// Fused Adam / AdamW (amsgrad, maximize, L2 or decoupled weight decay), matching torch.optim.Adam
// and torch.optim.AdamW step for step.
#include <cmath>

#include "core_framework/optim/fused_steps.h"
#include "core_framework/optim/step_checks.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::optim {

namespace {

// torch's lerp: start + w * (end - start), computed from the nearer end for w >= 0.5 so that w = 1
// gives `end` exactly. Matching it keeps float32 trajectories bit-close to torch's.
template <typename T>
inline T lerp(T start, T end, T w) {
  return w < T(0.5) ? start + w * (end - start) : end - (end - start) * (T(1) - w);
}

template <typename T>
void adam_one(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, int64_t step,
              const AdamOptions& o) {
  const double bc1 = 1.0 - std::pow(o.beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(o.beta2, static_cast<double>(step));
  const T step_size = static_cast<T>(o.lr / bc1);
  const T bc2_sqrt = static_cast<T>(std::sqrt(bc2));
  const T w1 = static_cast<T>(1.0 - o.beta1), beta2 = static_cast<T>(o.beta2);
  const T w2 = static_cast<T>(1.0 - o.beta2), eps = static_cast<T>(o.eps);
  const T wd = static_cast<T>(o.weight_decay), shrink = static_cast<T>(1.0 - o.lr * o.weight_decay);
  const bool l2 = o.weight_decay != 0 && !o.decoupled_weight_decay;
  const bool decoupled = o.weight_decay != 0 && o.decoupled_weight_decay;
  const bool maximize = o.maximize;
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      T d = maximize ? -g[i] : g[i];
      if (decoupled) p[i] *= shrink;
      if (l2) d += wd * p[i];
      m[i] = lerp(m[i], d, w1);
      v[i] = beta2 * v[i] + w2 * d * d;
      T second = v[i];
      if (vmax) {
        vmax[i] = vmax[i] < v[i] ? v[i] : vmax[i];
        second = vmax[i];
      }
      T denom = std::sqrt(second) / bc2_sqrt + eps;
      p[i] += -step_size * (m[i] / denom);
    }
  });
}

}  // namespace

void adam_step(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
               const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs,
               const std::vector<int64_t>& steps, const AdamOptions& o) {
  const char* op = o.decoupled_weight_decay ? "adamw_step" : "adam_step";
  detail::check_hyper(op, "lr", o.lr);
  detail::check_hyper(op, "eps", o.eps);
  detail::check_hyper(op, "weight_decay", o.weight_decay);
  NW_CHECK(o.beta1 >= 0 && o.beta1 < 1, ValueError, op, ": beta1 must be in [0, 1), got ", o.beta1);
  NW_CHECK(o.beta2 >= 0 && o.beta2 < 1, ValueError, op, ": beta2 must be in [0, 1), got ", o.beta2);
  detail::check_params(op, params);
  TensorList g = detail::checked_grads(op, grads, params);
  detail::check_state(op, "exp_avgs", exp_avgs, params);
  detail::check_state(op, "exp_avg_sqs", exp_avg_sqs, params);
  if (o.amsgrad) {
    detail::check_state(op, "max_exp_avg_sqs", max_exp_avg_sqs, params);
  } else {
    NW_CHECK(max_exp_avg_sqs.empty(), ValueError, op,
             ": max_exp_avg_sqs must be empty without amsgrad");
  }
  detail::check_count(op, "steps", steps.size(), params.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    NW_CHECK(steps[i] >= 1, ValueError, op, ": steps[", i,
             "] must be >= 1 (the count after this step), got ", steps[i]);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    NW_DISPATCH_FLOAT(params[i].dtype(), op, {
      adam_one<scalar_t>(params[i].data<scalar_t>(), g[i].data<scalar_t>(),
                         exp_avgs[i].data<scalar_t>(), exp_avg_sqs[i].data<scalar_t>(),
                         o.amsgrad ? max_exp_avg_sqs[i].data<scalar_t>() : nullptr,
                         params[i].numel(), steps[i], o);
    });
  }
  detail::bump_versions(params);
  detail::bump_versions(exp_avgs);
  detail::bump_versions(exp_avg_sqs);
  if (o.amsgrad) detail::bump_versions(max_exp_avg_sqs);
}

}  // namespace nodeweave::optim
