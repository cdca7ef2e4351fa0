// The fused optimizer steps as ops of the table (kMutatesInputs): an update writes the parameters
// and their state in place through the dispatcher, so a traced training step records its optimizer
// step as one node per parameter group, and a replay runs it with no Python.
//
// What changes from step to step is a tensor, so one recorded update serves every later step:
// `hyper` (float64, 1-D) holds the group's numbers (learning rate, betas, ...), which a scheduler
// may change, and `counts` (int64, one per parameter) the step counts (SGD: whether each momentum
// buffer is new this step). Flags that select the arithmetic (amsgrad, nesterov, ...) are
// attributes. Each op's inputs are its written lists, then the gradients, then hyper and counts:
//
//   adam_update     params, exp_avgs, exp_avg_sqs[, max_exp_avg_sqs] | grads | hyper = [lr, beta1,
//                   beta2, eps, weight_decay] | counts = steps      attrs: n, amsgrad, maximize,
//                                                                   decoupled_weight_decay
//   sgd_update      params[, momentum_buffers] | grads | hyper = [lr, momentum, dampening,
//                   weight_decay] | counts = fresh                  attrs: n, buffers, nesterov,
//                                                                   maximize
//   adagrad_update  params, state_sums | grads | hyper = [lr, lr_decay, weight_decay, eps] |
//                   counts = steps                                  attrs: n, maximize
//   rmsprop_update  params, square_avgs[, grad_avgs][, momentum_buffers] | grads | hyper = [lr,
//                   alpha, eps, weight_decay, momentum] (no counts)  attrs: n, centered, buffers,
//                                                                    maximize
//
// The arithmetic is fused_steps.h's, so an update matches torch.optim step for step.
#pragma once
#include "core_framework/engine/op_kind.h"
#include "core_framework/engine/tensor.h"

namespace nodeweave::optim {

struct UpdateOpKinds {
  OpKind adam, sgd, adagrad, rmsprop;
};
// Registers the update ops on first use (before a program that names them is parsed).
const UpdateOpKinds& update_ops();

// One call per parameter group: lists as above (empty optional lists when the flag is off).
void adam_update(const TensorList& params, const TensorList& exp_avgs,
                 const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs,
                 const TensorList& grads, const Tensor& hyper, const Tensor& steps, bool amsgrad,
                 bool maximize, bool decoupled_weight_decay);
void sgd_update(const TensorList& params, const TensorList& momentum_buffers,
                const TensorList& grads, const Tensor& hyper, const Tensor& fresh, bool nesterov,
                bool maximize);
void adagrad_update(const TensorList& params, const TensorList& state_sums, const TensorList& grads,
                    const Tensor& hyper, const Tensor& steps, bool maximize);
void rmsprop_update(const TensorList& params, const TensorList& square_avgs,
                    const TensorList& grad_avgs, const TensorList& momentum_buffers,
                    const TensorList& grads, const Tensor& hyper, bool maximize);

}  // namespace nodeweave::optim
