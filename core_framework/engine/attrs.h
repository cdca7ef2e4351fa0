// Non-tensor arguments of an op call (dims, scalars, flags), stored positionally so the tracer can
// record and the static-graph format can serialize any op call without per-op code.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>
#include <variant>
#include <vector>

#include "core_framework/runtime/dtype.h"
#include "core_framework/runtime/error.h"

namespace nodeweave {

using IntList = std::vector<int64_t>;

// A non-tensor object an extension op needs, such as a graph structure (backend/ ops hold their
// graph this way). The engine only keeps it alive and hands it back; `kind()` names it in traces.
struct OpaqueAttr {
  virtual ~OpaqueAttr() = default;
  virtual const char* kind() const = 0;
  // What a program's text shows of it after the kind (a fused body's steps); empty for most.
  virtual std::string describe() const { return {}; }
};
using OpaquePtr = std::shared_ptr<const OpaqueAttr>;

using AttrValue = std::variant<int64_t, double, bool, IntList, DType, OpaquePtr>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<AttrValue> values) : values_(values) {}

  size_t size() const { return values_.size(); }
  const AttrValue& operator[](size_t i) const { return values_[i]; }
  // For rewriting a stored call (a loaded program's opaque attributes are filled in in place).
  AttrValue& mutable_at(size_t i) { return values_[i]; }
  void push_back(AttrValue v) { values_.push_back(std::move(v)); }

  int64_t i(size_t k) const { return get<int64_t>(k); }
  double f(size_t k) const { return get<double>(k); }
  bool b(size_t k) const { return get<bool>(k); }
  const IntList& ints(size_t k) const { return get<IntList>(k); }
  DType dtype(size_t k) const { return get<DType>(k); }
  // The opaque attribute at k, as T (std::logic_error when it is something else).
  template <typename T>
  const T& opaque(size_t k) const {
    const T* p = dynamic_cast<const T*>(get<OpaquePtr>(k).get());
    if (!p) throw std::logic_error(str_cat("op attribute ", k, " is not a ", typeid(T).name()));
    return *p;
  }

 private:
  template <typename T>
  const T& get(size_t k) const {
    if (k >= values_.size() || !std::holds_alternative<T>(values_[k]))
      throw std::logic_error(str_cat("op attribute ", k, " missing or of the wrong kind"));
    return std::get<T>(values_[k]);
  }
  std::vector<AttrValue> values_;
};

}  // namespace nodeweave
