// Boundary checks shared by the fused optimizer kernels: they run before any tensor is written, so
// a bad call raises without leaving a parameter group half updated.
#pragma once
#include <string>

#include "core_framework/engine/tensor.h"

namespace nodeweave::optim::detail {

// params: defined, float32 or float64, on the CPU, contiguous (the kernels index raw memory).
void check_params(const char* op, const TensorList& params);
// A state list (exp_avgs, momentum_buffers, ...) that pairs element-wise with params: same length,
// and each tensor with its parameter's shape and dtype, on the CPU and contiguous.
void check_state(const char* op, const char* name, const TensorList& list,
                 const TensorList& params);
// The gradients: same length, shapes and dtypes as params. Returns them contiguous (a copy only for
// a non-contiguous gradient, e.g. one produced by a transpose in backward).
TensorList checked_grads(const char* op, const TensorList& grads, const TensorList& params);
// A list that must hold `expected` entries.
void check_count(const char* op, const char* name, size_t got, size_t expected);
// A finite, non-negative hyperparameter.
void check_hyper(const char* op, const char* name, double value);
// Records an in-place write on each tensor, as an in-place op would.
void bump_versions(const TensorList& tensors);

}  // namespace nodeweave::optim::detail
