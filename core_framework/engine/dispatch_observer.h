// The place the static-graph tracer hooks into: while an observer is installed on a thread, every
// primitive op the dispatcher runs there is reported with its inputs, attributes and outputs.
#pragma once
#include "core_framework/engine/attrs.h"
#include "core_framework/engine/op_kind.h"
#include "core_framework/engine/tensor.h"

namespace nodeweave {

class DispatchObserver {
 public:
  virtual ~DispatchObserver() = default;
  virtual void on_op(OpKind kind, const TensorList& inputs, const Attrs& attrs,
                     const TensorList& outputs) = 0;
};

// Installs `obs` for this thread (nullptr removes it); returns the previous observer.
DispatchObserver* set_dispatch_observer(DispatchObserver* obs);
DispatchObserver* dispatch_observer();

}  // namespace nodeweave
