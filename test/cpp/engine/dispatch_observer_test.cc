// The tracer's hook: an installed observer sees every primitive op with its inputs and outputs.
#include <gtest/gtest.h>

#include "core_framework/engine/dispatch_observer.h"
#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"

namespace nodeweave {
namespace {

struct Recorder : DispatchObserver {
  std::vector<OpKind> ops;
  std::vector<Tensor> last_outputs;
  void on_op(OpKind kind, const TensorList&, const Attrs&, const TensorList& outputs) override {
    ops.push_back(kind);
    last_outputs = outputs;
  }
};

TEST(DispatchObserver, RecordsPrimitivesOfCompositeOps) {
  Tensor x = ones({2, 3});
  Tensor w = ones({4, 3});
  Recorder rec;
  DispatchObserver* prev = set_dispatch_observer(&rec);
  Tensor y = linear(x, w);  // composite: t(w) is a Permute view, then Mm
  set_dispatch_observer(prev);
  ASSERT_EQ(rec.ops.size(), 2u);
  EXPECT_EQ(rec.ops[0], OpKind::Permute);
  EXPECT_EQ(rec.ops[1], OpKind::Mm);
  EXPECT_TRUE(rec.last_outputs[0].is_same(y));
}

TEST(DispatchObserver, SeesInPlaceOpsAndStopsWhenRemoved) {
  Recorder rec;
  Tensor x = zeros({3});
  Tensor one = ones({3});
  set_dispatch_observer(&rec);
  dispatch_inplace(OpKind::Add, x, {one});
  set_dispatch_observer(nullptr);
  Tensor z = add(x, x);
  ASSERT_EQ(rec.ops.size(), 1u);
  EXPECT_EQ(rec.ops[0], OpKind::Add);
  EXPECT_TRUE(rec.last_outputs[0].is_same(x));
}

TEST(OpTable, EveryEntryIsNamedAndHasACpuKernel) {
  for (int i = 0; i < kNumOps; ++i) {
    const OpDef& d = op_def(static_cast<OpKind>(i));
    EXPECT_STRNE(d.name, "") << i;
    EXPECT_NE(d.kernels[0], nullptr) << "op " << d.name << " has no CPU kernel";
    bool allocates = (d.traits & (kView | kDynamicShape)) != 0;
    EXPECT_EQ(d.infer == nullptr, allocates)
        << "op " << d.name << ": infer must be set unless the kernel allocates";
  }
}

}  // namespace
}  // namespace nodeweave
