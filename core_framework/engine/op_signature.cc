#include "core_framework/engine/op_signature.h"

#include <cctype>
#include <type_traits>
#include <variant>

#include "core_framework/runtime/error.h"

namespace nodeweave {

namespace {

struct Cursor {
  const std::string& s;
  size_t pos = 0;
  void skip() {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
  }
  bool eat(const char* tok) {
    skip();
    const std::string t(tok);
    if (s.compare(pos, t.size(), t) != 0) return false;
    pos += t.size();
    return true;
  }
  void expect(const char* tok) {
    if (!eat(tok)) fail(str_cat("expected '", tok, "'"));
  }
  std::string word() {
    skip();
    const size_t start = pos;
    while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_'))
      ++pos;
    if (pos == start) fail("expected a name");
    return s.substr(start, pos - start);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::logic_error(str_cat("op signature '", s, "': ", what, " at column ", pos));
  }
};

bool attr_type(const std::string& word, bool list, AttrType& out) {
  const std::string spelled = list ? word + "[]" : word;
  for (int t = 0; t <= static_cast<int>(AttrType::kObject); ++t)
    if (spelled == attr_type_name(static_cast<AttrType>(t))) {
      out = static_cast<AttrType>(t);
      return true;
    }
  return false;
}

// AttrType lists the kinds in AttrValue's order, so a value's kind is its variant index.
static_assert(std::variant_size_v<AttrValue> == static_cast<size_t>(AttrType::kObject) + 1);
static_assert(
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(AttrType::kInts), AttrValue>,
                   IntList>);
static_assert(
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(AttrType::kObject), AttrValue>,
                   OpaquePtr>);
AttrType kind_of(const AttrValue& v) { return static_cast<AttrType>(v.index()); }

std::string inputs_text(const OpSignature& s) {
  std::string t;
  for (size_t i = 0; i < s.inputs.size(); ++i) t += (i ? ", " : "") + s.inputs[i].name;
  return t;
}

}  // namespace

const char* attr_type_name(AttrType t) {
  static const char* const names[] = {"int", "float", "bool", "int[]", "dtype", "object"};
  return names[static_cast<int>(t)];
}

OpSignature parse_op_signature(const std::string& text) {
  OpSignature sig;
  sig.text = text;
  Cursor c{text};
  sig.name = c.word();
  c.expect("(");
  bool first = true;
  while (!c.eat(")")) {
    if (!first) c.expect(",");
    first = false;
    const std::string type = c.word();
    if (type == "Tensor") {
      if (!sig.attrs.empty()) c.fail("tensor inputs come before attributes");
      if (sig.variadic) c.fail("Tensor[] is the last input");
      OpSignature::Input in;
      if (c.eat("?"))
        in.optional = true;
      else if (c.eat("[]"))
        sig.variadic = true;
      in.name = c.word();
      sig.inputs.push_back(in);
      continue;
    }
    const bool list = c.eat("[]");
    AttrType t;
    if (!attr_type(type, list, t)) c.fail(str_cat("unknown type '", type, list ? "[]'" : "'"));
    sig.attrs.push_back({c.word(), t});
  }
  c.expect("->");
  if (c.eat("(")) {
    bool first_out = true;
    while (!c.eat(")")) {
      if (!first_out) c.expect(",");
      first_out = false;
      if (c.word() != "Tensor") c.fail("results are tensors");
      sig.outputs.push_back(c.word());
    }
  } else {
    if (c.word() != "Tensor") c.fail("results are tensors");
    if (c.eat("[]"))
      sig.variadic_outputs = true;
    else
      sig.outputs.push_back("out");
  }
  c.skip();
  if (c.pos != text.size()) c.fail("trailing text");
  return sig;
}

void check_input_count(const OpSignature& s, size_t n) {
  const size_t fixed = s.inputs.size() - (s.variadic ? 1 : 0);
  NW_CHECK(s.variadic ? n >= fixed : n == fixed, ValueError, s.name, ": takes ",
           s.variadic ? "at least " : "", fixed, " tensor input", fixed == 1 ? "" : "s", " (",
           inputs_text(s), "), got ", n, "; the op is ", s.text);
}

void check_input_present(const OpSignature& s, size_t i, bool present) {
  if (present || s.inputs.empty()) return;  // (the count check refuses inputs of an op with none)
  const size_t k = std::min(i, s.inputs.size() - 1);
  NW_CHECK(s.inputs[k].optional, ValueError, s.name, ": input ", i, " (", s.inputs[k].name,
           ") is none, which the op does not take; the op is ", s.text);
}

void check_attrs(const OpSignature& s, const Attrs& a) {
  NW_CHECK(a.size() == s.attrs.size(), ValueError, s.name, ": takes ", s.attrs.size(), " attribute",
           s.attrs.size() == 1 ? "" : "s", ", got ", a.size(), "; the op is ", s.text);
  for (size_t i = 0; i < a.size(); ++i)
    NW_CHECK(kind_of(a[i]) == s.attrs[i].type, ValueError, s.name, ": attribute ", i, " (",
             s.attrs[i].name, ") is ", attr_type_name(s.attrs[i].type), ", got ",
             attr_type_name(kind_of(a[i])), "; the op is ", s.text);
}

void check_output_count(const OpSignature& s, size_t n) {
  if (s.variadic_outputs) return;
  NW_CHECK(n == s.outputs.size(), ValueError, s.name, ": makes ", s.outputs.size(), " result",
           s.outputs.size() == 1 ? "" : "s", ", not ", n, "; the op is ", s.text);
}

void check_call(const OpSignature& s, const TensorList& inputs, const Attrs& attrs) {
  check_input_count(s, inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) check_input_present(s, i, inputs[i].defined());
  check_attrs(s, attrs);
}

}  // namespace nodeweave
