// Internal to sparse/cpu: software prefetch of an operand row read a few edges ahead. The kernels
// read rows at scattered addresses (one per edge), which the hardware prefetcher cannot predict.
#pragma once
#include <cstdint>

namespace nodeweave::sparse::cpu::detail {

constexpr int64_t kLineBytes = 64;

// Prefetches the n elements at p, one request per cache line. always_inline is load-bearing: GCC's
// IPA pass sees __builtin_prefetch as free of side effects, marks a function whose only effect is
// a prefetch const and deletes every call to it (GCC 12 emitted no prefetch instruction for
// spmm_cpu.cc until the helper was forced inline into the loops).
template <typename T>
[[gnu::always_inline]] inline void prefetch_span(const T* p, int64_t n) {
  constexpr int64_t kStep = kLineBytes / sizeof(T);
  for (int64_t k = 0; k < n; k += kStep) __builtin_prefetch(p + k);
}

}  // namespace nodeweave::sparse::cpu::detail
