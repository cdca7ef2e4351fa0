// The single dispatcher every primitive op goes through: validate devices, infer and allocate
// outputs, run the device kernel, record autograd, report to the tracer.
#include <chrono>
#include <deque>
#include <mutex>
#include <string>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/autograd/node.h"
#include "core_framework/engine/dispatch_observer.h"
#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"
#include "core_framework/engine/op_profiler.h"
#include "core_framework/engine/op_registry.h"

namespace nodeweave {

namespace {

std::array<OpDef, kMaxOps>& table() {
  static std::array<OpDef, kMaxOps> t;
  return t;
}
int g_num_ops = kNumOps;
std::mutex g_extension_mu;

const char* const kOpNames[] = {
#define NW_OP_NAME(name, signature) #name,
    NW_FOR_EACH_OP(NW_OP_NAME)
#undef NW_OP_NAME
};
const char* const kOpSignatures[] = {
#define NW_OP_SIGNATURE(name, signature) signature,
    NW_FOR_EACH_OP(NW_OP_SIGNATURE)
#undef NW_OP_SIGNATURE
};

// Parsed signatures live here for the process (the table points into it; a deque never moves
// what it holds).
const OpSignature* keep_signature(const char* text) {
  static std::deque<OpSignature> all;
  all.push_back(parse_op_signature(text));
  return &all.back();
}

thread_local DispatchObserver* t_observer = nullptr;

// Times one op for the profiler (op_profiler.h) when profiling is on and the op is outermost.
class OpTimer {
 public:
  explicit OpTimer(OpKind kind)
      : kind_(kind), timing_(op_profiling() && detail::dispatch_depth() == 0) {
    ++detail::dispatch_depth();
    if (timing_) start_ = std::chrono::steady_clock::now();
  }
  ~OpTimer() {
    --detail::dispatch_depth();
    if (timing_) {
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now() - start_);
      detail::record_op_time(kind_, ns.count());
    }
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  OpKind kind_;
  bool timing_;
  std::chrono::steady_clock::time_point start_;
};

void ensure_registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < kNumOps; ++i) {
      table()[i].kind = static_cast<OpKind>(i);
      table()[i].declaration = kOpSignatures[i];
      table()[i].signature = keep_signature(kOpSignatures[i]);
      table()[i].name = table()[i].signature->name.c_str();
    }
    register_all_ops();
  });
}

// 0-d CPU tensors (Python scalars) mix with tensors on any device, as in PyTorch: the op runs on
// the first other input's device, or on the CPU when every input is such a scalar.
bool is_cpu_scalar(const Tensor& t) { return t.dim() == 0 && t.device().is_cpu(); }

Device common_device(const OpDef& def, const TensorList& inputs) {
  Device dev;
  for (const Tensor& t : inputs) {
    if (t.defined() && !is_cpu_scalar(t)) {
      dev = t.device();
      break;
    }
  }
  for (const Tensor& t : inputs) {
    if (!t.defined() || is_cpu_scalar(t)) continue;
    NW_CHECK(t.device() == dev, ValueError, def.name, ": expected all tensors on one device, got ",
             dev.str(), " and ", t.device().str());
  }
  return dev;
}

}  // namespace

const char* op_name(OpKind kind) {
  const int k = static_cast<int>(kind);
  return k < kNumOps ? kOpNames[k] : table()[k].name;
}

OpKind register_extension_op(const OpDef& def) {
  ensure_registered();
  std::lock_guard<std::mutex> lock(g_extension_mu);
  const OpSignature* sig = keep_signature(def.declaration);
  for (int i = 0; i < g_num_ops; ++i) {
    NW_CHECK(table()[i].signature->name != sig->name, std::logic_error, "op '", sig->name,
             "' is already registered");
  }
  NW_CHECK(g_num_ops < kMaxOps, std::logic_error, "op table full (", kMaxOps, " ops)");
  const int k = g_num_ops++;
  table()[k] = def;
  table()[k].kind = static_cast<OpKind>(k);
  table()[k].signature = sig;
  table()[k].name = sig->name.c_str();
  return static_cast<OpKind>(k);
}

int num_registered_ops() {
  ensure_registered();
  return g_num_ops;
}

const OpDef& op_def(OpKind kind) {
  ensure_registered();
  return table()[static_cast<int>(kind)];
}
OpDef& mutable_op_def(OpKind kind) { return table()[static_cast<int>(kind)]; }

void register_all_ops() {
  register_copy_ops();
  register_unary_ops();
  register_binary_ops();
  register_reduce_ops();
  register_softmax_ops();
  register_linalg_ops();
  register_view_ops();
  register_join_ops();
  register_index_ops();
  register_sort_ops();
  register_misc_ops();
  register_cuda_kernels();
}

DispatchObserver* set_dispatch_observer(DispatchObserver* obs) {
  DispatchObserver* prev = t_observer;
  t_observer = obs;
  return prev;
}
DispatchObserver* dispatch_observer() { return t_observer; }

void notify_read(const Tensor& t, const char* what) {
  // Only the host program's reads: a kernel reading a scalar operand runs again in every replay.
  if (t_observer && detail::dispatch_depth() == 0) t_observer->on_read(t, what);
}

namespace {
// Only the outermost op is reported: what a kernel or an in-place rewrite dispatches inside it is
// part of that op, and replaying the op replays it.
bool observe_now() { return t_observer && detail::dispatch_depth() == 1; }
}  // namespace

TensorList dispatch(OpKind kind, const TensorList& inputs, const Attrs& attrs) {
  OpTimer timer(kind);
  const OpDef& def = op_def(kind);
  check_call(*def.signature, inputs, attrs);
  Device dev = common_device(def, inputs);
  KernelFn kernel = def.kernels[device_slot(dev)];
  if (!kernel) {
    throw NotImplementedError(str_cat(def.name, ": no kernel for device ", dev.str()));
  }
  TensorList outputs;
  if (def.infer) {
    std::vector<TensorMeta> metas = def.infer(inputs, attrs);
    outputs.reserve(metas.size());
    for (const TensorMeta& m : metas) outputs.push_back(empty(m.shape, m.dtype, dev));
  }
  kernel(inputs, attrs, outputs);
  if (def.backward && GradMode::is_enabled()) record_autograd(def, attrs, inputs, outputs);
  if (observe_now()) t_observer->on_op(kind, inputs, attrs, outputs);
  return outputs;
}

void dispatch_into(OpKind kind, const TensorList& inputs, const Attrs& attrs, TensorList& outputs) {
  OpTimer timer(kind);
  const OpDef& def = op_def(kind);
  check_call(*def.signature, inputs, attrs);
  check_output_count(*def.signature, outputs.size());
  const Device dev = common_device(def, inputs);
  KernelFn kernel = def.kernels[device_slot(dev)];
  if (!kernel) throw NotImplementedError(str_cat(def.name, ": no kernel for device ", dev.str()));
  kernel(inputs, attrs, outputs);
  if (observe_now()) t_observer->on_op(kind, inputs, attrs, outputs);
}

TensorList dispatch_mutating(OpKind kind, const TensorList& inputs, const Attrs& attrs) {
  OpTimer timer(kind);
  const OpDef& def = op_def(kind);
  NW_CHECK(def.traits & kMutatesInputs, std::logic_error, def.name, " does not update its inputs");
  check_call(*def.signature, inputs, attrs);
  const Device dev = common_device(def, inputs);
  KernelFn kernel = def.kernels[device_slot(dev)];
  if (!kernel) throw NotImplementedError(str_cat(def.name, ": no kernel for device ", dev.str()));
  TensorList written;
  kernel(inputs, attrs, written);
  NW_CHECK(written.size() <= inputs.size(), std::logic_error, def.name, " wrote ", written.size(),
           " tensors of ", inputs.size(), " inputs");
  for (size_t i = 0; i < written.size(); ++i)
    NW_CHECK(written[i].is_same(inputs[i]), std::logic_error, def.name, ": result ", i,
             " is not input ", i, " (an update returns the inputs it wrote, in order)");
  if (observe_now()) t_observer->on_op(kind, inputs, attrs, written);
  return written;
}

Tensor& dispatch_inplace(OpKind kind, Tensor& self, const TensorList& others, const Attrs& attrs) {
  OpTimer timer(kind);
  const OpDef& def = op_def(kind);
  NW_CHECK(def.traits & kInPlaceCapable, std::logic_error, def.name, " has no in-place form");
  TensorList inputs;
  inputs.reserve(others.size() + 1);
  inputs.push_back(self);
  for (const Tensor& o : others) inputs.push_back(o);
  check_call(*def.signature, inputs, attrs);
  std::vector<TensorMeta> metas = def.infer(inputs, attrs);
  NW_CHECK(metas[0].shape == self.shape(), ValueError, def.name, " (in-place): output shape ",
           shape_str(metas[0].shape), " does not match the shape of the tensor written to, ",
           shape_str(self.shape()));
  NW_CHECK(promote_types(metas[0].dtype, self.dtype()) == self.dtype() ||
               (is_floating(self.dtype()) && is_floating(metas[0].dtype)),
           TypeError, def.name, " (in-place): result dtype ", dtype_name(metas[0].dtype),
           " can't be cast to the dtype of the tensor written to, ", dtype_name(self.dtype()));

  bool any_grad = false;
  for (const Tensor& t : inputs) any_grad |= t.defined() && t.requires_grad();
  if (GradMode::is_enabled() && any_grad) {
    if (self.requires_grad() && self.is_leaf()) {
      throw std::runtime_error(
          "a leaf tensor that requires grad is being used in an in-place operation; wrap it in "
          "no_grad() or work on a clone");
    }
    if (self.impl()->is_view) {
      throw std::runtime_error(str_cat(
          def.name,
          " (in-place): writing a tensor that requires grad into a view is not supported "
          "by autograd; build the result out of place (e.g. with cat, where or index_copy)"));
    }
    // Compute out of place, then take over the result's data and history. The op's saved copy
    // of `self` is the pre-write value, so the gradient rule still reads what it should.
    const TensorList as_called = inputs;
    Tensor before = clone(self);
    // Every alias of self among the operands (x.mul_(x)) must read the pre-write value too.
    for (Tensor& t : inputs) {
      if (t.defined() && t.is_same(self)) t = before;
    }
    Tensor result = dispatch1(kind, inputs, attrs);
    {
      NoGradGuard guard;
      Tensor dst = self.detach();
      copy_(dst, result);
    }
    self.impl()->grad_fn = result.impl()->grad_fn;
    self.impl()->output_nr = result.impl()->output_nr;
    self.impl()->requires_grad = result.impl()->requires_grad;
    if (observe_now()) {
      t_observer->on_op(kind, as_called, attrs, {self});
      // Autograd saved `result` (the op's output before self took it over): the same value.
      t_observer->on_alias(self, result);
    }
    return self;
  }

  Device dev = common_device(def, inputs);
  KernelFn kernel = def.kernels[device_slot(dev)];
  if (!kernel) throw NotImplementedError(str_cat(def.name, ": no kernel for device ", dev.str()));
  TensorList outputs;
  if (metas[0].dtype == self.dtype()) {
    outputs.push_back(self);
    kernel(inputs, attrs, outputs);
  } else {
    outputs.push_back(empty(metas[0].shape, metas[0].dtype, dev));
    kernel(inputs, attrs, outputs);
    Tensor dst = self;
    NoGradGuard guard;
    copy_(dst, outputs[0]);
  }
  self.bump_version();
  if (observe_now()) t_observer->on_op(kind, inputs, attrs, {self});
  return self;
}

}  // namespace nodeweave
