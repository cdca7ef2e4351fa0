// Runs a Program from C++: binds the inputs (checked against the traced types), then runs each node
// through the dispatcher, with no host-language code per op. A node traced with autograd on runs
// with autograd on when the caller's grad mode is on (so a traced forward can be differentiated
// eagerly); nodes traced under no_grad, such as the backward pass, run without it. Each value is
// released after its last reader, so a run holds no more than the eager code did; nodes that run
// without autograd write into buffers the memory plan reuses along the program and across runs.
// Each guard is checked as soon as its value is computed, where the traced code read it: the ops
// before it ran in the eager code before the read too.
#pragma once
#include <stdexcept>

#include <mutex>

#include "core_framework/jit/memory_plan.h"
#include "core_framework/jit/program.h"

namespace nodeweave::jit {

// A guard's value differed from the traced one: the program does not apply to this run (the
// caller traces again).
class GuardFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Executor {
 public:
  // plan_memory: run nodes without autograd into reused buffers (memory_plan.h).
  explicit Executor(Program program, bool plan_memory = true);

  // ValueError naming the input when the count, a dtype, a shape or a device differs from the
  // program's; GuardFailure when a guard's value changed. The constructor raises ValueError when
  // the program holds placeholders (parsed `#k` tensors or opaque attributes) and so cannot run.
  // `objects`: the program's object inputs (object_input.h), in order, each of the kind and the
  // sizes traced (ValueError naming it otherwise).
  TensorList run(const TensorList& inputs, const std::vector<OpaquePtr>& objects = {}) const;

  const Program& program() const { return program_; }
  const MemoryPlan& memory_plan() const { return plan_; }

 private:
  Program program_;
  std::vector<std::vector<int64_t>> release_after_;  // per node: values last read there
  std::vector<std::vector<size_t>> guards_after_;    // per node: guards on its outputs
  std::vector<size_t> guards_first_;                 // guards on inputs, captures, constants
  std::vector<bool> reads_object_;                   // per node: an attribute is an object input
  void check_guard(size_t g, const Tensor& value) const;
  // ValueError when planned node k's op makes other result types than the program declares.
  void check_planned_types(size_t k, const TensorList& args, const Attrs& attrs) const;
  bool planned_node(size_t k) const;  // some output of node k goes into a planned buffer
  MemoryPlan plan_;
  // The planned buffers, made at the first run and reused by every later one; a run holds the
  // lock, so two threads never share them.
  mutable std::vector<StoragePtr> arena_;
  mutable std::mutex arena_mu_;
  // Planned nodes' result types were checked against their ops' shape rules by a whole run (they
  // follow from the input types, which each run checks): later runs skip it. Under arena_mu_.
  mutable bool types_checked_ = false;
};

}  // namespace nodeweave::jit
