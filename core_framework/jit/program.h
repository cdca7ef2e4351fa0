// The static-graph IR: a flat, typed list of op nodes in SSA form (torch.fx's shape), which the
// tracer builds from what the dispatcher ran, the passes rewrite, the printer/parser turn into text
// and back, and the executor replays.
//
// Values are numbered in program order. Each comes from one place:
//   input     an argument of the program, bound by the caller at each run;
//   capture   a tensor the traced code read but did not compute (a parameter, a feature table),
//             held by reference: a run sees its current contents;
//   constant  a tensor only the program holds (a Python scalar, a creation op's result, a folded
//             subexpression): frozen, so passes may fold through it;
//   node      an output of an op node.
// An in-place node (add_, index_add_, ...) writes its first input; its output is a new value that
// aliases that input's memory, so later readers name the written state and passes see the order.
// An update (an optimizer step) writes its first k inputs the same way, with k outputs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core_framework/engine/attrs.h"
#include "core_framework/engine/op_def.h"
#include "core_framework/engine/tensor.h"

namespace nodeweave::jit {

enum class ValueSource : uint8_t { Input, Capture, Constant, Node };

// A node input that is an undefined tensor (an optional operand left out).
constexpr int64_t kNone = -1;

struct ValueType {
  DType dtype = DType::Float32;
  Shape shape;
  Device device;
  bool operator==(const ValueType& o) const {
    return dtype == o.dtype && shape == o.shape && device == o.device;
  }
};

struct Value {
  ValueType type;
  ValueSource source = ValueSource::Node;
  // Input: its position among the program's inputs. Capture / Constant: the tensor's index in
  // Program::tensors. Node: -1 (passes move nodes; the definition is found by scanning).
  int64_t index = -1;
  // A capture that required grad when traced: which ops record autograd depends on it, so a run
  // checks it still does (and a loaded program's tensor is made to).
  bool requires_grad = false;
};

struct OpNode {
  OpKind op = OpKind::kNumOps;
  std::vector<int64_t> inputs;  // value ids, or kNone
  Attrs attrs;
  std::vector<int64_t> outputs;  // value ids
  // Writes its first outputs.size() inputs in place; output i aliases input i (add_ writes one,
  // an optimizer update, kMutatesInputs, writes each parameter and its state).
  bool inplace = false;
  // Autograd recorded this op when traced (an input required grad, grad mode was on) and the traced
  // code did not spend that history: a run under grad mode records it again.
  bool grad_enabled = false;
  // The backward region (Program::regions) this node was dispatched in, or -1 for a node of the
  // traced code itself.
  int64_t region = -1;
};

// The ops one autograd Node's backward dispatched, when grad() ran inside the trace: which forward
// node they differentiate, the gradients that flowed in and the ones that came out. A pass that
// rewrites a forward node (graph-kernel fusion) finds its backward by these, and replaces the
// region's nodes as a whole. Regions are bookkeeping only: no pass needs them to be right, a run
// ignores them, and a value they name that a pass removed reads kNone.
struct GradRegion {
  int64_t forward = kNone;            // the first output of the forward node
  std::vector<int64_t> grad_inputs;   // per forward output: its gradient, or kNone
  std::vector<int64_t> grad_outputs;  // per forward input: the gradient made for it, or kNone
};

// A value the traced code read into the host program (item(), bool(), numpy()) that did not depend
// on the inputs (a check on the graph's degrees, say): the code after the read was traced for
// this value, so a run checks that the value is still the same before going on.
struct Guard {
  int64_t value = -1;
  Tensor expected;  // undefined in a parsed program whose text did not give it
};

struct Program {
  std::vector<Value> values;
  std::vector<int64_t> inputs;  // value ids the caller binds, in argument order
  // The kinds of the object inputs (graphs) the caller binds after the tensors, in order
  // (object_input.h).
  std::vector<std::string> object_inputs;
  // Per object input, the sizes it was traced with (ObjectAttr::sizes): the shapes of the program
  // follow them, so a run checks the object it is given has them.
  std::vector<IntList> object_sizes;
  // Set when the traced code read an object input's structure on the host (Tracer::object_read):
  // what it computed from it is frozen, so the program holds only for the traced objects and is
  // not saved (a file would run it on any graph of the same sizes). Not part of the text.
  std::string object_read;
  std::vector<Tensor> tensors;  // captures and constants (undefined in a parsed program)
  std::vector<OpNode> nodes;
  std::vector<int64_t> outputs;  // value ids returned, in order (a value may appear twice)
  std::vector<Guard> guards;
  std::vector<GradRegion> regions;

  // Appends a value and returns its id.
  int64_t add_value(const ValueType& type, ValueSource source, int64_t index);
  // Appends a capture or constant value holding `t`.
  int64_t add_tensor(const Tensor& t, ValueSource source);

  // Checks the invariants every pass relies on (each value defined once, before its uses; types of
  // inputs/captures match their tensors); throws ValueError naming the first violation.
  void verify() const;
  // Renumbers values in definition order (inputs, then captures and constants, then node outputs)
  // and drops captures, constants and node-less values nothing reads: passes that remove nodes
  // leave such holes. Inputs are kept even when unread (they are the calling convention).
  void compact();
  // Points every value a region names through `replace` (a pass that merged values).
  void replace_in_regions(const std::vector<int64_t>& replace);
};

ValueType type_of(const Tensor& t);
// Whether a and b have one shape, dtype and device and the same bytes: how guards, folded
// constants and the traces a dynamic program is generalized from compare values.
bool same_bytes(const Tensor& a, const Tensor& b);

// An opaque attribute read back from program text: it names its kind and holds nothing, so a
// program with one can be printed and rewritten but not run.
struct PlaceholderAttr final : OpaqueAttr {
  explicit PlaceholderAttr(std::string k) : kind_name(std::move(k)) {}
  const char* kind() const override { return kind_name.c_str(); }
  std::string kind_name;
};

}  // namespace nodeweave::jit
