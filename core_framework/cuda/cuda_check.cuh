// Error checking and the current-device guard shared by every CUDA source file.
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>

#include "core_framework/runtime/error.h"

namespace nodeweave::cuda {

// Every CUDA call is checked: a failed launch or copy must surface as an exception at the call
// that caused it, not as garbage in a later op.
#define NW_CUDA_CHECK(expr)                                                                      \
  do {                                                                                           \
    cudaError_t nw_err_ = (expr);                                                                \
    if (nw_err_ != cudaSuccess) {                                                                \
      throw std::runtime_error(::nodeweave::str_cat("CUDA error in ", #expr, ": ",               \
                                                    cudaGetErrorString(nw_err_), " (", __FILE__, \
                                                    ":", __LINE__, ")"));                        \
    }                                                                                            \
  } while (0)

// Makes `device` current for a scope and restores the caller's device afterwards, so that ops on
// cuda:1 allocate and launch there without disturbing a caller (PyTorch, say) working on cuda:0.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    NW_CUDA_CHECK(cudaGetDevice(&prev_));
    if (prev_ != device) NW_CUDA_CHECK(cudaSetDevice(device));
    switched_ = prev_ != device;
  }
  ~DeviceGuard() {
    if (switched_)
      cudaSetDevice(prev_);  // no throw from a destructor; the next call reports errors
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = 0;
  bool switched_ = false;
};

}  // namespace nodeweave::cuda
