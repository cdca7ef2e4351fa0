// Boundary checks shared by the fused optimizer kernels (see step_checks.h).
#include "core_framework/optim/step_checks.h"

#include <cmath>

#include "core_framework/engine/functional.h"

namespace nodeweave::optim::detail {

namespace {

void check_one(const char* op, const char* name, size_t i, const Tensor& t) {
  NW_CHECK(t.defined(), ValueError, op, ": ", name, "[", i, "] is undefined (None)");
  NW_CHECK(t.dtype() == DType::Float32 || t.dtype() == DType::Float64, TypeError, op, ": ", name,
           "[", i, "] has dtype ", dtype_name(t.dtype()),
           "; fused optimizer steps support float32 and float64");
  if (!t.device().is_cpu()) {
    throw NotImplementedError(str_cat(op, ": ", name, "[", i, "] is on ", t.device().str(),
                                      "; fused optimizer steps run on CPU tensors only"));
  }
}

// Empty tensors have nothing to index, and the engine may report odd strides for them.
bool dense(const Tensor& t) { return t.numel() == 0 || t.is_contiguous(); }

}  // namespace

void check_count(const char* op, const char* name, size_t got, size_t expected) {
  NW_CHECK(got == expected, ValueError, op, ": ", name, " has ", got, " tensors, expected ",
           expected, " (one per parameter)");
}

void check_hyper(const char* op, const char* name, double value) {
  NW_CHECK(std::isfinite(value) && value >= 0, ValueError, op, ": ", name,
           " must be a finite non-negative number, got ", value);
}

void check_params(const char* op, const TensorList& params) {
  for (size_t i = 0; i < params.size(); ++i) {
    check_one(op, "params", i, params[i]);
    NW_CHECK(dense(params[i]), ValueError, op, ": params[", i, "] of shape ",
             shape_str(params[i].shape()), " is not contiguous");
  }
}

void check_state(const char* op, const char* name, const TensorList& list,
                 const TensorList& params) {
  check_count(op, name, list.size(), params.size());
  for (size_t i = 0; i < list.size(); ++i) {
    check_one(op, name, i, list[i]);
    NW_CHECK(list[i].shape() == params[i].shape(), ValueError, op, ": ", name, "[", i,
             "] has shape ", shape_str(list[i].shape()), " but params[", i, "] has shape ",
             shape_str(params[i].shape()));
    NW_CHECK(list[i].dtype() == params[i].dtype(), TypeError, op, ": ", name, "[", i,
             "] has dtype ", dtype_name(list[i].dtype()), " but params[", i, "] has dtype ",
             dtype_name(params[i].dtype()));
    NW_CHECK(dense(list[i]), ValueError, op, ": ", name, "[", i, "] is not contiguous");
    NW_CHECK(!list[i].is_same(params[i]) &&
                 (list[i].numel() == 0 || list[i].data_ptr() != params[i].data_ptr()),
             ValueError, op, ": ", name, "[", i, "] shares memory with params[", i, "]");
  }
}

TensorList checked_grads(const char* op, const TensorList& grads, const TensorList& params) {
  check_count(op, "grads", grads.size(), params.size());
  TensorList out;
  out.reserve(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    check_one(op, "grads", i, grads[i]);
    NW_CHECK(grads[i].shape() == params[i].shape(), ValueError, op, ": grads[", i, "] has shape ",
             shape_str(grads[i].shape()), " but params[", i, "] has shape ",
             shape_str(params[i].shape()));
    NW_CHECK(grads[i].dtype() == params[i].dtype(), TypeError, op, ": grads[", i, "] has dtype ",
             dtype_name(grads[i].dtype()), " but params[", i, "] has dtype ",
             dtype_name(params[i].dtype()));
    out.push_back(dense(grads[i]) ? grads[i] : contiguous(grads[i].detach()));
  }
  return out;
}

void bump_versions(const TensorList& tensors) {
  for (const Tensor& t : tensors) t.bump_version();
}

}  // namespace nodeweave::optim::detail
