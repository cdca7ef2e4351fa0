// Memory planning for the executor (ggml's graph allocator is the model): the results of nodes
// that run without autograd go into a few buffers reused along the program, by liveness, instead
// of one fresh allocation per result. A buffer is free again after the last reader of every value
// that shares its memory (views, in-place writes), and the buffers persist from run to run, so a
// replay allocates nothing for planned values after its first run. A one-result elementwise op
// writes over an input of its shape and dtype whose last reader it is (relu(x) into x's buffer).
//
// Not planned: program outputs and anything sharing their memory (the caller keeps them), values
// an autograd-recording node reads (autograd may save them past the run), views and in-place
// results (they live in their base's memory), and ops whose outputs the kernel allocates.
#pragma once
#include <cstdint>
#include <vector>

#include "core_framework/jit/program.h"

namespace nodeweave::jit {

struct MemoryPlan {
  std::vector<std::vector<int64_t>> buffer_of;  // per node, per output: a buffer, or -1
  std::vector<int64_t> buffer_bytes;
  std::vector<Device> buffer_device;
  int64_t planned_bytes = 0;   // what the planned values would take, one allocation each
  int64_t arena_bytes = 0;     // what the buffers take
  int64_t in_place_bytes = 0;  // planned values written over an input that died at their node
};

// in_place: let elementwise results overwrite inputs that die at their node (above).
MemoryPlan plan_memory(const Program& p, bool in_place = true);

}  // namespace nodeweave::jit
