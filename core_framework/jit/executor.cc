#include "core_framework/jit/executor.h"

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/engine/functional.h"
#include "core_framework/jit/object_input.h"
#include "core_framework/runtime/error.h"

namespace nodeweave::jit {

namespace {

std::string type_text(const ValueType& t) {
  return str_cat(dtype_name(t.dtype), shape_str(t.shape),
                 t.device.is_cpu() ? "" : " on " + t.device.str());
}

}  // namespace

Executor::Executor(Program program, bool plan_memory) : program_(std::move(program)) {
  program_.verify();
  if (plan_memory) plan_ = jit::plan_memory(program_);
  const Program& p = program_;
  for (const Value& v : p.values) {
    if (v.source != ValueSource::Capture && v.source != ValueSource::Constant) continue;
    NW_CHECK(p.tensors[static_cast<size_t>(v.index)].defined(), ValueError,
             "jit: the program refers to tensor #", v.index,
             " but does not hold it (it was parsed from text); it cannot run");
  }
  for (const OpNode& n : p.nodes)
    for (size_t i = 0; i < n.attrs.size(); ++i)
      if (auto* o = std::get_if<OpaquePtr>(&n.attrs[i]))
        NW_CHECK(!dynamic_cast<const PlaceholderAttr*>(o->get()) || object_input_at(n.attrs, i),
                 ValueError, "jit: ", op_def(n.op).name, " has an opaque attribute (", (*o)->kind(),
                 ") that was parsed from text; the program cannot run");
  // Last reader of each value; outputs are never released.
  std::vector<int64_t> last(p.values.size(), -1);
  for (size_t k = 0; k < p.nodes.size(); ++k)
    for (int64_t v : p.nodes[k].inputs)
      if (v != kNone) last[static_cast<size_t>(v)] = static_cast<int64_t>(k);
  for (int64_t v : p.outputs) last[static_cast<size_t>(v)] = -1;
  for (const Guard& g : p.guards) {
    NW_CHECK(g.expected.defined(), ValueError, "jit: guard %", g.value,
             " has no expected value (it was parsed from text); the program cannot run");
  }
  std::vector<int64_t> defined_at(p.values.size(), -1);
  for (size_t k = 0; k < p.nodes.size(); ++k)
    for (int64_t v : p.nodes[k].outputs)
      defined_at[static_cast<size_t>(v)] = static_cast<int64_t>(k);
  guards_after_.resize(p.nodes.size());
  for (size_t g = 0; g < p.guards.size(); ++g) {
    const int64_t at = defined_at[static_cast<size_t>(p.guards[g].value)];
    if (at < 0)
      guards_first_.push_back(g);
    else
      guards_after_[static_cast<size_t>(at)].push_back(g);
  }
  for (const OpNode& n : p.nodes) reads_object_.push_back(reads_object_input(n.attrs));
  release_after_.resize(p.nodes.size());
  for (size_t v = 0; v < last.size(); ++v)
    if (last[v] >= 0)
      release_after_[static_cast<size_t>(last[v])].push_back(static_cast<int64_t>(v));
}

bool Executor::planned_node(size_t k) const {
  if (plan_.buffer_of.empty()) return false;
  for (int64_t b : plan_.buffer_of[k])
    if (b >= 0) return true;
  return false;
}

void Executor::check_guard(size_t g, const Tensor& value) const {
  const Guard& guard = program_.guards[g];
  if (same_bytes(value, guard.expected)) return;
  throw GuardFailure(str_cat("jit: guard ", g, " failed: value %", guard.value,
                             ", which the traced code read into the host program, changed"));
}

void Executor::check_planned_types(size_t k, const TensorList& args, const Attrs& attrs) const {
  const OpNode& n = program_.nodes[k];
  const std::vector<TensorMeta> metas = op_def(n.op).infer(args, attrs);
  NW_CHECK(metas.size() == n.outputs.size(), ValueError, "jit: ", op_def(n.op).name, " makes ",
           metas.size(), " results where the program expects ", n.outputs.size());
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const ValueType& t = program_.values[static_cast<size_t>(n.outputs[i])].type;
    NW_CHECK(metas[i].shape == t.shape && metas[i].dtype == t.dtype, ValueError,
             "jit: ", op_def(n.op).name, " makes ", dtype_name(metas[i].dtype),
             shape_str(metas[i].shape), " for %", n.outputs[i], ", which the program declares ",
             type_text(t));
  }
}

TensorList Executor::run(const TensorList& inputs, const std::vector<OpaquePtr>& objects) const {
  const Program& p = program_;
  std::unique_lock<std::mutex> lock(arena_mu_, std::defer_lock);
  if (!plan_.buffer_bytes.empty()) {
    lock.lock();
    if (arena_.empty())
      for (size_t b = 0; b < plan_.buffer_bytes.size(); ++b)
        arena_.push_back(std::make_shared<Storage>(plan_.buffer_bytes[b], plan_.buffer_device[b]));
  }
  NW_CHECK(inputs.size() == p.inputs.size(), ValueError, "jit: the program takes ", p.inputs.size(),
           " tensors, got ", inputs.size());
  NW_CHECK(objects.size() == p.object_inputs.size(), ValueError, "jit: the program takes ",
           p.object_inputs.size(), " object inputs (graphs), got ", objects.size());
  for (size_t k = 0; k < objects.size(); ++k) {
    NW_CHECK(objects[k] && p.object_inputs[k] == objects[k]->kind(), ValueError,
             "jit: object input @", k, " must be a ", p.object_inputs[k], ", got ",
             objects[k] ? objects[k]->kind() : "null");
    const ObjectAttr* obj = object_attr(objects[k]);
    NW_CHECK(obj, ValueError, "jit: object input @", k, " (a ", objects[k]->kind(),
             ") cannot be bound");
    NW_CHECK(obj->sizes() == p.object_sizes[k], ValueError, "jit: object input @", k, " (a ",
             p.object_inputs[k], ") has sizes ", shape_str(obj->sizes()),
             ", the program was traced for ", shape_str(p.object_sizes[k]));
  }
  // Each object input's derived objects (a reversed graph) are made once per run.
  std::vector<std::vector<OpaquePtr>> derived(objects.size());
  auto bound_object = [&](const ObjectInputAttr& in) -> const OpaquePtr& {
    const auto k = static_cast<size_t>(in.input);
    if (in.derivation == 0) return objects[k];
    std::vector<OpaquePtr>& made = derived[k];
    if (made.size() <= static_cast<size_t>(in.derivation))
      made.resize(static_cast<size_t>(in.derivation) + 1);
    OpaquePtr& d = made[static_cast<size_t>(in.derivation)];
    if (!d) d = object_attr(objects[k])->derived(in.derivation);
    return d;
  };
  Attrs bound;
  std::vector<Tensor> env(p.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueType& want = p.values[static_cast<size_t>(p.inputs[i])].type;
    NW_CHECK(inputs[i].defined(), ValueError, "jit: input ", i, " is undefined");
    const ValueType got = type_of(inputs[i]);
    NW_CHECK(got == want, ValueError, "jit: input ", i, " must be ", type_text(want),
             " as traced, got ", type_text(got));
    env[static_cast<size_t>(p.inputs[i])] = inputs[i];
  }
  for (size_t v = 0; v < p.values.size(); ++v) {
    const Value& val = p.values[v];
    if (val.source == ValueSource::Capture || val.source == ValueSource::Constant)
      env[v] = p.tensors[static_cast<size_t>(val.index)];
    if (val.source == ValueSource::Capture && env[v].requires_grad() != val.requires_grad)
      throw GuardFailure(
          str_cat("jit: captured tensor %", v, " ",
                  val.requires_grad ? "no longer requires" : "now requires",
                  " grad; which ops record autograd was traced for the other setting"));
  }
  for (size_t g : guards_first_) check_guard(g, env[static_cast<size_t>(p.guards[g].value)]);
  const bool grad_on = GradMode::is_enabled();
  TensorList args;
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const OpNode& n = p.nodes[k];
    AutoGradMode mode(grad_on && n.grad_enabled);
    const Attrs* attrs = &n.attrs;
    if (reads_object_[k]) {
      bound = n.attrs;
      for (size_t i = 0; i < bound.size(); ++i)
        if (const ObjectInputAttr* in = object_input_at(n.attrs, i))
          bound.mutable_at(i) = bound_object(*in);
      attrs = &bound;
    }
    if (n.inplace && (op_def(n.op).traits & kMutatesInputs)) {
      args.clear();
      for (int64_t v : n.inputs)
        args.push_back(v == kNone ? Tensor() : env[static_cast<size_t>(v)]);
      TensorList written = dispatch_mutating(n.op, args, *attrs);
      NW_CHECK(written.size() == n.outputs.size(), ValueError, "jit: ", op_def(n.op).name,
               " wrote ", written.size(), " inputs where the program expects ", n.outputs.size());
      for (size_t i = 0; i < n.outputs.size(); ++i)
        env[static_cast<size_t>(n.outputs[i])] = std::move(written[i]);
    } else if (n.inplace) {
      Tensor& self = env[static_cast<size_t>(n.inputs[0])];
      args.clear();
      for (size_t i = 1; i < n.inputs.size(); ++i)
        args.push_back(n.inputs[i] == kNone ? Tensor() : env[static_cast<size_t>(n.inputs[i])]);
      env[static_cast<size_t>(n.outputs[0])] = dispatch_inplace(n.op, self, args, *attrs);
    } else {
      args.clear();
      for (int64_t v : n.inputs)
        args.push_back(v == kNone ? Tensor() : env[static_cast<size_t>(v)]);
      TensorList outs;
      if (planned_node(k)) {
        // The kernel writes into buffers sized by the program's types: check them against the
        // op's own shape rule (which also validates the arguments, as dispatch() would), so that
        // a program file with a wrong type gets an error, not a write past a buffer.
        if (!types_checked_) check_planned_types(k, args, *attrs);
        outs.reserve(n.outputs.size());
        for (size_t i = 0; i < n.outputs.size(); ++i) {
          const ValueType& t = p.values[static_cast<size_t>(n.outputs[i])].type;
          const int64_t b = plan_.buffer_of[k][i];
          if (b < 0) {
            outs.push_back(empty(t.shape, t.dtype, t.device));
            continue;
          }
          auto impl = std::make_shared<TensorImpl>();
          impl->storage = arena_[static_cast<size_t>(b)];
          impl->shape = t.shape;
          impl->strides = contiguous_strides(t.shape);
          impl->dtype = t.dtype;
          outs.emplace_back(std::move(impl));
        }
        dispatch_into(n.op, args, *attrs, outs);
      } else {
        outs = dispatch(n.op, args, *attrs);
      }
      NW_CHECK(outs.size() == n.outputs.size(), ValueError, "jit: ", op_def(n.op).name, " made ",
               outs.size(), " results where the program expects ", n.outputs.size());
      for (size_t i = 0; i < n.outputs.size(); ++i)
        env[static_cast<size_t>(n.outputs[i])] = std::move(outs[i]);
    }
    for (size_t g : guards_after_[k]) check_guard(g, env[static_cast<size_t>(p.guards[g].value)]);
    for (int64_t v : release_after_[k]) env[static_cast<size_t>(v)] = Tensor();
  }
  if (lock.owns_lock()) types_checked_ = true;
  TensorList out;
  out.reserve(p.outputs.size());
  for (int64_t v : p.outputs) out.push_back(env[static_cast<size_t>(v)]);
  return out;
}

}  // namespace nodeweave::jit
