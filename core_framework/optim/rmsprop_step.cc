// Fused RMSprop (smoothing alpha, centered, momentum, weight decay, maximize), matching
// torch.optim.RMSprop.
#include <cmath>

#include "core_framework/optim/fused_steps.h"
#include "core_framework/optim/step_checks.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::optim {

namespace {

template <typename T>
void rmsprop_one(T* p, const T* g, T* sq, T* gavg, T* buf, int64_t n, const RmspropOptions& o) {
  const T lr = static_cast<T>(o.lr), alpha = static_cast<T>(o.alpha),
          w = static_cast<T>(1.0 - o.alpha);
  const T eps = static_cast<T>(o.eps), wd = static_cast<T>(o.weight_decay),
          mom = static_cast<T>(o.momentum);
  const bool decay = o.weight_decay != 0, maximize = o.maximize;
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      T d = maximize ? -g[i] : g[i];
      if (decay) d += wd * p[i];
      sq[i] = alpha * sq[i] + w * d * d;
      T avg;
      if (gavg) {
        // torch updates grad_avg with lerp(grad_avg, grad, 1 - alpha); see adam_step.cc on lerp.
        gavg[i] = w < T(0.5) ? gavg[i] + w * (d - gavg[i]) : d - (d - gavg[i]) * (T(1) - w);
        avg = std::sqrt(sq[i] - gavg[i] * gavg[i]);
      } else {
        avg = std::sqrt(sq[i]);
      }
      avg += eps;
      if (buf) {
        buf[i] = mom * buf[i] + d / avg;
        p[i] -= lr * buf[i];
      } else {
        p[i] += -lr * (d / avg);
      }
    }
  });
}

}  // namespace

void rmsprop_step(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                  const TensorList& grad_avgs, const TensorList& momentum_buffers,
                  const RmspropOptions& o) {
  const char* op = "rmsprop_step";
  detail::check_hyper(op, "lr", o.lr);
  detail::check_hyper(op, "alpha", o.alpha);
  detail::check_hyper(op, "eps", o.eps);
  detail::check_hyper(op, "weight_decay", o.weight_decay);
  detail::check_hyper(op, "momentum", o.momentum);
  detail::check_params(op, params);
  TensorList g = detail::checked_grads(op, grads, params);
  detail::check_state(op, "square_avgs", square_avgs, params);
  if (o.centered) {
    detail::check_state(op, "grad_avgs", grad_avgs, params);
  } else {
    NW_CHECK(grad_avgs.empty(), ValueError, op, ": grad_avgs must be empty unless centered");
  }
  const bool use_buf = o.momentum > 0;
  if (use_buf) {
    detail::check_state(op, "momentum_buffers", momentum_buffers, params);
  } else {
    NW_CHECK(momentum_buffers.empty(), ValueError, op,
             ": momentum_buffers must be empty when momentum is 0");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    NW_DISPATCH_FLOAT(params[i].dtype(), op, {
      rmsprop_one<scalar_t>(
          params[i].data<scalar_t>(), g[i].data<scalar_t>(), square_avgs[i].data<scalar_t>(),
          o.centered ? grad_avgs[i].data<scalar_t>() : nullptr,
          use_buf ? momentum_buffers[i].data<scalar_t>() : nullptr, params[i].numel(), o);
    });
  }
  detail::bump_versions(params);
  detail::bump_versions(square_avgs);
  if (o.centered) detail::bump_versions(grad_avgs);
  if (use_buf) detail::bump_versions(momentum_buffers);
}

}  // namespace nodeweave::optim
