// Fused SGD (momentum, dampening, Nesterov, weight decay, maximize), matching torch.optim.SGD.
#include <cmath>

#include "core_framework/optim/fused_steps.h"
#include "core_framework/optim/step_checks.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::optim {

namespace {

template <typename T>
void sgd_one(T* p, const T* g, T* buf, bool fresh, int64_t n, const SgdOptions& o) {
  const T lr = static_cast<T>(o.lr), wd = static_cast<T>(o.weight_decay);
  const T mom = static_cast<T>(o.momentum), keep = static_cast<T>(1.0 - o.dampening);
  const bool decay = o.weight_decay != 0, maximize = o.maximize, nesterov = o.nesterov;
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      T d = maximize ? -g[i] : g[i];
      if (decay) d += wd * p[i];
      if (buf) {
        // A new buffer starts as the gradient itself (no dampening on the first step), as in torch.
        buf[i] = fresh ? d : mom * buf[i] + keep * d;
        d = nesterov ? d + mom * buf[i] : buf[i];
      }
      p[i] -= lr * d;
    }
  });
}

}  // namespace

void sgd_step(const TensorList& params, const TensorList& grads, const TensorList& momentum_buffers,
              const std::vector<bool>& fresh, const SgdOptions& o) {
  const char* op = "sgd_step";
  detail::check_hyper(op, "lr", o.lr);
  detail::check_hyper(op, "momentum", o.momentum);
  detail::check_hyper(op, "weight_decay", o.weight_decay);
  NW_CHECK(std::isfinite(o.dampening), ValueError, op, ": dampening must be finite, got ",
           o.dampening);
  NW_CHECK(!o.nesterov || (o.momentum > 0 && o.dampening == 0), ValueError, op,
           ": nesterov requires momentum > 0 and dampening == 0, got momentum=", o.momentum,
           ", dampening=", o.dampening);
  detail::check_params(op, params);
  TensorList g = detail::checked_grads(op, grads, params);
  const bool use_buf = o.momentum != 0;
  if (use_buf) {
    detail::check_state(op, "momentum_buffers", momentum_buffers, params);
    detail::check_count(op, "fresh", fresh.size(), params.size());
  } else {
    NW_CHECK(momentum_buffers.empty(), ValueError, op,
             ": momentum_buffers must be empty when momentum is 0");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    NW_DISPATCH_FLOAT(params[i].dtype(), op, {
      sgd_one<scalar_t>(params[i].data<scalar_t>(), g[i].data<scalar_t>(),
                        use_buf ? momentum_buffers[i].data<scalar_t>() : nullptr,
                        use_buf && fresh[i], params[i].numel(), o);
    });
  }
  detail::bump_versions(params);
  if (use_buf) detail::bump_versions(momentum_buffers);
}

}  // namespace nodeweave::optim
