#include "core_framework/autograd/node.h"

#include <atomic>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/engine/dispatch_observer.h"
#include "core_framework/engine/functional.h"

namespace nodeweave {

namespace {
std::atomic<uint64_t> g_next_seq{0};
thread_local bool t_grad_enabled = true;
}  // namespace

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool enabled) { t_grad_enabled = enabled; }

Node::Node() : seq_(g_next_seq++) {}

void Node::add_pre_hook(uint32_t output_nr, int64_t id, std::function<Tensor(const Tensor&)> fn) {
  pre_hooks_.push_back(PreHook{output_nr, id, std::move(fn)});
}

void Node::add_retain_grad_hook(uint32_t output_nr, std::function<Tensor(const Tensor&)> fn) {
  retain_hooks_.push_back(PreHook{output_nr, -1, std::move(fn)});
}

void Node::remove_pre_hook(int64_t id) {
  for (auto it = pre_hooks_.begin(); it != pre_hooks_.end(); ++it) {
    if (it->id == id) {
      pre_hooks_.erase(it);
      return;
    }
  }
}

void Node::run_pre_hooks(TensorList& grads) {
  for (auto* hooks : {&pre_hooks_, &retain_hooks_}) {
    for (PreHook& h : *hooks) {
      Tensor& g = grads[h.output_nr];
      if (!g.defined()) continue;
      Tensor r = h.fn(g);
      if (r.defined()) g = r;
    }
  }
}

SavedTensor::SavedTensor(const Tensor& t, bool is_output) : is_output_(is_output) {
  was_defined_ = t.defined();
  if (!t.defined()) return;
  saved_version_ = t.version();
  requires_grad_ = t.requires_grad();
  output_nr_ = t.output_nr();
  data_ = is_output ? t.detach() : t;
}

Tensor SavedTensor::unpack(const std::shared_ptr<Node>& owner) const {
  if (!was_defined_) return Tensor();
  if (!data_.defined()) {
    throw std::runtime_error(
        "Trying to backward through the graph a second time (or to read saved tensors after they "
        "were freed). Pass retain_graph=True to the first backward() if you need to do this.");
  }
  if (data_.version() != saved_version_) {
    throw std::runtime_error(str_cat(
        "one of the tensors needed for gradient computation has been modified by an in-place "
        "operation: a tensor of shape ",
        shape_str(data_.shape()), " is at version ", data_.version(), "; expected version ",
        saved_version_, " instead"));
  }
  if (!is_output_) return data_;
  // Give the saved output its history back so create_graph=True can differentiate through it.
  Tensor t = data_.detach();
  t.impl()->requires_grad = requires_grad_;
  if (requires_grad_) {
    t.impl()->grad_fn = owner;
    t.impl()->output_nr = output_nr_;
  }
  return t;
}

OpNode::OpNode(const OpDef& def, Attrs attrs, const TensorList& inputs, const TensorList& outputs)
    : def_(def), attrs_(std::move(attrs)) {
  next_edges_.reserve(inputs.size());
  input_meta_.reserve(inputs.size());
  saved_inputs_.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    bool diff = input_differentiable(def, i);
    next_edges_.push_back(diff && t.defined() && t.requires_grad() ? gradient_edge(t) : Edge{});
    input_meta_.push_back(t.defined() ? TensorMeta{t.shape(), t.dtype(), t.device()}
                                      : TensorMeta{{}, DType::Float32, Device{}});
    if (def.saved & kSaveInput(static_cast<int>(i))) saved_inputs_[i] = SavedTensor(t, false);
  }
  output_meta_.reserve(outputs.size());
  for (const Tensor& o : outputs)
    output_meta_.push_back(TensorMeta{o.shape(), o.dtype(), o.device()});
}

void OpNode::release_variables() {
  for (auto& s : saved_inputs_) s.reset();
  for (auto& s : saved_outputs_) s.reset();
  released_ = true;
}

std::string OpNode::name() const { return std::string(op_name(def_.kind)) + "Backward"; }

TensorList OpNode::apply(TensorList&& grads) {
  auto self = shared_from_this();
  TensorList inputs(saved_inputs_.size());
  for (size_t i = 0; i < saved_inputs_.size(); ++i) inputs[i] = saved_inputs_[i].unpack(self);
  TensorList outputs(saved_outputs_.size());
  for (size_t i = 0; i < saved_outputs_.size(); ++i) outputs[i] = saved_outputs_[i].unpack(self);
  if (released_ && def_.saved != 0) {
    throw std::runtime_error(
        "Trying to backward through the graph a second time (or to read saved tensors after they "
        "were freed). Pass retain_graph=True to the first backward() if you need to do this.");
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined() && is_floating(output_meta_[i].dtype)) {
      grads[i] = zeros(output_meta_[i].shape, output_meta_[i].dtype, output_meta_[i].device);
    }
  }
  std::vector<bool> needs(next_edges_.size());
  for (size_t i = 0; i < next_edges_.size(); ++i) needs[i] = next_edges_[i].valid();
  GradCtx ctx{inputs, outputs, grads, attrs_, input_meta_, needs};
  TensorList result = def_.backward(ctx);
  result.resize(next_edges_.size());
  // The one place broadcast gradients are summed back to each input's shape and dtype.
  for (size_t i = 0; i < result.size(); ++i) {
    Tensor& g = result[i];
    if (!needs[i]) {
      g = Tensor();
      continue;
    }
    if (!g.defined()) continue;
    const TensorMeta& m = input_meta_[i];
    if (g.shape() != m.shape) g = sum_to(g, m.shape);
    if (g.dtype() != m.dtype) g = cast(g, m.dtype);
  }
  return result;
}

AccumulateGrad::AccumulateGrad(std::shared_ptr<TensorImpl> variable)
    : variable_(std::move(variable)) {}

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor g = grads[0];
  if (!g.defined()) return {};
  if (DispatchObserver* obs = dispatch_observer())
    obs->on_grad_write(Tensor(variable_), variable_->grad, true);
  for (TensorHook& h : variable_->hooks) {
    Tensor r = h.fn(g);
    if (r.defined()) g = r;
  }
  Tensor& acc = variable_->grad;
  // Accumulate out of place: the incoming buffer may alias a tensor the caller still holds
  // (backward(gradient=...)), and a fresh sum never writes into it.
  if (!acc.defined()) {
    acc = GradMode::is_enabled() ? g : g.detach();
  } else {
    acc = GradMode::is_enabled() ? add(acc, g) : add(acc, g).detach();
  }
  return {};
}

Edge gradient_edge(const Tensor& t) {
  TensorImpl* impl = t.impl();
  if (impl->grad_fn) return Edge{impl->grad_fn, impl->output_nr};
  std::shared_ptr<Node> acc = impl->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl_ptr());
    impl->grad_accumulator = acc;
  }
  return Edge{acc, 0};
}

void record_autograd(const OpDef& def, const Attrs& attrs, const TensorList& inputs,
                     TensorList& outputs) {
  bool any = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (input_differentiable(def, i) && inputs[i].defined() && inputs[i].requires_grad()) {
      any = true;
      break;
    }
  }
  if (!any) return;
  auto node = std::make_shared<OpNode>(def, attrs, inputs, outputs);
  for (size_t i = 0; i < outputs.size(); ++i) {
    TensorImpl* o = outputs[i].impl();
    if (!is_floating(o->dtype)) continue;  // indices, masks: no gradient
    o->requires_grad = true;
    o->grad_fn = node;
    o->output_nr = static_cast<uint32_t>(i);
  }
  node->save_outputs(outputs);
}

void OpNode::save_outputs(const TensorList& outputs) {
  saved_outputs_.resize(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (def_.saved & kSaveOutput(static_cast<int>(i)))
      saved_outputs_[i] = SavedTensor(outputs[i], true);
  }
}

}  // namespace nodeweave
