// Fused optimizer steps and gradient-norm helpers for nodeweave.core.optim / nn.utils. Each takes
// Python lists of tensors (one entry per parameter of a group) and runs with the GIL released: the
// kernels touch only tensor memory, and other Python threads (data loaders) keep running.
#include "core_framework/optim/fused_steps.h"
#include "py_convert.h"

namespace nodeweave::py {

namespace {
using pyb::arg;
using Release = pyb::call_guard<pyb::gil_scoped_release>;
}  // namespace

void bind_optim(pyb::module_& m) {
  m.def(
      "_sgd_step",
      [](const TensorList& params, const TensorList& grads, const TensorList& bufs,
         const std::vector<bool>& fresh, double lr, double momentum, double dampening,
         double weight_decay, bool nesterov, bool maximize) {
        optim::sgd_step(
            params, grads, bufs, fresh,
            optim::SgdOptions{lr, momentum, dampening, weight_decay, nesterov, maximize});
      },
      arg("params"), arg("grads"), arg("momentum_buffers"), arg("fresh"), arg("lr"),
      arg("momentum"), arg("dampening"), arg("weight_decay"), arg("nesterov"), arg("maximize"),
      Release());

  m.def(
      "_adam_step",
      [](const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
         const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs,
         const std::vector<int64_t>& steps, double lr, double beta1, double beta2, double eps,
         double weight_decay, bool amsgrad, bool maximize, bool decoupled_weight_decay) {
        optim::adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
                         optim::AdamOptions{lr, beta1, beta2, eps, weight_decay, amsgrad, maximize,
                                            decoupled_weight_decay});
      },
      arg("params"), arg("grads"), arg("exp_avgs"), arg("exp_avg_sqs"), arg("max_exp_avg_sqs"),
      arg("steps"), arg("lr"), arg("beta1"), arg("beta2"), arg("eps"), arg("weight_decay"),
      arg("amsgrad"), arg("maximize"), arg("decoupled_weight_decay"), Release());

  m.def(
      "_adagrad_step",
      [](const TensorList& params, const TensorList& grads, const TensorList& state_sums,
         const std::vector<int64_t>& steps, double lr, double lr_decay, double weight_decay,
         double eps, bool maximize) {
        optim::adagrad_step(params, grads, state_sums, steps,
                            optim::AdagradOptions{lr, lr_decay, weight_decay, eps, maximize});
      },
      arg("params"), arg("grads"), arg("state_sums"), arg("steps"), arg("lr"), arg("lr_decay"),
      arg("weight_decay"), arg("eps"), arg("maximize"), Release());

  m.def(
      "_rmsprop_step",
      [](const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
         const TensorList& grad_avgs, const TensorList& bufs, double lr, double alpha, double eps,
         double weight_decay, double momentum, bool centered, bool maximize) {
        optim::rmsprop_step(
            params, grads, square_avgs, grad_avgs, bufs,
            optim::RmspropOptions{lr, alpha, eps, weight_decay, momentum, centered, maximize});
      },
      arg("params"), arg("grads"), arg("square_avgs"), arg("grad_avgs"), arg("momentum_buffers"),
      arg("lr"), arg("alpha"), arg("eps"), arg("weight_decay"), arg("momentum"), arg("centered"),
      arg("maximize"), Release());

  // ---- row-sparse gradients ----
  m.def(
      "_coalesce_rows",
      [](const TensorList& indices, const TensorList& values, const Shape& param_shape,
         const std::vector<int64_t>& skip_rows) {
        optim::RowSparseGrad g = optim::coalesce_rows(indices, values, param_shape, skip_rows);
        return std::make_pair(g.ids, g.values);
      },
      arg("indices"), arg("values"), arg("param_shape"), arg("skip_rows"), Release());
  m.def(
      "_sgd_sparse_step",
      [](const Tensor& param, const Tensor& ids, const Tensor& values, double lr, bool maximize) {
        optim::sgd_sparse_step(param, {ids, values}, lr, maximize);
      },
      arg("param"), arg("ids"), arg("values"), arg("lr"), arg("maximize"), Release());
  m.def(
      "_adagrad_sparse_step",
      [](const Tensor& param, const Tensor& state_sum, const Tensor& ids, const Tensor& values,
         double clr, double eps, bool maximize) {
        optim::adagrad_sparse_step(param, state_sum, {ids, values}, clr, eps, maximize);
      },
      arg("param"), arg("state_sum"), arg("ids"), arg("values"), arg("clr"), arg("eps"),
      arg("maximize"), Release());
  m.def(
      "_sparse_adam_step",
      [](const Tensor& param, const Tensor& exp_avg, const Tensor& exp_avg_sq, const Tensor& ids,
         const Tensor& values, int64_t step, double lr, double beta1, double beta2, double eps,
         bool maximize) {
        optim::sparse_adam_step(param, exp_avg, exp_avg_sq, {ids, values}, step, lr, beta1, beta2,
                                eps, maximize);
      },
      arg("param"), arg("exp_avg"), arg("exp_avg_sq"), arg("ids"), arg("values"), arg("step"),
      arg("lr"), arg("beta1"), arg("beta2"), arg("eps"), arg("maximize"), Release());

  // ---- gradient clipping ----
  m.def("_total_norm", &optim::total_norm, arg("tensors"), arg("norm_type"), Release());
}

}  // namespace nodeweave::py
