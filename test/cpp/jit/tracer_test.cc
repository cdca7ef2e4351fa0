// Tracing eager code into a program and replaying it: the replay computes what eager code computes
// (forward and gradients), captures are read by reference, constants written in place start
// fresh each run, and what a program cannot replay is refused while tracing.
#include <gtest/gtest.h>

#include "core_framework/autograd/engine.h"
#include "core_framework/autograd/grad_mode.h"
#include "core_framework/engine/functional.h"
#include "core_framework/jit/executor.h"
#include "core_framework/jit/ir_text.h"
#include "core_framework/jit/passes/passes.h"
#include "core_framework/jit/tracer.h"
#include "jit_test_util.h"

namespace nodeweave::jit {
namespace {

using testing::from;

void expect_equal(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  const Tensor ca = contiguous(a), cb = contiguous(b);
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(ca.data<float>()[i], cb.data<float>()[i]) << i;
}

// loss = sum(relu(x W^T + b) * 2), and its gradients with respect to W and b.
TensorList step(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor loss = sum(mul(relu(linear(x, w, b)), 2.0));
  TensorList g = grad({loss}, {w, b}, {}, false, false, false);
  return {loss, g[0], g[1]};
}

TEST(Tracer, ReplaysForwardAndGradientsAsEagerComputesThem) {
  Tensor w = from({0.5f, -1, 2, 0.25f, 1, -0.5f}, {2, 3}).set_requires_grad(true);
  Tensor b = from({0.1f, -0.2f}, {2}).set_requires_grad(true);
  Tensor x1 = from({1, 2, 3, -1, 0, 4, 2, 2, -2, 0.5f, 1, 1}, {4, 3});
  Program prog;
  {
    Tracer tr;
    tr.add_input(x1);
    prog = tr.finish(step(x1, w, b));
  }
  run_passes(prog);
  const Executor ex(prog);
  Tensor x2 = from({-1, 3, 0.5f, 2, 2, 2, 0, 1, -3, 1, 1, 1}, {4, 3});
  const TensorList got = ex.run({x2});
  const TensorList want = step(x2, w, b);
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < 3; ++i) expect_equal(got[i], want[i]);
  // The weights are captured by reference: a change shows in the next run.
  {
    NoGradGuard ng;
    Tensor wd = w.detach();
    fill_(wd, 0.5);
  }
  const TensorList after = ex.run({x2});
  expect_equal(after[0], step(x2, w, b)[0]);
}

TEST(Tracer, ForwardRunsUnderTheCallersGradMode) {
  Tensor w = from({1, 2, 3, 4}, {2, 2}).set_requires_grad(true);
  Tensor x = from({1, -1}, {1, 2});
  Program prog;
  {
    Tracer tr;
    tr.add_input(x);
    prog = tr.finish({sum(mm(x, w))});
  }
  const Executor ex(prog);
  Tensor y = ex.run({x})[0];
  ASSERT_TRUE(y.requires_grad());
  backward({y}, {}, false, false);
  expect_equal(w.grad(), from({1, 1, -1, -1}, {2, 2}));
  {
    NoGradGuard ng;
    EXPECT_FALSE(ex.run({x})[0].requires_grad());
  }
  // Which ops record autograd was traced for w requiring grad: a run after that changed refuses.
  w.set_requires_grad(false);
  EXPECT_THROW(ex.run({x}), GuardFailure);
}

TEST(Tracer, AConstantWrittenInPlaceStartsFreshEachRun) {
  Tensor x = from({1, 2, 3}, {3});
  Program prog;
  {
    Tracer tr;
    tr.add_input(x);
    Tensor acc = zeros({3});  // created in the trace (empty, then fill_): a constant
    dispatch_inplace(OpKind::Add, acc, {x});
    prog = tr.finish({acc});
  }
  run_passes(prog);
  EXPECT_EQ(print(prog),
            "program(%0: float32[3]) {\n"
            "  %1: float32[3] = constant [0.0, 0.0, 0.0]\n"
            "  %2: float32[3] = cast(%1) {dtype(float32)}\n"
            "  %3: float32[3] = fill_(%2) {0.0}\n"
            "  %4: float32[3] = add_(%3, %0)\n"
            "  return (%4)\n"
            "}\n");
  const Executor ex(prog);
  expect_equal(ex.run({x})[0], x);
  expect_equal(ex.run({x})[0], x);  // not 2x: the run started from zeros again
}

TEST(Tracer, RefusesHostReadsOfTracedValues) {
  Tensor x = from({1, 2}, {2});
  Tensor w = from({1, 1}, {2}).set_requires_grad(true);
  {
    Tracer tr;
    tr.add_input(x);
    Tensor s = sum(x);
    EXPECT_THROW(s.item(), TracingError);
    Tensor scale = from({3}, {1});
    Tensor y = mul(x, scale);  // scale is captured: reading it directly is allowed
    EXPECT_EQ(scale.item(), 3.0);
    EXPECT_THROW(sum(y).item(), TracingError);
  }
}

TEST(Tracer, BackwardsGradWritesBecomeOutputs) {
  Tensor x = from({1, 2}, {2});
  Tensor w = from({1, 1}, {2}).set_requires_grad(true);
  Program prog;
  std::vector<GradWrite> writes;
  {
    Tracer tr;
    tr.add_input(x);
    Tensor loss = sum(mul(x, w));
    backward({loss}, {}, false, false);
    prog = tr.finish({loss});
    writes = tr.grad_writes();
  }
  // w had no gradient: backward() set it, and a run is right only when w has none again.
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_TRUE(writes[0].leaf.is_same(w));
  EXPECT_EQ(writes[0].output, 1);
  EXPECT_TRUE(writes[0].none_at_entry);
  run_passes(prog);
  const TensorList out = Executor(prog).run({from({3, 5}, {2})});
  ASSERT_EQ(out.size(), 2u);
  expect_equal(out[1], from({3, 5}, {2}));  // d(sum(x * w))/dw = x
  // backward() adding to a gradient from before the trace is refused: a replay would add to it.
  {
    Tracer tr;
    tr.add_input(x);
    EXPECT_THROW(backward({sum(mul(x, w))}, {}, false, false), TracingError);
  }
}

TEST(Tracer, AHostReadOfAnInputFreeValueBecomesAGuard) {
  Tensor x = from({1, 2}, {2});
  Tensor scale = from({3}, {1});
  Program prog;
  {
    Tracer tr;
    tr.add_input(x);
    // The host branches on the capture's value; the program holds the branch taken.
    const bool big = sum(scale).item() > 2;
    prog = tr.finish({big ? mul(x, scale) : x});
  }
  run_passes(prog);
  ASSERT_EQ(prog.guards.size(), 1u);
  const Executor ex(prog);
  expect_equal(ex.run({x})[0], from({3, 6}, {2}));
  scale.data<float>()[0] = 1;  // the branch would now go the other way
  EXPECT_THROW(ex.run({x}), GuardFailure);
}

TEST(Executor, ChecksInputsAgainstTheTracedTypes) {
  Tensor x = from({1, 2}, {2});
  Program prog;
  {
    Tracer tr;
    tr.add_input(x);
    prog = tr.finish({neg(x)});
  }
  const Executor ex(prog);
  EXPECT_THROW(ex.run({}), ValueError);
  EXPECT_THROW(ex.run({from({1, 2, 3}, {3})}), ValueError);
  EXPECT_THROW(ex.run({cast(x, DType::Float64)}), ValueError);
  EXPECT_THROW(Executor(parse("program() {\n  %0: float32[2] = capture #0\n  return (%0)\n}\n")),
               ValueError);
}

}  // namespace
}  // namespace nodeweave::jit
