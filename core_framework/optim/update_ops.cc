// The update ops' table entries: each kernel unpacks its input list (update_ops.h gives the
// layouts), checks the hyper and counts tensors, and runs the fused step of fused_steps.h.
#include "core_framework/optim/update_ops.h"

#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"
#include "core_framework/optim/fused_steps.h"
#include "core_framework/optim/step_checks.h"

namespace nodeweave::optim {

namespace {

// An update's inputs, split: `lists` written lists of n, the gradients, the numbers.
struct Unpacked {
  std::vector<TensorList> written;
  TensorList grads;
  std::vector<double> hyper;
  std::vector<int64_t> counts;
};

Unpacked unpack(const char* op, const TensorList& in, int64_t n, size_t lists, int64_t num_hyper,
                bool with_counts) {
  NW_CHECK(n >= 0, ValueError, op, ": the parameter count must be >= 0, got ", n);
  const size_t want = static_cast<size_t>(n) * (lists + 1) + 1 + (with_counts ? 1 : 0);
  NW_CHECK(in.size() == want, ValueError, op, ": expected ", want, " tensors for ", n,
           " parameters, got ", in.size());
  Unpacked u;
  size_t at = 0;
  auto take = [&] {
    TensorList l(in.begin() + static_cast<std::ptrdiff_t>(at),
                 in.begin() + static_cast<std::ptrdiff_t>(at + static_cast<size_t>(n)));
    at += static_cast<size_t>(n);
    return l;
  };
  for (size_t k = 0; k < lists; ++k) u.written.push_back(take());
  u.grads = take();
  auto numbers = [&](const char* name, DType dtype, int64_t len) -> Tensor {
    const Tensor& t = in[at++];
    NW_CHECK(t.defined() && t.dtype() == dtype && t.dim() == 1 && t.numel() == len &&
                 t.device().is_cpu(),
             ValueError, op, ": ", name, " must be a CPU ", dtype_name(dtype), " vector of ", len,
             ", got ",
             t.defined()
                 ? str_cat(dtype_name(t.dtype()), shape_str(t.shape()), " on ", t.device().str())
                 : std::string("none"));
    return contiguous(t);
  };
  const Tensor h = numbers("hyper", DType::Float64, num_hyper);
  u.hyper.assign(h.data<double>(), h.data<double>() + num_hyper);
  if (with_counts) {
    const Tensor c = numbers("counts", DType::Int64, n);
    u.counts.assign(c.data<int64_t>(), c.data<int64_t>() + n);
  }
  return u;
}

void emit(const Unpacked& u, TensorList& outputs) {
  for (const TensorList& l : u.written) outputs.insert(outputs.end(), l.begin(), l.end());
}

void adam_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const bool amsgrad = a.b(1);
  const Unpacked u = unpack("adam_update", in, a.i(0), amsgrad ? 4 : 3, 5, true);
  const AdamOptions o{u.hyper[0], u.hyper[1], u.hyper[2], u.hyper[3],
                      u.hyper[4], amsgrad,    a.b(2),     a.b(3)};
  adam_step(u.written[0], u.grads, u.written[1], u.written[2],
            amsgrad ? u.written[3] : TensorList{}, u.counts, o);
  emit(u, out);
}

void sgd_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const bool buffers = a.b(1);
  const Unpacked u = unpack("sgd_update", in, a.i(0), buffers ? 2 : 1, 4, true);
  NW_CHECK(buffers == (u.hyper[1] != 0), ValueError,
           "sgd_update: momentum buffers are given exactly when the momentum is not 0");
  std::vector<bool> fresh(u.counts.size());
  for (size_t i = 0; i < fresh.size(); ++i) fresh[i] = u.counts[i] != 0;
  const SgdOptions o{u.hyper[0], u.hyper[1], u.hyper[2], u.hyper[3], a.b(2), a.b(3)};
  sgd_step(u.written[0], u.grads, buffers ? u.written[1] : TensorList{},
           buffers ? fresh : std::vector<bool>{}, o);
  emit(u, out);
}

void adagrad_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const Unpacked u = unpack("adagrad_update", in, a.i(0), 2, 4, true);
  const AdagradOptions o{u.hyper[0], u.hyper[1], u.hyper[2], u.hyper[3], a.b(1)};
  adagrad_step(u.written[0], u.grads, u.written[1], u.counts, o);
  emit(u, out);
}

void rmsprop_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const bool centered = a.b(1), buffers = a.b(2);
  const size_t lists = 2 + (centered ? 1 : 0) + (buffers ? 1 : 0);
  const Unpacked u = unpack("rmsprop_update", in, a.i(0), lists, 5, false);
  NW_CHECK(buffers == (u.hyper[4] > 0), ValueError,
           "rmsprop_update: momentum buffers are given exactly when the momentum is > 0");
  const RmspropOptions o{u.hyper[0], u.hyper[1], u.hyper[2], u.hyper[3],
                         u.hyper[4], centered,   a.b(3)};
  rmsprop_step(u.written[0], u.grads, u.written[1], centered ? u.written[2] : TensorList{},
               buffers ? u.written[lists - 1] : TensorList{}, o);
  emit(u, out);
}

OpKind register_update(const char* declaration, KernelFn kernel) {
  OpDef d;
  d.declaration = declaration;
  d.traits = kMutatesInputs;
  d.kernels[0] = kernel;  // CPU only, as the fused steps are
  d.differentiable_inputs = 0;
  return register_extension_op(d);
}

TensorList join(std::initializer_list<const TensorList*> lists) {
  TensorList all;
  for (const TensorList* l : lists) all.insert(all.end(), l->begin(), l->end());
  return all;
}

}  // namespace

const UpdateOpKinds& update_ops() {
  // Inputs as in update_ops.h: the written lists, the gradients, hyper and counts, as one list.
  static const UpdateOpKinds k{
      register_update("adam_update(Tensor[] lists, int n, bool amsgrad, bool maximize, "
                      "bool decoupled_weight_decay) -> Tensor[]",
                      adam_kernel),
      register_update("sgd_update(Tensor[] lists, int n, bool buffers, bool nesterov, "
                      "bool maximize) -> Tensor[]",
                      sgd_kernel),
      register_update("adagrad_update(Tensor[] lists, int n, bool maximize) -> Tensor[]",
                      adagrad_kernel),
      register_update("rmsprop_update(Tensor[] lists, int n, bool centered, bool buffers, "
                      "bool maximize) -> Tensor[]",
                      rmsprop_kernel)};
  return k;
}

void adam_update(const TensorList& params, const TensorList& exp_avgs,
                 const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs,
                 const TensorList& grads, const Tensor& hyper, const Tensor& steps, bool amsgrad,
                 bool maximize, bool decoupled_weight_decay) {
  detail::check_count("adam_update", "exp_avgs", exp_avgs.size(), params.size());
  detail::check_count("adam_update", "exp_avg_sqs", exp_avg_sqs.size(), params.size());
  detail::check_count("adam_update", "max_exp_avg_sqs", max_exp_avg_sqs.size(),
                      amsgrad ? params.size() : 0);
  detail::check_count("adam_update", "grads", grads.size(), params.size());
  TensorList in = join({&params, &exp_avgs, &exp_avg_sqs, &max_exp_avg_sqs, &grads});
  in.push_back(hyper);
  in.push_back(steps);
  const auto n = static_cast<int64_t>(params.size());
  dispatch_mutating(update_ops().adam, in, Attrs{n, amsgrad, maximize, decoupled_weight_decay});
}

void sgd_update(const TensorList& params, const TensorList& momentum_buffers,
                const TensorList& grads, const Tensor& hyper, const Tensor& fresh, bool nesterov,
                bool maximize) {
  if (!momentum_buffers.empty())
    detail::check_count("sgd_update", "momentum_buffers", momentum_buffers.size(), params.size());
  detail::check_count("sgd_update", "grads", grads.size(), params.size());
  TensorList in = join({&params, &momentum_buffers, &grads});
  in.push_back(hyper);
  in.push_back(fresh);
  const auto n = static_cast<int64_t>(params.size());
  dispatch_mutating(update_ops().sgd, in, Attrs{n, !momentum_buffers.empty(), nesterov, maximize});
}

void adagrad_update(const TensorList& params, const TensorList& state_sums, const TensorList& grads,
                    const Tensor& hyper, const Tensor& steps, bool maximize) {
  detail::check_count("adagrad_update", "state_sums", state_sums.size(), params.size());
  detail::check_count("adagrad_update", "grads", grads.size(), params.size());
  TensorList in = join({&params, &state_sums, &grads});
  in.push_back(hyper);
  in.push_back(steps);
  dispatch_mutating(update_ops().adagrad, in, Attrs{static_cast<int64_t>(params.size()), maximize});
}

void rmsprop_update(const TensorList& params, const TensorList& square_avgs,
                    const TensorList& grad_avgs, const TensorList& momentum_buffers,
                    const TensorList& grads, const Tensor& hyper, bool maximize) {
  detail::check_count("rmsprop_update", "square_avgs", square_avgs.size(), params.size());
  if (!grad_avgs.empty())
    detail::check_count("rmsprop_update", "grad_avgs", grad_avgs.size(), params.size());
  if (!momentum_buffers.empty())
    detail::check_count("rmsprop_update", "momentum_buffers", momentum_buffers.size(),
                        params.size());
  detail::check_count("rmsprop_update", "grads", grads.size(), params.size());
  TensorList in = join({&params, &square_avgs, &grad_avgs, &momentum_buffers, &grads});
  in.push_back(hyper);
  const auto n = static_cast<int64_t>(params.size());
  dispatch_mutating(update_ops().rmsprop, in,
                    Attrs{n, !grad_avgs.empty(), !momentum_buffers.empty(), maximize});
}

}  // namespace nodeweave::optim
