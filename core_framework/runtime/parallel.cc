#include "core_framework/runtime/parallel.h"

#include <cblas.h>

#include "core_framework/runtime/error.h"

namespace nodeweave {

namespace {
int& num_threads_setting() {
  static int n = omp_get_max_threads();
  return n;
}
}  // namespace

int get_num_threads() { return num_threads_setting(); }

void set_num_threads(int n) {
  NW_CHECK(n >= 1, ValueError, "set_num_threads: expected a positive thread count, got ", n);
  num_threads_setting() = n;
  omp_set_num_threads(n);
  // GEMM runs inside OpenBLAS's own pool: keep both in step.
  openblas_set_num_threads(n);
}

}  // namespace nodeweave
