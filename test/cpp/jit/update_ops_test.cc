// Optimizer updates as program nodes (kMutatesInputs): the tracer records one node writing every
// parameter and state tensor of a group, the passes keep it and the order around it, and a replay
// updates the captured tensors from the numbers the host writes into `hyper` and `counts`.
#include <gtest/gtest.h>

#include <cmath>

#include "core_framework/engine/functional.h"
#include "core_framework/jit/executor.h"
#include "core_framework/jit/ir_text.h"
#include "core_framework/jit/passes/passes.h"
#include "core_framework/jit/tracer.h"
#include "core_framework/optim/update_ops.h"
#include "jit_test_util.h"

namespace nodeweave::jit {
namespace {

using testing::from;

Tensor numbers(const std::vector<double>& v) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, DType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t;
}

Tensor counts(const std::vector<int64_t>& v) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, DType::Int64);
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

std::string apply(void (*pass)(Program&), const std::string& text) {
  optim::update_ops();
  Program p = parse(text);
  pass(p);
  return print(p);
}

// p is read before and after an update writes it: the two reads are other values.
const char* kUpdated =
    "program(%0: float32[2], %1: float32[2], %2: float64[4], %3: int64[1]) {\n"
    "  %4: float32[2] = exp(%0)\n"
    "  %5: float32[2], %6: float32[2] = sgd_update_(%0, %1, %1, %2, %3) {1, true, false, false}\n"
    "  %7: float32[2] = exp(%0)\n"
    "  %8: float32[2] = exp(%1)\n"
    "  return (%4, %7)\n"
    "}\n";

TEST(UpdateOps, DeadCodeKeepsAnUpdateNobodyReads) {
  EXPECT_EQ(apply(eliminate_dead_code, kUpdated),
            "program(%0: float32[2], %1: float32[2], %2: float64[4], %3: int64[1]) {\n"
            "  %4: float32[2] = exp(%0)\n"
            "  %5: float32[2], %6: float32[2] = sgd_update_(%0, %1, %1, %2, %3) {1, true, false, "
            "false}\n"
            "  %7: float32[2] = exp(%0)\n"
            "  return (%4, %7)\n"
            "}\n");
}

TEST(UpdateOps, CommonSubexpressionsSeeEveryWrittenInput) {
  // exp(%0) before and after the update differ (input 0 written), and so does exp(%1) from any
  // exp(%1) before it: an update writes each of its first outputs.size() inputs.
  const std::string out = apply(eliminate_common_subexpressions, kUpdated);
  EXPECT_NE(out.find("%4: float32[2] = exp(%0)"), std::string::npos) << out;
  EXPECT_NE(out.find("%7: float32[2] = exp(%0)"), std::string::npos) << out;
  EXPECT_EQ(apply(fold_constants, kUpdated), print(parse(kUpdated)));
}

TEST(UpdateOps, AnUpdateMustBeWrittenInPlace) {
  optim::update_ops();
  std::string text = kUpdated;
  text.replace(text.find("sgd_update_("), 12, "sgd_update(");
  EXPECT_THROW(parse(text), ValueError);
}

TEST(UpdateOps, TracedSgdWithMomentumReplaysWithTheHostsNumbers) {
  Tensor p = from({1.0f, -2.0f}, {2});
  Tensor buf = zeros({2});
  Tensor hyper = numbers({0.1, 0.9, 0.0, 0.0});
  Tensor fresh = counts({1});
  Tensor x = from({3.0f, 4.0f}, {2});
  Program prog;
  {
    Tracer tr;
    tr.add_input(x);
    tr.capture_state(buf);
    tr.capture_state(hyper);
    tr.capture_state(fresh);
    // gradient = x: the update's gradient input is a value the program computes
    optim::sgd_update({p}, {buf}, {mul(x, 1.0)}, hyper, fresh, false, false);
    prog = tr.finish({});
  }
  // Eager: the first step seeds the buffer with the gradient: p = [1 - 0.3, -2 - 0.4].
  EXPECT_FLOAT_EQ(p.data<float>()[0], 0.7f);
  EXPECT_FLOAT_EQ(buf.data<float>()[1], 4.0f);
  run_passes(prog);
  ASSERT_NE(print(prog).find("sgd_update_("), std::string::npos) << print(prog);
  const Executor ex(prog);
  // The host says the buffer is no longer new and halves the learning rate.
  hyper.data<double>()[0] = 0.05;
  fresh.data<int64_t>()[0] = 0;
  ex.run({from({1.0f, 2.0f}, {2})});
  // buf = 0.9 * [3, 4] + [1, 2] = [3.7, 5.6]; p -= 0.05 * buf.
  EXPECT_FLOAT_EQ(buf.data<float>()[0], 3.7f);
  EXPECT_FLOAT_EQ(buf.data<float>()[1], 5.6f);
  EXPECT_NEAR(p.data<float>()[0], 0.7f - 0.05f * 3.7f, 1e-6);
  EXPECT_NEAR(p.data<float>()[1], -2.4f - 0.05f * 5.6f, 1e-6);
}

}  // namespace
}  // namespace nodeweave::jit
