// Records what the dispatcher runs on this thread into a Program (MegEngine-style tracing): the
// forward ops, the backward ops autograd dispatches for grad(), in-place writes. Construct it,
// declare the inputs, run the code eagerly, then finish() with the results.
//
// A tensor an op reads that is neither an input nor computed in the trace is captured by
// reference (parameters, feature tables). A capture made during the trace, with memory of its own
// (a Python scalar's tensor, a creation function's result), is a constant instead: eager code
// makes it anew at each call, with the same value. A constant the program writes in place is
// copied at the start of each run (alias_classes.h), so each run starts from the traced value.
//
// A host read (item(), numpy(), bool()) of a value that depends on an input is refused with
// TracingError: the code after it was traced for this run's value only. A read of a value that
// does not (a check on graph degrees, a parameter's norm) becomes a Guard: each run checks that
// the value is unchanged.
//
// A leaf's .grad written during the trace (backward(), `p.grad = g`, zero_grad()) is a GradWrite:
// the program returns the leaf's final gradient after the traced outputs, and the caller assigns
// it at each run. backward() adding to a gradient from before the trace is refused: the program
// would add to that old tensor at every run. Optimizer state that the program updates in place
// and the host refreshes between runs (capture_state) is captured even when made during the trace.
//
// A forward op whose autograd history the traced code spent (grad() without retain_graph) is
// recorded as not recording autograd: its backward is in the program already, and eager code
// could not have differentiated through it again either. Replays then build no autograd graph
// nobody reads, and keep no activations alive for it.
#pragma once
#include <memory>
#include <unordered_map>

#include "core_framework/engine/dispatch_observer.h"
#include "core_framework/jit/program.h"

namespace nodeweave::jit {

class TracingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A leaf whose .grad the traced code wrote: the program output holding its final gradient (-1:
// none, it ended as None), and whether the code's first write added to the gradient the leaf had
// when the trace began, which was none: then a run is right only when the leaf has none either.
struct GradWrite {
  Tensor leaf;
  int64_t output = -1;
  bool none_at_entry = false;
};

class Tracer final : public DispatchObserver {
 public:
  // Installs itself as this thread's observer (TracingError if one is already tracing).
  Tracer();
  ~Tracer() override;
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // Declares the next program input; returns its value id. `data` false: the input describes a
  // graph argument's structure (a batch's nodes per graph), which host code may read: such a read
  // becomes a guard, as a read of the graph's own structure would, not a TracingError.
  int64_t add_input(const Tensor& t, bool data = true);
  // Declares the next object input (object_input.h): an attribute whose object the traced ops'
  // attributes are matched against. Returns its position among the object inputs.
  int64_t add_object_input(const OpaquePtr& object);
  // Whether `object` is the object of a declared object input.
  bool is_object_input(const void* object) const { return object_of_root_.count(object) > 0; }
  // The trace running on this thread, or null.
  static Tracer* current();
  // Host code read the structure of an object input (a graph's degrees into NumPy), which the
  // program cannot see: what it computed from it is frozen, so the trace must not be reused for
  // another object. Keeps the first such read, which object_read() names ("" when none).
  void note_object_read(const void* object, const std::string& what);
  const std::string& object_read() const { return object_read_; }
  // Takes t as a capture, held by reference, even if it was made during the trace: state the
  // program updates in place and the host refreshes between runs (an optimizer's moments, its
  // learning rate), which must not become a constant of the program.
  void capture_state(const Tensor& t);
  // Stops recording and returns the program computing `outputs`, followed by the final gradient
  // of each leaf in grad_writes() that has one.
  Program finish(const TensorList& outputs);
  // After finish(): the leaves whose .grad the traced code wrote, in the order first written.
  const std::vector<GradWrite>& grad_writes() const { return grad_writes_; }
  // Stops recording and drops what was recorded (the traced code raised). Idempotent.
  void abort();
  // Whether t is an input of the trace or computed from one: its value may differ at the next
  // run, so a host read of it would freeze one run's value into the program.
  bool depends_on_input(const Tensor& t) const;

  void on_op(OpKind kind, const TensorList& inputs, const Attrs& attrs,
             const TensorList& outputs) override;
  void on_read(const Tensor& t, const char* what) override;
  void on_grad_write(const Tensor& variable, const Tensor& previous, bool accumulate) override;
  void on_alias(const Tensor& source, const Tensor& alias) override;
  void on_autograd_released(const void* grad_fn) override;
  void on_backward_begin(const void* grad_fn, const TensorList& grads_in) override;
  void on_backward_end(const void* grad_fn, const TensorList& grads_out) override;

 private:
  int64_t value_of(const Tensor& t);
  // Gives t the value `id`, and so every alias of t seen before t was known.
  void bind(const Tensor& t, int64_t id);
  void uninstall();
  void stop();  // uninstalls and forgets every tensor seen (the program stays)

  Program p_;
  std::unordered_map<const void*, int64_t> object_of_root_;  // object -> object input
  std::vector<OpaquePtr> objects_;                           // kept alive until finish()
  std::string object_read_;
  std::vector<GradWrite> grad_writes_;
  std::unordered_map<const TensorImpl*, size_t> grad_write_of_;  // leaf -> grad_writes_ index
  std::unordered_map<const TensorImpl*, int64_t> ids_;
  std::vector<bool> varies_;  // per value: depends on an input
  // The node recorded for each autograd Node the trace's ops made: a backward that frees the
  // Node spends that history, so replays need not record it again (autograd_released).
  std::unordered_map<const void*, size_t> node_of_grad_fn_;
  // The backward region the ops now reported belong to (-1: the traced code's own ops).
  int64_t region_ = -1;
  // Every tensor seen stays alive until finish(), so no freed impl's address is reused by a new
  // tensor that would then be taken for the old value.
  std::vector<Tensor> keep_;
  // Aliases made of tensors the trace did not know yet (autograd saves an op's outputs before the
  // op is reported), by the impl they alias.
  std::unordered_map<const TensorImpl*, std::vector<Tensor>> pending_;
  uint64_t first_serial_ = 0;  // tensors from here on were made during the trace
  DispatchObserver* previous_ = nullptr;
  bool installed_ = false;
};

}  // namespace nodeweave::jit
