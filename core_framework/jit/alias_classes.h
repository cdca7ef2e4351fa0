// Which values of a program share memory: a view node's outputs and an in-place node's output
// alias the node's first input. Passes that merge, fold or drop nodes ask it whether a value's
// memory is ever written in place, because SSA ids alone do not show a write through an alias.
#pragma once
#include <cstdint>
#include <vector>

#include "core_framework/jit/program.h"

namespace nodeweave::jit {

// Per value: the value whose memory it is (itself when it owns its memory).
std::vector<int64_t> alias_roots(const Program& p);
// Per value: whether an in-place node writes its memory (through any alias) anywhere in p.
std::vector<bool> written_memory(const Program& p);
// Gives every constant an in-place node writes a fresh copy per run (a `cast` to its own dtype
// ahead of all nodes, read instead of the constant), so that each run starts from the traced
// value as eager code, which created the tensor anew, would.
void copy_written_constants(Program& p);

}  // namespace nodeweave::jit
