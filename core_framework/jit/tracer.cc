#include "core_framework/jit/tracer.h"

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/engine/functional.h"
#include "core_framework/jit/alias_classes.h"
#include "core_framework/jit/object_input.h"
#include "core_framework/runtime/error.h"

namespace nodeweave::jit {

namespace {
thread_local Tracer* t_tracer = nullptr;
}  // namespace

Tracer* Tracer::current() { return t_tracer; }

void Tracer::note_object_read(const void* object, const std::string& what) {
  if (!installed_ || !is_object_input(object) || !object_read_.empty()) return;
  object_read_ = what;
}

Tracer::Tracer() {
  if (t_tracer) throw TracingError("jit: a trace is already being recorded on this thread");
  first_serial_ = detail::next_tensor_serial();
  previous_ = set_dispatch_observer(this);
  installed_ = true;
  t_tracer = this;
}

Tracer::~Tracer() { uninstall(); }

void Tracer::uninstall() {
  if (!installed_) return;
  set_dispatch_observer(previous_);
  installed_ = false;
  t_tracer = nullptr;
}

int64_t Tracer::add_input(const Tensor& t, bool data) {
  NW_CHECK(t.defined(), ValueError, "jit: an input tensor is undefined");
  const int64_t id =
      p_.add_value(type_of(t), ValueSource::Input, static_cast<int64_t>(p_.inputs.size()));
  p_.inputs.push_back(id);
  bind(t, id);
  varies_[static_cast<size_t>(id)] = data;
  return id;
}

int64_t Tracer::add_object_input(const OpaquePtr& object) {
  NW_CHECK(object, ValueError, "jit: an object input is null");
  const ObjectAttr* obj = object_attr(object);
  NW_CHECK(obj, ValueError, "jit: a ", object->kind(), " cannot be a program input");
  const void* root = obj->lineage().at(0).first;
  const auto k = static_cast<int64_t>(p_.object_inputs.size());
  NW_CHECK(object_of_root_.emplace(root, k).second, ValueError, "jit: the same ", object->kind(),
           " is declared as an input twice");
  p_.object_inputs.push_back(object->kind());
  p_.object_sizes.push_back(obj->sizes());
  objects_.push_back(object);
  return k;
}

void Tracer::bind(const Tensor& t, int64_t id) {
  if (varies_.size() < p_.values.size()) varies_.resize(p_.values.size(), false);
  ids_[t.impl()] = id;
  keep_.push_back(t);
  auto it = pending_.find(t.impl());
  if (it == pending_.end()) return;
  std::vector<Tensor> aliases = std::move(it->second);
  pending_.erase(it);
  for (const Tensor& a : aliases)
    if (!ids_.count(a.impl())) bind(a, id);
}

int64_t Tracer::value_of(const Tensor& t) {
  if (!t.defined()) return -1;
  auto it = ids_.find(t.impl());
  if (it != ids_.end()) return it->second;
  const bool made_here =
      t.impl()->serial > first_serial_ && t.storage().use_count() == 1 && !t.requires_grad();
  int64_t id;
  if (made_here) {
    // The traced code may write it in place later; the program keeps the value it has now.
    DispatchObserver* self = set_dispatch_observer(nullptr);
    Tensor snapshot = clone(t);
    set_dispatch_observer(self);
    snapshot.impl()->wrapped_number = t.impl()->wrapped_number;  // keeps its type promotion
    id = p_.add_tensor(snapshot, ValueSource::Constant);
  } else {
    id = p_.add_tensor(t, ValueSource::Capture);
    p_.values[static_cast<size_t>(id)].requires_grad = t.requires_grad();
  }
  bind(t, id);
  return id;
}

bool Tracer::depends_on_input(const Tensor& t) const {
  if (!t.defined()) return false;
  auto it = ids_.find(t.impl());
  return it != ids_.end() && varies_[static_cast<size_t>(it->second)];
}

void Tracer::on_op(OpKind kind, const TensorList& inputs, const Attrs& attrs,
                   const TensorList& outputs) {
  OpNode n;
  n.op = kind;
  n.attrs = attrs;
  n.region = region_;
  // An attribute standing for an object input, or for one made from it, names the input: a run
  // puts in the object it is called with.
  if (!object_of_root_.empty())
    for (size_t i = 0; i < attrs.size(); ++i) {
      const auto* o = std::get_if<OpaquePtr>(&attrs[i]);
      const ObjectAttr* obj = o ? object_attr(*o) : nullptr;
      if (!obj) continue;
      for (const auto& [from, derivation] : obj->lineage()) {
        auto it = object_of_root_.find(from);
        if (it == object_of_root_.end()) continue;
        n.attrs.mutable_at(i) =
            OpaquePtr(std::make_shared<ObjectInputAttr>(it->second, derivation, *o));
        break;
      }
    }
  // Autograd recorded it exactly when an output now requires grad (an update's outputs are the
  // parameters it wrote, which require grad without any recording).
  if (!(op_def(kind).traits & kMutatesInputs))
    for (const Tensor& t : outputs)
      n.grad_enabled = n.grad_enabled || (t.defined() && t.requires_grad());
  // An in-place op's result is its first input; an update's results are its first inputs.
  const bool updates = (op_def(kind).traits & kMutatesInputs) != 0;
  n.inplace = updates || (outputs.size() == 1 && !inputs.empty() && inputs[0].defined() &&
                          outputs[0].is_same(inputs[0]));
  n.inputs.reserve(inputs.size());
  bool varies = false;
  for (const Tensor& t : inputs) {
    n.inputs.push_back(value_of(t));
    varies = varies || (n.inputs.back() != kNone && varies_[static_cast<size_t>(n.inputs.back())]);
  }
  for (const Tensor& t : outputs) {
    const int64_t id = p_.add_value(type_of(t), ValueSource::Node, -1);
    n.outputs.push_back(id);
    bind(t, id);  // an in-place write: later readers see the written state
    varies_[static_cast<size_t>(id)] = varies;
    if (t.grad_fn()) node_of_grad_fn_[t.grad_fn().get()] = p_.nodes.size();
  }
  p_.nodes.push_back(std::move(n));
}

void Tracer::on_read(const Tensor& t, const char* what) {
  if (!installed_) return;
  // A tensor no op has read yet is captured too: the host code may branch on it.
  const int64_t id = value_of(t);
  if (!varies_[static_cast<size_t>(id)]) {
    if (p_.values[static_cast<size_t>(id)].source == ValueSource::Constant) return;
    DispatchObserver* self = set_dispatch_observer(nullptr);
    Tensor expected = clone(t);
    set_dispatch_observer(self);
    p_.guards.push_back(Guard{id, expected});
    return;
  }
  throw TracingError(str_cat(
      "jit: ", what, " reads the values of a traced tensor (", dtype_name(t.dtype()),
      shape_str(t.shape()),
      "), which would freeze this run's values into the program. Keep the "
      "computation in tensor ops (nc.where for a data-dependent choice), or move the read out "
      "of the traced function"));
}

void Tracer::on_alias(const Tensor& source, const Tensor& alias) {
  if (ids_.count(alias.impl())) return;
  auto it = ids_.find(source.impl());
  if (it != ids_.end()) {
    bind(alias, it->second);
  } else {
    pending_[source.impl()].push_back(alias);
    keep_.push_back(source);
  }
}

void Tracer::on_autograd_released(const void* grad_fn) {
  auto it = node_of_grad_fn_.find(grad_fn);
  if (it != node_of_grad_fn_.end()) p_.nodes[it->second].grad_enabled = false;
}

void Tracer::on_backward_begin(const void* grad_fn, const TensorList& grads_in) {
  auto it = node_of_grad_fn_.find(grad_fn);
  if (it == node_of_grad_fn_.end()) return;  // an autograd node made before the trace
  GradRegion reg;
  reg.forward = p_.nodes[it->second].outputs.at(0);
  for (const Tensor& g : grads_in) reg.grad_inputs.push_back(value_of(g));
  region_ = static_cast<int64_t>(p_.regions.size());
  p_.regions.push_back(std::move(reg));
}

void Tracer::on_backward_end(const void* grad_fn, const TensorList& grads_out) {
  (void)grad_fn;
  if (region_ < 0) return;
  GradRegion& reg = p_.regions[static_cast<size_t>(region_)];
  for (const Tensor& g : grads_out) reg.grad_outputs.push_back(value_of(g));
  region_ = -1;
}

void Tracer::on_grad_write(const Tensor& variable, const Tensor& previous, bool accumulate) {
  if (!installed_) return;
  const auto [it, first] = grad_write_of_.emplace(variable.impl(), grad_writes_.size());
  if (first) {
    grad_writes_.push_back(GradWrite{variable, -1, accumulate && !previous.defined()});
    keep_.push_back(variable);
  }
  if (accumulate && previous.defined() && !ids_.count(previous.impl()))
    throw TracingError(
        str_cat("jit: backward() adds to the .grad a leaf tensor (", dtype_name(variable.dtype()),
                shape_str(variable.shape()),
                ") had before the trace, which a replay would add to again at every run; clear the "
                "gradients first (opt.zero_grad(), inside the traced step or before calling it)"));
}

void Tracer::capture_state(const Tensor& t) {
  if (!installed_ || !t.defined()) return;
  auto it = ids_.find(t.impl());
  if (it == ids_.end()) {
    const int64_t id = p_.add_tensor(t, ValueSource::Capture);
    p_.values[static_cast<size_t>(id)].requires_grad = t.requires_grad();
    bind(t, id);
    return;
  }
  Value& v = p_.values[static_cast<size_t>(it->second)];
  NW_CHECK(v.source == ValueSource::Capture || v.source == ValueSource::Constant, TracingError,
           "jit: a tensor the traced code computed cannot be optimizer state");
  if (v.source == ValueSource::Constant) {  // read before it was declared: hold it instead
    v.source = ValueSource::Capture;
    p_.tensors[static_cast<size_t>(v.index)] = t;
  }
}

void Tracer::stop() {
  uninstall();
  ids_.clear();
  varies_.clear();
  node_of_grad_fn_.clear();
  region_ = -1;
  pending_.clear();
  object_of_root_.clear();
  objects_.clear();
  grad_write_of_.clear();
  keep_.clear();  // last: the tensors it keeps alive may be the keys above
}

void Tracer::abort() {
  stop();
  p_ = Program();
}

Program Tracer::finish(const TensorList& outputs) {
  NW_CHECK(installed_, std::logic_error, "jit: finish() called twice");
  for (const Tensor& t : outputs) {
    NW_CHECK(t.defined(), ValueError, "jit: a traced function returned an undefined tensor");
    p_.outputs.push_back(value_of(t));
  }
  for (GradWrite& w : grad_writes_) {
    const Tensor& g = w.leaf.grad();
    if (!g.defined()) continue;
    w.output = static_cast<int64_t>(p_.outputs.size());
    p_.outputs.push_back(value_of(g));
  }
  p_.object_read = object_read_;
  stop();
  copy_written_constants(p_);
  p_.compact();
  p_.verify();
  return std::move(p_);
}

}  // namespace nodeweave::jit
