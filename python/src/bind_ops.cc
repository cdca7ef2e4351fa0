// Elementwise, reduction, linear-algebra and view ops, as module functions and Tensor methods.
// Hot ops take fixed positional signatures: no keyword parsing on the eager fast path.
#include "py_convert.h"

namespace nodeweave::py {

namespace {

using Unary = Tensor (*)(const Tensor&);
using Binary = Tensor (*)(const Tensor&, const Tensor&);

// Binds a binary op as function, method, operator and reflected operator, with scalar operands.
void def_binary(pyb::module_& m, pyb::class_<Tensor>& cls, const char* name, Binary fn,
                const char* dunder = nullptr, const char* rdunder = nullptr,
                const char* idunder = nullptr, OpKind inplace_kind = OpKind::kNumOps) {
  auto f = [fn](pyb::handle a, pyb::handle b) {
    return fn(tensor_or_scalar(a, "input"), tensor_or_scalar(b, "other"));
  };
  m.def(name, f);
  cls.def(name,
          [fn](const Tensor& a, pyb::handle b) { return fn(a, tensor_or_scalar(b, "other")); });
  if (dunder) {
    cls.def(
        dunder,
        [fn](const Tensor& a, pyb::handle b) -> pyb::object {
          if (!pyb::isinstance<Tensor>(b) && !PyNumber_Check(b.ptr()))
            return pyb::reinterpret_borrow<pyb::object>(Py_NotImplemented);
          return pyb::cast(fn(a, tensor_or_scalar(b, "other")));
        },
        pyb::is_operator());
  }
  if (rdunder) {
    cls.def(
        rdunder,
        [fn](const Tensor& a, pyb::handle b) { return fn(tensor_or_scalar(b, "other"), a); },
        pyb::is_operator());
  }
  if (inplace_kind != OpKind::kNumOps) {
    auto ip = [inplace_kind](Tensor& a, pyb::handle b) -> Tensor {
      dispatch_inplace(inplace_kind, a, {tensor_or_scalar(b, "other")});
      return a;
    };
    cls.def((std::string(name) + "_").c_str(), ip);
    if (idunder) cls.def(idunder, ip, pyb::is_operator());
  }
}

void def_unary(pyb::module_& m, pyb::class_<Tensor>& cls, const char* name, Unary fn,
               OpKind inplace_kind = OpKind::kNumOps) {
  m.def(name, fn);
  cls.def(name, fn);
  if (inplace_kind != OpKind::kNumOps) {
    cls.def((std::string(name) + "_").c_str(), [inplace_kind](Tensor& a) -> Tensor {
      dispatch_inplace(inplace_kind, a, {});
      return a;
    });
  }
}

}  // namespace

void bind_ops(pyb::module_& m) {
  auto cls = pyb::reinterpret_borrow<pyb::class_<Tensor>>(m.attr("Tensor"));

  def_binary(m, cls, "add", &add, "__add__", "__radd__", "__iadd__", OpKind::Add);
  def_binary(m, cls, "sub", &sub, "__sub__", "__rsub__", "__isub__", OpKind::Sub);
  def_binary(m, cls, "mul", &mul, "__mul__", "__rmul__", "__imul__", OpKind::Mul);
  def_binary(m, cls, "div", &div, "__truediv__", "__rtruediv__", "__itruediv__", OpKind::Div);
  def_binary(m, cls, "pow", static_cast<Binary>(&pow), "__pow__", "__rpow__", "__ipow__",
             OpKind::Pow);
  def_binary(m, cls, "maximum", &maximum);
  def_binary(m, cls, "minimum", &minimum);
  def_binary(m, cls, "eq", &eq, "__eq__");
  def_binary(m, cls, "ne", &ne, "__ne__");
  def_binary(m, cls, "lt", &lt, "__lt__");
  def_binary(m, cls, "le", &le, "__le__");
  def_binary(m, cls, "gt", &gt, "__gt__");
  def_binary(m, cls, "ge", &ge, "__ge__");
  def_binary(m, cls, "logical_and", &logical_and, "__and__", "__rand__");
  def_binary(m, cls, "logical_or", &logical_or, "__or__", "__ror__");
  def_binary(m, cls, "logical_xor", &logical_xor, "__xor__", "__rxor__");
  cls.def(
      "__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); },
      pyb::is_operator());
  cls.def(
      "__rmatmul__", [](const Tensor& a, const Tensor& b) { return matmul(b, a); },
      pyb::is_operator());
  cls.def("__neg__", [](const Tensor& a) { return neg(a); });
  cls.def("__abs__", [](const Tensor& a) { return abs(a); });
  cls.def("__invert__", [](const Tensor& a) {
    NW_CHECK(a.dtype() == DType::Bool, TypeError, "~ is only supported on bool tensors here, got ",
             dtype_name(a.dtype()));
    return logical_not(a);
  });

  def_unary(m, cls, "neg", &neg, OpKind::Neg);
  def_unary(m, cls, "abs", &abs, OpKind::Abs);
  def_unary(m, cls, "sign", &sign);
  def_unary(m, cls, "exp", &exp, OpKind::Exp);
  def_unary(m, cls, "expm1", &expm1);
  def_unary(m, cls, "log", &log, OpKind::Log);
  def_unary(m, cls, "log1p", &log1p);
  def_unary(m, cls, "sqrt", &sqrt, OpKind::Sqrt);
  def_unary(m, cls, "rsqrt", &rsqrt);
  def_unary(m, cls, "reciprocal", &reciprocal);
  def_unary(m, cls, "sin", &sin);
  def_unary(m, cls, "cos", &cos);
  def_unary(m, cls, "tanh", &tanh, OpKind::Tanh);
  def_unary(m, cls, "sigmoid", &sigmoid, OpKind::Sigmoid);
  def_unary(m, cls, "erf", &erf);
  def_unary(m, cls, "relu", &relu, OpKind::Relu);
  def_unary(m, cls, "logsigmoid", &logsigmoid);
  def_unary(m, cls, "logical_not", &logical_not);
  def_unary(m, cls, "square", &square);
  m.def("leaky_relu", &leaky_relu, pyb::arg("input"), pyb::arg("negative_slope") = 0.01);
  m.def("elu", &elu, pyb::arg("input"), pyb::arg("alpha") = 1.0);
  m.def(
      "gelu",
      [](const Tensor& x, const std::string& approximate) {
        NW_CHECK(approximate == "none" || approximate == "tanh", ValueError,
                 "gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
        return gelu(x, approximate == "tanh");
      },
      pyb::arg("input"), pyb::arg("approximate") = "none");
  m.def("softplus", &softplus, pyb::arg("input"), pyb::arg("beta") = 1.0,
        pyb::arg("threshold") = 20.0);
  auto clamp_fn = [](const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
    NW_CHECK(lo || hi, ValueError, "clamp: at least one of min and max must be given");
    return clamp(x, lo, hi);
  };
  m.def("clamp", clamp_fn, pyb::arg("input"), pyb::arg("min") = pyb::none(),
        pyb::arg("max") = pyb::none());
  cls.def("clamp", clamp_fn, pyb::arg("min") = pyb::none(), pyb::arg("max") = pyb::none());
  cls.def(
      "clamp_",
      [](Tensor& x, std::optional<double> lo, std::optional<double> hi) {
        NW_CHECK(lo || hi, ValueError, "clamp_: at least one of min and max must be given");
        dispatch_inplace(OpKind::Clamp, x, {},
                         {lo.value_or(0.0), hi.value_or(0.0), lo.has_value(), hi.has_value()});
        return x;
      },
      pyb::arg("min") = pyb::none(), pyb::arg("max") = pyb::none());
  m.def("where", [](const Tensor& c, pyb::handle a, pyb::handle b) {
    return where(c, tensor_or_scalar(a, "input"), tensor_or_scalar(b, "other"));
  });

  // ---- copies ----
  m.def("clone", &clone);
  cls.def("clone", &clone);
  cls.def("contiguous", &contiguous);
  cls.def("_cast", [](const Tensor& t, pyb::handle d) { return cast(t, parse_dtype(d)); });
  cls.def("_to_device",
          [](const Tensor& t, pyb::handle d) { return to_device(t, parse_device(d)); });
  cls.def("copy_", [](Tensor& dst, const Tensor& src) {
    copy_(dst, src);
    return dst;
  });
  cls.def("fill_", [](Tensor& t, double v) {
    fill_(t, v);
    return t;
  });
  cls.def("zero_", [](Tensor& t) {
    zero_(t);
    return t;
  });

  // ---- reductions ----
  auto sum_fn = [](const Tensor& x, pyb::handle dim, bool keepdim, pyb::handle dtype) {
    return sum(x, dims_arg(dim), keepdim, optional_dtype(dtype));
  };
  m.def("sum", sum_fn, pyb::arg("input"), pyb::arg("dim") = pyb::none(),
        pyb::arg("keepdim") = false, pyb::kw_only(), pyb::arg("dtype") = pyb::none());
  cls.def("sum", sum_fn, pyb::arg("dim") = pyb::none(), pyb::arg("keepdim") = false, pyb::kw_only(),
          pyb::arg("dtype") = pyb::none());
  auto mean_fn = [](const Tensor& x, pyb::handle dim, bool keepdim) {
    return mean(x, dims_arg(dim), keepdim);
  };
  m.def("mean", mean_fn, pyb::arg("input"), pyb::arg("dim") = pyb::none(),
        pyb::arg("keepdim") = false);
  cls.def("mean", mean_fn, pyb::arg("dim") = pyb::none(), pyb::arg("keepdim") = false);
  m.def("sum_to", &sum_to);

  // ---- linear algebra ----
  for (auto* name : {"mm", "bmm", "matmul"}) {
    Binary fn = std::string(name) == "mm" ? &mm : (std::string(name) == "bmm" ? &bmm : &matmul);
    m.def(name, fn);
    cls.def(name, fn);
  }
  m.def("addmm", &addmm, pyb::arg("input"), pyb::arg("mat1"), pyb::arg("mat2"), pyb::kw_only(),
        pyb::arg("beta") = 1.0, pyb::arg("alpha") = 1.0);
  m.def(
      "linear",
      [](const Tensor& x, const Tensor& w, pyb::object b) {
        return linear(x, w, b.is_none() ? Tensor() : tensor_arg(b, "bias"));
      },
      pyb::arg("input"), pyb::arg("weight"), pyb::arg("bias") = pyb::none());

  // ---- views ----
  cls.def("view", [](const Tensor& x, pyb::args a) { return view(x, shape_args(a, "shape")); });
  cls.def("reshape",
          [](const Tensor& x, pyb::args a) { return reshape(x, shape_args(a, "shape")); });
  m.def("reshape", [](const Tensor& x, pyb::handle s) { return reshape(x, dims_arg(s, "shape")); });
  cls.def("permute",
          [](const Tensor& x, pyb::args a) { return permute(x, shape_args(a, "dims")); });
  m.def("permute", [](const Tensor& x, pyb::handle d) { return permute(x, dims_arg(d, "dims")); });
  cls.def("expand", [](const Tensor& x, pyb::args a) { return expand(x, shape_args(a, "size")); });
  cls.def("expand_as", [](const Tensor& x, const Tensor& o) { return expand(x, o.shape()); });
  cls.def("view_as", [](const Tensor& x, const Tensor& o) { return view(x, o.shape()); });
  cls.def("reshape_as", [](const Tensor& x, const Tensor& o) { return reshape(x, o.shape()); });
  auto flatten_fn = [](const Tensor& x, int64_t s, int64_t e) { return flatten(x, s, e); };
  m.def("flatten", flatten_fn, pyb::arg("input"), pyb::arg("start_dim") = 0,
        pyb::arg("end_dim") = -1);
  cls.def("flatten", flatten_fn, pyb::arg("start_dim") = 0, pyb::arg("end_dim") = -1);
  m.def("transpose", &transpose);
  cls.def("transpose", &transpose);
  m.def("t", &t);
  cls.def("t", &t);
  cls.def_property_readonly("T", [](const Tensor& x) {
    IntList p;
    for (int64_t d = x.dim() - 1; d >= 0; --d) p.push_back(d);
    return permute(x, p);
  });
  m.def("narrow", &narrow);
  cls.def("narrow", &narrow);
  m.def("select", &select);
  cls.def("select", &select);
  m.def("_slice", &slice);
  auto squeeze_fn = [](const Tensor& x, std::optional<int64_t> d) { return squeeze(x, d); };
  m.def("squeeze", squeeze_fn, pyb::arg("input"), pyb::arg("dim") = pyb::none());
  cls.def("squeeze", squeeze_fn, pyb::arg("dim") = pyb::none());
  m.def("unsqueeze", &unsqueeze);
  cls.def("unsqueeze", &unsqueeze);
}

}  // namespace nodeweave::py
