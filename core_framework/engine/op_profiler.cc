#include "core_framework/engine/op_profiler.h"

#include <array>
#include <atomic>

#include "core_framework/engine/op_def.h"

namespace nodeweave {

namespace {

std::atomic<bool> g_on{false};
// Relaxed atomics: several threads may dispatch at once (data-loader threads, DDP ranks in one
// process) and exact cross-thread ordering of the counters does not matter.
std::array<std::atomic<int64_t>, kMaxOps> g_calls{};
std::array<std::atomic<int64_t>, kMaxOps> g_nanos{};

}  // namespace

void set_op_profiling(bool on) { g_on.store(on, std::memory_order_relaxed); }
bool op_profiling() { return g_on.load(std::memory_order_relaxed); }

void reset_op_profile() {
  for (int i = 0; i < kMaxOps; ++i) {
    g_calls[i].store(0, std::memory_order_relaxed);
    g_nanos[i].store(0, std::memory_order_relaxed);
  }
}

std::vector<OpProfileEntry> op_profile() {
  std::vector<OpProfileEntry> out;
  const int n = num_registered_ops();
  for (int i = 0; i < n; ++i) {
    const int64_t calls = g_calls[i].load(std::memory_order_relaxed);
    if (calls) out.push_back({static_cast<OpKind>(i), calls, g_nanos[i].load(std::memory_order_relaxed)});
  }
  return out;
}

namespace detail {

void record_op_time(OpKind kind, int64_t nanos) {
  const int i = static_cast<int>(kind);
  g_calls[i].fetch_add(1, std::memory_order_relaxed);
  g_nanos[i].fetch_add(nanos, std::memory_order_relaxed);
}

int& dispatch_depth() {
  thread_local int depth = 0;
  return depth;
}

}  // namespace detail

}  // namespace nodeweave
