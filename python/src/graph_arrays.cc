// Graph arrays at the Python boundary (see graph_arrays.h).
#include "graph_arrays.h"

namespace nodeweave::py {

using graph::IdArray;

namespace {
pyb::dtype id_numpy_dtype(DType d) {
  return d == DType::Int32 ? pyb::dtype::of<int32_t>() : pyb::dtype::of<int64_t>();
}

pyb::array checked_int_array(pyb::handle obj, const char* what) {
  pyb::array arr = pyb::array::ensure(obj);
  NW_CHECK(arr, TypeError, what, " must be an array of integers, got ", type_name(obj));
  NW_CHECK(arr.ndim() == 1, ValueError, what, " must be one-dimensional, got ", arr.ndim(),
           " dimensions");
  const char kind = arr.dtype().kind();
  NW_CHECK(kind == 'i' || kind == 'u', TypeError, what, " must hold integers, got dtype ",
           std::string(pyb::str(arr.dtype())));
  return arr;
}
}  // namespace

DType parse_idtype(const std::string& s) {
  if (s == "int32") return DType::Int32;
  if (s == "int64") return DType::Int64;
  throw TypeError(str_cat("idtype must be 'int32' or 'int64', got '", s, "'"));
}

pyb::array to_numpy(const IdArray& a) {
  NW_CHECK(a.device().is_cpu(), ValueError, "graph arrays on ", a.device().str(),
           " cannot be viewed from NumPy; move the graph to the CPU first");
  auto* keep = new StoragePtr(a.storage);
  pyb::capsule owner(keep, [](void* p) { delete static_cast<StoragePtr*>(p); });
  static int64_t dummy = 0;  // NumPy wants a non-null pointer even for empty arrays
  void* data = a.storage && a.length ? a.storage->data() : &dummy;
  pyb::array arr(id_numpy_dtype(a.dtype), {a.length}, {static_cast<int64_t>(dtype_size(a.dtype))},
                 data, owner);
  pyb::detail::array_proxy(arr.ptr())->flags &= ~pyb::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return arr;
}

IdArray from_numpy(pyb::handle obj, const char* what, DType idtype) {
  pyb::array arr = checked_int_array(obj, what);
  // uint64 above 2^63 wraps to negative here; the graph's range check then reports it.
  pyb::array_t<int64_t, pyb::array::c_style | pyb::array::forcecast> as64(arr);
  return IdArray::from_host(as64.data(), DType::Int64, as64.size(), idtype);
}

std::vector<int64_t> int64_vector(pyb::handle obj, const char* what) {
  pyb::array arr = checked_int_array(obj, what);
  pyb::array_t<int64_t, pyb::array::c_style | pyb::array::forcecast> as64(arr);
  return std::vector<int64_t>(as64.data(), as64.data() + as64.size());
}

ArrayView numpy_view(const pyb::array& arr, DType dtype) {
  ArrayView v;
  v.data = const_cast<void*>(arr.data());
  v.dtype = dtype;
  for (pyb::ssize_t d = 0; d < arr.ndim(); ++d) {
    v.shape.push_back(arr.shape(d));
    v.strides.push_back(arr.strides(d) / static_cast<pyb::ssize_t>(arr.itemsize()));
  }
  static double empty_but_present = 0;  // an empty array must still read as given
  if (!v.data) v.data = &empty_but_present;
  return v;
}

ArrayView float_view(pyb::handle obj, const std::string& what, pyb::array* keep) {
  *keep = pyb::array::ensure(obj, pyb::array::c_style);
  NW_CHECK(*keep, TypeError, what, " must be an array of float32 or float64 values, got ",
           type_name(obj));
  const char kind = keep->dtype().kind();
  const pyb::ssize_t item = keep->dtype().itemsize();
  NW_CHECK(kind == 'f' && (item == 4 || item == 8), TypeError, what,
           " must be float32 or float64, got dtype ", std::string(pyb::str(keep->dtype())));
  return numpy_view(*keep, item == 4 ? DType::Float32 : DType::Float64);
}

}  // namespace nodeweave::py
