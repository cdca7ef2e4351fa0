// Graph arrays at the Python boundary, shared by the graph and sampling bindings: relation graphs
// as pybind11 objects, id arrays to read-only NumPy views and back, int64 vectors handed to NumPy
// without a copy.
#pragma once
#include <string>
#include <vector>

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
// The vector's buffer as a writable int64 NumPy array, without a copy (the array owns it).
pyb::array_t<int64_t> vector_to_numpy(std::vector<int64_t>&& v);
// A 1-D integer NumPy array as int64 values (copy when not already contiguous int64); TypeError or
// ValueError naming `what`.
std::vector<int64_t> int64_vector(pyb::handle obj, const char* what);

}  // namespace nodeweave::py
