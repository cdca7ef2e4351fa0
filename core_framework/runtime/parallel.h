// OpenMP helpers. Kernels split work with parallel_for and stay serial below a grain size, because
// waking the thread team costs a few microseconds, more than a small op itself.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace nodeweave {

// Threads a parallel region of the calling thread may use: set_num_threads's value, or less where
// this thread set a cap (set_thread_num_threads_cap).
int get_num_threads();
// Caps get_num_threads on the calling thread only (a loader worker sampling with its share of the
// cores); 0 removes the cap.
void set_thread_num_threads_cap(int n);
void set_num_threads(int n);  // throws ValueError for n < 1

// Elements below which an elementwise loop stays on one thread.
constexpr int64_t kGrainSize = 32768;

// Calls fn(begin, end) over disjoint chunks of [begin, end), in parallel when the range is larger
// than `grain` and we are not already inside a parallel region.
template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& fn) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  const int max_threads = get_num_threads();
  if (n <= grain || max_threads == 1 || omp_in_parallel()) {
    fn(begin, end);
    return;
  }
  const int64_t nthreads = std::min<int64_t>(max_threads, (n + grain - 1) / grain);
#pragma omp parallel num_threads(static_cast <int>(nthreads))
  {
    const int64_t tid = omp_get_thread_num();
    const int64_t nt = omp_get_num_threads();
    const int64_t chunk = (n + nt - 1) / nt;
    const int64_t b = begin + tid * chunk;
    const int64_t e = std::min(end, b + chunk);
    if (b < e) fn(b, e);
  }
}

}  // namespace nodeweave
