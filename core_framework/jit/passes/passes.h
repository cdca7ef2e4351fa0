// The program passes, one file each, and the list that runs them in order. Each pass rewrites a
// Program in place, leaves it verified and compacted, and never changes what a run computes:
// random ops and in-place writes stay where they were, so a compiled run matches eager bit for
// bit on one thread.
#pragma once
#include <string>
#include <vector>

#include "core_framework/jit/program.h"

namespace nodeweave::jit {

// Drops nodes whose outputs nothing reads, neither a node, an output nor a guard (in-place and
// random nodes stay: their effects are visible without a reader).
void eliminate_dead_code(Program& p);
// Merges nodes that apply the same op with the same attributes to the same values, read between
// the same in-place writes of their memory, unless they draw random numbers or their result is
// written in place later.
void eliminate_common_subexpressions(Program& p);
// Runs, at compile time, every node whose inputs are all constants, and makes its outputs
// constants (not random nodes, not in-place ones, not results an in-place node later writes), and
// drops the guards on values that became constants equal to what the guard expects.
void fold_constants(Program& p);

// Runs of elementwise nodes over one shape of at least `min_elements` elements become one
// fused_elementwise node, which computes them block by block with the ops' own kernels
// (fused_elementwise.h). The default is where the interpreter starts to win on the 2-core CI
// machine (2 MB L2, 32 MB L3): below 2^22 float32 elements the unfused ops work out of the caches
// and the interpreter is 0.7-0.9x their speed (bench/jit/elementwise_fusion.py --sweep).
constexpr int64_t kFuseMinElements = int64_t{1} << 22;
void fuse_elementwise(Program& p, int64_t min_elements = kFuseMinElements);

struct PassInfo {
  const char* name;
  void (*run)(Program&);
};
// Every pass in the order run_passes applies them.
const std::vector<PassInfo>& pass_list();
// Adds a pass defined above the engine (graph-kernel fusion in backend/) before the pass named
// `before` (at the end when null). Once per name; thread-safe.
void register_pass(PassInfo info, const char* before = nullptr);
// Applies every pass of pass_list() not named in `disabled` (ValueError for an unknown name).
void run_passes(Program& p, const std::vector<std::string>& disabled = {});

}  // namespace nodeweave::jit
