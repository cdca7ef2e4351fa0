#include "core_framework/jit/program.h"

#include <algorithm>
#include <cstring>

#include "core_framework/engine/functional.h"
#include "core_framework/jit/object_input.h"
#include "core_framework/runtime/error.h"

namespace nodeweave::jit {

ValueType type_of(const Tensor& t) { return ValueType{t.dtype(), t.shape(), t.device()}; }

bool same_bytes(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype() || a.device() != b.device()) return false;
  auto host = [](const Tensor& t) {
    return contiguous(t.device().is_cpu() ? t : to_device(t, Device{}));
  };
  const Tensor ha = host(a), hb = host(b);
  return std::memcmp(ha.data_ptr(), hb.data_ptr(),
                     static_cast<size_t>(ha.numel()) * ha.itemsize()) == 0;
}

int64_t Program::add_value(const ValueType& type, ValueSource source, int64_t index) {
  values.push_back(Value{type, source, index});
  return static_cast<int64_t>(values.size()) - 1;
}

int64_t Program::add_tensor(const Tensor& t, ValueSource source) {
  tensors.push_back(t);
  return add_value(type_of(t), source, static_cast<int64_t>(tensors.size()) - 1);
}

void Program::verify() const {
  const auto n = static_cast<int64_t>(values.size());
  std::vector<bool> defined(values.size(), false);
  auto check_id = [&](int64_t v, const char* where) {
    NW_CHECK(v >= 0 && v < n, ValueError, "program: ", where, " names value %", v,
             ", which does not exist (", n, " values)");
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int64_t v = inputs[i];
    check_id(v, "an input");
    const Value& val = values[static_cast<size_t>(v)];
    NW_CHECK(val.source == ValueSource::Input && val.index == static_cast<int64_t>(i), ValueError,
             "program: input ", i, " is %", v, ", which is not declared as input ", i);
    NW_CHECK(!defined[static_cast<size_t>(v)], ValueError, "program: %", v, " is an input twice");
    defined[static_cast<size_t>(v)] = true;
  }
  for (int64_t v = 0; v < n; ++v) {
    const Value& val = values[static_cast<size_t>(v)];
    if (val.source != ValueSource::Capture && val.source != ValueSource::Constant) continue;
    NW_CHECK(val.index >= 0 && val.index < static_cast<int64_t>(tensors.size()), ValueError,
             "program: %", v, " refers to tensor #", val.index, ", which does not exist");
    const Tensor& t = tensors[static_cast<size_t>(val.index)];
    NW_CHECK(!t.defined() || type_of(t) == val.type, ValueError, "program: %", v,
             " is declared with another type than its tensor");
    defined[static_cast<size_t>(v)] = true;
  }
  NW_CHECK(object_sizes.size() == object_inputs.size(), ValueError,
           "program: ", object_inputs.size(), " object inputs but sizes for ", object_sizes.size());
  for (size_t k = 0; k < nodes.size(); ++k) {
    const OpNode& node = nodes[k];
    NW_CHECK(static_cast<int>(node.op) < num_registered_ops(), ValueError, "program: node ", k,
             " has an unknown op");
    // The op's signature: a node with other operands would make its kernel read past a list.
    const OpSignature& sig = *op_def(node.op).signature;
    try {
      check_input_count(sig, node.inputs.size());
      for (size_t i = 0; i < node.inputs.size(); ++i)
        check_input_present(sig, i, node.inputs[i] != kNone);
      check_attrs(sig, node.attrs);
      check_output_count(sig, node.outputs.size());
    } catch (const ValueError& e) {
      throw ValueError(str_cat("program: node ", k, ": ", e.what()));
    }
    for (int64_t v : node.inputs) {
      if (v == kNone) continue;
      check_id(v, "a node input");
      NW_CHECK(defined[static_cast<size_t>(v)], ValueError, "program: node ", k, " (",
               op_def(node.op).name, ") reads %", v, " before it is defined");
    }
    NW_CHECK(!node.inplace || (!node.outputs.empty() && node.inputs.size() >= node.outputs.size()),
             ValueError, "program: in-place node ", k, " has no input to write");
    if (node.inplace)
      for (size_t i = 0; i < node.outputs.size(); ++i)
        NW_CHECK(node.inputs[i] != kNone, ValueError, "program: in-place node ", k,
                 " writes an absent input");
    const bool updates = (op_def(node.op).traits & kMutatesInputs) != 0;
    NW_CHECK(updates ? node.inplace : (!node.inplace || node.outputs.size() == 1), ValueError,
             "program: node ", k, " (", op_def(node.op).name, ") ",
             updates ? "updates its inputs and must be written in place (a trailing '_')"
                     : "writes more than one input in place");
    for (size_t a = 0; a < node.attrs.size(); ++a) {
      const ObjectInputAttr* in = object_input_at(node.attrs, a);
      if (!in) continue;
      NW_CHECK(in->input >= 0 && in->input < static_cast<int64_t>(object_inputs.size()), ValueError,
               "program: node ", k, " (", op_def(node.op).name, ") refers to object input @",
               in->input, ", which does not exist");
      NW_CHECK(object_inputs[static_cast<size_t>(in->input)] == in->kind(), ValueError,
               "program: node ", k, " (", op_def(node.op).name, ") takes object input @", in->input,
               " as a ", in->kind(), " but it is a ",
               object_inputs[static_cast<size_t>(in->input)]);
    }
    for (int64_t v : node.outputs) {
      check_id(v, "a node output");
      NW_CHECK(values[static_cast<size_t>(v)].source == ValueSource::Node, ValueError,
               "program: node ", k, " defines %", v, ", which is not a node value");
      NW_CHECK(!defined[static_cast<size_t>(v)], ValueError, "program: %", v, " is defined twice");
      defined[static_cast<size_t>(v)] = true;
    }
  }
  for (int64_t v : outputs) {
    check_id(v, "an output");
    NW_CHECK(defined[static_cast<size_t>(v)], ValueError, "program: output %", v,
             " is never defined");
  }
  for (size_t r = 0; r < regions.size(); ++r) {
    const GradRegion& reg = regions[r];
    for (const std::vector<int64_t>* ids : {&reg.grad_inputs, &reg.grad_outputs})
      for (int64_t v : *ids)
        if (v != kNone) check_id(v, "a backward region");
    if (reg.forward != kNone) check_id(reg.forward, "a backward region");
  }
  for (const OpNode& node : nodes)
    NW_CHECK(node.region >= -1 && node.region < static_cast<int64_t>(regions.size()), ValueError,
             "program: a node names backward region #", node.region, ", which does not exist");
  for (const Guard& g : guards) {
    check_id(g.value, "a guard");
    NW_CHECK(defined[static_cast<size_t>(g.value)], ValueError, "program: guard %", g.value,
             " is never defined");
    NW_CHECK(
        !g.expected.defined() || type_of(g.expected) == values[static_cast<size_t>(g.value)].type,
        ValueError, "program: guard %", g.value, " expects a value of another type");
  }
}

void Program::compact() {
  std::vector<bool> used(values.size(), false);
  for (const OpNode& node : nodes) {
    for (int64_t v : node.inputs)
      if (v != kNone) used[static_cast<size_t>(v)] = true;
    for (int64_t v : node.outputs) used[static_cast<size_t>(v)] = true;
  }
  for (int64_t v : outputs) used[static_cast<size_t>(v)] = true;
  for (const Guard& g : guards) used[static_cast<size_t>(g.value)] = true;
  for (int64_t v : inputs) used[static_cast<size_t>(v)] = true;

  std::vector<int64_t> remap(values.size(), -1);
  Program out;
  out.object_inputs = object_inputs;
  out.object_sizes = object_sizes;
  out.object_read = object_read;
  for (int64_t v : inputs) {
    const int64_t id = out.add_value(values[static_cast<size_t>(v)].type, ValueSource::Input,
                                     static_cast<int64_t>(out.inputs.size()));
    remap[static_cast<size_t>(v)] = id;
    out.inputs.push_back(id);
  }
  for (size_t v = 0; v < values.size(); ++v) {
    const Value& val = values[v];
    if (!used[v] || (val.source != ValueSource::Capture && val.source != ValueSource::Constant))
      continue;
    out.tensors.push_back(tensors[static_cast<size_t>(val.index)]);
    remap[v] = out.add_value(val.type, val.source, static_cast<int64_t>(out.tensors.size()) - 1);
    out.values[static_cast<size_t>(remap[v])].requires_grad = val.requires_grad;
  }
  for (const OpNode& node : nodes) {
    OpNode n = node;
    for (int64_t& v : n.inputs)
      if (v != kNone) v = remap[static_cast<size_t>(v)];
    for (int64_t& v : n.outputs)
      v = remap[static_cast<size_t>(v)] =
          out.add_value(values[static_cast<size_t>(v)].type, ValueSource::Node, -1);
    out.nodes.push_back(std::move(n));
  }
  for (int64_t v : outputs) out.outputs.push_back(remap[static_cast<size_t>(v)]);
  for (const Guard& g : guards)
    out.guards.push_back(Guard{remap[static_cast<size_t>(g.value)], g.expected});
  // A region names values without reading them: one a pass dropped becomes kNone.
  auto renamed = [&](int64_t v) { return v == kNone ? kNone : remap[static_cast<size_t>(v)]; };
  for (GradRegion reg : regions) {
    reg.forward = renamed(reg.forward);
    for (int64_t& v : reg.grad_inputs) v = renamed(v);
    for (int64_t& v : reg.grad_outputs) v = renamed(v);
    out.regions.push_back(std::move(reg));
  }
  *this = std::move(out);
}

void Program::replace_in_regions(const std::vector<int64_t>& replace) {
  auto renamed = [&](int64_t v) { return v == kNone ? kNone : replace[static_cast<size_t>(v)]; };
  for (GradRegion& reg : regions) {
    reg.forward = renamed(reg.forward);
    for (int64_t& v : reg.grad_inputs) v = renamed(v);
    for (int64_t& v : reg.grad_outputs) v = renamed(v);
  }
}

}  // namespace nodeweave::jit
