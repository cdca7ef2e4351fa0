// Zero-copy exchange with NumPy: from_numpy wraps the array's buffer (keeping the array alive),
// _to_numpy returns an array viewing the tensor's storage (keeping the storage alive).
#include <pybind11/numpy.h>

#include "core_framework/engine/dispatch_observer.h"
#include "py_convert.h"

namespace nodeweave::py {

namespace {

DType dtype_of(const pyb::dtype& d) {
  char kind = d.kind();
  size_t size = d.itemsize();
  if (kind == 'b') return DType::Bool;
  if (kind == 'u' && size == 1) return DType::UInt8;
  if (kind == 'i' && size == 1) return DType::Int8;
  if (kind == 'i' && size == 4) return DType::Int32;
  if (kind == 'i' && size == 8) return DType::Int64;
  if (kind == 'f' && size == 2) return DType::Float16;
  if (kind == 'f' && size == 4) return DType::Float32;
  if (kind == 'f' && size == 8) return DType::Float64;
  throw TypeError(
      str_cat("from_numpy: unsupported NumPy dtype ", std::string(pyb::str(d)),
              " (supported: bool, uint8, int8, int32, int64, float16, float32, float64)"));
}

pyb::dtype numpy_dtype(DType d) {
  switch (d) {
    case DType::Bool:
      return pyb::dtype("bool");
    case DType::UInt8:
      return pyb::dtype("uint8");
    case DType::Int8:
      return pyb::dtype("int8");
    case DType::Int32:
      return pyb::dtype("int32");
    case DType::Int64:
      return pyb::dtype("int64");
    case DType::Float16:
      return pyb::dtype("float16");
    case DType::Float32:
      return pyb::dtype("float32");
    case DType::Float64:
      return pyb::dtype("float64");
    default:
      throw TypeError(str_cat("numpy(): NumPy has no ", dtype_name(d), " dtype; cast first"));
  }
}

}  // namespace

Tensor tensor_from_numpy(pyb::array arr) {
  DType dt = dtype_of(arr.dtype());
  const int64_t item = static_cast<int64_t>(arr.itemsize());
  Shape shape(arr.ndim()), strides(arr.ndim());
  int64_t lo = 0, hi = 0;  // byte extent relative to the data pointer
  for (pyb::ssize_t i = 0; i < arr.ndim(); ++i) {
    shape[i] = arr.shape(i);
    NW_CHECK(arr.strides(i) % item == 0, ValueError,
             "from_numpy: strides that are not a multiple of the element size are not supported");
    strides[i] = arr.strides(i) / item;
    if (shape[i] == 0) continue;
    int64_t span = (shape[i] - 1) * arr.strides(i);
    (span < 0 ? lo : hi) += span;
  }
  NW_CHECK(arr.writeable(), ValueError,
           "from_numpy: the array is read-only; pass a writable array (e.g. arr.copy())");
  char* data = static_cast<char*>(arr.mutable_data());
  // Keep the array alive while the storage lives; the deleter may run without the GIL held.
  auto* keep = new pyb::object(arr);
  auto storage =
      std::make_shared<Storage>(data + lo, static_cast<size_t>(hi - lo + item), Device{}, [keep]() {
        pyb::gil_scoped_acquire gil;
        delete keep;
      });
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = storage;
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = -lo / item;
  impl->dtype = dt;
  return Tensor(impl);
}

void bind_numpy(pyb::module_& m) {
  m.def("from_numpy", &tensor_from_numpy, pyb::arg("ndarray"));
  m.def("_to_numpy", [](const Tensor& t) {
    notify_read(t, "numpy()");
    NW_CHECK(t.device().is_cpu(), TypeError, "numpy(): tensor is on ", t.device().str(),
             "; call .cpu() first");
    std::vector<pyb::ssize_t> shape(t.shape().begin(), t.shape().end());
    std::vector<pyb::ssize_t> strides;
    for (int64_t s : t.strides()) strides.push_back(s * static_cast<int64_t>(t.itemsize()));
    // The capsule owns a reference to the storage, so the array keeps the memory alive.
    auto* keep = new StoragePtr(t.storage());
    pyb::capsule owner(keep, [](void* p) { delete static_cast<StoragePtr*>(p); });
    return pyb::array(numpy_dtype(t.dtype()), shape, strides, t.data_ptr(), owner);
  });
}

}  // namespace nodeweave::py#include "core_framework/engine/dispatch_observer.h"

