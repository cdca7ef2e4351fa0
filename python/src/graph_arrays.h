// Graph arrays at the Python boundary, shared by the graph and sampling bindings: relation graphs
// as pybind11 objects, id arrays to read-only NumPy views and back, int64 vectors handed to NumPy
// without a copy.
#pragma once
#include <string>
#include <vector>

#include "core_framework/runtime/array_view.h"
#include "graph/relation_graph.h"
#include "py_convert.h"

namespace nodeweave::py {

// pybind11 holders cannot be shared_ptr<const T>; the object stays immutable through its API.
using Holder = std::shared_ptr<graph::RelationGraph>;
inline Holder hold(const graph::RelationGraphPtr& g) {
  return std::const_pointer_cast<graph::RelationGraph>(g);
}

// 'int32' / 'int64' -> DType; TypeError otherwise.
DType parse_idtype(const std::string& s);
// A read-only NumPy view of the array's storage (kept alive by the view).
pyb::array to_numpy(const graph::IdArray& a);
// Any integer NumPy array -> IdArray of `idtype` (copy). Floats or bools are refused by name.
graph::IdArray from_numpy(pyb::handle obj, const char* what, DType idtype);
// The vector's buffer as a writable NumPy array of `shape` (default: 1-D), without a copy: the
// array owns the buffer. Empty vectors get a valid dummy pointer (NumPy wants one).
template <typename T>
pyb::array_t<T> owned_array(std::vector<T>&& v, std::vector<pyb::ssize_t> shape = {}) {
  auto* keep = new std::vector<T>(std::move(v));
  pyb::capsule owner(keep, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  if (shape.empty()) shape = {static_cast<pyb::ssize_t>(keep->size())};
  static T dummy{};
  T* data = keep->empty() ? &dummy : keep->data();
  return pyb::array_t<T>(shape, data, owner);
}
inline pyb::array_t<int64_t> vector_to_numpy(std::vector<int64_t>&& v) {
  return owned_array(std::move(v));
}
// A 1-D integer NumPy array as int64 values (copy when not already contiguous int64); TypeError or
// ValueError naming `what`.
std::vector<int64_t> int64_vector(pyb::handle obj, const char* what);
// A NumPy array as an ArrayView of `dtype` on the CPU (strides in elements); the array must outlive
// the view. An empty array still reads as given (non-null data).
ArrayView numpy_view(const pyb::array& arr, DType dtype);
// A float32 or float64 array (C-contiguous; `keep` holds the buffer the view points into) as an
// ArrayView; TypeError naming `what` for anything else.
ArrayView float_view(pyb::handle obj, const std::string& what, pyb::array* keep);

// Tells a trace running on this thread that host code read g's structure (bind_jit.cc): a traced
// program that takes g as an input must not be reused for another graph.
void note_structure_read(const graph::RelationGraph& g, const char* what);

}  // namespace nodeweave::py
