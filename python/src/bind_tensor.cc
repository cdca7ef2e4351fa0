// The Tensor, DType and Device classes: metadata, autograd attributes, creation functions.
#include <pybind11/functional.h>

#include "core_framework/autograd/engine.h"
#include "core_framework/autograd/grad_mode.h"
#include "core_framework/autograd/node.h"
#include "core_framework/runtime/generator.h"
#include "core_framework/runtime/parallel.h"
#include "py_convert.h"

namespace nodeweave::py {

namespace {

pyb::tuple shape_tuple(const Shape& s) {
  pyb::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = pyb::int_(s[i]);
  return t;
}

// Creation functions accept sizes as varargs or one sequence, like torch.zeros(2, 3) / zeros((2,
// 3)).
template <typename F>
void def_creation(pyb::module_& m, const char* name, F fill) {
  m.def(
      name,
      [fill](pyb::args args, pyb::object dtype, pyb::object device, bool requires_grad) {
        Tensor t = fill(shape_args(args), dtype.is_none() ? DType::Float32 : parse_dtype(dtype),
                        parse_device(device));
        if (requires_grad) t.set_requires_grad(true);
        return t;
      },
      pyb::kw_only(), pyb::arg("dtype") = pyb::none(), pyb::arg("device") = pyb::none(),
      pyb::arg("requires_grad") = false);
}

}  // namespace

void bind_tensor(pyb::module_& m) {
  pyb::enum_<DType>(m, "dtype")
      .value("bool", DType::Bool)
      .value("uint8", DType::UInt8)
      .value("int8", DType::Int8)
      .value("int32", DType::Int32)
      .value("int64", DType::Int64)
      .value("float16", DType::Float16)
      .value("bfloat16", DType::BFloat16)
      .value("float32", DType::Float32)
      .value("float64", DType::Float64)
      .def("__repr__", [](DType d) { return std::string("nodeweave.core.") + dtype_name(d); })
      .def("__str__", [](DType d) { return std::string("nodeweave.core.") + dtype_name(d); })
      .def_property_readonly("itemsize", [](DType d) { return dtype_size(d); })
      .def_property_readonly("is_floating_point", [](DType d) { return is_floating(d); })
      .def_property_readonly("name", [](DType d) { return std::string(dtype_name(d)); });
  m.def("_parse_dtype", [](pyb::handle d) { return parse_dtype(d); });
  m.def("promote_types",
        [](pyb::handle a, pyb::handle b) { return promote_types(parse_dtype(a), parse_dtype(b)); });

  pyb::class_<Device>(m, "device")
      .def(pyb::init([](pyb::handle spec) { return parse_device(spec); }))
      .def(pyb::init([](const std::string& type, int index) {
        return Device::parse(type + ":" + std::to_string(index));
      }))
      .def_property_readonly("type", [](const Device& d) { return d.is_cpu() ? "cpu" : "cuda"; })
      .def_property_readonly("index",
                             [](const Device& d) -> pyb::object {
                               return d.is_cpu() ? pyb::object(pyb::none())
                                                 : pyb::object(pyb::int_(d.index));
                             })
      .def("__str__", &Device::str)
      .def("__repr__",
           [](const Device& d) {
             return "device(type='" + std::string(d.is_cpu() ? "cpu" : "cuda") +
                    (d.is_cpu() ? "')" : "', index=" + std::to_string(d.index) + ")");
           })
      .def("__eq__",
           [](const Device& d, pyb::handle o) {
             try {
               return d == parse_device(o);
             } catch (...) {
               return false;
             }
           })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1024 + d.index; });

  auto cls = pyb::class_<Tensor>(m, "Tensor", pyb::dynamic_attr());
  cls.def(pyb::init([](const Tensor& other) { return other; }), pyb::arg("data"))
      .def_property_readonly("shape", [](const Tensor& t) { return shape_tuple(t.shape()); })
      .def(
          "size",
          [](const Tensor& t, pyb::object d) -> pyb::object {
            if (d.is_none()) return shape_tuple(t.shape());
            return pyb::int_(t.size(d.cast<int64_t>()));
          },
          pyb::arg("dim") = pyb::none())
      .def(
          "stride",
          [](const Tensor& t, pyb::object d) -> pyb::object {
            if (d.is_none()) return shape_tuple(t.strides());
            return pyb::int_(t.stride(d.cast<int64_t>()));
          },
          pyb::arg("dim") = pyb::none())
      .def("storage_offset", &Tensor::offset)
      .def("dim", &Tensor::dim)
      .def_property_readonly("ndim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("__len__",
           [](const Tensor& t) {
             NW_CHECK(t.dim() > 0, TypeError, "len() of a 0-d tensor");
             return t.size(0);
           })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("is_cuda", [](const Tensor& t) { return t.device().is_cuda(); })
      .def("element_size", &Tensor::itemsize)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("is_floating_point", [](const Tensor& t) { return is_floating(t.dtype()); })
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("item",
           [](const Tensor& t) -> pyb::object {
             // int64 is read exactly: a double holds integers only up to 2^53.
             if (t.dtype() == DType::Int64) {
               NW_CHECK(t.numel() == 1, ValueError,
                        "item(): expected a tensor with one element, got shape ",
                        shape_str(t.shape()));
               return pyb::int_(*to_device(t, Device{}).data<int64_t>());
             }
             double v = t.item();
             if (t.dtype() == DType::Bool) return pyb::bool_(v != 0);
             if (is_integral(t.dtype())) return pyb::int_(static_cast<int64_t>(v));
             return pyb::float_(v);
           })
      .def("__float__", [](const Tensor& t) { return t.item(); })
      .def("__int__", [](const Tensor& t) { return static_cast<int64_t>(t.item()); })
      .def("__bool__",
           [](const Tensor& t) {
             NW_CHECK(t.numel() == 1, ValueError, "the truth value of a tensor with ", t.numel(),
                      " elements is ambiguous; use any() or all()");
             return t.item() != 0;
           })
      .def("__index__",
           [](const Tensor& t) {
             NW_CHECK(t.numel() == 1 && is_integral(t.dtype()), TypeError,
                      "only integer tensors of a single element can be converted to an index");
             return static_cast<int64_t>(t.item());
           })
      .def("__hash__", [](pyb::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      .def(
          "_is_same", [](const Tensor& a, const Tensor& b) { return a.is_same(b); },
          "Whether both are one tensor (Python objects wrapping it may differ).")
      // ---- autograd ----
      .def_property("requires_grad", &Tensor::requires_grad,
                    [](Tensor& t, bool r) { t.set_requires_grad(r); })
      .def(
          "requires_grad_",
          [](Tensor& t, bool r) {
            t.set_requires_grad(r);
            return t;
          },
          pyb::arg("requires_grad") = true)
      .def_property(
          "grad",
          [](const Tensor& t) -> pyb::object {
            if (!t.grad().defined()) return pyb::none();
            return pyb::cast(t.grad());
          },
          [](Tensor& t, pyb::object g) {
            t.set_grad(g.is_none() ? Tensor() : tensor_arg(g, "grad"));
          })
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def_property_readonly("grad_fn",
                             [](const Tensor& t) -> pyb::object {
                               if (!t.grad_fn()) return pyb::none();
                               return pyb::cast(t.grad_fn());
                             })
      .def_property_readonly("_version", &Tensor::version)
      .def("detach", &Tensor::detach)
      .def("detach_",
           [](Tensor& t) {
             t.impl()->grad_fn.reset();
             t.impl()->requires_grad = false;
             return t;
           })
      .def("retain_grad", &Tensor::retain_grad)
      .def_property_readonly("retains_grad", &Tensor::retains_grad)
      .def("_register_hook",
           [](const Tensor& t, pyb::function fn) {
             return t.register_hook([fn](const Tensor& g) -> Tensor {
               pyb::gil_scoped_acquire gil;
               pyb::object r = fn(g);
               return r.is_none() ? Tensor() : tensor_arg(r, "hook return value");
             });
           })
      .def("_remove_hook", &Tensor::remove_hook)
      .def(
          "backward",
          [](const Tensor& t, pyb::object gradient, pyb::object retain_graph, bool create_graph) {
            TensorList g;
            if (!gradient.is_none()) g.push_back(tensor_arg(gradient, "gradient"));
            bool retain = retain_graph.is_none() ? create_graph : retain_graph.cast<bool>();
            backward({t}, g, retain, create_graph);
          },
          pyb::arg("gradient") = pyb::none(), pyb::arg("retain_graph") = pyb::none(),
          pyb::arg("create_graph") = false);

  pyb::class_<Node, std::shared_ptr<Node>>(m, "Node")
      .def("name", &Node::name)
      .def("__repr__", [](const Node& n) { return "<" + n.name() + ">"; })
      .def_property_readonly("next_functions", [](Node& n) {
        pyb::list out;
        for (Edge& e : n.next_edges()) {
          out.append(pyb::make_tuple(e.fn ? pyb::cast(e.fn) : pyb::none(), e.input_nr));
        }
        return pyb::tuple(out);
      });

  // ---- creation ----
  def_creation(m, "zeros", [](const Shape& s, DType d, Device dev) { return zeros(s, d, dev); });
  def_creation(m, "ones", [](const Shape& s, DType d, Device dev) { return ones(s, d, dev); });
  def_creation(m, "empty", [](const Shape& s, DType d, Device dev) { return empty(s, d, dev); });
  def_creation(m, "rand", [](const Shape& s, DType d, Device dev) { return rand(s, d, dev); });
  def_creation(m, "randn", [](const Shape& s, DType d, Device dev) { return randn(s, d, dev); });
  m.def(
      "full",
      [](pyb::object size, double value, pyb::object dtype, pyb::object device, bool rg) {
        Tensor t =
            full(dims_arg(size, "size"), value,
                 dtype.is_none() ? DType::Float32 : parse_dtype(dtype), parse_device(device));
        if (rg) t.set_requires_grad(true);
        return t;
      },
      pyb::arg("size"), pyb::arg("fill_value"), pyb::kw_only(), pyb::arg("dtype") = pyb::none(),
      pyb::arg("device") = pyb::none(), pyb::arg("requires_grad") = false);
  m.def(
      "randint",
      [](int64_t low, int64_t high, pyb::object size, pyb::object dtype, pyb::object device) {
        return randint(low, high, dims_arg(size, "size"),
                       dtype.is_none() ? DType::Int64 : parse_dtype(dtype), parse_device(device));
      },
      pyb::arg("low"), pyb::arg("high"), pyb::arg("size"), pyb::kw_only(),
      pyb::arg("dtype") = pyb::none(), pyb::arg("device") = pyb::none());
  m.def("_arange",
        [](double start, double end, double step, pyb::object dtype, pyb::object device) {
          return arange(start, end, step, parse_dtype(dtype), parse_device(device));
        });
  m.def(
      "linspace",
      [](double start, double end, int64_t steps, pyb::object dtype, pyb::object device) {
        return linspace(start, end, steps, dtype.is_none() ? DType::Float32 : parse_dtype(dtype),
                        parse_device(device));
      },
      pyb::arg("start"), pyb::arg("end"), pyb::arg("steps"), pyb::kw_only(),
      pyb::arg("dtype") = pyb::none(), pyb::arg("device") = pyb::none());
  m.def(
      "eye",
      [](int64_t n, pyb::object mm, pyb::object dtype, pyb::object device) {
        return eye(n, mm.is_none() ? n : mm.cast<int64_t>(),
                   dtype.is_none() ? DType::Float32 : parse_dtype(dtype), parse_device(device));
      },
      pyb::arg("n"), pyb::arg("m") = pyb::none(), pyb::kw_only(), pyb::arg("dtype") = pyb::none(),
      pyb::arg("device") = pyb::none());
  m.def(
      "randperm",
      [](int64_t n, pyb::object dtype, pyb::object device) {
        return randperm(n, dtype.is_none() ? DType::Int64 : parse_dtype(dtype),
                        parse_device(device));
      },
      pyb::arg("n"), pyb::kw_only(), pyb::arg("dtype") = pyb::none(),
      pyb::arg("device") = pyb::none());
  m.def("zeros_like", [](const Tensor& t) { return zeros_like(t); });
  m.def("ones_like", [](const Tensor& t) { return ones_like(t); });
  m.def("full_like", [](const Tensor& t, double v) { return full_like(t, v); });
  m.def(
      "scalar_tensor",
      [](double v, pyb::object dtype) {
        return scalar_tensor(v, dtype.is_none() ? DType::Float32 : parse_dtype(dtype));
      },
      pyb::arg("value"), pyb::arg("dtype") = pyb::none());

  // ---- global state ----
  m.def("manual_seed", [](uint64_t s) { default_generator().manual_seed(s); });
  m.def("initial_seed", []() { return default_generator().initial_seed(); });
  m.def("set_num_threads", &set_num_threads);
  // Bytes of tensor storage (PyTorch's torch.cuda.memory_allocated names, for any device).
  m.def(
      "memory_allocated", [](pyb::handle d) { return storage_bytes_in_use(parse_device(d)); },
      pyb::arg("device") = "cpu");
  m.def(
      "max_memory_allocated", [](pyb::handle d) { return storage_peak_bytes(parse_device(d)); },
      pyb::arg("device") = "cpu");
  m.def(
      "reset_peak_memory_stats", [](pyb::handle d) { reset_storage_peak(parse_device(d)); },
      pyb::arg("device") = "cpu");
  m.def("get_num_threads", &get_num_threads);
  m.def("cuda_is_built", &cuda_built);
  m.def("cuda_device_count", &cuda_device_count);
  m.def("is_grad_enabled", &GradMode::is_enabled);
  m.def("set_grad_enabled", &GradMode::set_enabled);
  m.def(
      "_allocator_bytes_in_use",
      [](pyb::object dev) { return get_allocator(parse_device(dev))->bytes_in_use(); },
      pyb::arg("device") = pyb::none());
}

}  // namespace nodeweave::py
