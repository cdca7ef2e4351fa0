#include "py_convert.h"

#include <pybind11/numpy.h>

namespace nodeweave::py {

DType parse_dtype(pyb::handle obj, const char* arg) {
  if (pyb::isinstance<DType>(obj)) return obj.cast<DType>();
  std::string name;
  if (pyb::isinstance<pyb::str>(obj)) {
    name = obj.cast<std::string>();
  } else if (pyb::hasattr(obj, "dtype") && pyb::hasattr(obj, "__module__") &&
             std::string(pyb::str(obj.attr("__module__"))) == "numpy") {
    // A numpy scalar type such as np.float32 (whose `dtype` attribute is a descriptor, not a
    // dtype) or a numpy scalar: numpy.dtype() reads both.
    name = pyb::str(pyb::dtype::from_args(pyb::reinterpret_borrow<pyb::object>(obj)).attr("name"));
  } else if (pyb::hasattr(obj, "name") && pyb::hasattr(obj, "kind")) {
    name = pyb::str(obj.attr("name"));  // numpy dtype object
  } else if (obj.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) {
    return DType::Float32;
  } else if (obj.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) {
    return DType::Int64;
  } else if (obj.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) {
    return DType::Bool;
  } else {
    name = pyb::str(obj);
    if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  }
  if (name == "float") name = "float32";
  if (name == "double") name = "float64";
  if (name == "half") name = "float16";
  if (name == "long") name = "int64";
  if (name == "int") name = "int32";
  DType d;
  if (!dtype_from_name(name, &d)) {
    throw TypeError(str_cat(arg, ": unsupported dtype '", name,
                            "' (expected one of bool, uint8, int8, int32, int64, float16, "
                            "bfloat16, float32, float64)"));
  }
  return d;
}

std::optional<DType> optional_dtype(pyb::handle obj) {
  if (obj.is_none()) return std::nullopt;
  return parse_dtype(obj);
}

Device parse_device(pyb::handle obj, const char* arg) {
  if (obj.is_none()) return Device{};
  if (pyb::isinstance<Device>(obj)) return obj.cast<Device>();
  if (pyb::isinstance<pyb::int_>(obj)) return Device{DeviceType::CUDA, obj.cast<int32_t>()};
  return Device::parse(pyb::str(obj).cast<std::string>());
}

Tensor tensor_or_scalar(pyb::handle obj, const char* arg) {
  if (pyb::isinstance<Tensor>(obj)) return obj.cast<Tensor>();
  // bool before int: Python bools are ints.
  if (PyBool_Check(obj.ptr()))
    return scalar_tensor(obj.ptr() == Py_True, DType::Bool, Device{}, true);
  if (PyLong_Check(obj.ptr())) {
    return scalar_tensor(static_cast<double>(obj.cast<int64_t>()), DType::Int64, Device{}, true);
  }
  if (PyFloat_Check(obj.ptr()))
    return scalar_tensor(obj.cast<double>(), DType::Float64, Device{}, true);
  if (pyb::isinstance<pyb::array>(obj) || pyb::hasattr(obj, "__dlpack__")) {
    throw TypeError(str_cat(arg, ": expected a nodeweave Tensor or a Python scalar, got ",
                            type_name(obj), " (convert it with nc.tensor() or nc.from_dlpack())"));
  }
  if (pyb::hasattr(obj, "__float__")) {
    return scalar_tensor(PyFloat_AsDouble(obj.ptr()), DType::Float64, Device{}, true);
  }
  throw TypeError(str_cat(arg, ": expected a Tensor or a number, got ", type_name(obj)));
}

const Tensor& tensor_arg(pyb::handle obj, const char* arg) {
  if (!pyb::isinstance<Tensor>(obj)) {
    throw TypeError(str_cat(arg, ": expected a Tensor, got ", type_name(obj)));
  }
  return *obj.cast<Tensor*>();
}

IntList dims_arg(pyb::handle obj, const char* arg) {
  if (obj.is_none()) return {};
  if (PyLong_Check(obj.ptr())) return {obj.cast<int64_t>()};
  try {
    return obj.cast<IntList>();
  } catch (const pyb::cast_error&) {
    throw TypeError(str_cat(arg, ": expected an int or a sequence of ints"));
  }
}

Shape shape_args(const pyb::args& args, const char* arg) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return dims_arg(args[0], arg);
  Shape s;
  for (auto a : args) {
    NW_CHECK(PyLong_Check(a.ptr()), TypeError, arg, ": expected ints, got ", type_name(a));
    s.push_back(a.cast<int64_t>());
  }
  return s;
}

}  // namespace nodeweave::py
