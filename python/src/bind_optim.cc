// Fused optimizer steps and gradient-norm helpers for nodeweave.core.optim / nn.utils. Each takes
// Python lists of tensors (one entry per parameter of a group) and runs with the GIL released: the
// kernels touch only tensor memory, and other Python threads (data loaders) keep running.
#include "core_framework/optim/fused_steps.h"
#include "core_framework/optim/update_ops.h"
#include "py_convert.h"

namespace nodeweave::py {

namespace {
using pyb::arg;
using Release = pyb::call_guard<pyb::gil_scoped_release>;
}  // namespace

void bind_optim(pyb::module_& m) {
  optim::update_ops();  // registered before a program naming them is parsed
  // The dense updates are table ops (update_ops.h): a traced training step records them. `hyper`
  // and `counts` carry the numbers that change between steps (update_ops.h gives their layout).
  m.def("_sgd_update", &optim::sgd_update, arg("params"), arg("momentum_buffers"), arg("grads"),
        arg("hyper"), arg("fresh"), arg("nesterov"), arg("maximize"), Release());
  m.def("_adam_update", &optim::adam_update, arg("params"), arg("exp_avgs"), arg("exp_avg_sqs"),
        arg("max_exp_avg_sqs"), arg("grads"), arg("hyper"), arg("steps"), arg("amsgrad"),
        arg("maximize"), arg("decoupled_weight_decay"), Release());
  m.def("_adagrad_update", &optim::adagrad_update, arg("params"), arg("state_sums"), arg("grads"),
        arg("hyper"), arg("steps"), arg("maximize"), Release());
  m.def("_rmsprop_update", &optim::rmsprop_update, arg("params"), arg("square_avgs"),
        arg("grad_avgs"), arg("momentum_buffers"), arg("grads"), arg("hyper"), arg("maximize"),
        Release());
  // Writes host numbers into a small CPU vector without dispatching an op: an optimizer refreshes
  // its hyper/counts tensors this way, so a trace records no write of them and a replay reads
  // what the host wrote before it.
  m.def(
      "_write_numbers",
      [](Tensor& t, const std::vector<double>& values) {
        NW_CHECK(t.defined() && t.device().is_cpu() && t.dim() == 1 && t.is_contiguous() &&
                     t.numel() == static_cast<int64_t>(values.size()) &&
                     (t.dtype() == DType::Float64 || t.dtype() == DType::Int64),
                 ValueError,
                 "_write_numbers: expected a contiguous CPU float64 or int64 vector of ",
                 values.size(), ", got ", dtype_name(t.dtype()), shape_str(t.shape()));
        for (size_t i = 0; i < values.size(); ++i) {
          if (t.dtype() == DType::Float64)
            t.data<double>()[i] = values[i];
          else
            t.data<int64_t>()[i] = static_cast<int64_t>(values[i]);
        }
        t.bump_version();
      },
      arg("t"), arg("values"));

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
