// Engine kernels against their baselines, measured in the same run:
//   (b) 1024^3 float32 matmul through the engine vs calling OpenBLAS cblas_sgemm directly;
//   (c) add, mul and sum over 2^24 floats in GB/s vs a STREAM-style copy loop (and triad, for
//   reference).
// Prints the median of several repetitions. Usage: bench_engine_kernels [threads]
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/engine/functional.h"
#include "core_framework/runtime/parallel.h"

using namespace nodeweave;

namespace {

double median_seconds(int reps, const std::function<void()>& fn) {
  fn();  // warm up: page faults, thread pool start
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto a = std::chrono::steady_clock::now();
    fn();
    auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// STREAM-style loops: plain OpenMP loops the compiler vectorizes; the bandwidth the machine gives a
// simple, well-written kernel.
void stream_copy(float* __restrict dst, const float* __restrict src, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}
void stream_triad(float* __restrict a, const float* __restrict b, const float* __restrict c,
                  int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : get_num_threads();
  set_num_threads(threads);
  NoGradGuard no_grad;
  std::printf("threads: %d\n", threads);

  // (b) GEMM
  const int64_t N = 1024;
  Tensor a = randn({N, N}), b = randn({N, N});
  Tensor c_ref = empty({N, N});
  double t_blas = median_seconds(7, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a.data<float>(), N,
                b.data<float>(), N, 0.0f, c_ref.data<float>(), N);
  });
  Tensor c;
  double t_nw = median_seconds(7, [&] { c = mm(a, b); });
  double flops = 2.0 * N * N * N;
  std::printf(
      "matmul 1024^3 f32: nodeweave %.2f ms (%.1f GFLOP/s), OpenBLAS sgemm %.2f ms (%.1f GFLOP/s), "
      "ratio nodeweave/sgemm time %.3f\n",
      t_nw * 1e3, flops / t_nw / 1e9, t_blas * 1e3, flops / t_blas / 1e9, t_nw / t_blas);

  // (c) bandwidth
  const int64_t n = int64_t{1} << 24;
  Tensor x = randn({n}), y = randn({n}), out = empty({n});
  const double bytes_copy = 2.0 * n * 4, bytes_binary = 3.0 * n * 4, bytes_sum = 1.0 * n * 4;
  double t_copy = median_seconds(15, [&] { stream_copy(out.data<float>(), x.data<float>(), n); });
  double t_triad = median_seconds(
      15, [&] { stream_triad(out.data<float>(), x.data<float>(), y.data<float>(), n); });
  double bw_copy = bytes_copy / t_copy / 1e9;
  std::printf("STREAM-style copy: %.2f GB/s; triad: %.2f GB/s\n", bw_copy,
              bytes_binary / t_triad / 1e9);
  struct Case {
    const char* name;
    double bytes;
    std::function<void()> fn;
  };
  Tensor r;
  std::vector<Case> cases = {
      {"add (out of place)", bytes_binary, [&] { r = add(x, y); }},
      {"mul (out of place)", bytes_binary, [&] { r = mul(x, y); }},
      {"add_ (in place)", bytes_binary, [&] { dispatch_inplace(OpKind::Add, out, {y}); }},
      {"sum (full reduce)", bytes_sum, [&] { r = sum(x); }},
  };
  for (Case& k : cases) {
    double t = median_seconds(15, k.fn);
    double bw = k.bytes / t / 1e9;
    std::printf("%-20s %.2f GB/s  = %3.0f%% of STREAM copy\n", k.name, bw, 100.0 * bw / bw_copy);
  }
  return 0;
}
