// Fused optimizer updates. Each function updates every tensor of one parameter group in place with
// a single parallel_for over each tensor's elements, so a Python optimizer makes one native call
// per group instead of a chain of elementwise ops (and never loops over elements in Python).
//
// The arithmetic follows PyTorch's single-tensor (CPU) implementations operation by operation, so a
// model trained with nodeweave.core.optim follows the same trajectory as with torch.optim. Updates
// write raw memory: they record no autograd history and bump each written tensor's version counter,
// which is what an in-place op under no_grad does.
//
// Every list is checked at the boundary: equal lengths, float32/float64, CPU, and state tensors
// with the parameter's shape and dtype. Errors name the list and the index of the offending tensor.
#pragma once
#include <vector>

#include "core_framework/engine/tensor.h"

namespace nodeweave::optim {

struct SgdOptions {
  double lr = 0.001;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool maximize = false;
};
// momentum_buffers is empty when momentum == 0. fresh[i] says buffer i was created for this step:
// PyTorch seeds a new buffer with the gradient instead of decaying it.
void sgd_step(const TensorList& params, const TensorList& grads, const TensorList& momentum_buffers,
              const std::vector<bool>& fresh, const SgdOptions& o);

struct AdamOptions {
  double lr = 0.001;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool amsgrad = false;
  bool maximize = false;
  bool decoupled_weight_decay = false;  // AdamW
};
// steps[i] is parameter i's step count after this update (1 on the first step); it sets the bias
// corrections. max_exp_avg_sqs is empty unless amsgrad.
void adam_step(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
               const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs,
               const std::vector<int64_t>& steps, const AdamOptions& o);

struct AdagradOptions {
  double lr = 0.01;
  double lr_decay = 0.0;
  double weight_decay = 0.0;
  double eps = 1e-10;
  bool maximize = false;
};
void adagrad_step(const TensorList& params, const TensorList& grads, const TensorList& state_sums,
                  const std::vector<int64_t>& steps, const AdagradOptions& o);

struct RmspropOptions {
  double lr = 0.01;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
  bool maximize = false;
};
// grad_avgs is empty unless centered; momentum_buffers is empty unless momentum > 0.
void rmsprop_step(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                  const TensorList& grad_avgs, const TensorList& momentum_buffers,
                  const RmspropOptions& o);

// ---- row-sparse gradients (sparse embeddings) ----

// A gradient that is zero except on some rows of a parameter: ids (u,) int64, sorted and unique;
// values (u, *param_shape[1:]).
struct RowSparseGrad {
  Tensor ids;
  Tensor values;
};
// Sums the rows gathered from several lookups into one RowSparseGrad for a parameter of
// `param_shape`. indices[k] holds row ids (any shape, int32/int64); values[k] has shape
// indices[k].shape + param_shape[1:]. Ids of lookup k equal to skip_rows[k] (its padding index) are
// dropped; -1 keeps all. Rows are summed in lookup order, so the result is deterministic.
RowSparseGrad coalesce_rows(const TensorList& indices, const TensorList& values,
                            const Shape& param_shape, const std::vector<int64_t>& skip_rows);

// Plain SGD on the touched rows only (momentum and weight decay touch every row: use sgd_step).
void sgd_sparse_step(const Tensor& param, const RowSparseGrad& g, double lr, bool maximize);
// Adagrad on the touched rows; equal to the dense update because an untouched row's update is zero.
// clr is the decayed learning rate lr / (1 + (step - 1) * lr_decay).
void adagrad_sparse_step(const Tensor& param, const Tensor& state_sum, const RowSparseGrad& g,
                         double clr, double eps, bool maximize);
// PyTorch's SparseAdam: moments and parameter are updated on the touched rows only ("lazy" Adam).
void sparse_adam_step(const Tensor& param, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                      const RowSparseGrad& g, int64_t step, double lr, double beta1, double beta2,
                      double eps, bool maximize);

// ---- gradient clipping ----

// The norm of all tensors taken together, as if concatenated: (sum_i ||t_i||_p^p)^(1/p), or the
// largest absolute value for p = inf. Accumulates in double over fixed blocks, so the result does
// not depend on the thread count. (Scaling is left to out-of-place ops: the autograd engine may
// hand two leaves the same gradient tensor, and scaling it in place would scale both twice.)
double total_norm(const TensorList& tensors, double norm_type);

}  // namespace nodeweave::optim
