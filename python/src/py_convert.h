// Conversions at the Python boundary shared by every binding file: dtype/device arguments,
// Python scalars as weak 0-d tensors, and the exception types Python code sees.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core_framework/engine/functional.h"

namespace nodeweave::py {

namespace pyb = pybind11;

// Name of an object's Python type, for error messages.
inline std::string type_name(pyb::handle obj) {
  return pyb::str(pyb::type::handle_of(obj).attr("__name__"));
}

DType parse_dtype(pyb::handle obj, const char* arg = "dtype");
Device parse_device(pyb::handle obj, const char* arg = "device");
std::optional<DType> optional_dtype(pyb::handle obj);

// A Tensor argument, or a Python/NumPy scalar turned into a wrapped 0-d tensor (weak in
// promotion). Anything else raises TypeError naming `arg`.
Tensor tensor_or_scalar(pyb::handle obj, const char* arg);
// Like tensor_or_scalar but requires a Tensor.
const Tensor& tensor_arg(pyb::handle obj, const char* arg);
// Dims given as an int, a tuple/list of ints, or None (all dims).
IntList dims_arg(pyb::handle obj, const char* arg = "dim");
Shape shape_args(const pyb::args& args, const char* arg = "size");

// Binding entry points, one per file.
void bind_tensor(pyb::module_& m);
void bind_ops(pyb::module_& m);
void bind_autograd(pyb::module_& m);
void bind_extra_ops(pyb::module_& m);
void bind_indexing(pyb::module_& m);
void bind_interop(pyb::module_& m);
void bind_optim(pyb::module_& m);
void bind_numpy(pyb::module_& m);
void bind_graph(pyb::module_& m);
void bind_graph_ops(pyb::module_& m);
void bind_dlpack_kernels(pyb::module_& m);
// Subgraph and compaction primitives of graph/, on the top-level module.
void bind_subgraph(pyb::module_& m);
// Traversals and shortest paths of graph/, on the top-level module.
void bind_graph_algorithms(pyb::module_& m);
// Farthest point sampling and neighbour matching of graph/, on the top-level module.
void bind_geometry(pyb::module_& m);
// Sampling entry points, into the nodeweave._C.sampling submodule.
void bind_sampling(pyb::module_& m);
void bind_negative_sampling(pyb::module_& m);
void bind_random_walks(pyb::module_& m);
void bind_subgraph_samplers(pyb::module_& m);
// Graph partitioning for distributed training, into the nodeweave._C.distributed submodule.
void bind_distributed(pyb::module_& m);
void bind_mpi(pyb::module_& m);
// Knowledge-graph-embedding kernels, into the nodeweave._C.kge submodule.
void bind_kge(pyb::module_& m);
void bind_jit(pyb::module_& m);
Tensor tensor_from_numpy(pyb::array arr);

}  // namespace nodeweave::py
