// The place the static-graph tracer hooks into: while an observer is installed on a thread, every
// outermost primitive op the dispatcher runs there is reported with its inputs, attributes and
// outputs (ops a kernel or an in-place rewrite runs inside another op are part of that op), and so
// is every read of a tensor's values into the host program (which a traced program cannot
// replay, so the tracer must see them to refuse or guard them), every write of a leaf's .grad
// (which a replay repeats), and every
// alias made outside the dispatcher (so the tracer knows it as the value it aliases).
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
  // `what` ("item()", "numpy()", ...) is about to copy t's values into the host program.
  virtual void on_read(const Tensor& t, const char* what) {
    (void)t;
    (void)what;
  }
  // `alias` was made from `source` outside the dispatcher (detach(), a saved tensor): the same
  // memory and value.
  virtual void on_alias(const Tensor& source, const Tensor& alias) {
    (void)source;
    (void)alias;
  }
  // A backward pass without retain_graph has run and freed the autograd node `grad_fn` (an
  // op's Node): the op's recorded history is spent.
  virtual void on_autograd_released(const void* grad_fn) { (void)grad_fn; }
  // Autograd runs the backward of the autograd node `grad_fn` (an op's Node): the ops reported
  // between begin and end are that backward, from the gradients `grads_in` (one per output of the
  // op, undefined where none flowed) to `grads_out` (one per input of the op).
  virtual void on_backward_begin(const void* grad_fn, const TensorList& grads_in) {
    (void)grad_fn;
    (void)grads_in;
  }
  virtual void on_backward_end(const void* grad_fn, const TensorList& grads_out) {
    (void)grad_fn;
    (void)grads_out;
  }
  // The .grad of leaf `variable`, now `previous` (undefined: none), is about to be written:
  // `accumulate` true when backward() adds a gradient to it, false when host code assigns it
  // (`p.grad = g`, an optimizer's zero_grad()).
  virtual void on_grad_write(const Tensor& variable, const Tensor& previous, bool accumulate) {
    (void)variable;
    (void)previous;
    (void)accumulate;
  }
};

// Reports a host read of t's values to this thread's observer, if any.
void notify_read(const Tensor& t, const char* what);

// Installs `obs` for this thread (nullptr removes it); returns the previous observer.
DispatchObserver* set_dispatch_observer(DispatchObserver* obs);
DispatchObserver* dispatch_observer();

}  // namespace nodeweave
