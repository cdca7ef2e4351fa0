// A program input that is an object, not a tensor: the graph a mini-batch step runs on, which
// changes from call to call. An op attribute that holds such an object implements ObjectAttr
// (backend/'s GraphAttr does). The tracer replaces each attribute standing for a declared object
// by an ObjectInputAttr naming the input and how the op's object was derived from it (a backward
// pass's reversed graph); the executor puts the bound object's attribute back in at each run. The
// kernel layer and the graph layer know nothing of it.
#pragma once
#include <string>
#include <vector>

#include "core_framework/engine/attrs.h"

namespace nodeweave::jit {

struct ObjectAttr {
  virtual ~ObjectAttr() = default;
  // The attribute's object first (derivation 0), then the objects it was made from, each with the
  // code of how the attribute's object follows from it (the kind's own codes: 1 for a reversed
  // graph). A traced op's attribute stands for the first of these that is a program input.
  virtual std::vector<std::pair<const void*, int>> lineage() const = 0;
  // The attribute for the object made from this one's by `derivation` (not 0).
  virtual OpaquePtr derived(int derivation) const = 0;
  // The object's sizes (a graph's node and edge counts): the shapes of a program follow them.
  virtual std::vector<int64_t> sizes() const = 0;
};

// The ObjectAttr of an opaque attribute, or null.
inline const ObjectAttr* object_attr(const OpaquePtr& o) {
  return dynamic_cast<const ObjectAttr*>(o.get());
}

struct ObjectInputAttr final : OpaqueAttr {
  ObjectInputAttr(int64_t input, int derivation, OpaquePtr traced)
      : input(input), derivation(derivation), traced(std::move(traced)) {}
  const char* kind() const override { return traced->kind(); }

  int64_t input;   // position among the program's object inputs
  int derivation;  // ObjectAttr::lineage's code: 0 is the input itself
  // The attribute seen while tracing (passes that read the object look at it); a placeholder in
  // a parsed program.
  OpaquePtr traced;
};

// The object-input reference at attrs[k], or null.
inline const ObjectInputAttr* object_input_at(const Attrs& attrs, size_t k) {
  const auto* o = std::get_if<OpaquePtr>(&attrs[k]);
  return o ? dynamic_cast<const ObjectInputAttr*>(o->get()) : nullptr;
}

// Whether two attributes hold one object: the same object input (and derivation), or the same
// object (each op call makes its own attribute for it).
inline bool same_object(const OpaquePtr& a, const OpaquePtr& b) {
  if (a == b) return true;
  if (!a || !b || std::string(a->kind()) != b->kind()) return false;
  const auto* ia = dynamic_cast<const ObjectInputAttr*>(a.get());
  const auto* ib = dynamic_cast<const ObjectInputAttr*>(b.get());
  if (ia || ib) return ia && ib && ia->input == ib->input && ia->derivation == ib->derivation;
  const ObjectAttr *oa = object_attr(a), *ob = object_attr(b);
  return oa && ob && oa->lineage().at(0).first == ob->lineage().at(0).first;
}

// Whether any attribute of the call refers to an object input (so its results depend on the call).
inline bool reads_object_input(const Attrs& attrs) {
  for (size_t k = 0; k < attrs.size(); ++k)
    if (object_input_at(attrs, k)) return true;
  return false;
}

}  // namespace nodeweave::jit
