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
// 0: no cap on this thread. Our own per-thread cap, not OpenMP's ICV: torch shares libgomp with us
// on recent wheels, and torch.set_num_threads must not silently cap nodeweave's kernels.
thread_local int thread_cap = 0;
}  // namespace

int get_num_threads() {
  const int n = num_threads_setting();
  return thread_cap > 0 ? std::min(n, thread_cap) : n;
}

void set_thread_num_threads_cap(int n) { thread_cap = std::max(n, 0); }

void set_num_threads(int n) {
  NW_CHECK(n >= 1, ValueError, "set_num_threads: expected a positive thread count, got ", n);
  num_threads_setting() = n;
  omp_set_num_threads(n);
  // GEMM runs inside OpenBLAS's own pool: keep both in step.
  openblas_set_num_threads(n);
}

}  // namespace nodeweave
