#include "core_framework/runtime/parallel.h"

#include <cblas.h>

#include <algorithm>

#include "core_framework/runtime/error.h"

namespace nodeweave {

namespace {
int& num_threads_setting() {
  static int n = omp_get_max_threads();
  return n;
}
}  // namespace

// The setting, capped by the calling thread's own OpenMP limit: a thread that lowered it (a loader
// worker sampling with its share of the cores) gets teams of that size, not the process's.
int get_num_threads() { return std::min(num_threads_setting(), omp_get_max_threads()); }

void set_num_threads(int n) {
  NW_CHECK(n >= 1, ValueError, "set_num_threads: expected a positive thread count, got ", n);
  num_threads_setting() = n;
  omp_set_num_threads(n);
  // GEMM runs inside OpenBLAS's own pool: keep both in step.
  openblas_set_num_threads(n);
}

}  // namespace nodeweave
