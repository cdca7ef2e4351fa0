#include "core_framework/jit/dynamic_sizes.h"

#include <algorithm>
#include <cmath>

#include "core_framework/engine/functional.h"
#include "core_framework/jit/fused_elementwise.h"
#include "core_framework/jit/object_input.h"
#include "core_framework/runtime/error.h"

namespace nodeweave::jit {

std::vector<int64_t> call_sizes(const TensorList& inputs, const std::vector<OpaquePtr>& objects) {
  std::vector<int64_t> s;
  for (const Tensor& t : inputs)
    for (int64_t d : t.shape()) s.push_back(d);
  for (const OpaquePtr& o : objects) {
    const ObjectAttr* obj = object_attr(o);
    NW_CHECK(obj, ValueError, "jit: a ", o ? o->kind() : "null", " cannot be an object input");
    for (int64_t d : obj->sizes()) s.push_back(d);
  }
  return s;
}

std::vector<int64_t> traced_sizes(const Program& p) {
  std::vector<int64_t> s;
  for (int64_t v : p.inputs)
    for (int64_t d : p.values[static_cast<size_t>(v)].type.shape) s.push_back(d);
  for (const IntList& o : p.object_sizes)
    for (int64_t d : o) s.push_back(d);
  return s;
}

namespace {

// "dim 0 of input 1" / "size 2 of object input @0" for symbol i of p.
std::string symbol_name(const Program& p, size_t i) {
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    const size_t rank = p.values[static_cast<size_t>(p.inputs[k])].type.shape.size();
    if (i < rank) return str_cat("dim ", i, " of input ", k);
    i -= rank;
  }
  for (size_t k = 0; k < p.object_sizes.size(); ++k) {
    if (i < p.object_sizes[k].size())
      return str_cat("size ", i, " of object input @", k, " (", p.object_inputs[k], ")");
    i -= p.object_sizes[k].size();
  }
  return "a size";
}

// The value every element of t has, or nullopt (an empty tensor has none).
std::optional<double> uniform_value(const Tensor& t) {
  if (t.numel() == 0) return std::nullopt;
  const Tensor d =
      contiguous(cast(t.device().is_cpu() ? t : to_device(t, Device{}), DType::Float64));
  const double* p = d.data<double>();
  for (int64_t i = 1; i < d.numel(); ++i)
    if (!(p[i] == p[0])) return std::nullopt;  // NaN fills are not uniform either
  return p[0];
}

// One integer across the traces.
using Across = std::vector<int64_t>;

bool all_same(const Across& v) {
  return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == v[0]; });
}

std::string across_str(const Across& v) {
  std::string s;
  for (size_t t = 0; t < v.size(); ++t)
    s += (t ? (t + 1 == v.size() ? " and " : ", ") : "") + std::to_string(v[t]);
  return s;
}

class Generalizer {
 public:
  explicit Generalizer(const std::vector<const Program*>& traces) : t_(traces) {}

  std::optional<DynamicProgram> run(std::string* why) {
    try {
      compare();
    } catch (const Mismatch& m) {
      if (why) *why = m.what;
      return std::nullopt;
    }
    return std::move(d_);
  }

 private:
  struct Mismatch {
    std::string what;
  };
  [[noreturn]] static void fail(std::string what) { throw Mismatch{std::move(what)}; }

  // The size an integer that differs across the traces follows: n, k * n or n + c (|c| <= 2, a
  // segment count's n + 1 offsets) for a size n of the call, in that order of preference. When
  // several fit (num_edges and 10 * num_dst with a full fanout), the first is taken and the
  // others become ties, which a run checks (a call where they part traces again).
  DynamicProgram::Slot follow(const Across& x, const std::string& where) {
    std::vector<DynamicProgram::Slot> fits;
    auto fits_all = [&](const Across& v, int64_t k, int64_t c) {
      for (size_t t = 0; t < x.size(); ++t)
        if (v[t] * k + c != x[t]) return false;
      return true;
    };
    auto add = [&](size_t r, int64_t k, int64_t c) {
      DynamicProgram::Slot s;
      s.symbol = static_cast<int64_t>(r);
      s.scale = k;
      s.offset = c;
      fits.push_back(s);
    };
    for (int form = 0; form < 3; ++form)
      for (size_t r = 0; r < sizes_.size(); ++r) {
        if (d_.class_of[r] != static_cast<int64_t>(r) || d_.fixed[r]) continue;
        const Across& v = sizes_[r];
        if (form == 0 && v == x) add(r, 1, 0);
        if (form == 1 && v[0] > 0 && x[0] % v[0] == 0 && x[0] / v[0] > 1 &&
            fits_all(v, x[0] / v[0], 0))
          add(r, x[0] / v[0], 0);
        if (form == 2 && x[0] - v[0] != 0 && std::abs(x[0] - v[0]) <= 2 &&
            fits_all(v, 1, x[0] - v[0]))
          add(r, 1, x[0] - v[0]);
      }
    if (fits.empty())
      fail(str_cat(where, " is ", across_str(x),
                   " in the traces, which no size of the call explains"));
    for (size_t i = 1; i < fits.size(); ++i)
      d_.ties.push_back({fits[0].symbol, fits[0].scale, fits[0].offset, fits[i].symbol,
                         fits[i].scale, fits[i].offset});
    return fits[0];
  }

  void integer(const Across& x, DynamicProgram::Where w, int64_t i, int64_t j, int64_t k,
               const std::string& where) {
    if (all_same(x)) return;
    DynamicProgram::Slot s = follow(x, where);
    s.where = w;
    s.a = i;
    s.b = j;
    s.c = k;
    d_.slots.push_back(s);
  }

  template <typename F>
  Across across(F&& of) const {
    Across v;
    for (const Program* p : t_) v.push_back(of(*p));
    return v;
  }

  // Also (beyond jit::same_object) fused bodies that differ in shape only, and graphs made alike
  // from one captured graph.
  static bool same_object(const OpaquePtr& x, const OpaquePtr& y) {
    if (jit::same_object(x, y)) return true;
    if (!x || !y || dynamic_cast<const ObjectInputAttr*>(x.get()) ||
        dynamic_cast<const ObjectInputAttr*>(y.get()))
      return false;
    // Fused elementwise bodies made by the same pass from the same chain: equal but for their
    // shape, which follows the node's result (instantiate() sets it).
    const auto* fx = dynamic_cast<const FusedBody*>(x.get());
    const auto* fy = dynamic_cast<const FusedBody*>(y.get());
    if (fx || fy) {
      if (!fx || !fy || fx->num_inputs != fy->num_inputs || fx->outputs != fy->outputs ||
          fx->steps.size() != fy->steps.size() || fx->describe() != fy->describe())
        return false;
      for (size_t k = 0; k < fx->steps.size(); ++k)
        if (fx->steps[k].dtype != fy->steps[k].dtype) return false;
      return true;
    }
    // The same captured graph, or graphs made from it alike (a backward pass's reverse).
    const ObjectAttr *ox = object_attr(x), *oy = object_attr(y);
    if (!ox || !oy) return false;
    const auto lx = ox->lineage(), ly = oy->lineage();
    return lx.size() > 1 && lx.size() == ly.size() &&
           std::equal(lx.begin() + 1, lx.end(), ly.begin() + 1);
  }

  void compare() {
    const Program& a = *t_[0];
    const std::vector<int64_t> first = traced_sizes(a);
    sizes_.assign(first.size(), Across{});
    for (const Program* p : t_) {
      const std::vector<int64_t> s = traced_sizes(*p);
      if (s.size() != first.size() || p->inputs != a.inputs || p->object_inputs != a.object_inputs)
        fail("the traces take different inputs");
      for (size_t i = 0; i < s.size(); ++i) sizes_[i].push_back(s[i]);
    }
    d_.base = a;
    d_.base_sizes = first;
    for (size_t i = 0; i < sizes_.size(); ++i) {
      size_t r = 0;
      while (sizes_[r] != sizes_[i]) ++r;
      d_.class_of.push_back(static_cast<int64_t>(r));
      d_.fixed.push_back(all_same(sizes_[i]));
    }
    for (size_t t = 1; t < t_.size(); ++t) {
      const Program& b = *t_[t];
      if (a.values.size() != b.values.size() || a.nodes.size() != b.nodes.size() ||
          a.tensors.size() != b.tensors.size())
        fail(str_cat("the traces differ in length (", a.nodes.size(), " and ", b.nodes.size(),
                     " nodes)"));
      if (a.outputs != b.outputs) fail("the traces return different values");
      if (a.regions.size() != b.regions.size()) fail("the traces differ in backward regions");
      for (size_t r = 0; r < a.regions.size(); ++r) {
        const GradRegion &x = a.regions[r], &y = b.regions[r];
        if (x.forward != y.forward || x.grad_inputs != y.grad_inputs ||
            x.grad_outputs != y.grad_outputs)
          fail(str_cat("backward region #", r, " differs between the traces"));
      }
      if (a.guards.size() != b.guards.size()) fail("the traces read different values on the host");
      for (size_t g = 0; g < a.guards.size(); ++g) {
        const Guard &x = a.guards[g], &y = b.guards[g];
        if (x.value != y.value || !x.expected.defined() || !y.expected.defined() ||
            !same_bytes(x.expected, y.expected))
          fail(str_cat("the value %", x.value, " read on the host differs between the traces"));
      }
    }
    values();
    nodes();
  }

  void values() {
    const Program& a = *t_[0];
    for (size_t v = 0; v < a.values.size(); ++v) {
      const Value& x = a.values[v];
      const std::string name = str_cat("%", v);
      for (const Program* p : t_) {
        const Value& y = p->values[v];
        if (x.source != y.source || x.index != y.index || x.requires_grad != y.requires_grad ||
            x.type.dtype != y.type.dtype || x.type.device != y.type.device ||
            x.type.shape.size() != y.type.shape.size())
          fail(str_cat(name, " differs between the traces in more than its sizes"));
      }
      // An input's dims are the call's sizes themselves (instantiate() sets them).
      for (size_t k = 0; x.source != ValueSource::Input && k < x.type.shape.size(); ++k)
        integer(across([&](const Program& p) { return p.values[v].type.shape[k]; }),
                DynamicProgram::Where::ValueDim, static_cast<int64_t>(v), static_cast<int64_t>(k),
                0, str_cat("dim ", k, " of ", name));
      if (x.source == ValueSource::Capture) {
        for (const Program* p : t_)
          if (!a.tensors[static_cast<size_t>(x.index)].is_same(
                  p->tensors[static_cast<size_t>(x.index)]))
            fail(str_cat(name,
                         " captures another tensor in each trace (a tensor the function "
                         "read without taking it as an argument)"));
      } else if (x.source == ValueSource::Constant) {
        constant(v);
      }
    }
  }

  void constant(size_t v) {
    const Program& a = *t_[0];
    const auto idx = static_cast<size_t>(a.values[v].index);
    std::vector<Tensor> ts;
    for (const Program* p : t_) {
      ts.push_back(p->tensors[idx]);
      if (!ts.back().defined()) fail(str_cat("constant %", v, " is not held"));
    }
    bool same = true;
    for (const Tensor& t : ts) same = same && same_bytes(ts[0], t);
    if (same) return;
    if (ts[0].dim() == 0) {
      scalar(v, ts);
      return;
    }
    // One value repeated, in every trace, with sizes that differ (a ones(num_edges)).
    const std::optional<double> fill = uniform_value(ts[0]);
    bool fills = fill.has_value();
    for (const Tensor& t : ts) {
      const std::optional<double> f = uniform_value(t);
      fills = fills && f && *f == *fill;
    }
    if (fills && !same_shapes(ts)) {
      d_.fills.emplace_back(static_cast<int64_t>(v), *fill);
      return;
    }
    fail(str_cat("constant %", v,
                 " holds other values in each trace (a tensor made on the host "
                 "from each call's graph, such as NumPy degrees or the row ids a block's features "
                 "are gathered by; pass such tensors as arguments)"));
  }

  // A scalar made from a size: the size itself, or its mean's 1 / n, or n / (n - 1), or
  // 1 / (n - 1), as the host computed them (Python floats), rounded to the constant's dtype.
  void scalar(size_t v, const std::vector<Tensor>& ts) {
    using Of = DynamicProgram::Of;
    const std::string where = str_cat("scalar constant %", v);
    std::vector<double> xs;
    for (const Tensor& t : ts) xs.push_back(uniform_value(t).value_or(NAN));
    const DType dt = ts[0].dtype();
    auto rounded = [&](double x) {
      const Tensor t = full({}, x, dt);
      return t.item();
    };
    DynamicProgram::Slot found;
    int matches = 0;
    for (Of f : {Of::N, Of::Reciprocal, Of::Bessel, Of::ReciprocalMinusOne}) {
      // The n of the first trace, from the inverse of f.
      const double x0 = xs[0];
      double n0 = NAN;
      switch (f) {
        case Of::N:
          n0 = x0;
          break;
        case Of::Reciprocal:
          n0 = 1.0 / x0;
          break;
        case Of::Bessel:
          n0 = x0 / (x0 - 1.0);
          break;
        case Of::ReciprocalMinusOne:
          n0 = 1.0 / x0 + 1.0;
          break;
      }
      if (!(std::abs(n0) < 9e15)) continue;
      const auto n = static_cast<int64_t>(std::llround(n0));
      for (size_t r = 0; r < sizes_.size(); ++r) {
        if (d_.class_of[r] != static_cast<int64_t>(r) || d_.fixed[r]) continue;
        const Across& s = sizes_[r];
        if (s[0] <= 0 || n % s[0] != 0 || n / s[0] < 1) continue;
        const int64_t k = n / s[0];
        bool fits = true;
        for (size_t t = 0; t < ts.size() && fits; ++t)
          fits = rounded(DynamicProgram::value_of(f, k * s[t])) == xs[t];
        if (!fits) continue;
        found.symbol = static_cast<int64_t>(r);
        found.scale = k;
        found.of = f;
        ++matches;
      }
      if (matches) break;  // the simplest form that fits
    }
    if (matches != 1)
      fail(str_cat(where, " differs between the traces and ",
                   matches ? "several sizes of the call explain it"
                           : "is no size of the call "
                             "(nor 1 / n, n / (n - 1) or 1 / (n - 1) of one)"));
    found.where = DynamicProgram::Where::ScalarConstant;
    found.a = static_cast<int64_t>(v);
    d_.slots.push_back(found);
  }

  static bool same_shapes(const std::vector<Tensor>& ts) {
    for (const Tensor& t : ts)
      if (t.shape() != ts[0].shape()) return false;
    return true;
  }

  void nodes() {
    const Program& a = *t_[0];
    for (size_t k = 0; k < a.nodes.size(); ++k) {
      const OpNode& x = a.nodes[k];
      const std::string name = str_cat("node ", k, " (", op_def(x.op).name, ")");
      for (const Program* p : t_) {
        const OpNode& y = p->nodes[k];
        if (x.op != y.op || x.inputs != y.inputs || x.outputs != y.outputs ||
            x.inplace != y.inplace || x.grad_enabled != y.grad_enabled || x.region != y.region ||
            x.attrs.size() != y.attrs.size())
          fail(str_cat(name, " differs between the traces"));
      }
      for (size_t i = 0; i < x.attrs.size(); ++i) {
        const AttrValue& ax = x.attrs[i];
        const std::string attr = str_cat("attribute ", i, " of ", name);
        auto at = [&](const Program& p) -> const AttrValue& { return p.nodes[k].attrs[i]; };
        for (const Program* p : t_)
          if (at(*p).index() != ax.index()) fail(str_cat(attr, " differs between the traces"));
        if (std::holds_alternative<int64_t>(ax)) {
          integer(across([&](const Program& p) { return std::get<int64_t>(at(p)); }),
                  DynamicProgram::Where::AttrInt, static_cast<int64_t>(k), static_cast<int64_t>(i),
                  0, attr);
        } else if (auto* lx = std::get_if<IntList>(&ax)) {
          for (const Program* p : t_)
            if (std::get<IntList>(at(*p)).size() != lx->size())
              fail(str_cat(attr, " differs in length between the traces"));
          for (size_t j = 0; j < lx->size(); ++j)
            integer(across([&](const Program& p) { return std::get<IntList>(at(p))[j]; }),
                    DynamicProgram::Where::AttrListItem, static_cast<int64_t>(k),
                    static_cast<int64_t>(i), static_cast<int64_t>(j), attr);
        } else if (auto* ox = std::get_if<OpaquePtr>(&ax)) {
          for (const Program* p : t_)
            if (!same_object(*ox, std::get<OpaquePtr>(at(*p))))
              fail(str_cat(attr, " holds another ", (*ox) ? (*ox)->kind() : "object",
                           " in each trace (a graph the function did not take as an argument?)"));
        } else {
          for (const Program* p : t_)
            if (at(*p) != ax) fail(str_cat(attr, " differs between the traces"));
        }
      }
    }
  }

  const std::vector<const Program*>& t_;
  std::vector<Across> sizes_;  // per symbol: its value in each trace
  DynamicProgram d_;
};

}  // namespace

std::optional<DynamicProgram> generalize(const std::vector<const Program*>& traces,
                                         std::string* why) {
  NW_CHECK(traces.size() >= 2, std::logic_error, "jit: generalize needs two traces or more");
  return Generalizer(traces).run(why);
}

std::optional<DynamicProgram> generalize(const Program& first, const Program& second,
                                         std::string* why) {
  return generalize(std::vector<const Program*>{&first, &second}, why);
}

double DynamicProgram::value_of(Of f, int64_t n) {
  const auto x = static_cast<double>(n);
  switch (f) {
    case Of::N:
      return x;
    case Of::Reciprocal:
      return 1.0 / x;
    case Of::Bessel:
      return x / (x - 1.0);
    case Of::ReciprocalMinusOne:
      return 1.0 / (x - 1.0);
  }
  return x;
}

std::string DynamicProgram::mismatch(const std::vector<int64_t>& sizes) const {
  if (sizes.size() != base_sizes.size())
    return str_cat("the call has ", sizes.size(), " sizes, the program ", base_sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (fixed[i] && sizes[i] != base_sizes[i])
      return str_cat(symbol_name(base, i), " is ", sizes[i], "; it was ", base_sizes[i],
                     " in every trace");
    const auto r = static_cast<size_t>(class_of[i]);
    if (sizes[i] != sizes[r])
      return str_cat(symbol_name(base, i), " is ", sizes[i], " and ", symbol_name(base, r), " is ",
                     sizes[r], "; they were equal in every trace");
  }
  for (const Tie& t : ties) {
    const int64_t a = sizes[static_cast<size_t>(t.a)] * t.ka + t.ca;
    const int64_t b = sizes[static_cast<size_t>(t.b)] * t.kb + t.cb;
    if (a != b)
      return str_cat("an integer of the program was ", t.ka, " * (",
                     symbol_name(base, static_cast<size_t>(t.a)), ") + ", t.ca, " and ", t.kb,
                     " * (", symbol_name(base, static_cast<size_t>(t.b)), ") + ", t.cb,
                     " alike in every trace; they are ", a, " and ", b, " now");
  }
  return {};
}

Program DynamicProgram::instantiate(const std::vector<int64_t>& sizes) const {
  const std::string why = mismatch(sizes);
  NW_CHECK(why.empty(), std::logic_error, "jit: instantiate: ", why);
  Program p = base;
  size_t at = 0;
  for (int64_t v : p.inputs)
    for (int64_t& d : p.values[static_cast<size_t>(v)].type.shape) d = sizes[at++];
  for (IntList& o : p.object_sizes)
    for (int64_t& d : o) d = sizes[at++];
  for (const Slot& s : slots) {
    const int64_t n = sizes[static_cast<size_t>(s.symbol)] * s.scale + s.offset;
    switch (s.where) {
      case Where::ValueDim:
        p.values[static_cast<size_t>(s.a)].type.shape[static_cast<size_t>(s.b)] = n;
        break;
      case Where::AttrInt:
        p.nodes[static_cast<size_t>(s.a)].attrs.mutable_at(static_cast<size_t>(s.b)) = n;
        break;
      case Where::AttrListItem:
        std::get<IntList>(p.nodes[static_cast<size_t>(s.a)].attrs.mutable_at(
            static_cast<size_t>(s.b)))[static_cast<size_t>(s.c)] = n;
        break;
      case Where::ScalarConstant: {
        const Value& val = p.values[static_cast<size_t>(s.a)];
        Tensor& t = p.tensors[static_cast<size_t>(val.index)];
        Tensor made = full({}, value_of(s.of, n), val.type.dtype, val.type.device);
        made.impl()->wrapped_number = t.impl()->wrapped_number;
        t = made;
        break;
      }
    }
  }
  for (const auto& [v, fill] : fills) {
    const Value& val = p.values[static_cast<size_t>(v)];
    p.tensors[static_cast<size_t>(val.index)] =
        full(val.type.shape, fill, val.type.dtype, val.type.device);
  }
  // A fused elementwise body runs over its node's result shape.
  for (OpNode& n : p.nodes)
    for (size_t i = 0; i < n.attrs.size(); ++i) {
      const auto* o = std::get_if<OpaquePtr>(&n.attrs[i]);
      const auto* body = o ? dynamic_cast<const FusedBody*>(o->get()) : nullptr;
      if (!body || n.outputs.empty()) continue;
      const Shape& shape = p.values[static_cast<size_t>(n.outputs[0])].type.shape;
      if (body->shape == shape) continue;
      auto resized = std::make_shared<FusedBody>(*body);
      resized->shape = shape;
      n.attrs.mutable_at(i) = OpaquePtr(std::move(resized));
    }
  p.verify();
  return p;
}

}  // namespace nodeweave::jit
