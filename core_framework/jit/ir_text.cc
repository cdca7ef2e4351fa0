#include "core_framework/jit/ir_text.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "core_framework/engine/functional.h"
#include "core_framework/jit/fused_elementwise.h"
#include "core_framework/jit/object_input.h"
#include "core_framework/runtime/error.h"

namespace nodeweave::jit {

namespace {

// The shortest text that reads back to v (as a float when `single`: a float32 constant prints as
// 0.1, not as the double nearest to it).
std::string number(double v, bool single = false) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  for (int prec = 1; prec < 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    const double back = std::strtod(buf, nullptr);
    if (single ? static_cast<float>(back) == static_cast<float>(v) : back == v) {
      s = buf;
      break;
    }
  }
  if (s.find_first_of(".e") == std::string::npos) s += ".0";  // a double, not an int
  return s;
}

std::string type_str(const ValueType& t) {
  std::string s = dtype_name(t.dtype);
  s += "[";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  s += "]";
  if (!t.device.is_cpu()) s += "@" + t.device.str();
  return s;
}

std::string attr_str(const AttrValue& a) {
  if (auto* i = std::get_if<int64_t>(&a)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&a)) return number(*d);
  if (auto* b = std::get_if<bool>(&a)) return *b ? "true" : "false";
  if (auto* l = std::get_if<IntList>(&a)) {
    std::string s = "[";
    for (size_t i = 0; i < l->size(); ++i) s += (i ? ", " : "") + std::to_string((*l)[i]);
    return s + "]";
  }
  if (auto* t = std::get_if<DType>(&a)) return std::string("dtype(") + dtype_name(*t) + ")";
  const OpaquePtr& o = std::get<OpaquePtr>(a);
  if (!o) return "opaque(null)";
  if (auto* in = dynamic_cast<const ObjectInputAttr*>(o.get()))
    return str_cat("opaque(", in->kind(), " @", in->input,
                   in->derivation ? str_cat(" derived ", in->derivation) : std::string(), ")");
  const std::string more = o->describe();
  return std::string("opaque(") + o->kind() + (more.empty() ? "" : ": " + more) + ")";
}

std::string value_ref(int64_t v) { return v == kNone ? "none" : "%" + std::to_string(v); }

std::string constant_literal(const Tensor& t) {
  const Tensor d =
      contiguous(cast(t.device().is_cpu() ? t : to_device(t, Device{}), DType::Float64));
  const double* p = d.data<double>();
  auto one = [&](int64_t i) {
    if (t.dtype() == DType::Bool) return std::string(p[i] != 0 ? "true" : "false");
    if (!is_floating(t.dtype())) return std::to_string(static_cast<int64_t>(p[i]));
    return number(p[i], t.dtype() != DType::Float64);
  };
  if (t.dim() == 0) return one(0);
  std::string s = "[";
  for (int64_t i = 0; i < t.numel(); ++i) s += (i ? ", " : "") + one(i);
  return s + "]";
}

}  // namespace

std::string print(const Program& p) {
  std::ostringstream os;
  os << "program(";
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const int64_t v = p.inputs[i];
    os << (i ? ", " : "") << value_ref(v) << ": "
       << type_str(p.values[static_cast<size_t>(v)].type);
  }
  for (size_t i = 0; i < p.object_inputs.size(); ++i) {
    os << (i || !p.inputs.empty() ? ", " : "") << "@" << i << ": " << p.object_inputs[i];
    if (i < p.object_sizes.size()) os << attr_str(p.object_sizes[i]);
  }
  os << ") {\n";
  for (size_t v = 0; v < p.values.size(); ++v) {
    const Value& val = p.values[v];
    if (val.source != ValueSource::Capture && val.source != ValueSource::Constant) continue;
    os << "  " << value_ref(static_cast<int64_t>(v)) << ": " << type_str(val.type) << " = ";
    const Tensor& t = p.tensors[static_cast<size_t>(val.index)];
    if (val.source == ValueSource::Constant && t.defined() && t.impl()->wrapped_number)
      os << "scalar " << constant_literal(t) << "\n";
    else if (val.source == ValueSource::Constant && t.defined() && t.numel() <= kInlineElements)
      os << "constant " << constant_literal(t) << "\n";
    else
      os << (val.source == ValueSource::Capture ? "capture #" : "constant #") << val.index
         << (val.requires_grad ? " requires_grad" : "") << "\n";
  }
  for (const OpNode& n : p.nodes) {
    os << "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i)
      os << (i ? ", " : "") << value_ref(n.outputs[i]) << ": "
         << type_str(p.values[static_cast<size_t>(n.outputs[i])].type);
    os << " = " << op_def(n.op).name << (n.inplace ? "_" : "") << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << value_ref(n.inputs[i]);
    os << ")";
    if (n.attrs.size()) {
      os << " {";
      for (size_t i = 0; i < n.attrs.size(); ++i) os << (i ? ", " : "") << attr_str(n.attrs[i]);
      os << "}";
    }
    if (n.grad_enabled) os << " grad";
    if (n.region >= 0) os << " backward #" << n.region;
    os << "\n";
  }
  auto value_list = [&](const std::vector<int64_t>& ids) {
    os << "(";
    for (size_t i = 0; i < ids.size(); ++i) os << (i ? ", " : "") << value_ref(ids[i]);
    os << ")";
  };
  for (size_t r = 0; r < p.regions.size(); ++r) {
    const GradRegion& reg = p.regions[r];
    os << "  backward #" << r << " of " << value_ref(reg.forward) << " ";
    value_list(reg.grad_inputs);
    os << " -> ";
    value_list(reg.grad_outputs);
    os << "\n";
  }
  for (size_t i = 0; i < p.guards.size(); ++i) {
    const Guard& g = p.guards[i];
    os << "  guard " << value_ref(g.value) << " == ";
    if (g.expected.defined() && g.expected.numel() <= kInlineElements)
      os << constant_literal(g.expected) << "\n";
    else
      os << "#" << i << "\n";
  }
  os << "  return (";
  for (size_t i = 0; i < p.outputs.size(); ++i) os << (i ? ", " : "") << value_ref(p.outputs[i]);
  os << ")\n}\n";
  return os.str();
}

namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Program run() {
    expect_word("program");
    expect('(');
    if (!peek(')')) {
      do {
        skip();
        if (accept('@')) {  // an object input: @k: kind
          const int64_t k = integer();
          NW_CHECK(k == static_cast<int64_t>(p_.object_inputs.size()), ValueError, where(),
                   "object input @", k, " out of order");
          expect(':');
          p_.object_inputs.push_back(word());
          IntList sizes;
          if (accept('[')) {
            if (!peek(']')) {
              do sizes.push_back(integer());
              while (accept(','));
            }
            expect(']');
          }
          p_.object_sizes.push_back(sizes);
          continue;
        }
        NW_CHECK(p_.object_inputs.empty(), ValueError, where(),
                 "tensor inputs come before object inputs");
        const int64_t id = value_id();
        expect(':');
        const ValueType t = type();
        define(id, t, ValueSource::Input, static_cast<int64_t>(p_.inputs.size()));
        p_.inputs.push_back(id);
      } while (accept(','));
    }
    expect(')');
    expect('{');
    while (true) {
      skip();
      if (starts_word("return")) break;
      if (starts_word("guard")) {
        guard();
        continue;
      }
      if (starts_word("backward")) {
        region();
        continue;
      }
      statement();
    }
    expect_word("return");
    expect('(');
    if (!peek(')')) {
      do p_.outputs.push_back(use(value_id()));
      while (accept(','));
    }
    expect(')');
    expect('}');
    skip();
    NW_CHECK(pos_ == s_.size(), ValueError, where(), "text after the program's closing brace");
    // Ids were as written (gaps allowed); compact() renumbers them in definition order.
    Program out = std::move(p_);
    out.compact();
    out.verify();
    return out;
  }

 private:
  void statement() {
    std::vector<std::pair<int64_t, ValueType>> outs;
    do {
      const int64_t id = value_id();
      expect(':');
      outs.emplace_back(id, type());
    } while (accept(','));
    expect('=');
    skip();
    if (starts_word("capture") || starts_word("constant") || starts_word("scalar")) {
      NW_CHECK(outs.size() == 1, ValueError, where(), "a capture or constant defines one value");
      const std::string kind = word();
      const bool capture = kind == "capture";
      skip();
      Tensor t;
      if (accept('#')) {
        NW_CHECK(kind != "scalar", ValueError, where(), "a scalar is written out, not `#k`");
        integer();  // a reference to a tensor the text does not hold: a placeholder
      } else {
        NW_CHECK(!capture, ValueError, where(), "a capture is written `capture #k`");
        t = literal(outs[0].second);
        if (kind == "scalar") {
          NW_CHECK(t.dim() == 0, ValueError, where(), "a scalar has shape [], got ",
                   shape_str(t.shape()));
          t.impl()->wrapped_number = true;
        }
      }
      p_.tensors.push_back(t);
      define(outs[0].first, outs[0].second, capture ? ValueSource::Capture : ValueSource::Constant,
             static_cast<int64_t>(p_.tensors.size()) - 1);
      if (capture && starts_word("requires_grad")) {
        word();
        p_.values[static_cast<size_t>(outs[0].first)].requires_grad = true;
      }
      return;
    }
    OpNode n;
    std::string name = word();
    n.op = op_kind(name, n.inplace);
    expect('(');
    if (!peek(')')) {
      do {
        if (starts_word("none")) {
          word();
          n.inputs.push_back(kNone);
        } else {
          n.inputs.push_back(use(value_id()));
        }
      } while (accept(','));
    }
    expect(')');
    if (suffix("{")) {
      ++pos_;
      if (!peek('}')) {
        do n.attrs.push_back(attr());
        while (accept(','));
      }
      expect('}');
    }
    if (suffix("grad")) {
      word();
      n.grad_enabled = true;
    }
    if (suffix("backward")) {
      word();
      expect('#');
      n.region = integer();
      NW_CHECK(n.region >= 0 && static_cast<size_t>(n.region) < s_.size(), ValueError, where(),
               "backward region #", n.region, " out of range");
    }
    for (auto& [id, t] : outs) {
      define(id, t, ValueSource::Node, -1);
      n.outputs.push_back(id);
    }
    p_.nodes.push_back(std::move(n));
  }

  // `backward #k of %v (%g, none) -> (%a, none)`: region k, declared in order.
  void region() {
    expect_word("backward");
    expect('#');
    const int64_t k = integer();
    NW_CHECK(k == static_cast<int64_t>(p_.regions.size()), ValueError, where(), "backward region #",
             k, " declared out of order (expected #", p_.regions.size(), ")");
    GradRegion reg;
    expect_word("of");
    reg.forward = maybe_value();
    auto list = [&](std::vector<int64_t>& ids) {
      expect('(');
      if (!peek(')')) {
        do ids.push_back(maybe_value());
        while (accept(','));
      }
      expect(')');
    };
    list(reg.grad_inputs);
    expect('-');
    expect('>');
    list(reg.grad_outputs);
    p_.regions.push_back(std::move(reg));
  }
  int64_t maybe_value() {
    if (starts_word("none")) {
      word();
      return kNone;
    }
    return use(value_id());
  }

  void guard() {
    expect_word("guard");
    Guard g;
    g.value = use(value_id());
    expect('=');
    expect('=');
    if (accept('#'))
      integer();
    else
      g.expected = literal(p_.values[static_cast<size_t>(g.value)].type);
    p_.guards.push_back(std::move(g));
  }

  OpKind op_kind(std::string name, bool& inplace) {
    // Built per parse: layers above the engine add ops at startup, after any earlier parse.
    if (by_name_.empty())
      for (int k = 0; k < num_registered_ops(); ++k)
        by_name_.emplace(op_def(static_cast<OpKind>(k)).name, static_cast<OpKind>(k));
    const auto& by_name = by_name_;
    auto it = by_name.find(name);
    if (it == by_name.end() && !name.empty() && name.back() == '_') {
      inplace = true;
      it = by_name.find(name.substr(0, name.size() - 1));
    }
    NW_CHECK(it != by_name.end(), ValueError, where(), "unknown op '", name, "'");
    return it->second;
  }

  AttrValue attr() {
    skip();
    if (accept('[')) {
      IntList l;
      if (!peek(']')) {
        do l.push_back(integer());
        while (accept(','));
      }
      expect(']');
      return l;
    }
    if (starts_word("true") || starts_word("false")) return word() == "true";
    if (starts_word("dtype")) {
      word();
      expect('(');
      const DType d = dtype(word());
      expect(')');
      return d;
    }
    if (starts_word("opaque")) {
      word();
      expect('(');
      std::string kind = word();
      if (accept(':')) {  // a description (describe()): skipped to the matching ')'
        int depth = 0;
        while (pos_ < s_.size() && (depth > 0 || s_[pos_] != ')')) {
          if (s_[pos_] == '(') ++depth;
          if (s_[pos_] == ')') --depth;
          if (s_[pos_] == '\n') ++line_;
          ++pos_;
        }
      }
      auto placeholder = std::make_shared<PlaceholderAttr>(kind);
      skip();
      if (accept('@')) {  // a reference to an object input
        const int64_t k = integer();
        NW_CHECK(k >= 0 && k < static_cast<int64_t>(p_.object_inputs.size()), ValueError, where(),
                 "no object input @", k);
        NW_CHECK(p_.object_inputs[static_cast<size_t>(k)] == kind, ValueError, where(),
                 "object input @", k, " is a ", p_.object_inputs[static_cast<size_t>(k)],
                 ", not a ", kind);
        int64_t d = 0;
        if (starts_word("derived")) {
          word();
          d = integer();
          NW_CHECK(d > 0 && d < 256, ValueError, where(), "derivation ", d, " out of range");
        }
        expect(')');
        return OpaquePtr(std::make_shared<ObjectInputAttr>(k, static_cast<int>(d), placeholder));
      }
      expect(')');
      return OpaquePtr(placeholder);
    }
    const std::string tok = number_token();
    if (tok.find_first_of(".eEn") != std::string::npos) return std::strtod(tok.c_str(), nullptr);
    return static_cast<int64_t>(std::strtoll(tok.c_str(), nullptr, 10));
  }

  Tensor literal(const ValueType& t) {
    std::vector<double> vals;
    auto one = [&] {
      skip();
      if (starts_word("true") || starts_word("false")) {
        vals.push_back(word() == "true" ? 1.0 : 0.0);
      } else {
        const std::string tok = number_token();
        vals.push_back(std::strtod(tok.c_str(), nullptr));
      }
    };
    if (accept('[')) {
      if (!peek(']')) {
        do one();
        while (accept(','));
      }
      expect(']');
    } else {
      one();
    }
    NW_CHECK(static_cast<int64_t>(vals.size()) == shape_numel(t.shape), ValueError, where(),
             "the constant has ", vals.size(), " values but its type ", type_str(t), " holds ",
             shape_numel(t.shape));
    Tensor d = empty(t.shape, DType::Float64);
    std::copy(vals.begin(), vals.end(), d.data<double>());
    Tensor out = cast(d, t.dtype);
    return t.device.is_cpu() ? out : to_device(out, t.device);
  }

  ValueType type() {
    ValueType t;
    t.dtype = dtype(word());
    expect('[');
    if (!peek(']')) {
      do {
        const int64_t d = integer();
        NW_CHECK(d >= 0, ValueError, where(), "a dimension must be >= 0, got ", d);
        t.shape.push_back(d);
      } while (accept(','));
    }
    expect(']');
    if (pos_ < s_.size() && s_[pos_] == '@') {
      ++pos_;
      std::string dev;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == ':'))
        dev += s_[pos_++];
      t.device = Device::parse(dev);
    }
    return t;
  }

  DType dtype(const std::string& name) {
    DType d;
    NW_CHECK(dtype_from_name(name, &d), ValueError, where(), "unknown dtype '", name, "'");
    return d;
  }

  int64_t value_id() {
    expect('%');
    const int64_t v = integer();
    // Ids index the values table as written; no program has more values than its text has bytes,
    // and a corrupt id must not size that table.
    NW_CHECK(v >= 0 && static_cast<size_t>(v) < s_.size(), ValueError, where(), "value id %", v,
             " out of range");
    return v;
  }

  // Value ids are as written; the values table grows to hold them.
  void define(int64_t id, const ValueType& t, ValueSource src, int64_t index) {
    if (p_.values.size() <= static_cast<size_t>(id)) {
      p_.values.resize(static_cast<size_t>(id) + 1);
      defined_.resize(static_cast<size_t>(id) + 1, false);
    }
    NW_CHECK(!defined_[static_cast<size_t>(id)], ValueError, where(), "%", id, " is defined twice");
    p_.values[static_cast<size_t>(id)] = Value{t, src, index};
    defined_[static_cast<size_t>(id)] = true;
  }
  int64_t use(int64_t id) {
    NW_CHECK(static_cast<size_t>(id) < defined_.size() && defined_[static_cast<size_t>(id)],
             ValueError, where(), "%", id, " is used before it is defined");
    return id;
  }

  // ---- lexing ----
  void skip() {
    while (pos_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[pos_]))) {
        if (s_[pos_] == '\n') ++line_;
        ++pos_;
      } else if (s_[pos_] == ';') {  // a comment to the end of the line
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  bool peek(char c) {
    skip();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  bool accept(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    NW_CHECK(accept(c), ValueError, where(), "expected '", std::string(1, c), "', found ", found());
  }
  static bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
  // Whether w follows on this line: a node's optional suffix, not the region line after it.
  bool suffix(const char* w) {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
    const size_t n = std::string(w).size();
    return s_.compare(pos_, n, w) == 0 &&
           (pos_ + n >= s_.size() || !word_char(s_[pos_ + n]) || !word_char(w[0]));
  }
  bool starts_word(const char* w) {
    skip();
    const size_t n = std::string(w).size();
    return s_.compare(pos_, n, w) == 0 && (pos_ + n >= s_.size() || !word_char(s_[pos_ + n]));
  }
  std::string word() {
    skip();
    const size_t b = pos_;
    while (pos_ < s_.size() && word_char(s_[pos_])) ++pos_;
    NW_CHECK(pos_ > b, ValueError, where(), "expected a name, found ", found());
    return s_.substr(b, pos_ - b);
  }
  void expect_word(const char* w) {
    NW_CHECK(starts_word(w), ValueError, where(), "expected '", w, "', found ", found());
    word();
  }
  std::string number_token() {
    skip();
    const size_t b = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '.' || s_[pos_] == '-' || s_[pos_] == '+'))
      ++pos_;
    const std::string tok = s_.substr(b, pos_ - b);
    char* end = nullptr;
    std::strtod(tok.c_str(), &end);
    NW_CHECK(!tok.empty() && end == tok.c_str() + tok.size(), ValueError, where(),
             "expected a number, found '", tok, "'");
    return tok;
  }
  int64_t integer() {
    const std::string tok = number_token();
    char* end = nullptr;
    const long long v = std::strtoll(tok.c_str(), &end, 10);
    NW_CHECK(end == tok.c_str() + tok.size(), ValueError, where(), "expected an integer, found '",
             tok, "'");
    return v;
  }
  std::string found() {
    skip();
    if (pos_ >= s_.size()) return "the end of the text";
    return "'" + s_.substr(pos_, std::min<size_t>(12, s_.size() - pos_)) + "'";
  }
  std::string where() const { return "program text, line " + std::to_string(line_) + ": "; }

  const std::string& s_;
  size_t pos_ = 0;
  int line_ = 1;
  Program p_;
  std::vector<bool> defined_;
  std::map<std::string, OpKind> by_name_;
};

}  // namespace

Program parse(const std::string& text) {
  fused_elementwise_kind();  // the passes' own op, known to every parse
  return Parser(text).run();
}

}  // namespace nodeweave::jit
