// An op's one declaration of how it is called: named tensor inputs, named typed attributes and
// its results, written as text and parsed once when the op is registered:
//
//   sum(Tensor x, int[] dims, bool keepdim, dtype dtype) -> Tensor
//   gather_mm(Tensor a, Tensor b, Tensor? idx_a, Tensor idx_b) -> Tensor
//   segment_reduce(Tensor x, Tensor offsets, int reduce) -> (Tensor out, Tensor arg)
//   cat(Tensor[] xs, int dim) -> Tensor
//
// Tensors come first, then attributes (an op call keeps the two in separate lists). Types:
// `Tensor`, `Tensor?` (may be none), `Tensor[]` (the rest of the inputs, any number); attributes
// `int`, `float`, `bool`, `int[]`, `dtype`, `object` (a graph or another opaque value); results
// `Tensor`, a parenthesized list, or `Tensor[]` (as many as the kernel makes).
//
// The dispatcher checks every call against it before the op's shape rule runs, and a program's
// verifier checks every node: a program file that names an op with the wrong operands gets a
// ValueError naming the op and the argument, never a read past the end of a list.
#pragma once
#include <string>
#include <vector>

#include "core_framework/engine/attrs.h"
#include "core_framework/engine/tensor.h"

namespace nodeweave {

enum class AttrType { kInt, kFloat, kBool, kInts, kDType, kObject };
const char* attr_type_name(AttrType t);

struct OpSignature {
  struct Input {
    std::string name;
    bool optional = false;
  };
  struct Attr {
    std::string name;
    AttrType type;
  };
  std::string name;
  std::vector<Input> inputs;
  bool variadic = false;  // the last input is Tensor[]: it and any number after it
  std::vector<Attr> attrs;
  std::vector<std::string> outputs;
  bool variadic_outputs = false;
  std::string text;  // as declared
};

// std::logic_error on a malformed declaration (a programming error, found at startup).
OpSignature parse_op_signature(const std::string& text);

// ValueError naming the op and the argument when a call does not fit. `present(i)` tells whether
// input i is given (not none).
void check_input_count(const OpSignature& s, size_t num_inputs);
void check_input_present(const OpSignature& s, size_t i, bool present);
void check_attrs(const OpSignature& s, const Attrs& attrs);
void check_output_count(const OpSignature& s, size_t num_outputs);
// All of the above for a call with these inputs.
void check_call(const OpSignature& s, const TensorList& inputs, const Attrs& attrs);

}  // namespace nodeweave
