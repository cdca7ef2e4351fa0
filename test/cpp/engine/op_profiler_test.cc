#include "core_framework/engine/op_profiler.h"

#include <gtest/gtest.h>

#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"

namespace nodeweave {
namespace {

int64_t calls_of(const char* name) {
  for (const OpProfileEntry& e : op_profile())
    if (std::string(op_def(e.kind).name) == name) return e.calls;
  return 0;
}

TEST(OpProfiler, CountsOnlyWhileOnAndResets) {
  Tensor a = full({4}, 1.0, DType::Float32);
  reset_op_profile();
  add(a, a);
  EXPECT_EQ(calls_of("add"), 0) << "profiling is off";
  set_op_profiling(true);
  add(a, a);
  add(a, a);
  set_op_profiling(false);
  EXPECT_EQ(calls_of("add"), 2);
  for (const OpProfileEntry& e : op_profile()) EXPECT_GE(e.nanos, 0);
  reset_op_profile();
  EXPECT_TRUE(op_profile().empty());
}

TEST(OpProfiler, DepthReturnsToZeroAfterAThrowingOp) {
  set_op_profiling(true);
  Tensor a = full({4}, 1.0, DType::Float32);
  Tensor b = full({3}, 1.0, DType::Float32);
  EXPECT_ANY_THROW(add(a, b));  // shapes do not broadcast
  EXPECT_EQ(detail::dispatch_depth(), 0);
  set_op_profiling(false);
  reset_op_profile();
}

}  // namespace
}  // namespace nodeweave
