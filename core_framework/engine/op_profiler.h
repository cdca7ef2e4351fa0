// Per-op wall-clock totals, for splitting a training step between op families (graph kernels,
// GEMM, elementwise ...). While profiling is on, dispatch() times every op it runs at nesting
// depth 0 on its thread, output allocation included; an op whose kernel dispatches further ops is
// counted once, as itself, so the totals never add up to more than the time spent in ops.
// CUDA kernels run asynchronously: on a GPU the figures are launch times unless the caller
// synchronizes.
#pragma once
#include <cstdint>
#include <vector>

#include "core_framework/engine/op_kind.h"

namespace nodeweave {

struct OpProfileEntry {
  OpKind kind;
  int64_t calls = 0;
  int64_t nanos = 0;
};

void set_op_profiling(bool on);
bool op_profiling();
void reset_op_profile();
// Ops run at least once since the last reset, in op-table order.
std::vector<OpProfileEntry> op_profile();

namespace detail {
// Called by the dispatcher.
void record_op_time(OpKind kind, int64_t nanos);
// Depth of nested dispatch() calls on this thread (only ops at depth 0 are timed).
int& dispatch_depth();
}  // namespace detail

}  // namespace nodeweave
